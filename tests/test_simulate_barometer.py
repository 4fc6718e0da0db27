"""The simulator's altitude, lifts, escalators, ramps and barometer (issue 24, "Simulator"), against
independent oracles.

Oracles: closed forms (altitude gain = riser × stair steps; ride heights from speed and ramps), the
U.S. Standard Atmosphere formula written out here (not the project's), statistics of a long standing
segment (noise RMS, quantisation step), bounds stated by the model (drift, disturbances), a hash of
the arrays main's simulator produced before the barometer existed, and brute-force re-simulation
(chunking, round trips).
"""
import hashlib
import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stairsense.stream import Activity, read_log, write_log
from stairsense.stream.simulate._barometer import Barometer
from stairsense.stream.simulate._building import FLOOR_HEIGHT_M, building_walk
from stairsense.stream.simulate._device import SensorModel
from stairsense.stream.simulate._gait import Person
from stairsense.stream.simulate._simulate import simulate, simulate_chunks
from stairsense.stream.simulate._vertical import ride_rise_m, ride_seconds

A = Activity
STAIRS = (A.WALKING_UPSTAIRS, A.WALKING_DOWNSTAIRS)
IDEAL = SensorModel.ideal()


def standard_atmosphere_hpa(h_m):
    """U.S. Standard Atmosphere 1976 eq. 33a, written out from its constants (the oracle)."""
    t0, lapse, r, g0, m0 = 288.15, 0.0065, 8.31432, 9.80665, 0.0289644
    return 1013.25 * (1.0 - lapse * np.asarray(h_m) / t0) ** (g0 * m0 / (r * lapse))


def altitude_of(log):
    """True altitude at each sample's time from an ideal barometer's pressure (oracle formula inverted
    numerically on a fine grid, so the project's formula is not used)."""
    grid = np.linspace(-100.0, 1200.0, 260001)
    return np.interp(log.pressure, standard_atmosphere_hpa(grid)[::-1], grid[::-1]) - log.meta["barometer"]["site_elevation_m"]


# --- default output unchanged ------------------------------------------------------------------------


def digest(log):
    """sha256 of every stream, the step truth and the meta; floats rounded to 1e-9 so the hash is a
    statement about the model, not about the last bit of a libm."""
    h = hashlib.sha256()
    for name in ("t_ns", "acc", "gyro", "rotvec", "linacc", "label"):
        a = getattr(log, name)
        h.update((np.round(a, 9) if a.dtype.kind == "f" else a).tobytes())
    h.update(log.steps.t_ns.tobytes())
    h.update(log.steps.kind.tobytes())
    h.update(json.dumps(log.meta, sort_keys=True).encode())
    return h.hexdigest()


# Golden digests of two logs without a barometer: whatever changes what the simulator draws must
# change them on purpose. test_the_barometer_changes_no_other_stream checks the barometer directly.
@pytest.mark.parametrize("kwargs, expected", [
    (dict(minutes=3, rate_hz=50, seed=7), "6c312f0dbe960435a86bb73425f60f44ae33b6d3ddba65e1cc7591de5e65340e"),
    (dict(schedule=[(5, 5.0), (1, 20.0), (2, 15.0), (1, 8.0), (3, 15.0), (5, 4.0)], rate_hz=100, seed=11,
          reorient_per_hour=240), "be9a62ef1bcee10ca851531876ba12ea5869504e5623c11fb277709d10ee1fff"),
])
def test_without_a_barometer_the_log_is_the_one_main_simulated(kwargs, expected):
    log = simulate(**kwargs)
    assert log.pressure is None
    assert digest(log) == expected


@pytest.mark.parametrize("schedule", [None, [(A.STANDING, 5.0), (A.WALKING_UPSTAIRS, 10.0), (A.LIFT_UP, 8.0)]])
def test_the_barometer_changes_no_other_stream(schedule):
    kwargs = dict(schedule=schedule, minutes=None if schedule else 2, seed=5)
    without, with_ = simulate(**kwargs), simulate(**kwargs, barometer=Barometer())
    for name in ("t_ns", "acc", "gyro", "rotvec", "linacc", "label"):
        np.testing.assert_array_equal(getattr(with_, name), getattr(without, name))
    np.testing.assert_array_equal(with_.steps.t_ns, without.steps.t_ns)
    extra = set(with_.meta) - set(without.meta)
    assert extra == {"barometer", "bout_end_altitude_m"}
    assert {k: with_.meta[k] for k in without.meta} == without.meta


