"""Multi-task learning: many related tasks (one per user or phone) learned jointly.

Distributed variance-regularized MTL by ADMM (spec donini-easymkl-komd-climbtheworld-admm §4,
thesis Ch. 13), with its per-task solvers (the exact dual and Algorithm 4's SGD) and the
users-as-tasks comparison against pooled and independent models (§4.5); the exact online
client–server learner, its client and its scikit-learn and river estimators (spec
dinuzzo-solvers-rls2-client-server-mtl §3); low-rank output kernel learning, which learns how the
tasks relate, and neighbourhood-kernel multi-task MKL (MT-ONMKL) with their baselines (spec
okl-and-neighborhood-mtmkl, parts A and B).
"""
from stairsense.stream.lazy import lazy_exports as _lazy_exports

# Resolved on first use: the families bring in scikit-learn, river, numba and scipy, and an
# evaluation that uses one of them should not pay for the others.
__getattr__, __dir__ = _lazy_exports(__name__, {
    "._admm_mtl": ("ADMMMultiTaskClassifier", "variance_regularization_weights", "variance_regularized_objective"),
    "._comparison": ("compare_mtl_pooled_independent", "lambdas_for_sharing", "synthetic_users"),
    "._feature_maps": ("DotProductKernel", "ExpDotKernel", "FeatureMapKernel", "LinearFeatureMap",
                       "RandomFourierFeatures", "RBFKernel", "feature_map_from_spec", "kernel_from_spec"),
    "._mtonmkl": ("MTONMKLClassifier", "base_kernels", "kernel_alignment_matrix", "neighborhood_step",
                  "task_expansion", "task_weights", "theta_step"),
    "._okl": ("MaskedOutputs", "OKLFit", "OutputKernelClassifier", "OutputKernelRegressor", "okl_a_step",
              "okl_b_step", "okl_kronecker_basis", "okl_lambda_max", "okl_objective", "okl_path", "okl_solve"),
    "._online": ("SNAPSHOT_FORMAT", "OnlineMultiTaskLearner", "UnknownEntryError"),
    "._online_client": ("OnlineMultiTaskClient",),
    "._online_estimators": ("OnlineMultiTaskClassifier", "OnlineMultiTaskRegressor", "RiverMultiTaskClassifier",
                            "RiverMultiTaskRegressor"),
})

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
