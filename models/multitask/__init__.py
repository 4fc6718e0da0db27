"""Multi-task learning: many related tasks (one per user or phone) learned jointly.

Distributed variance-regularized MTL by ADMM (spec donini-easymkl-komd-climbtheworld-admm §4,
thesis Ch. 13), with its per-task solvers (the exact dual and Algorithm 4's SGD) and the
users-as-tasks comparison against pooled and independent models (§4.5); the exact online
client–server learner, its client and its scikit-learn and river estimators (spec
dinuzzo-solvers-rls2-client-server-mtl §3). Output kernel learning and MT-ONMKL (spec
okl-and-neighborhood-mtmkl) belong here too.
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
]