# --- altitude truth ----------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(3))
def test_altitude_gain_is_the_riser_times_the_stair_steps(seed):
    schedule = [(A.STANDING, 3.0), (A.WALKING_UPSTAIRS, 14.0), (A.WALKING, 6.0), (A.WALKING_DOWNSTAIRS, 6.0),
                (A.WALKING, 5.0), (A.STANDING, 3.0)]
    log = simulate(schedule=schedule, seed=seed, barometer=Barometer.ideal())
    rise = log.meta["person"]["stair_rise_m"]
    up, down = (int(np.sum(log.steps.kind == k)) for k in STAIRS)
    assert up > 15 and down > 5
    ends = np.array(log.meta["bout_end_altitude_m"])
    np.testing.assert_allclose(ends, np.array([0, up, up, up - down, up - down, up - down]) * rise, atol=1e-9)
    # Standing keeps the height; between two samples it moves by less than one riser.
    h = altitude_of(log)
    assert np.ptp(h[(log.label == A.STANDING) & (log.t_ns < 3e9)]) < 1e-4
    assert np.abs(np.diff(h)).max() < rise


def test_pressure_is_the_standard_atmosphere_at_the_true_altitude():
    """An ideal barometer's reading is the oracle formula at the elevation plus the altitude at the
    reading's time (the latest reading at or before each sample, within one reading's motion)."""
    log = simulate(schedule=[(A.STANDING, 4.0), (A.WALKING_UPSTAIRS, 20.0), (A.LIFT_DOWN, 10.0)], seed=2,
                   barometer=Barometer.ideal(rate_hz=25))
    meta = log.meta["barometer"]
    # The project rounds the formula's constants to 44330.8 m and 0.190263: 1e-5 hPa is 0.1 mm.
    assert standard_atmosphere_hpa(meta["site_elevation_m"]) == pytest.approx(log.pressure[0], abs=1e-5)
    # Altitude from the meta's bout ends at the last sample; held values lag by < 1/25 s of a ≤ 1.6 m/s ride.
    h = altitude_of(log)
    assert h[-1] == pytest.approx(log.meta["bout_end_altitude_m"][-1], abs=1e-3)  # the rounded constants again
    assert np.abs(np.diff(h)).max() <= 1.6 / 25 + 1e-6


def test_sample_and_hold_at_the_barometer_rate():
    log = simulate(schedule=[(A.WALKING_UPSTAIRS, 30.0)], seed=4, rate_hz=100, sensors=IDEAL,
                   barometer=Barometer.ideal(rate_hz=5))
    changes = np.flatnonzero(np.diff(log.pressure) != 0) + 1
    t = log.t_ns[changes] / 1e9
    first = log.meta["barometer"]["first_reading_s"]
    # Every change lands on the first sample at or after a reading time (first + j/5 s): within one
    # 100 Hz period after the latest reading time.
    since = t - (first + np.floor((t - first) * 5 + 1e-9) / 5)
    assert np.all((since >= -1e-9) & (since < 0.01 + 1e-9))
    assert len(changes) >= 0.9 * 30 * 5


def test_noise_rms_and_quantisation_on_a_long_standing_segment():
    model = Barometer(rate_hz=10, noise_hpa=0.03, resolution_hpa=0.01, drift_hpa_per_h=0.0, door_steps_per_h=0.0,
                      door_step_hpa=0.0, spikes_per_h=0.0, warming_hpa=0.0)
    log = simulate(schedule=[(A.STANDING, 600.0)], seed=8, rate_hz=20, barometer=model)
    readings = log.pressure[::2]  # one per reading at 10 Hz on a 20 Hz log (drops aside)
    steps = readings / 0.01
    np.testing.assert_allclose(steps, np.round(steps), atol=1e-6)  # multiples of the resolution
    # Noise plus rounding (uniform, variance res²/12) around the constant true value.
    expected = np.sqrt(0.03**2 + 0.01**2 / 12)
    assert readings.std() == pytest.approx(expected, rel=0.08)
    assert readings.mean() == pytest.approx(standard_atmosphere_hpa(log.meta["barometer"]["site_elevation_m"])
                                            + log.meta["barometer"]["offset_hpa"], abs=0.005)


