"""Tree models for the window rows: gradient-boosted trees behind a support gate."""
from ._gated_trees import GatedTreesClassifier

__all__ = ["GatedTreesClassifier"]
