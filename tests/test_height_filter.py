"""HeightFilter (stream/_height.py) against independent oracles: the standard atmosphere from its
physical constants, a textbook matrix Kalman filter, the push form, and stated properties
(a still phone, a steady climb, one floor, the lag behind a height step)."""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stairsense.stream import HeightFilter, pressure_altitude

NAN = float("nan")
S = 1_000_000_000  # ns per second


def pressure_at(height_m):
    """U.S. Standard Atmosphere 1976, eq. 33a (troposphere), hPa at geopotential height ``height_m``,
    from the physical constants (not from the rounded 44330.8 and 0.190263 under test)."""
    t0, lapse, g0, m0, r_star = 288.15, -0.0065, 9.80665, 0.0289644, 8.31432
    return 1013.25 * (t0 / (t0 + lapse * np.asarray(height_m, dtype=float))) ** (g0 * m0 / (r_star * lapse))


def metres_per_hpa(p):
    """−dh/dp of the altitude formula, by a central difference."""
    return (pressure_altitude(p - 1e-3) - pressure_altitude(p + 1e-3)) / 2e-3


def rows(seconds, rate_hz, start_s=0.0):
    return np.rint((start_s + np.arange(int(round(seconds * rate_hz))) / rate_hz) * S).astype(np.int64)


def held(t_ns, reading_t_ns, readings):
    """Zero-order hold of barometer readings onto the rows (NaN before the first reading)."""
    index = np.searchsorted(reading_t_ns, t_ns, side="right") - 1
    return np.where(index >= 0, np.asarray(readings)[np.maximum(index, 0)], NAN)


def interpolated(t_ns, reading_t_ns, readings):
    """Readings interpolated onto the rows, as ``import_log`` merges streams (NaN outside their span)."""
    return np.interp(t_ns, reading_t_ns, readings, left=NAN, right=NAN)


# ------------------------------------------------------------------------------------------------
# pressure to altitude


@pytest.mark.parametrize("height", [-200.0, 0.0, 3.0, 150.0, 1000.0, 3000.0])
def test_pressure_altitude_inverts_the_standard_atmosphere(height):
    assert pressure_altitude(pressure_at(height)) == pytest.approx(height, abs=0.01)


def test_noise_in_metres_uses_the_slope_at_the_first_reading():
    """0.03 hPa is 0.25 m near sea level and 0.27 m at 900 hPa: R is set from the first reading's slope."""
    from stairsense.stream._height import _metres_per_hpa

    for p in (1013.25, 1000.0, 900.0, 700.0):
        assert _metres_per_hpa(p) == pytest.approx(metres_per_hpa(p), rel=1e-8)
    assert 0.03 * _metres_per_hpa(1013.25) == pytest.approx(0.25, abs=0.005)


# ------------------------------------------------------------------------------------------------
# (a) push, process and any chunking: one state, the same bits


@st.composite
def streams(draw):
    """Irregular rows (jitter, gaps on both sides of max_gap_s), a barometer at its own rate held
    or interpolated onto them (quantised or not), NaN dropouts, and a filter with drawn parameters."""
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    n = draw(st.integers(1, 400))
    rate = draw(st.sampled_from([30.0, 50.0, 100.0]))
    dt = 1e9 / rate * (1 + draw(st.floats(0, 0.5)) * rng.uniform(-1, 1, n))
    gaps = rng.random(n) < draw(st.sampled_from([0.0, 0.01]))
    dt[gaps] = rng.choice([0.25e9, 0.3e9, 0.31e9, 1e9, 2e9], gaps.sum())  # on both sides of max_gap_s, and on it
    t = 10**12 + np.cumsum(np.maximum(np.rint(dt), 1).astype(np.int64))
    baro_hz = draw(st.sampled_from([1.0, 7.0, 25.0]))
    reading_t = t[0] + np.arange(0, (t[-1] - t[0]) / 1e9 + 1, 1 / baro_hz) * 1e9
    climb = np.cumsum(rng.normal(0, 0.05, reading_t.size))
    readings = pressure_at(climb) + rng.normal(0, 0.03, reading_t.size)
    quantum = draw(st.sampled_from([0.0, 0.01, 0.1]))
    if quantum:
        readings = np.round(readings / quantum) * quantum
    pressure = draw(st.sampled_from([held, interpolated]))(t, reading_t, readings)
    pressure[rng.random(n) < draw(st.sampled_from([0.0, 0.1, 0.5]))] = NAN
    vertical = rng.normal(0, draw(st.sampled_from([0.0, 0.5, 3.0])), n)
    params = {"acceleration_noise": draw(st.sampled_from([0.002, 0.3, 2.0])),
              "pressure_noise_hpa": draw(st.sampled_from([0.01, 0.03])),
              "pressure_rate_hz": draw(st.sampled_from([1.0, 10.0, 25.0])),
              "max_gap_s": draw(st.sampled_from([0.3, 1.0]))}
    cuts = sorted(set(draw(st.lists(st.integers(0, n), max_size=6))))
    return t, vertical, pressure, params, cuts


