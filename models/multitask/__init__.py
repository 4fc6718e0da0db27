"""Multi-task learners: the exact online client–server learner (spec dinuzzo §3) and its estimators."""
from ._feature_maps import (
    ExpDotKernel,
    FeatureMapKernel,
    LinearFeatureMap,
    DotProductKernel,
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
