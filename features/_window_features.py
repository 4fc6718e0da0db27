"""The 79 window features of Table 12.1, vectorised over many ragged windows.

Implements spec ``donini-easymkl-komd-climbtheworld-admm.md`` §3.6 ("Representation") with its
[P] resolutions 1–7.

Rows and feature order
----------------------
Each sample v = (x, y, z) of standardized East-North-Up acceleration gives five rows
S_1..S_5 = ``x``, ``y``, ``z``, ``norm`` = ‖v‖₂ and ``horiz`` = (x + y) / 2.
Feature k of Table 12.1 is column k - 1 of the output, named by :data:`FEATURE_NAMES`:

====== =================================== =====================================================
k      names                               definition
====== =================================== =====================================================
1–5    ``mean_<r>``                        Ave(S_r)
6–10   ``std_<r>``                         Std(S_r), population (ddof = 0)
11–15  ``var_<r>``                         Var(S_r) = Std(S_r)²
16–20  ``range_<r>``                       Max(S_r) − Min(S_r)
21–30  ``ratio_mean_<j>_over_<h>``         Ave(S_j) / Ave(S_h)
31–40  ``ratio_std_<j>_over_<h>``          Std(S_j) / Std(S_h)
41–50  ``ratio_var_<j>_over_<h>``          Var(S_j) / Var(S_h)
51–60  ``ratio_range_<j>_over_<h>``        range(S_j) / range(S_h)
61     ``ratio_max_z_over_horiz``          Max(S_3) / Max(S_5)
62     ``ratio_min_z_over_horiz``          Min(S_3) / Min(S_5)
63     ``magnitude_area_xyz``              √(Ave(S_1)² + Ave(S_2)² + Ave(S_3)²)   (MA)
64     ``signal_magnitude_area_xyz``       Ave(|S_1| + |S_2| + |S_3|)             (SMA)
65–67  ``ratio_var_<r>_over_norm``         Var(S_r) / Var(S_4), r = x, y, z
68     ``ratio_sq_std_x_plus_std_y_over_std_z``     (Std_1 + Std_2)² / Std_3   (literal)
69     ``ratio_sq_std_x_plus_std_y_over_std_norm``  (Std_1 + Std_2)² / Std_4   (literal)
70–79  ``corr_<h>_<j>``                     Pearson Corr(S_h, S_j)
====== =================================== =====================================================

The pair blocks (21–60, 70–79) run over ``itertools.combinations(1..5, 2)`` → (h, j) =
(x, y), (x, z), (x, norm), (x, horiz), (y, z), (y, norm), (y, horiz), (z, norm), (z, horiz),
(norm, horiz), each ratio being stat(S_j) / stat(S_h) (resolution 1). With
``corrected_68_69=True`` features 68–69 become (Var_1 + Var_2) / Var_3 and / Var_4
(resolution 5) and are named by :func:`feature_names` accordingly.

Numerical conventions (resolutions 2–4)
---------------------------------------
* Every division is a *safe ratio*: den' = sign(den)·max(|den|, 1e-6) with sign(0) = +1, and the
  ratio is clipped to [-1e3, 1e3] so min-max scaling is not dominated by outliers.
* Corr is 0 when either row is constant. "Constant" is tested with a relative tolerance,
  Std(S_r) ≤ 1e-10 · max|S_r|, because rounding leaves a variance of ~1e-32 rather than 0 on a
  constant row; 1e-10 is six orders above that rounding floor and far below any sensor
  resolution. Corr is clipped to [-1, 1] against rounding.
* Variances and covariances use the corrected two-pass algorithm around each window's mean
  (Chan, Golub & LeVeque 1983): Σd_h d_j − (Σd_h)(Σd_j)/n with d = s − mean, whose first-order
  error from the rounded mean cancels; E[x²] − E[x]² would cancel catastrophically on rows with
  a large mean.
"""
from __future__ import annotations

import itertools

import numpy as np

__all__ = ["FEATURE_NAMES", "N_FEATURES", "ROW_NAMES", "feature_names", "window_features"]

ROW_NAMES: tuple[str, ...] = ("x", "y", "z", "norm", "horiz")
"""Names of the rows S_1..S_5 of spec §3.6."""

N_FEATURES = 79

