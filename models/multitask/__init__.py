"""Multi-task learning: many related tasks (one per user or phone) learned jointly.

Distributed variance-regularized MTL by ADMM (spec donini-easymkl-komd-climbtheworld-admm §4,
thesis Ch. 13), with its per-task solvers (the exact dual and Algorithm 4's SGD) and the
users-as-tasks comparison against pooled and independent models (§4.5); the exact online
client–server learner, its client and its scikit-learn and river estimators (spec
dinuzzo-solvers-rls2-client-server-mtl §3); low-rank output kernel learning, which learns how the
tasks relate, and neighbourhood-kernel multi-task MKL (MT-ONMKL) with their baselines (spec
okl-and-neighborhood-mtmkl, parts A and B).
"""
from ._admm_mtl import ADMMMultiTaskClassifier, variance_regularization_weights, variance_regularized_objective
from ._comparison import compare_mtl_pooled_independent, lambdas_for_sharing, synthetic_users
from ._feature_maps import (
    DotProductKernel,
    ExpDotKernel,
    FeatureMapKernel,
    LinearFeatureMap,
    RandomFourierFeatures,
    RBFKernel,
    feature_map_from_spec,
    kernel_from_spec,
)
from ._mtonmkl import (
    MTONMKLClassifier,
    base_kernels,
    kernel_alignment_matrix,
    neighborhood_step,
    task_expansion,
    task_weights,
    theta_step,
)
from ._okl import (
    MaskedOutputs,
    OKLFit,
    OutputKernelClassifier,
    OutputKernelRegressor,
    okl_a_step,
    okl_b_step,
    okl_kronecker_basis,
    okl_lambda_max,
    okl_objective,
    okl_path,
    okl_solve,
)
from ._online import SNAPSHOT_FORMAT, OnlineMultiTaskLearner, UnknownEntryError
from ._online_client import OnlineMultiTaskClient
from ._online_estimators import (
    OnlineMultiTaskClassifier,
    OnlineMultiTaskRegressor,
    RiverMultiTaskClassifier,
    RiverMultiTaskRegressor,
)

__all__ = [
    "ADMMMultiTaskClassifier",
    "variance_regularization_weights",
    "variance_regularized_objective",
    "compare_mtl_pooled_independent",
    "lambdas_for_sharing",
    "synthetic_users",
    "OnlineMultiTaskLearner",
    "UnknownEntryError",
    "OnlineMultiTaskClient",
    "OnlineMultiTaskRegressor",
    "OnlineMultiTaskClassifier",
    "RiverMultiTaskRegressor",
    "RiverMultiTaskClassifier",
    "SNAPSHOT_FORMAT",
    "DotProductKernel",
    "RBFKernel",
    "ExpDotKernel",
    "FeatureMapKernel",
    "LinearFeatureMap",
    "RandomFourierFeatures",
    "kernel_from_spec",
    "feature_map_from_spec",
    "MTONMKLClassifier",
    "base_kernels",
    "kernel_alignment_matrix",
    "neighborhood_step",
    "task_expansion",
    "task_weights",
    "theta_step",
    "MaskedOutputs",
    "OKLFit",
    "OutputKernelClassifier",
    "OutputKernelRegressor",
    "okl_a_step",
    "okl_b_step",
    "okl_kronecker_basis",
    "okl_lambda_max",
    "okl_objective",
    "okl_path",
    "okl_solve",
]