@settings(max_examples=150, deadline=None)
@given(case=streams())
def test_push_process_and_chunks_agree_bit_for_bit(case):
    t, vertical, pressure, params, cuts = case
    pushed = HeightFilter(**params)
    by_row = np.array([pushed.push(*row) for row in zip(t.tolist(), vertical.tolist(), pressure.tolist())])
    whole = HeightFilter(**params)
    height, speed = whole.process(t, vertical, pressure)
    chunked = HeightFilter(**params)
    parts = [chunked.process(t[a:b], vertical[a:b], pressure[a:b]) for a, b in zip([0, *cuts], [*cuts, t.size])]
    for h, v in ((height, speed), tuple(np.concatenate(x) for x in zip(*parts))):
        np.testing.assert_array_equal(h, by_row[:, 0])
        np.testing.assert_array_equal(v, by_row[:, 1])
    assert repr(chunked.zi_) == repr(whole.zi_) == repr(pushed.zi_)  # repr: exact floats, and nan equals nan
    assert np.isfinite(by_row[np.isfinite(by_row[:, 0]), 1]).all()


# ------------------------------------------------------------------------------------------------
# (b) the scalar filter against a textbook matrix Kalman filter


def matrix_kalman(t_ns, acc, altitude, q, r, rate_hz, initial_speed_sd=1.0):
    """x = [h, v]; x ← F x + G a, P ← F P Fᵀ + Q; on a row with an altitude (not NaN)
    K = P Hᵀ (H P Hᵀ + R)⁻¹ with R = r / min(1, rate·dt), x ← x + K (z − H x), P ← (I − K H) P;
    started at the first altitude with P = diag(r, 1)."""
    H = np.array([[1.0, 0.0]])
    x = P = None
    out = np.full((t_ns.size, 2), NAN)
    for k in range(t_ns.size):
        if x is not None:
            dt = (t_ns[k] - t_ns[k - 1]) / 1e9
            F = np.array([[1.0, dt], [0.0, 1.0]])
            G = np.array([[dt * dt / 2], [dt]])
            Q = q * np.array([[dt**3 / 3, dt**2 / 2], [dt**2 / 2, dt]])
            x = F @ x + G * acc[k]
            P = F @ P @ F.T + Q
            if not np.isnan(altitude[k]):
                R = np.array([[r / min(1.0, rate_hz * dt)]])
                K = P @ H.T @ np.linalg.inv(H @ P @ H.T + R)
                x = x + K @ (np.array([[altitude[k]]]) - H @ x)
                P = (np.eye(2) - K @ H) @ P
        elif not np.isnan(altitude[k]):
            x = np.array([[altitude[k]], [0.0]])
            P = np.diag([r, initial_speed_sd**2])
        if x is not None:
            out[k] = x[:, 0]
    return out


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), rate=st.sampled_from([30.0, 100.0]), baro_hz=st.sampled_from([1.0, 10.0, 25.0]),
       acceleration_noise=st.sampled_from([0.002, 0.3, 3.0]), merge=st.sampled_from([held, interpolated]),
       dropouts=st.sampled_from([0.0, 0.2]))
