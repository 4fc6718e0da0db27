"""Zero-order-hold resampling against a brute-force per-sample lookup."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stairsense.stream._log import SensorLog, StepTruth
from stairsense.stream._resample import Resampler, resample


def brute_force(t_in, values, t_query):
    """For each query time, scan for the last input sample at or before it."""
    out = []
    for tq in t_query:
        best = None
        for i, ti in enumerate(t_in):
            if ti <= tq:
                best = i
        out.append(values[best])
    return np.array(out)


@settings(max_examples=40, deadline=None)
@given(
    dts=st.lists(st.integers(1_000_000, 60_000_000), min_size=1, max_size=40),
    rate=st.sampled_from([20.0, 30.0, 50.0, 100.0, 7.3]),
)
def test_matches_brute_force(dts, rate):
    t = np.concatenate([[5_000], 5_000 + np.cumsum(dts)]).astype(np.int64)
    rng = np.random.default_rng(len(dts))
    n = t.size
    q = rng.normal(size=(n, 4))
    log = SensorLog(t, rng.normal(size=(n, 3)), gyro=rng.normal(size=(n, 3)), rotvec=q,
                    label=rng.integers(0, 14, n), steps=StepTruth(t[::2], np.ones(t[::2].size)),
                    meta={"device": "x"}, pressure=rng.normal(1000, 5, n))
    out = resample(log, rate)
    # Output times: the grid t0 + k / rate (to the nearest ns) up to the last input time.
    grid = [t[0] + round(k * 1e9 / rate) for k in range(10_000) if t[0] + round(k * 1e9 / rate) <= t[-1]]
    assert out.t_ns.tolist() == grid
    for name in ("acc", "gyro", "rotvec", "label", "pressure"):
        np.testing.assert_array_equal(getattr(out, name), brute_force(t, getattr(log, name), grid), err_msg=name)
    assert out.linacc is None
    np.testing.assert_array_equal(out.steps.t_ns, log.steps.t_ns)
    assert out.meta["rate_hz"] == rate and out.meta["device"] == "x"


@settings(max_examples=60, deadline=None)
@given(
    dts=st.lists(st.integers(1_000_000, 60_000_000), min_size=1, max_size=60),
    rate=st.sampled_from([20.0, 30.0, 50.0, 7.3]),
    cuts=st.lists(st.integers(1, 60), max_size=8),
)
def test_chunked_equals_whole_log(dts, rate, cuts):
    """The carried grid and held sample make any chunking give the whole log's resampling."""
    t = np.concatenate([[5_000], 5_000 + np.cumsum(dts)]).astype(np.int64)
    rng = np.random.default_rng(len(dts))
    log = SensorLog(t, rng.normal(size=(t.size, 3)), rotvec=rng.normal(size=(t.size, 4)),
                    label=rng.integers(0, 14, t.size), pressure=rng.normal(1000, 5, t.size))
    bounds = sorted({0, t.size, *(c for c in cuts if c < t.size)})
    resampler = Resampler(rate)
    parts = [resampler.process(log.slice(a, b)) for a, b in zip(bounds, bounds[1:])]
    whole = resample(log, rate)
    np.testing.assert_array_equal(np.concatenate([p.t_ns for p in parts]), whole.t_ns)
    for name in ("acc", "rotvec", "label", "pressure"):
        np.testing.assert_array_equal(np.concatenate([getattr(p, name) for p in parts]), getattr(whole, name))


def test_no_drift_over_a_day():
    """30 Hz has a non-integer period in ns; rounding per sample keeps the grid exact after 24 h."""
    t = np.arange(0, 86_400 * 50 + 1, dtype=np.int64) * 20_000_000
    log = SensorLog(t, np.tile([0.0, 0.0, 9.8], (t.size, 1)))
    out = resample(log, 30)
    assert len(out) == 86_400 * 30 + 1 and out.t_ns[-1] == t[-1]


@pytest.mark.parametrize("rate", [0, -5, float("nan"), float("inf"), "30"])
def test_bad_rate(rate):
    log = SensorLog(np.arange(3), np.zeros((3, 3)))
    with pytest.raises(ValueError, match="rate_hz must be a finite number > 0"):
        resample(log, rate)
