"""Tests of the Table 12.1 window features (spec §3.6), their streaming form and scaling.

Oracles: a brute-force per-window reference written with Python's ``statistics`` module (exact
rational means and variances, then rounded; ``statistics.correlation``) and explicit pair loops,
hand-computed values, exact rational arithmetic (fractions.Fraction) for the numerics, and the
redundancy identities the spec states.
"""
import itertools
import math
import statistics
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stairsense.features import _window_features as wf
from stairsense.features._scaling import make_feature_scaler
from stairsense.features._streaming import WindowFeatureAccumulator
from stairsense.features._window_features import FEATURE_NAMES, feature_names, window_features

PAIRS = list(itertools.combinations(range(5), 2))
COL = {name: i for i, name in enumerate(FEATURE_NAMES)}


# ----------------------------------------------------------------------------- oracle
def ref_ratio(num, den):
    """Spec §3.6 resolution 4, written as scalar Python."""
    magnitude = max(abs(den), 1e-6)
    safe = magnitude if den >= 0 else -magnitude
    return min(max(num / safe, -1e3), 1e3)


def ref_corr(a, b):
    def constant(r):
        return statistics.pstdev(r) <= 1e-10 * max(abs(v) for v in r)

    if constant(a) or constant(b):
        return 0.0
    return statistics.correlation(a, b)


def reference_features(window, corrected_68_69=False):
    """One window, straight from Table 12.1, one feature at a time.

    ``statistics`` computes means and variances exactly before rounding, so a constant row has
    exactly zero spread here (np.std leaves ~1e-16, which a safe ratio would amplify 1e6-fold).
    """
    x, y, z = window[:, 0].tolist(), window[:, 1].tolist(), window[:, 2].tolist()
    norm = [math.sqrt(a * a + b * b + c * c) for a, b, c in zip(x, y, z)]
    rows = [x, y, z, norm, [(a + b) / 2 for a, b in zip(x, y)]]
    mean = [statistics.mean(r) for r in rows]
    std = [statistics.pstdev(r) for r in rows]
    var = [statistics.pvariance(r) for r in rows]
    spread = [max(r) - min(r) for r in rows]
    out = mean + std + var + spread
    for stat in (mean, std, var, spread):
        out += [ref_ratio(stat[j], stat[h]) for h, j in PAIRS]
    out.append(ref_ratio(max(z), max(rows[4])))
    out.append(ref_ratio(min(z), min(rows[4])))
    out.append(math.sqrt(mean[0] ** 2 + mean[1] ** 2 + mean[2] ** 2))
    out.append(statistics.mean(abs(a) + abs(b) + abs(c) for a, b, c in zip(x, y, z)))
    out += [ref_ratio(std[r] ** 2, std[3] ** 2) for r in range(3)]
    for k in (2, 3):
        if corrected_68_69:
            out.append(ref_ratio(std[0] ** 2 + std[1] ** 2, std[k] ** 2))
        else:
            out.append(ref_ratio((std[0] + std[1]) ** 2, std[k]))
    out += [ref_corr(rows[h], rows[j]) for h, j in PAIRS]
    return np.array(out)


def random_ragged(seed, n_windows=60):
    """Gravity-free-like windows of 2..40 samples, some with constant rows or large offsets."""
    rng = np.random.default_rng(seed)
    counts = rng.integers(2, 41, size=n_windows)
    windows = []
    for w, n in enumerate(counts):
        window = rng.normal(rng.normal(0, 0.5, 3), rng.uniform(0.1, 3, 3), size=(n, 3))
        if w % 7 == 1:
            window[:, 1] = 0.75  # a constant row: Corr 0, safe ratios hit ε
        if w % 7 == 2:
            window[:] = window[0]  # every row constant
        if w % 7 == 3:
            window[:, 2] += 9.81  # a large mean over a small spread
        windows.append(window)
    return np.concatenate(windows), np.concatenate([[0], np.cumsum(counts)])


