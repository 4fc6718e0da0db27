"""Multi-task learning: many related tasks (one per user or phone) learned jointly.

Today: distributed variance-regularized MTL by ADMM (spec donini-easymkl-komd-climbtheworld-admm §4,
thesis Ch. 13), with its per-task solvers (the exact dual and Algorithm 4's SGD) and the users-as-tasks comparison
against pooled and independent models (§4.5). The online
client-server learner (spec dinuzzo-solvers-rls2-client-server-mtl §3), output kernel learning and
MT-ONMKL (spec okl-and-neighborhood-mtmkl) belong here too.
"""
from ._admm_mtl import ADMMMultiTaskClassifier, variance_regularization_weights, variance_regularized_objective
from ._comparison import compare_mtl_pooled_independent, lambdas_for_sharing, synthetic_users

__all__ = [
    "ADMMMultiTaskClassifier",
    "variance_regularization_weights",
    "variance_regularized_objective",
    "compare_mtl_pooled_independent",
    "lambdas_for_sharing",
    "synthetic_users",
]
