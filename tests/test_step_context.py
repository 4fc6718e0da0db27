"""Step-shape and step-context features (features/_step_context.py) against independent oracles:
scipy's moments and integrator, numpy's least-squares line, and a direct reading of the context rule."""
import numpy as np
import pytest
import scipy.integrate
import scipy.stats
from hypothesis import given, settings
from hypothesis import strategies as st

from stairsense.features import (
    STEP_CONTEXT_NAMES,
    STEP_CONTEXT_OF,
    STEP_SHAPE_NAMES,
    StepContext,
    step_context_features,
    step_shape,
    step_shape_features,
)

SHAPE = {n: i for i, n in enumerate(STEP_SHAPE_NAMES)}


def _window(n, seed=0):
    rng = np.random.default_rng(seed)
    t = np.arange(n)
    z = 3 * np.sin(2 * np.pi * t / n) + rng.normal(scale=0.5, size=n)
    h = np.abs(rng.normal(loc=1.0, size=n))
    return z, h


@pytest.mark.parametrize("n", [3, 17, 60])
def test_shape_matches_scipy_and_numpy(n):
    z, h = _window(n, seed=n)
    dt = 1 / 30
    f = step_shape(z, h, dt)
    sd = z.std()
    assert f[SHAPE["step_duration_s"]] == pytest.approx(n * dt)
    assert f[SHAPE["step_z_skew"]] == pytest.approx(scipy.stats.skew(z), rel=1e-6)
    assert f[SHAPE["step_z_kurt"]] == pytest.approx(scipy.stats.kurtosis(z, fisher=True) + 3, rel=1e-6)
    assert f[SHAPE["step_z_std"]] == pytest.approx(sd, rel=1e-8)
    assert f[SHAPE["corr_z_h"]] == pytest.approx(np.corrcoef(z, h)[0, 1], rel=1e-6)
    assert f[SHAPE["h_over_z_std"]] == pytest.approx(h.std() / sd, rel=1e-6)
    v = scipy.integrate.cumulative_trapezoid(z, dx=dt, initial=0)
    d = scipy.integrate.cumulative_trapezoid(v, dx=dt, initial=0)
    t = np.arange(n) * dt
    residual = d - np.polyval(np.polyfit(t, d, 1), t)
    assert f[SHAPE["dz_range"]] == pytest.approx(np.ptp(residual), rel=1e-7, abs=1e-12)
    assert f[SHAPE["dz_end"]] == pytest.approx(d[-1], rel=1e-10)
    assert f[SHAPE["vz_range"]] == pytest.approx(np.ptp(v), rel=1e-10)
    assert f[SHAPE["dz_range_norm"]] == pytest.approx(np.ptp(residual) / (sd * (n * dt) ** 2), rel=1e-6)
    assert f[SHAPE["step_z_argmax"]] == np.argmax(z) / n and f[SHAPE["step_z_argmin"]] == np.argmin(z) / n


def test_excursion_of_constant_acceleration_is_that_of_a_parabola():
    # z = a: d = a t² / 2 exactly under the trapezoid rule's second integral only at the grid, and the
    # residual of a parabola against its least-squares line has a closed-form range on a fine grid.
    a, n, dt = 2.0, 2001, 1e-3
    f = step_shape(np.full(n, a), np.ones(n), dt)
    T = (n - 1) * dt
    # Residual of t² against its best line on [0, T] (continuous): t² − T t + T²/6, range T²/4.
    assert f[SHAPE["dz_range"]] == pytest.approx(a / 2 * T**2 / 4, rel=1e-3)
    assert np.all(np.isfinite(f))  # σ = 0 is guarded


def test_short_and_flat_windows_are_finite():
    for n in (1, 2):
        f = step_shape(np.zeros(n), np.zeros(n), 0.02)
        assert np.all(np.isfinite(f)) and f[SHAPE["dz_range"]] == 0
    with pytest.raises(ValueError, match="same non-zero length"):
        step_shape(np.zeros(0), np.zeros(0), 0.02)


def _context_by_definition(shape, t_start, t_end, context, gap_s):
    cols = [STEP_SHAPE_NAMES.index(n) for n in STEP_CONTEXT_OF]
    out = []
    run_start = 0
    for i in range(len(shape)):
        if i and (t_start[i] - t_end[i - 1]) / 1e9 > gap_s:
            run_start = i
        block = shape[max(run_start, i - context + 1): i + 1][:, cols]
        m = block.mean(0)
        out.append(np.concatenate([shape[i], m, block.std(0) / (np.abs(m) + 1e-6), [len(block)]]))
    return np.array(out)


@settings(max_examples=60, deadline=None)
@given(lengths=st.lists(st.integers(1, 40), min_size=1, max_size=25),
       gaps=st.lists(st.floats(0, 3), min_size=25, max_size=25),
       context=st.integers(1, 7), chunk=st.integers(1, 6), seed=st.integers(0, 2**16))
def test_streaming_equals_batch_and_the_definition(lengths, gaps, context, chunk, seed):
    rng = np.random.default_rng(seed)
    dt = 1 / 50
    offsets = np.concatenate([[0], np.cumsum(lengths)])
    z = rng.normal(size=offsets[-1])
    h = np.abs(rng.normal(size=offsets[-1]))
    # Window times: each lasts its samples, then a random pause before the next one.
    t_start, t_end, now = [], [], 0.0
    for n, g in zip(lengths, gaps):
        t_start.append(int(now * 1e9))
        now += n * dt
        t_end.append(int(now * 1e9))
        now += g
    shape = step_shape_features(z, h, offsets, dt)
    batch = step_context_features(shape, t_start, t_end, context=context, max_gap_s=1.5)
    np.testing.assert_allclose(batch, _context_by_definition(shape, t_start, t_end, context, 1.5), rtol=1e-12,
                               atol=1e-15)
    # The phone's form: one window at a time from its samples, in chunks of windows.
    stream = StepContext(context, 1.5)
    rows = []
    for lo in range(0, len(lengths), chunk):
        for i in range(lo, min(lo + chunk, len(lengths))):
            a, b = offsets[i], offsets[i + 1]
            rows.append(stream.push(z[a:b], h[a:b], dt, t_start[i], t_end[i]))
    np.testing.assert_array_equal(np.array(rows), batch)


def test_reset_starts_a_new_run():
    z, h = _window(30)
    ctx = StepContext(5)
    for k in range(3):
        ctx.push(z, h, 1 / 30, k * 10**9, k * 10**9 + 10**9)
    assert ctx.reset().push(z, h, 1 / 30, 4 * 10**9, 5 * 10**9)[-1] == 1
    assert len(STEP_CONTEXT_NAMES) == 36 and STEP_CONTEXT_NAMES[:19] == STEP_SHAPE_NAMES


@pytest.mark.parametrize("kwargs", [dict(context=0), dict(context=2.5), dict(max_gap_s=0)])
def test_bad_parameters_are_refused(kwargs):
    with pytest.raises(ValueError, match="StepContext"):
        StepContext(**kwargs)