def test_matches_a_matrix_kalman_filter(seed, rate, baro_hz, acceleration_noise, merge, dropouts):
    """Irregular rows (some slower than the barometer), pressure held or interpolated, NaN dropouts."""
    rng = np.random.default_rng(seed)
    n = 600
    t = 5 * S + np.cumsum(1e9 / rate * rng.uniform(0.5, 4.0, n)).astype(np.int64)
    reading_t = t[0] - rng.uniform(0, 1e9 / baro_hz) + np.arange(0, 80, 1 / baro_hz) * 1e9
    readings = pressure_at(np.cumsum(rng.normal(0, 0.1, reading_t.size))) + rng.normal(0, 0.03, reading_t.size)
    pressure = merge(t, reading_t, readings)
    pressure[rng.random(n) < dropouts] = NAN
    vertical = rng.normal(0, 1.0, n)
    got = np.column_stack(HeightFilter(acceleration_noise=acceleration_noise, pressure_rate_hz=baro_hz)
                          .process(t, vertical, pressure))

    first = pressure[~np.isnan(pressure)][0]
    altitude = pressure_altitude(pressure) - pressure_altitude(first)
    r = (0.03 * metres_per_hpa(first)) ** 2
    want = matrix_kalman(t, vertical, altitude, acceleration_noise**2, r, baro_hz)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    ok = ~np.isnan(want)
    np.testing.assert_allclose(got[ok], want[ok], rtol=1e-8, atol=1e-8)


# ------------------------------------------------------------------------------------------------
# (c) stated properties


def test_a_still_phone_stays_at_its_first_height():
    """Constant pressure, zero acceleration: height 0 (the first reading) and speed 0, exactly."""
    t = rows(60, 50)
    height, speed = HeightFilter().process(t, np.zeros(t.size), np.full(t.size, 987.65))
    assert (height == 0).all() and (speed == 0).all()


def climb(acceleration_noise, baro_hz, seed):
    """A 0.3 m/s climb for 120 s, 50 Hz rows, the exact (zero) acceleration, readings with σ 0.03 hPa."""
    rng = np.random.default_rng(seed)
    t = rows(120, 50)
    reading_t = rows(120, baro_hz)
    true_reading = 0.3 * reading_t / 1e9
    pressure = held(t, reading_t, pressure_at(true_reading) + rng.normal(0, 0.03, reading_t.size))
    height, speed = HeightFilter(acceleration_noise=acceleration_noise, pressure_rate_hz=baro_hz).process(
        t, np.zeros(t.size), pressure)
    # Heights count from the first (noisy) reading, so the truth does too.
    truth = 0.3 * t / 1e9 - pressure_altitude(pressure[0])
    raw = pressure_altitude(pressure) - pressure_altitude(pressure[0])
    settled = t >= 20 * S
    return height[settled] - truth[settled], speed[settled], raw[settled] - truth[settled]


@pytest.mark.parametrize(("acceleration_noise", "mean_tol", "speed_rms", "height_ratio"), [
    # The default, for the front end's vertical without its slow part: the speed is still noisy.
    (0.3, 0.02, 0.15, 0.55),
    # An exact accelerometer, trusted at its datasheet noise (180 µg/√Hz).
    (0.002, 0.01, 0.01, 0.2),
])
@pytest.mark.parametrize("baro_hz", [10, 25])
def test_a_steady_climb(acceleration_noise, mean_tol, speed_rms, height_ratio, baro_hz):
    """Speed converges to 0.3 m/s; the height error is a fraction of the raw altitude's."""
    for seed in range(3):
        height_error, speed, raw_error = climb(acceleration_noise, baro_hz, seed)
        assert abs(speed.mean() - 0.3) < mean_tol
        assert np.sqrt(np.mean((speed - 0.3) ** 2)) < speed_rms
        assert np.sqrt(np.mean(height_error**2)) < height_ratio * np.sqrt(np.mean(raw_error**2))
        assert abs(height_error.mean()) < 0.05