def test_weather_drift_and_warming_stay_bounded_and_slow():
    """Over an hour standing still: the drift (tendency sd 0.3 hPa/h) stays within 4 sd of an hour's
    change, and no disturbance-free minute moves by more than the warming and weather can."""
    model = Barometer(rate_hz=1, noise_hpa=0.0, resolution_hpa=0.0, door_steps_per_h=0.0, door_step_hpa=0.0,
                      spikes_per_h=0.0, offset_sd_hpa=0.0)
    changes = []
    for seed in range(5):
        log = simulate(schedule=[(A.STANDING, 3600.0)], seed=seed, rate_hz=20, barometer=model,
                       placement="trouser_pocket")
        p = log.pressure - log.pressure[0]
        changes.append(p[-1])
        per_minute = np.abs(np.diff(p[:: 20 * 60]))
        # warming ≤ 0.15 hPa with τ ≥ 120 s: ≤ 0.15·(1 − e^{−1/2}) ≈ 0.06 in any minute; weather ≪ that.
        assert per_minute.max() < 0.07
    assert np.all(np.abs(changes) < 4 * 0.3 + 0.15)


def test_doors_and_spikes_disturb_within_their_size():
    quiet = Barometer(rate_hz=25, noise_hpa=0.0, resolution_hpa=0.0, drift_hpa_per_h=0.0, warming_hpa=0.0,
                      door_steps_per_h=0.0, spikes_per_h=0.0)
    busy = Barometer(rate_hz=25, noise_hpa=0.0, resolution_hpa=0.0, drift_hpa_per_h=0.0, warming_hpa=0.0,
                     door_steps_per_h=120.0, spikes_per_h=120.0)
    still = [(A.STANDING, 1800.0)]
    a = simulate(schedule=still, seed=1, barometer=quiet)
    b = simulate(schedule=still, seed=1, barometer=busy)
    assert np.ptp(a.pressure) < 1e-9  # no door, no spike when none is asked for and nobody walks
    deviation = b.pressure - b.pressure[0]
    assert 0.02 < np.abs(deviation).max() < 5 * (0.05 + 0.03)  # a few 5 Pa steps and 3 Pa spikes


# --- lifts, escalators, ramps --------------------------------------------------------------------------


@pytest.mark.parametrize("activity, speed, ramp", [
    (A.LIFT_UP, 1.6, 2.4), (A.LIFT_DOWN, -1.6, 2.4), (A.ESCALATOR_UP, 0.25, 2.0), (A.ESCALATOR_DOWN, -0.25, 2.0),
])
def test_rides_move_the_standing_person_without_steps(activity, speed, ramp):
    """Closed form of a ride of D s: cruise V for D − 2T and two smooth ramps of mean V/2."""
    seconds = 15.0
    log = simulate(schedule=[(A.STANDING, 2.0), (activity, seconds), (A.STANDING, 2.0)], seed=3,
                   barometer=Barometer.ideal())
    assert len(log.steps) == 0
    assert log.meta["bout_end_altitude_m"][1] == pytest.approx(speed * (seconds - ramp), abs=1e-9)
    assert ride_rise_m(activity, ride_seconds(activity, 6.0)) == pytest.approx(np.sign(speed) * 6.0)
    assert ride_rise_m(activity, ride_seconds(activity, 0.5)) == pytest.approx(np.sign(speed) * 0.5)
    assert set(np.unique(log.label)) == {int(A.STANDING), int(activity)}


def test_a_lift_ride_is_felt_by_the_accelerometer():
    """The vertical (ENU) linear acceleration integrates to the ride's speed profile: up to the cruise
    speed, back to zero; ideal sensors, no sway beyond 0.052 m/s over a second."""
    from scipy.spatial.transform import Rotation

    log = simulate(schedule=[(A.STANDING, 2.0), (A.LIFT_UP, 12.0), (A.STANDING, 2.0)], seed=3, rate_hz=100,
                   sensors=IDEAL, reorient_per_hour=0)
    vertical = Rotation.from_quat(log.rotvec).apply(log.linacc)[:, 2]
    t = (log.t_ns - log.t_ns[0]) / 1e9
    speed = np.concatenate([[0.0], np.cumsum(0.5 * (vertical[1:] + vertical[:-1]) * np.diff(t))])
    at = np.searchsorted(t, [2.0 + 6.0, 15.9])
    assert speed[at[0]] == pytest.approx(1.6, abs=0.1)
    assert speed[at[1]] == pytest.approx(0.0, abs=0.1)


