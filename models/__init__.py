"""Kernel machines: KOMD, EasyMKL, the stair-step classifier, server-side and multi-task solvers."""
from ._easymkl import EasyMKL, EasyMKLSelector
from ._komd import KOMDClassifier
from ._rls2 import RLS2Classifier, RLS2Path, RLS2Regressor, RLS2Selector, rls2_path
from ._simplex_pairwise import simplex_least_squares

__all__ = [
    "KOMDClassifier",
    "EasyMKL",
    "EasyMKLSelector",
    "RLS2Regressor",
    "RLS2Classifier",
    "RLS2Selector",
    "RLS2Path",
    "rls2_path",
    "simplex_least_squares",
]