def test_one_floor_in_ten_seconds():
    """3 m in 10 s (speed 0.3·(1 − cos 2πt/10)), still before and after; the exact acceleration."""
    rng = np.random.default_rng(4)
    t = rows(40, 50)
    s = t / 1e9 - 10
    on = (s >= 0) & (s < 10)
    truth = np.where(s < 0, 0.0, np.where(on, 0.3 * (s - 10 / (2 * np.pi) * np.sin(2 * np.pi * s / 10)), 3.0))
    acc = np.where(on, 0.3 * 2 * np.pi / 10 * np.sin(2 * np.pi * s / 10), 0.0)
    reading_t = rows(40, 10)
    pressure = held(t, reading_t, pressure_at(np.interp(reading_t, t, truth)) + rng.normal(0, 0.03, reading_t.size))
    height, speed = HeightFilter().process(t, acc, pressure)
    before, after = (s > -4) & (s < 0), s > 16
    assert height[after].mean() - height[before].mean() == pytest.approx(3.0, abs=0.1)
    error = (height - (truth - pressure_altitude(pressure[0])))[s > -9]  # heights count from the first reading
    assert np.sqrt(np.mean(error**2)) < 0.15  # the raw altitude's: 0.25 m
    assert np.abs(speed[after]).mean() < 0.1


def test_a_quantised_barometer_on_a_still_phone_keeps_correcting():
    """Repeated values are readings too: an accelerometer bias of 0.05 m/s² would carry the height
    0.5·0.05·120² = 360 m away in two minutes if repeats never corrected it."""
    t = rows(120, 50)
    height, speed = HeightFilter().process(t, np.full(t.size, 0.05), np.full(t.size, 1000.0))
    assert np.abs(height).max() < 0.5 and np.abs(speed).max() < 0.5


def still_noise(rows_hz, merge=held, pressure_rate_hz=10.0, seed=5):
    """How much a still phone's height wanders (its standard deviation; the mean is the first
    reading's error) over 200 s: 10 Hz readings with σ 0.03 hPa on rows at ``rows_hz``."""
    rng = np.random.default_rng(seed)
    t = rows(200, rows_hz)
    reading_t = rows(200, 10)
    pressure = merge(t, reading_t, 1000 + rng.normal(0, 0.03, reading_t.size))
    height, _ = HeightFilter(pressure_rate_hz=pressure_rate_hz).process(t, np.zeros(t.size), pressure)
    return np.std(height[t > 20 * S])


def test_the_barometer_weighs_the_same_at_any_row_rate_held_or_interpolated():
    """Each row carries its share of a reading: 30 or 100 Hz rows, held or interpolated, the same
    smoothing (about 0.1 m against the readings' 0.25 m). Counting every row of a 100 Hz stream as
    a reading (telling the filter the barometer reads at 100 Hz) follows the noise instead."""
    base = still_noise(30)
    assert 0.05 < base < 0.15
    for rows_hz, merge in ((100, held), (30, interpolated), (100, interpolated)):
        assert still_noise(rows_hz, merge) == pytest.approx(base, rel=0.15)
    assert still_noise(100, pressure_rate_hz=100.0) > 1.25 * base


def test_nan_pressure_only_predicts():
    f = HeightFilter()
    assert all(math.isnan(x) for x in f.push(0, 1.0, NAN))
    assert f.push(20_000_000, 1.0, 1000.0) == (0.0, 0.0)  # the first reading sets the zero
    h, v = f.push(40_000_000, 1.0, NAN)  # no reading: the accelerometer alone moves the estimate
    assert h == pytest.approx(0.5 * 0.02**2) and v == pytest.approx(0.02)


def test_a_gap_restarts_from_the_next_reading_keeping_the_zero():
    f = HeightFilter(max_gap_s=0.3)
    f.process(rows(5, 50), np.zeros(250), np.full(250, 1000.0))
    t = rows(5, 50)[-1] + 300_000_000  # exactly max_gap_s: bridged, the acceleration moves the speed
    assert f.push(t, 2.0, 1000.0)[1] > 0.1
    t += 310_000_000  # longer: the estimate is forgotten
    assert all(math.isnan(x) for x in f.push(t, 2.0, NAN))
    h, v = f.push(t + 20_000_000, 2.0, 999.0)
    assert h == pressure_altitude(999.0) - pressure_altitude(1000.0) and v == 0.0
    f.push(t + 40_000_000, 2.0, 999.0)  # predicted across a normal step again
    assert f.zi_[2] != 0.0


def test_reset_forgets_the_zero():
    f = HeightFilter()
    f.push(0, 0.0, 1000.0)
    f.reset()
    assert f.push(0, 0.0, 990.0) == (0.0, 0.0)