# Resolution 1: (h, j) pairs in itertools.combinations order, zero-based row indices.
_PAIRS = tuple(itertools.combinations(range(len(ROW_NAMES)), 2))
_PAIR_H = np.array([h for h, _ in _PAIRS])
_PAIR_J = np.array([j for _, j in _PAIRS])
# Second moments in batch layout: the five squares, then the ten pairs.
_PRODUCT_H = tuple(range(len(ROW_NAMES))) + tuple(h for h, _ in _PAIRS)
_PRODUCT_J = tuple(range(len(ROW_NAMES))) + tuple(j for _, j in _PAIRS)

RATIO_EPS = 1e-6
"""ε of the safe ratio (spec §3.6 resolution 4)."""
RATIO_CLIP = 1e3
"""Ratios are clipped to [-RATIO_CLIP, RATIO_CLIP] (spec §3.6 resolution 4)."""
CONSTANT_ROW_RTOL = 1e-10
"""A row with Std ≤ CONSTANT_ROW_RTOL · max|row| counts as constant, so its Corr is 0."""

# Windows are processed in chunks of about this many samples: the chunk's (15, n) product
# array (~2 MB) then stays in cache, which measured ~1.5x faster than 2**17 samples
# (benchmarks/bench_features.py), and memory stays flat. A chunk holds whole windows, so
# results do not depend on it.
_CHUNK_SAMPLES = 1 << 14


def feature_names(*, corrected_68_69: bool = False) -> tuple[str, ...]:
    """Names of the 79 features in Table 12.1 order (feature k is index k - 1).

    Parameters
    ----------
    corrected_68_69 : bool, default=False
        Name features 68–69 for the corrected variance form instead of the literal one.

    Returns
    -------
    tuple of str
        79 unique names; see the module docstring for the scheme.

    Examples
    --------
    >>> names = feature_names()
    >>> names[0], names[20], names[69], len(names)
    ('mean_x', 'ratio_mean_y_over_x', 'corr_x_y', 79)
    >>> feature_names(corrected_68_69=True)[67]
    'ratio_var_x_plus_var_y_over_var_z'
    """
    per_row = [f"{stat}_{r}" for stat in ("mean", "std", "var", "range") for r in ROW_NAMES]
    ratios = [
        f"ratio_{stat}_{ROW_NAMES[j]}_over_{ROW_NAMES[h]}"
        for stat in ("mean", "std", "var", "range")
        for h, j in _PAIRS
    ]
    if corrected_68_69:
        spread = ["ratio_var_x_plus_var_y_over_var_z", "ratio_var_x_plus_var_y_over_var_norm"]
    else:
        spread = ["ratio_sq_std_x_plus_std_y_over_std_z", "ratio_sq_std_x_plus_std_y_over_std_norm"]
    mixed = [
        "ratio_max_z_over_horiz",
        "ratio_min_z_over_horiz",
        "magnitude_area_xyz",
        "signal_magnitude_area_xyz",
        *(f"ratio_var_{r}_over_norm" for r in ROW_NAMES[:3]),
        *spread,
    ]
    corr = [f"corr_{ROW_NAMES[h]}_{ROW_NAMES[j]}" for h, j in _PAIRS]
    return tuple(per_row + ratios + mixed + corr)


FEATURE_NAMES: tuple[str, ...] = feature_names()
"""The 79 feature names of Table 12.1 in order, features 68–69 in their literal form."""


def _safe_ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """num / den' with den' = sign(den)·max(|den|, ε), sign(0) = +1, clipped to ±RATIO_CLIP.

    Spec §3.6 resolution 4: gravity-free means sit near 0 and change sign, and a constant row has
    zero spread, so a plain division would give ±inf/NaN; ``den >= 0`` also sends -0.0 to +1.
    """
    safe_den = np.where(den >= 0, 1.0, -1.0) * np.maximum(np.abs(den), RATIO_EPS)
    return np.clip(num / safe_den, -RATIO_CLIP, RATIO_CLIP)


