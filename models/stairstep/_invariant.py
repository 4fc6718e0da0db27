"""Features that do not depend on where the phone is worn, and a selector restricted to them.

A model trained on a waist phone counted 43–89 % of level-walking steps as stair steps
on phones in a pocket. Without a rotation vector the front end knows Up but not North
(``orientation="vertical"``: the X and Y axes turn with the phone, so they point wherever the
phone's own axes project onto the ground; with ``"ahrs"`` they point where the phone pointed at
the start of the log). Every feature of the X, Y or ``horiz`` = (x + y)/2 rows therefore encodes
how the phone sits in the pocket, hand or belt clip, not how the person moves; a classifier
trained on one placement learns that placement.

A rotation about the vertical axis leaves the Z row and the norm ‖(x, y, z)‖ unchanged, so the
features built from those two rows only (spec §3.6, Table 12.1: mean, std, var, range of z and
norm, their ratios and their correlation) are the same wherever the phone's heading points, and
:data:`HEADING_INVARIANT` lists them by name. ``magnitude_area_xyz`` is the norm of the window's
mean vector, also invariant to a rotation about Up (held during the window).
"""
from __future__ import annotations

import re
from typing import Sequence

import numpy as np
from sklearn.base import BaseEstimator, clone
from sklearn.feature_selection import SelectorMixin
from sklearn.utils.validation import check_is_fitted, validate_data

__all__ = ["heading_invariant_mask", "RestrictedSelector"]

_HEADING_ROWS = re.compile(r"(^|_)(x|y|horiz)(_|$)")


def heading_invariant_mask(feature_names: Sequence[str]) -> np.ndarray:
    """True for the features that a rotation of the samples about the vertical axis leaves unchanged.

    Examples
    --------
    >>> from stairsense.features import FEATURE_NAMES
    >>> names = np.array(FEATURE_NAMES)[heading_invariant_mask(FEATURE_NAMES)]
    >>> len(names), names[:4].tolist()
    (15, ['mean_z', 'mean_norm', 'std_z', 'std_norm'])
    """
    names = [n.split(":")[-1] for n in feature_names]  # Mizell's two blocks are prefixed "p:" / "h:"
    return np.array([n == "magnitude_area_xyz" or (not _HEADING_ROWS.search(n) and "xyz" not in n)
                     for n in names])


class RestrictedSelector(SelectorMixin, BaseEstimator):
    """Run ``selector`` on the ``allowed`` columns only and keep the ``required`` ones beside its
    choice; everything else is dropped.

    Parameters
    ----------
    selector : SelectorMixin
        Fitted on the allowed columns that are not required (a clone); ``None`` keeps every
        allowed column.
    allowed : array-like of bool, shape (n_features,), optional
        Columns the selector may choose from; ``None``: every column.
    required : array-like of bool, shape (n_features,), optional
        Columns kept whatever the selector ranks them (the barometer's height features:
        :meth:`~stairsense.models.TrainRecipe.pipeline`); ``None``: none.

    Examples
    --------
    >>> from sklearn.feature_selection import SelectKBest
    >>> X = np.arange(40.0).reshape(10, 4) ** [1, 2, 1, 3]; y = np.arange(10) % 2
    >>> sel = RestrictedSelector(SelectKBest(k=1), [True, False, True, False]).fit(X, y)
    >>> sel.get_support().tolist().count(True), bool(sel.get_support()[1] or sel.get_support()[3])
    (1, False)
    >>> kept = RestrictedSelector(SelectKBest(k=1), required=[False, False, False, True]).fit(X, y)
    >>> kept.get_support().sum(), bool(kept.get_support()[3])
    (np.int64(2), True)
    """

    def __init__(self, selector=None, allowed=None, required=None):
        self.selector = selector
        self.allowed = allowed
        self.required = required

    def fit(self, X, y=None):
        X = validate_data(self, X, dtype=np.float64)
        allowed = np.ones(X.shape[1], bool) if self.allowed is None else np.asarray(self.allowed, bool)
        required = np.zeros(X.shape[1], bool) if self.required is None else np.asarray(self.required, bool)
        for name, mask in (("allowed", allowed), ("required", required)):
            if mask.shape != (X.shape[1],):
                raise ValueError(f"{name} must be {X.shape[1]} booleans, got shape {mask.shape}")
        ranked = allowed & ~required
        if not (ranked | required).any():
            raise ValueError(f"allowed and required keep no column of {X.shape[1]}: give at least one True")
        support = allowed | required
        self.selector_ = None
        k = getattr(self.selector, "k", None)
        # with k at least the columns to rank, the selector would keep them all: skip the ranking
        if self.selector is not None and ranked.any() and not (isinstance(k, (int, np.integer)) and k >= ranked.sum()):
            self.selector_ = clone(self.selector).fit(X[:, ranked], y)
            support[ranked] = self.selector_.get_support()
        self.support_ = support
        return self

    def _get_support_mask(self):
        check_is_fitted(self)
        return self.support_