# ----------------------------------------------------------------------------- names
def test_names_are_79_unique_in_table_order():
    assert len(FEATURE_NAMES) == len(set(FEATURE_NAMES)) == 79
    # Spot checks against Table 12.1 numbering (feature k is index k - 1).
    expected = {
        1: "mean_x", 5: "mean_horiz", 6: "std_x", 11: "var_x", 16: "range_x",
        21: "ratio_mean_y_over_x", 30: "ratio_mean_horiz_over_norm", 31: "ratio_std_y_over_x",
        43: "ratio_var_norm_over_x", 51: "ratio_range_y_over_x", 61: "ratio_max_z_over_horiz",
        62: "ratio_min_z_over_horiz", 63: "magnitude_area_xyz", 64: "signal_magnitude_area_xyz",
        65: "ratio_var_x_over_norm", 67: "ratio_var_z_over_norm", 70: "corr_x_y",
        77: "corr_z_norm", 79: "corr_norm_horiz",
    }
    assert {k: FEATURE_NAMES[k - 1] for k in expected} == expected


def test_corrected_names_differ_only_in_68_69():
    corrected = feature_names(corrected_68_69=True)
    assert len(set(corrected)) == 79
    assert [k + 1 for k in range(79) if corrected[k] != FEATURE_NAMES[k]] == [68, 69]


# ----------------------------------------------------------------------------- batch vs oracle
@pytest.mark.parametrize("corrected_68_69", [False, True])
def test_batch_matches_brute_force_reference(corrected_68_69):
    samples, offsets = random_ragged(seed=1)
    got = window_features(samples, offsets, corrected_68_69=corrected_68_69)
    expected = np.array(
        [reference_features(samples[a:b], corrected_68_69) for a, b in zip(offsets[:-1], offsets[1:])]
    )
    np.testing.assert_allclose(got, expected, rtol=1e-9, atol=1e-12)


def test_hand_computed_tiny_window():
    # v1 = (1, 2, 2), v2 = (-1, 2, -2): x = (1, -1), y = 2 constant, z = (2, -2),
    # norm = 3 constant, horiz = (1.5, 0.5).
    window = [[1, 2, 2], [-1, 2, -2]]
    features = dict(zip(FEATURE_NAMES, window_features(window, [0, 2])[0]))
    expected = {
        "mean_x": 0, "std_x": 1, "var_x": 1, "range_x": 2, "std_y": 0, "mean_z": 0, "std_z": 2,
        "mean_norm": 3, "std_norm": 0, "mean_horiz": 1, "std_horiz": 0.5, "range_horiz": 1,
        "ratio_mean_y_over_x": 1e3,  # 2 / (+1e-6), clipped
        "ratio_mean_z_over_x": 0, "ratio_mean_horiz_over_z": 1e3,
        "ratio_std_z_over_y": 1e3, "ratio_std_y_over_x": 0, "ratio_var_z_over_x": 4,
        "ratio_max_z_over_horiz": 2 / 1.5, "ratio_min_z_over_horiz": -2 / 0.5,
        "magnitude_area_xyz": 2, "signal_magnitude_area_xyz": 5,
        "ratio_var_x_over_norm": 1e3, "ratio_var_z_over_norm": 1e3,
        "ratio_sq_std_x_plus_std_y_over_std_z": 0.5, "ratio_sq_std_x_plus_std_y_over_std_norm": 1e3,
        "corr_x_z": 1, "corr_x_horiz": 1, "corr_z_horiz": 1, "corr_x_y": 0, "corr_z_norm": 0,
    }
    assert {k: features[k] for k in expected} == pytest.approx(expected, abs=1e-12)
    corrected = window_features(window, [0, 2], corrected_68_69=True)[0]
    assert corrected[67] == pytest.approx(0.25)  # (Var_x + Var_y) / Var_z = (1 + 0) / 4


@pytest.mark.parametrize(
    ("num", "den", "expected"),
    [
        (2.0, -4.0, -0.5),
        (1.0, 0.0, 1e3),  # sign(0) = +1, then clipped
        (1.0, -0.0, 1e3),  # -0.0 counts as 0, hence +1
        (1.0, -1e-9, -1e3),
        (5e-4, 1e-7, 500.0),  # |den| raised to ε = 1e-6
        (-5e-4, -1e-7, 500.0),
        (3.0, 2e-6, 1e3),
    ],
)
def test_safe_ratio(num, den, expected):
    assert wf._safe_ratio(np.array([num]), np.array([den]))[0] == pytest.approx(expected)