def _features_from_statistics(
    mean: np.ndarray,
    var: np.ndarray,
    cov: np.ndarray,
    row_min: np.ndarray,
    row_max: np.ndarray,
    sma: np.ndarray,
    *,
    corrected_68_69: bool,
) -> np.ndarray:
    """Assemble the (W, 79) features from per-window sufficient statistics.

    Shared by the batch :func:`window_features` and the streaming accumulator, so both apply the
    same formulas and conventions; they differ only in how they accumulate the statistics.

    Parameters
    ----------
    mean, var, row_min, row_max : ndarray of shape (W, 5)
        Per-row mean, population variance, minimum and maximum.
    cov : ndarray of shape (W, 10)
        Population covariances of the row pairs in ``_PAIRS`` order.
    sma : ndarray of shape (W,)
        Mean of |x| + |y| + |z|.
    corrected_68_69 : bool
        Use the corrected form of features 68–69.
    """
    std = np.sqrt(var)
    spread = row_max - row_min
    pair_ratios = [_safe_ratio(stat[:, _PAIR_J], stat[:, _PAIR_H]) for stat in (mean, std, var, spread)]
    if corrected_68_69:
        horizontal_dispersion, vertical_dispersion = var[:, 0] + var[:, 1], var
    else:
        horizontal_dispersion, vertical_dispersion = (std[:, 0] + std[:, 1]) ** 2, std
    scale = np.maximum(np.abs(row_min), np.abs(row_max))
    varying = std > CONSTANT_ROW_RTOL * scale
    both_vary = varying[:, _PAIR_H] & varying[:, _PAIR_J]
    std_product = np.where(both_vary, std[:, _PAIR_H] * std[:, _PAIR_J], 1.0)
    corr = np.where(both_vary, np.clip(cov / std_product, -1.0, 1.0), 0.0)
    columns = [
        mean,
        std,
        var,
        spread,
        *pair_ratios,
        _safe_ratio(row_max[:, 2], row_max[:, 4])[:, None],
        _safe_ratio(row_min[:, 2], row_min[:, 4])[:, None],
        np.sqrt(np.sum(mean[:, :3] ** 2, axis=1))[:, None],
        sma[:, None],
        _safe_ratio(var[:, :3], var[:, 3:4]),
        _safe_ratio(horizontal_dispersion[:, None], vertical_dispersion[:, 2:4]),
        corr,
    ]
    return np.concatenate(columns, axis=1)


def _validate(samples, offsets) -> tuple[np.ndarray, np.ndarray]:
    samples = np.asarray(samples, dtype=np.float64)
    if samples.ndim != 2 or samples.shape[1] != 3:
        raise ValueError(
            f"samples must be an (N, 3) array of standardized (x=East, y=North, z=Up) "
            f"acceleration; got shape {samples.shape}. Stack the windows' samples row-wise."
        )
    offsets = np.asarray(offsets)
    if offsets.ndim != 1 or offsets.size < 1 or not np.issubdtype(offsets.dtype, np.integer):
        raise ValueError(
            f"offsets must be a 1-D integer array of W + 1 window boundaries; got dtype "
            f"{offsets.dtype} and shape {offsets.shape}. Window w is samples[offsets[w]:offsets[w+1]]."
        )
    if offsets[0] < 0 or offsets[-1] > samples.shape[0]:
        raise ValueError(
            f"offsets must lie in [0, {samples.shape[0]}] (the number of samples); got "
            f"offsets[0]={offsets[0]} and offsets[-1]={offsets[-1]}."
        )
    counts = np.diff(offsets)
    short = np.flatnonzero(counts < 2)
    if short.size:
        w = int(short[0])
        raise ValueError(
            f"window {w} (samples[{offsets[w]}:{offsets[w + 1]}]) has {counts[w]} samples; every "
            f"window needs at least 2 ({short.size} window(s) fail). Spec §3.6 resolution 7: label "
            f"such windows NO_STAIR and drop them before feature extraction."
        )
    used = samples[offsets[0] : offsets[-1]]
    if not np.isfinite(used).all():
        row = int(offsets[0] + np.flatnonzero(~np.isfinite(used).all(axis=1))[0])
        raise ValueError(
            f"samples[{row}] = {samples[row].tolist()} is not finite; remove or repair NaN/inf "
            f"samples upstream (the features would silently become NaN)."
        )
    return samples, offsets.astype(np.intp)


