"""bench_placements --smooth: the majority of N consecutive tested windows of a log, against scipy's
median filter (the median of 0/1 votes is their majority)."""
import sys

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.ndimage import median_filter

from conftest import REPO

sys.path.insert(0, str(REPO / "benchmarks"))
from bench_placements import smoothed  # noqa: E402


@settings(max_examples=80, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 2), st.integers(-1, 1)), max_size=60), st.sampled_from([1, 3, 5]))
def test_smoothing_is_a_median_filter_inside_each_logs_tested_windows(rows, width):
    log = np.array([g for g, _ in rows], dtype=np.int64)
    decided = np.array([d for _, d in rows], dtype=np.int64)
    out = smoothed(decided, log, width)
    assert np.array_equal(out[decided < 0], decided[decided < 0])  # untested windows stay untested
    half = width // 2
    for g in np.unique(log):
        rows_g = np.flatnonzero((log == g) & (decided >= 0))
        votes = decided[rows_g]
        expected = votes.copy()
        if votes.size > 2 * half:
            expected[half:votes.size - half] = median_filter(votes, size=width, mode="nearest")[half:votes.size - half]
        assert np.array_equal(out[rows_g], expected)