def test_redundancy_identities_stated_by_the_spec():
    X = window_features(*random_ragged(seed=2))
    # 11–15 = (6–10)²  (resolution 2: Var = Std², ddof = 0)
    np.testing.assert_allclose(X[:, 10:15], X[:, 5:10] ** 2, rtol=1e-12, atol=1e-15)
    # 65–67 are the reciprocals of Var(S_4)/Var(S_h), h = 1, 2, 3, when neither ratio is clipped.
    reciprocal_of = [COL[f"ratio_var_norm_over_{r}"] for r in "xyz"]
    for col, inverse_col in zip(range(64, 67), reciprocal_of):
        ok = (np.abs(X[:, col]) < 1e3) & (np.abs(X[:, inverse_col]) < 1e3) & (X[:, COL["var_norm"]] > 1e-6)
        ok &= X[:, col - 64 + COL["var_x"]] > 1e-6
        assert ok.sum() > 20
        np.testing.assert_allclose(X[ok, col] * X[ok, inverse_col], 1.0, rtol=1e-12)


def test_ma_and_sma_definitions():
    rng = np.random.default_rng(3)
    window = rng.normal(size=(17, 3))
    f = window_features(window, [0, 17])[0]
    # MA: norm of the mean vector (not the mean of the norm); SMA: mean of |x| + |y| + |z|.
    assert f[COL["magnitude_area_xyz"]] == pytest.approx(np.linalg.norm(window.mean(axis=0)))
    assert f[COL["magnitude_area_xyz"]] < f[COL["mean_norm"]]
    assert f[COL["signal_magnitude_area_xyz"]] == pytest.approx(np.abs(window).sum(axis=1).mean())


# ----------------------------------------------------------------------------- numerics
def test_variance_accurate_on_large_mean_against_exact_arithmetic():
    rng = np.random.default_rng(4)
    window = 1e5 + 1e-3 * rng.normal(size=(50, 3))
    z = window[:, 2]
    exact_mean = sum(Fraction(v) for v in z) / len(z)
    exact_var = float(sum((Fraction(v) - exact_mean) ** 2 for v in z) / len(z))
    naive = np.mean(z * z) - np.mean(z) ** 2
    assert abs(naive - exact_var) / exact_var > 1e-3  # the data defeat E[x²] − E[x]²

    batch = window_features(window, [0, 50])[0, COL["var_z"]]
    acc = WindowFeatureAccumulator()
    for sample in window:
        acc.push(*sample)
    assert batch == pytest.approx(exact_var, rel=1e-10)
    assert acc.features()[COL["var_z"]] == pytest.approx(exact_var, rel=1e-10)


def test_chunking_does_not_change_results(monkeypatch):
    samples, offsets = random_ragged(seed=5)
    whole = window_features(samples, offsets)
    monkeypatch.setattr(wf, "_CHUNK_SAMPLES", 50)  # many chunks, some single oversize windows
    np.testing.assert_array_equal(window_features(samples, offsets), whole)


def test_offsets_need_not_start_at_zero_and_no_windows_is_empty():
    samples, offsets = random_ragged(seed=6, n_windows=5)
    whole = window_features(samples, offsets)
    np.testing.assert_array_equal(window_features(samples, offsets[2:4]), whole[2:3])
    assert window_features(samples, [0]).shape == (0, 79)


@pytest.mark.parametrize(
    ("samples", "offsets", "match"),
    [
        (np.zeros((6, 3)), [0, 3, 4, 6], r"window 1 \(samples\[3:4\]\) has 1 samples"),
        (np.zeros((6, 3)), [0, 4, 3, 6], r"window 1 .* has -1 samples"),
        (np.zeros((6, 2)), [0, 6], r"\(N, 3\) array .* got shape \(6, 2\)"),
        (np.zeros((6, 3)), [0.0, 6.0], "1-D integer array"),
        (np.zeros((6, 3)), [0, 7], r"offsets must lie in \[0, 6\]"),
        (np.array([[0, 0, 0], [0, np.nan, 0], [1, 1, 1]]), [0, 3], r"samples\[1\] .* not finite"),
    ],
)
def test_bad_input_names_what_and_where(samples, offsets, match):
    with pytest.raises(ValueError, match=match):
        window_features(samples, offsets)


# ----------------------------------------------------------------------------- streaming
GRID = 2.0**-16  # values are multiples of GRID (or of GRID/256), so window sums are exact