def _chunk_features(xyz: np.ndarray, starts: np.ndarray, counts: np.ndarray, corrected_68_69: bool) -> np.ndarray:
    """Features of consecutive windows starting at ``starts`` (relative to ``xyz``, (3, M))."""
    x, y, z = xyz
    # Same operation order as the streaming push, so per-sample rows agree bit for bit.
    rows = np.empty((5, xyz.shape[1]))
    rows[:3] = xyz
    rows[3] = np.sqrt(x * x + y * y + z * z)
    rows[4] = (x + y) / 2
    n = counts.astype(np.float64)
    mean = (np.add.reduceat(rows, starts, axis=1) / n).T
    centred = rows - np.repeat(mean.T, counts, axis=1)
    # Squares then pair products, written in place: fancy-indexed temporaries cost more here
    # than the 15-iteration loop (which is over row pairs, never over windows).
    products = np.empty((len(_PRODUCT_H), rows.shape[1]))
    for i, (h, j) in enumerate(zip(_PRODUCT_H, _PRODUCT_J)):
        np.multiply(centred[h], centred[j], out=products[i])
    sums = np.add.reduceat(centred, starts, axis=1).T
    second = np.add.reduceat(products, starts, axis=1).T
    # Corrected two-pass: subtract the (Σd_h)(Σd_j)/n term left by the rounded mean; rounding
    # can leave a constant row's variance at -1e-33, hence the floor at 0.
    var = np.maximum(second[:, :5] - sums * sums / n[:, None], 0.0) / n[:, None]
    cov = (second[:, 5:] - sums[:, _PAIR_H] * sums[:, _PAIR_J] / n[:, None]) / n[:, None]
    row_min = np.minimum.reduceat(rows, starts, axis=1).T
    row_max = np.maximum.reduceat(rows, starts, axis=1).T
    sma = np.add.reduceat(np.abs(x) + np.abs(y) + np.abs(z), starts) / n
    return _features_from_statistics(mean, var, cov, row_min, row_max, sma, corrected_68_69=corrected_68_69)


def window_features(samples, offsets, *, corrected_68_69: bool = False) -> np.ndarray:
    """Compute the 79 features of Table 12.1 for many ragged windows at once (spec §3.6).

    Parameters
    ----------
    samples : array-like of shape (N, 3)
        Standardized ENU acceleration (x = East, y = North, z = Up) of all windows concatenated.
        Converted to float64; every sample used must be finite.
    offsets : array-like of int, shape (W + 1,)
        Window boundaries: window w is ``samples[offsets[w]:offsets[w + 1]]``. Non-decreasing,
        within [0, N]; they need not start at 0 nor end at N.
    corrected_68_69 : bool, default=False
        Replace the literal features 68–69, (Std_1 + Std_2)² / Std_k, with the dimensionally
        consistent (Var_1 + Var_2) / Var_k for k = 3, 4 (spec §3.6 resolution 5).

    Returns
    -------
    ndarray of shape (W, 79)
        Row w holds the features of window w, columns in :data:`FEATURE_NAMES` order.

    Raises
    ------
    ValueError
        If the shapes are wrong, a window has fewer than 2 samples (resolution 7: the caller
        labels those NO_STAIR and drops them), or a sample is NaN/inf.

    See Also
    --------
    stairsense.features._streaming.WindowFeatureAccumulator : the per-sample form.

    Notes
    -----
    No Python loop runs per window: the per-window sums, co-moments, minima and maxima are
    segment reductions (``np.add.reduceat`` and friends) over the concatenated samples,
    processed in chunks of whole windows to bound memory. Conventions (ddof = 0, safe ratios,
    Corr = 0 for constant rows, pair order) are in the module docstring.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> samples = rng.normal(size=(25, 3))
    >>> X = window_features(samples, [0, 10, 25])
    >>> X.shape
    (2, 79)
    >>> bool(np.isclose(X[1, FEATURE_NAMES.index("std_z")], samples[10:25, 2].std()))
    True
    """
    samples, offsets = _validate(samples, offsets)
    n_windows = offsets.size - 1
    out = np.empty((n_windows, N_FEATURES))
    w0 = 0
    while w0 < n_windows:
        # Largest w1 with offsets[w1] - offsets[w0] <= _CHUNK_SAMPLES, at least one window.
        w1 = int(np.searchsorted(offsets, offsets[w0] + _CHUNK_SAMPLES, side="right")) - 1
        w1 = min(max(w1, w0 + 1), n_windows)
        start, stop = offsets[w0], offsets[w1]
        xyz = np.ascontiguousarray(samples[start:stop].T)
        out[w0:w1] = _chunk_features(xyz, offsets[w0:w1] - start, np.diff(offsets[w0 : w1 + 1]), corrected_68_69)
        w0 = w1
    return out

