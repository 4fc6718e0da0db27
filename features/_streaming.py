"""Per-sample (streaming) form of the 79 window features, spec §3.6.

DESIGN.md "Two execution modes, one result": this accumulator is the reference semantics that
the phone runs, and :func:`~stairsense.features._window_features.window_features` is the batch
fast path; both feed the same final formulas, so they agree to rounding.
"""
from __future__ import annotations

import math

import numpy as np

from ._window_features import _PRODUCT_H, _PRODUCT_J, _features_from_statistics

__all__ = ["WindowFeatureAccumulator"]

_N_ROWS = 5
# Five squares first, then the ten pairs in Table 12.1 order: the batch layout.
_PRODUCTS = tuple(zip(_PRODUCT_H, _PRODUCT_J))
_PRODUCT_H_INDEX = np.array(_PRODUCT_H)
_PRODUCT_J_INDEX = np.array(_PRODUCT_J)


class WindowFeatureAccumulator:
    """Accumulate one window sample by sample and return its 79 Table 12.1 features.

    ``push`` does O(1) work in plain Python floats (no numpy per sample): it updates the
    row sums and co-moments of the five rows x, y, z, ‖v‖₂, (x + y)/2 shifted by the window's
    first sample, the running minima and maxima, and the sum of |x| + |y| + |z|.

    Parameters
    ----------
    corrected_68_69 : bool, default=False
        Use (Var_1 + Var_2) / Var_k instead of the literal (Std_1 + Std_2)² / Std_k for
        features 68–69 (spec §3.6 resolution 5).

    Attributes
    ----------
    n_samples_ : int
        Samples pushed since the last :meth:`reset`. Like every learned attribute, it is
        created by the first :meth:`push` and removed by :meth:`reset`.
    shift_ : tuple of float, length 5
        The window's first sample in row form, the shift K of the co-moment sums.
    sum_dev_ : list of float, length 5
        Σ (s_r − K_r) per row.
    sum_prod_ : list of float, length 15
        Σ (s_h − K_h)(s_j − K_j) for the five squares then the ten row pairs.
    row_min_, row_max_ : list of float, length 5
        Running minimum and maximum per row.
    sum_abs_xyz_ : float
        Σ |x| + |y| + |z|.

    See Also
    --------
    stairsense.features._window_features.window_features : the batch form.

    Notes
    -----
    Why shifted sums rather than Welford: with the shift K equal to the first sample, the
    co-moment Σd_h d_j − (Σd_h)(Σd_j)/n has relative error about n·ε·(1 + (mean − K)²/σ²), and
    (mean − K)²/σ² ≤ n for any sample K of the window, so it stays accurate on rows with a large
    mean and a tiny spread (the "shifted data" algorithm of Chan, Golub & LeVeque 1983), while
    ``push`` needs no division. The differences s − K of close values are exact (Sterbenz).

    Examples
    --------
    >>> import numpy as np
    >>> from stairsense.features._window_features import window_features
    >>> rng = np.random.default_rng(0)
    >>> window = rng.normal(size=(12, 3))
    >>> acc = WindowFeatureAccumulator()
    >>> for x, y, z in window:
    ...     _ = acc.push(x, y, z)
    >>> bool(np.allclose(acc.features(), window_features(window, [0, 12])[0], rtol=1e-12))
    True
    >>> hasattr(acc.reset(), "n_samples_")
    False
    """

    def __init__(self, *, corrected_68_69: bool = False):
        self.corrected_68_69 = corrected_68_69

    def reset(self) -> WindowFeatureAccumulator:
        """Forget the current window; the next :meth:`push` starts a new one. Returns ``self``."""
        for name in ("n_samples_", "shift_", "sum_dev_", "sum_prod_", "row_min_", "row_max_", "sum_abs_xyz_"):
            self.__dict__.pop(name, None)
        return self

    def push(self, x: float, y: float, z: float) -> WindowFeatureAccumulator:
        """Add one standardized ENU sample (x = East, y = North, z = Up). Returns ``self``.

        Raises
        ------
        ValueError
            If a component is NaN or infinite; the window's state is left unchanged.
        """
        x, y, z = float(x), float(y), float(z)
        n = getattr(self, "n_samples_", 0)
        if not (math.isfinite(x) and math.isfinite(y) and math.isfinite(z)):
            raise ValueError(
                f"sample {n} of the window is ({x}, {y}, {z}); components must be "
                f"finite. Repair or drop NaN/inf samples before pushing."
            )
        # Same operation order as window_features, so the derived rows agree bit for bit.
        s = (x, y, z, math.sqrt(x * x + y * y + z * z), (x + y) / 2)
        if n == 0:
            # Stream-stage state is created on the first sample (STYLE.md habit 3).
            self.shift_ = s
            self.sum_dev_ = [0.0] * _N_ROWS
            self.sum_prod_ = [0.0] * len(_PRODUCTS)
            self.row_min_ = list(s)
            self.row_max_ = list(s)
            self.sum_abs_xyz_ = 0.0
        d = [s[r] - self.shift_[r] for r in range(_N_ROWS)]
        sum_dev, sum_prod, row_min, row_max = self.sum_dev_, self.sum_prod_, self.row_min_, self.row_max_
        for r in range(_N_ROWS):
            sum_dev[r] += d[r]
            if s[r] < row_min[r]:
                row_min[r] = s[r]
            elif s[r] > row_max[r]:
                row_max[r] = s[r]
        for i, (h, j) in enumerate(_PRODUCTS):
            sum_prod[i] += d[h] * d[j]
        self.sum_abs_xyz_ += abs(x) + abs(y) + abs(z)
        self.n_samples_ = n + 1
        return self

    def features(self) -> np.ndarray:
        """The 79 features of the samples pushed since the last reset, shape (79,).

        Raises
        ------
        ValueError
            If fewer than 2 samples were pushed (spec §3.6 resolution 7: such a window is
            NO_STAIR without features).
        """
        n = getattr(self, "n_samples_", 0)
        if n < 2:
            raise ValueError(
                f"the window has {n} sample(s); features need at least 2. Spec §3.6 resolution 7: "
                f"label it NO_STAIR instead of calling features()."
            )
        shift = np.array(self.shift_)
        sum_dev = np.array(self.sum_dev_)
        sum_prod = np.array(self.sum_prod_)
        comoment = (sum_prod - sum_dev[_PRODUCT_H_INDEX] * sum_dev[_PRODUCT_J_INDEX] / n) / n
        features = _features_from_statistics(
            mean=(shift + sum_dev / n)[None],
            var=np.maximum(comoment[:_N_ROWS], 0.0)[None],
            cov=comoment[_N_ROWS:][None],
            row_min=np.array(self.row_min_)[None],
            row_max=np.array(self.row_max_)[None],
            sma=np.array([self.sum_abs_xyz_ / n]),
            corrected_68_69=self.corrected_68_69,
        )
        return features[0]