@st.composite
def dyadic_windows(draw):
    """Ragged windows whose x/y/z rows are free, constant, near-constant or exactly zero-mean.

    Values lie on a dyadic grid, so every window sum is exact in float64: a mean that is 0 in
    exact arithmetic is 0.0 in both forms, and the sign-dependent safe ratio (discontinuous at
    den = 0 by the spec's definition) is compared on equal footing.
    """
    windows = []
    for _ in range(draw(st.integers(1, 5))):
        n = draw(st.integers(2, 40))
        ints = st.integers(-(2**20), 2**20)
        columns = []
        for _axis in range(3):
            kind = draw(st.sampled_from(["free", "constant", "near_constant", "zero_mean"]))
            if kind == "free":
                column = [GRID * v for v in draw(st.lists(ints, min_size=n, max_size=n))]
            elif kind == "constant":
                column = [GRID * draw(ints)] * n
            elif kind == "near_constant":
                level = GRID * draw(ints)
                noise = draw(st.lists(st.integers(-1, 1), min_size=n, max_size=n))
                column = [level + GRID / 256 * k for k in noise]
            else:  # sign-changing values whose mean is exactly 0
                head = draw(st.lists(ints, min_size=n - 1, max_size=n - 1))
                column = [GRID * v for v in head + [-sum(head)]]
            columns.append(column)
        windows.append(np.array(columns).T)
    return windows


@settings(max_examples=60, deadline=None)
@given(windows=dyadic_windows(), corrected_68_69=st.booleans())
def test_streaming_equals_batch(windows, corrected_68_69):
    offsets = np.concatenate([[0], np.cumsum([len(w) for w in windows])])
    batch = window_features(np.concatenate(windows), offsets, corrected_68_69=corrected_68_69)
    acc = WindowFeatureAccumulator(corrected_68_69=corrected_68_69)
    for w, window in enumerate(windows):
        acc.reset()
        for x, y, z in window:
            acc.push(x, y, z)
        np.testing.assert_allclose(acc.features(), batch[w], rtol=1e-9, atol=1e-12, err_msg=f"window {w}")


def test_streaming_equals_batch_on_general_floats():
    samples, offsets = random_ragged(seed=8)  # unrounded values, large-mean and constant rows
    batch = window_features(samples, offsets)
    acc = WindowFeatureAccumulator()
    for w, (a, b) in enumerate(zip(offsets[:-1], offsets[1:])):
        acc.reset()
        for x, y, z in samples[a:b]:
            acc.push(x, y, z)
        np.testing.assert_allclose(acc.features(), batch[w], rtol=1e-9, atol=1e-12, err_msg=f"window {w}")


def test_streaming_needs_two_samples_and_reset_starts_a_new_window():
    acc = WindowFeatureAccumulator()
    with pytest.raises(ValueError, match="has 0 sample"):
        acc.features()
    acc.push(5.0, 5.0, 5.0)
    with pytest.raises(ValueError, match="has 1 sample"):
        acc.features()
    acc.reset().push(1, 2, 2).push(3, 2, -2)
    np.testing.assert_array_equal(acc.features(), window_features([[1, 2, 2], [3, 2, -2]], [0, 2])[0])


def test_streaming_rejects_nan_without_corrupting_state():
    acc = WindowFeatureAccumulator().push(1, 2, 2).push(3, 2, -2)
    before = acc.features()
    with pytest.raises(ValueError, match=r"sample 2 of the window is \(nan, 0.0, 0.0\)"):
        acc.push(float("nan"), 0, 0)
    np.testing.assert_array_equal(acc.features(), before)


# ----------------------------------------------------------------------------- scaling
def test_scaler_maps_training_range_to_unit_interval_and_clips():
    rng = np.random.default_rng(7)
    train, test = rng.normal(size=(40, 4)), 3 * rng.normal(size=(30, 4))
    scaler = make_feature_scaler().fit(train)
    lo, hi = train.min(axis=0), train.max(axis=0)
    np.testing.assert_allclose(scaler.transform(train), 2 * (train - lo) / (hi - lo) - 1, atol=1e-12)
    scaled = scaler.transform(test)
    np.testing.assert_allclose(scaled, np.clip(2 * (test - lo) / (hi - lo) - 1, -1, 1), atol=1e-12)
    assert scaled.min() == -1 and scaled.max() == 1  # the test data do leave the training range


def test_scaler_constant_feature_maps_to_minus_one():
    # Documented deviation from the spec's "map to 0": sklearn's zero-range rule gives
    # clip(2(x − c) − 1, -1, 1), which is -1 at x = c.
    scaler = make_feature_scaler().fit(np.array([[0.0, 7.0], [1.0, 7.0]]))
    np.testing.assert_allclose(scaler.transform([[0.5, 7.0], [0.5, 7.25], [0.5, 100.0]])[:, 1], [-1.0, -0.5, 1.0])