def test_ramps_take_walking_steps_and_rise_slowly():
    person = Person(step_length_m=0.72)
    log = simulate(schedule=[(A.RAMP_UP, 20.0), (A.RAMP_DOWN, 10.0)], seed=6, person=person,
                   barometer=Barometer.ideal())
    up, down = (int(np.sum(log.steps.kind == k)) for k in (A.RAMP_UP, A.RAMP_DOWN))
    assert up > 30 and down > 15 and not np.isin(log.steps.kind, STAIRS).any()
    per_step = 0.72 * np.sin(np.arctan(1 / 12))
    np.testing.assert_allclose(log.meta["bout_end_altitude_m"], [up * per_step, (up - down) * per_step], atol=1e-9)


# --- multi-floor walks ---------------------------------------------------------------------------------


LEGS = [("stairs", 2), ("lift", -3), ("escalator", 2), ("ramp", 0.5), ("stairs", -1)]


@pytest.mark.parametrize("leg", LEGS + [("escalator", -1), ("lift", 1), ("ramp", -0.5)])
def test_each_leg_of_a_building_walk_moves_its_floors(leg):
    rng = np.random.default_rng(0)
    schedule, person = building_walk(Person.draw(rng), rng, [leg])
    log = simulate(schedule=schedule, seed=0, person=person, barometer=Barometer.ideal())
    # A ramp moves a whole number of level steps: within half a step's rise (≤ 0.04 m) of the plan.
    tolerance = 0.04 if leg[0] == "ramp" else 1e-9
    assert log.meta["bout_end_altitude_m"][-1] == pytest.approx(leg[1] * FLOOR_HEIGHT_M, abs=tolerance)


@pytest.mark.parametrize("seed", range(6))
def test_building_walks_reach_the_planned_floor_without_stair_steps_in_rides(seed):
    rng = np.random.default_rng(seed)
    schedule, person = building_walk(Person.draw(rng), rng, LEGS)
    # round(3 m / riser) for risers of 0.15–0.19 m: 16–20 (17–18 at the common 0.17 m).
    risers = round(FLOOR_HEIGHT_M / person.stair_rise_m)
    assert 16 <= risers <= 20 and person.stair_rise_m * risers == pytest.approx(FLOOR_HEIGHT_M)
    log = simulate(schedule=schedule, seed=seed, person=person, barometer=Barometer())
    planned = sum(floors for _, floors in LEGS) * FLOOR_HEIGHT_M
    assert log.meta["bout_end_altitude_m"][-1] == pytest.approx(planned, abs=0.04)
    # No step at all during a ride; the stair steps are exactly the storeys walked.
    at_strike = log.label[np.searchsorted(log.t_ns, log.steps.t_ns).clip(0, len(log) - 1)]
    assert not np.isin(at_strike, [A.LIFT_UP, A.LIFT_DOWN, A.ESCALATOR_UP, A.ESCALATOR_DOWN]).any()
    assert np.isin(log.steps.kind, STAIRS).sum() == (2 + 1) * risers


@pytest.mark.parametrize("pause", [0.0, 1.0])
def test_a_storey_of_stairs_may_start_from_standing(pause):
    """With pause 1 every storey's first flight follows 2–10 s of standing (a run of steps starts on
    the stairs: the gap breaks the step context), with 0 a level walk."""
    rng = np.random.default_rng(2)
    schedule, _ = building_walk(Person.draw(rng), rng, [("stairs", 2), ("lift", 1), ("stairs", -1)], pause=pause)
    before = [schedule[k - 1] for k, (a, _) in enumerate(schedule) if a in STAIRS]
    paused = [s for a, s in before if a == A.STANDING]
    assert len(paused) == (3 if pause else 0)  # one per storey: 2 up, 1 down
    assert all(2.0 <= s <= 10.0 for s in paused)
    with pytest.raises(ValueError, match="pause must be a probability"):
        building_walk(Person(), rng, [("stairs", 1)], pause=-0.1)