# ------------------------------------------------------------------------------------------------
# (d) lag


def step_response(acceleration_noise=0.3, baro_hz=10):
    """A 1 m rise at t = 60 s that the accelerometer does not see, noise-free readings held on 50 Hz
    rows: seconds to 50 % and 90 %, and the height after 5 s."""
    t = rows(70, 50)
    reading_t = rows(70, baro_hz)
    pressure = held(t, reading_t, pressure_at(np.where(reading_t >= 60 * S, 1.0, 0.0)))
    height, _ = HeightFilter(acceleration_noise=acceleration_noise, pressure_rate_hz=baro_hz).process(
        t, np.zeros(t.size), pressure)
    s = t / 1e9 - 60
    return s[np.argmax((s >= 0) & (height >= 0.5))], s[np.argmax((s >= 0) & (height >= 0.9))], height[s >= 5]


def test_a_height_step_unseen_by_the_accelerometer_is_followed_within_half_a_second():
    t50, t90, settled = step_response()
    assert t50 <= 0.25 and t90 <= 0.5
    np.testing.assert_allclose(settled, 1.0, atol=0.02)
    # The lag is the filter's, not the barometer's: trusting the accelerometer more makes it slower.
    assert step_response(acceleration_noise=0.002)[1] > 5.0


def test_a_motion_the_accelerometer_sees_is_followed_without_lag():
    """1 m in 1 s (smooth, up to 2 m/s), the exact acceleration: the estimate is closer to the truth
    than the held readings themselves (which lag by up to a period), while without the
    acceleration it lags by tens of centimetres."""
    t = rows(70, 50)
    s = t / 1e9 - 60
    on = (s >= 0) & (s < 1)
    truth = np.where(s < 0, 0.0, np.where(on, s - np.sin(2 * np.pi * s) / (2 * np.pi), 1.0))
    acc = np.where(on, 2 * np.pi * np.sin(2 * np.pi * s), 0.0)
    reading_t = rows(70, 10)
    pressure = held(t, reading_t, pressure_at(np.interp(reading_t, t, truth)))
    with_acc, _ = HeightFilter().process(t, acc, pressure)
    without, _ = HeightFilter().process(t, np.zeros(t.size), pressure)
    raw = pressure_altitude(pressure)
    assert np.abs(with_acc - truth).max() < min(0.1, 0.5 * np.abs(raw - truth).max())
    assert np.abs(without - truth).max() > 0.3


# ------------------------------------------------------------------------------------------------
# refusals


@pytest.mark.parametrize(("row", "message"), [
    ((2_000_000, 0.0, 1000.0), "strictly increasing; t_ns=2000000 follows"),
    ((3_000_000, NAN, 1000.0), "vertical acceleration at t_ns=3000000 is nan"),
    ((3_000_000, 0.0, 101325.0), "101325.0 hPa; a barometer reads 300–1100 hPa"),
    ((3_000_000, 0.0, float("inf")), "inf hPa"),
])
@pytest.mark.parametrize("form", ["push", "process"])
def test_bad_rows_are_refused_and_leave_the_state_alone(row, message, form):
    """``process`` checks the whole block first: its valid first row is not consumed either."""
    f = HeightFilter()
    f.push(1_000_000, 0.0, 1000.0)
    f.push(2_000_000, 0.5, 1000.1)
    before = f.zi_
    with pytest.raises(ValueError, match=message):
        if form == "push":
            f.push(*row)
        else:
            f.process(*zip((2_500_000, 0.0, 1000.2), row))
    assert f.zi_ is before


def test_parameters_and_shapes_are_checked():
    with pytest.raises(ValueError, match="acceleration_noise must be a finite number > 0, got 0"):
        HeightFilter(acceleration_noise=0)
    with pytest.raises(ValueError, match="pressure_rate_hz must be a finite number > 0"):
        HeightFilter(pressure_rate_hz=float("nan"))
    with pytest.raises(ValueError, match=r"1-D of one length; got shapes \(2,\), \(2,\) and \(3,\)"):
        HeightFilter().process([1, 2], [0.0, 0.0], [1000.0] * 3)