def test_random_building_walks_change_floors():
    rng = np.random.default_rng(0)
    schedule, person = building_walk(Person.draw(rng), rng, n_legs=6)
    moves = {a for a, _ in schedule} - {A.WALKING, A.STANDING}
    assert moves and all(a in set(range(2, 4)) | set(range(14, 20)) for a in moves)
    with pytest.raises(ValueError, match="legs\\[0\\] has mode 'teleport'"):
        building_walk(person, rng, [("teleport", 1)])
    with pytest.raises(ValueError, match="legs\\[0\\] must move a non-zero number of floors \\(whole for lift\\)"):
        building_walk(person, rng, [("lift", 1.5)])


# --- chunking, validation, files -----------------------------------------------------------------------


@settings(max_examples=8, deadline=None)
@given(chunk_s=st.floats(min_value=0.05, max_value=90.0), baro_hz=st.sampled_from([1.0, 7.0, 25.0]),
       rate_hz=st.sampled_from([20, 50, 200]))
def test_chunks_give_the_same_pressure(chunk_s, baro_hz, rate_hz):
    # 100 s at 25 Hz spans 2500 readings; with a noisy model of busy buildings so every term is in it.
    schedule = [(A.STANDING, 10.0), (A.WALKING_UPSTAIRS, 20.0), (A.LIFT_DOWN, 15.0), (A.RAMP_UP, 25.0),
                (A.ESCALATOR_UP, 15.0), (A.WALKING, 15.0)]
    model = Barometer(rate_hz=baro_hz, door_steps_per_h=200.0, spikes_per_h=300.0)
    whole = simulate(schedule=schedule, rate_hz=rate_hz, seed=12, barometer=model)
    chunks = list(simulate_chunks(schedule=schedule, rate_hz=rate_hz, seed=12, barometer=model, chunk_s=chunk_s))
    np.testing.assert_array_equal(np.concatenate([c.pressure for c in chunks]), whole.pressure)
    np.testing.assert_array_equal(np.concatenate([c.acc for c in chunks]), whole.acc)


def test_noise_blocks_are_crossed_identically():
    """More than 4096 readings (one noise block) in a log cut at an odd size."""
    kwargs = dict(schedule=[(A.STANDING, 200.0)], rate_hz=50, seed=3, barometer=Barometer(rate_hz=25))
    whole = simulate(**kwargs)
    chunks = list(simulate_chunks(**kwargs, chunk_s=33.3))
    np.testing.assert_array_equal(np.concatenate([c.pressure for c in chunks]), whole.pressure)


@pytest.mark.parametrize("make, match", [
    (lambda: Barometer(rate_hz=0.0), "^Barometer.rate_hz must be in \\[0.1, 200\\] Hz, got 0.0; phone"),
    (lambda: Barometer(noise_hpa=-0.01), "^Barometer.noise_hpa must be a finite number >= 0"),
    (lambda: simulate(minutes=1, barometer=25), "barometer must be a Barometer or None"),
    (lambda: simulate(schedule=[(A.SITTING, 5.0)]), "schedule\\[0\\] has activity"),
])
def test_bad_barometer_arguments_are_named(make, match):
    with pytest.raises((ValueError, TypeError), match=match):
        make()


def test_pressure_stays_in_the_readers_range_and_draws_vary():
    models = [Barometer.draw(np.random.default_rng(s)) for s in range(20)]
    assert {m.rate_hz for m in models} <= {1.0, 5.0, 10.0, 25.0} and len({m.noise_hpa for m in models}) == 20
    assert all(0.01 <= m.noise_hpa <= 0.05 for m in models)
    log = simulate(minutes=1, seed=1, barometer=models[0])
    assert 300.0 < log.pressure.min() and log.pressure.max() < 1100.0


@pytest.mark.parametrize("suffix", [".csv.gz", ".parquet"])
def test_a_simulated_log_with_pressure_round_trips_through_the_files(tmp_path, suffix):
    log = simulate(schedule=[(A.STANDING, 3.0), (A.WALKING_UPSTAIRS, 8.0), (A.LIFT_UP, 6.0)], seed=9,
                   barometer=Barometer())
    back = read_log(write_log(log, tmp_path / f"baro{suffix}"))
    for name in ("t_ns", "acc", "gyro", "rotvec", "linacc", "label", "pressure"):
        np.testing.assert_array_equal(getattr(back, name), getattr(log, name))
    np.testing.assert_array_equal(back.steps.kind, log.steps.kind)
    assert back.meta["bout_end_altitude_m"] == log.meta["bout_end_altitude_m"]
