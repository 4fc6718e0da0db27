"""The synthetic sensor simulator: the project's built-in default data.

A simulated log is a phone carried by one person through a sequence of bouts (level walking, stairs
up, stairs down, standing), recorded at 20–200 Hz with the streams of DESIGN.md's data model and
exact ground truth. The step shapes follow spec donini-easymkl-komd-climbtheworld-admm §3.5: on the
standardized vertical (ENU z) axis a stair step is "a local maximum followed by a negative local
minimum" — and so, less asymmetrically and at a faster cadence, is a level step, which is why the
spec says a peak detector cannot tell them apart (§3.1).

Two layers: ``_gait`` (person, schedule, body acceleration in ENU) and ``_device`` (placement,
orientation, sensor imperfections). This module draws both from the seed and renders samples.

Determinism and blocks: every random quantity is drawn from ``numpy.random.SeedSequence(seed)``.
Motion (schedule, steps, heading, re-pocketing) is drawn once as a compact timeline; per-sample
randomness (timestamp jitter, drops, sensor noise) is drawn per fixed block of 4096 sample slots
from a seed keyed by the block number. So any chunking of the log gives identical samples, and
:func:`simulate_chunks` streams a 24 h log in bounded memory.
"""
from __future__ import annotations

import numbers
from dataclasses import asdict
from typing import Iterator, Sequence

import numpy as np

from .._log import STANDARD_GRAVITY, SensorLog, StepTruth
from ._device import (
    PLACEMENTS,
    DeviceTimeline,
    SensorModel,
    quat_from_rotvec,
    quat_multiply,
    quat_rotate_inverse,
)
from ._barometer import Barometer, BarometerTimeline
from ._gait import GaitTimeline, Person, check_schedule, random_schedule
from ._vertical import VerticalTimeline

__all__ = ["simulate", "simulate_chunks"]

_DEFAULT_MINUTES = 10.0
_RATE_RANGE_HZ = (20.0, 200.0)
_NOISE_BLOCK = 4096
# Independent SeedSequence children, by purpose; adding a purpose never shifts the others (the
# barometer's is keyed directly, not spawned with the rest, so a log without one is unchanged).
_PERSON, _SCHEDULE, _GAIT, _DEVICE, _BIAS, _SAMPLES, _BAROMETER = range(7)
# Columns of the per-slot random block: jitter, drop, acc(3), linacc(3), gyro(3), rotvec(3).
_JITTER, _DROP, _ACC, _LIN, _GYR, _ROT = 0, 1, slice(2, 5), slice(5, 8), slice(8, 11), slice(11, 14)
_MAX_JITTER = 0.4  # periods: keeps consecutive timestamps ≥ 0.2 periods apart


class _Scenario:
    """Everything drawn from the seed, and the rendering of sample slots [i0, i1) into a SensorLog."""

    def __init__(self, duration_s, rate_hz, seed, schedule, person, placement, sensors, reorient_per_hour, start_ns,
                 barometer):
        self.seed, self.rate_hz, self.start_ns = seed, float(rate_hz), start_ns
        self.sensors = sensors
        root = np.random.SeedSequence(seed)
        rng = [np.random.default_rng(child) for child in root.spawn(_SAMPLES)]
        self.person = person if person is not None else Person.draw(rng[_PERSON])
        if schedule is None:
            schedule = random_schedule(duration_s, self.person, rng[_SCHEDULE])
        self.schedule = schedule
        self.gait = GaitTimeline(schedule, self.person, rng[_GAIT])
        if placement is None:
            placement = str(rng[_DEVICE].choice(sorted(PLACEMENTS)))
        self.device = DeviceTimeline(self.gait, placement, reorient_per_hour, rng[_DEVICE])
        # The altitude draws nothing: it follows from the steps and the bouts.
        self.vertical = VerticalTimeline(self.gait, self.person)
        self.barometer = None if barometer is None else BarometerTimeline(
            barometer, self.vertical, self.gait, placement, np.random.SeedSequence(seed, spawn_key=(_BAROMETER,))
        )
        bias = rng[_BIAS].standard_normal((3, 3))
        self.acc_bias = sensors.acc_bias * bias[0]
        self.linacc_bias = sensors.linacc_bias * bias[1]
        self.gyro_bias = sensors.gyro_bias * bias[2]
        self.n_slots = int(round(self.gait.duration_s * self.rate_hz))
        self._last_block = (-1, None)
        self.meta = {
            "source": "simulate",
            "device": "simulated",
            "seed": seed,
            "rate_hz": self.rate_hz,
            "person": asdict(self.person),
            "placement": placement,
            "attitude_device_to_body": self.device.attitudes[0].tolist(),
            "reorientations": [
                {"t_ns": start_ns + int(round(t * 1e9)), "duration_s": float(d), "attitude": q.tolist()}
                for t, d, q in zip(self.device.change_start, self.device.change_duration, self.device.attitudes[1:])
            ],
            "schedule": [(int(a), float(s)) for a, s in schedule],
            "sensors": asdict(sensors),
            # The canonical readers' key: accelerations in m/s² (gyro rad/s and the rotation vector's
            # quaternion convention are fixed by the data model).
            "units": "m/s2",
        }
        if self.barometer is not None:  # only then: a log without a barometer keeps its meta
            b = self.barometer
            bout_end = np.append(self.gait.bout_start[1:], self.gait.duration_s)
            self.meta["barometer"] = {
                **asdict(barometer),
                "site_elevation_m": b.site_elevation_m,
                "offset_hpa": b.offset_hpa,
                "first_reading_s": float(b.reading_times(np.array([0]))[0]),
            }
            # The truth a floor counter is scored against: the height at the end of each bout.
            self.meta["bout_end_altitude_m"] = self.vertical.altitude(bout_end).tolist()

    def _slot_randomness(self, i0: int, i1: int) -> np.ndarray:
        """Per-slot random numbers for slots [i0, i1), independent of how the log is chunked."""
        first, last = i0 // _NOISE_BLOCK, (i1 - 1) // _NOISE_BLOCK
        offset = first * _NOISE_BLOCK
        return np.concatenate([self._noise_block(b) for b in range(first, last + 1)])[i0 - offset : i1 - offset]

    def _noise_block(self, b: int) -> np.ndarray:
        # Consecutive chunks share the block at their boundary: keep the last one rather than draw
        # it twice (small chunks would otherwise redraw 4096 slots per chunk).
        if self._last_block[0] != b:
            rng = np.random.default_rng(np.random.SeedSequence(self.seed, spawn_key=(_SAMPLES, b)))
            block = rng.standard_normal((_NOISE_BLOCK, 14))
            block[:, _DROP] = rng.random(_NOISE_BLOCK)
            self._last_block = (b, block)
        return self._last_block[1]

    def render(self, i0: int, i1: int, last: bool) -> SensorLog:
        s = self.sensors
        noise = self._slot_randomness(i0, i1)
        period = 1.0 / self.rate_hz
        jitter = np.clip(s.jitter * noise[:, _JITTER], -_MAX_JITTER, _MAX_JITTER)
        # Slot 0's jitter may not reach before the log's start, where no motion is defined.
        t = np.maximum((np.arange(i0, i1) + jitter) * period, 0.0)
        keep = noise[:, _DROP] >= s.drop_rate
        t, noise = t[keep], noise[keep]

        quat, omega = self.device.pose(t)
        motion = self.device.acceleration(t)
        if self.vertical.has_rides:  # a lift or escalator accelerates the whole body (and the phone)
            motion[:, 2] += self.vertical.acceleration(t)
        gravity = np.array([0.0, 0.0, STANDARD_GRAVITY])
        acc = quat_rotate_inverse(quat, motion + gravity) + self.acc_bias + s.acc_noise * noise[:, _ACC]
        linacc = quat_rotate_inverse(quat, motion) + self.linacc_bias + s.linacc_noise * noise[:, _LIN]
        gyro = omega + self.gyro_bias + s.gyro_noise * noise[:, _GYR]
        rotvec = quat_multiply(quat, quat_from_rotvec(s.rotvec_noise * noise[:, _ROT]))
        # Android reports the fused orientation with scalar part cos(θ/2) ≥ 0; renormalise so the
        # float round-off of the products above never leaves the unit sphere.
        rotvec *= np.where(rotvec[:, 3:] < 0, -1.0, 1.0) / np.linalg.norm(rotvec, axis=1, keepdims=True)

        # Each step belongs to the chunk whose nominal time span holds its foot strike, so the
        # chunks' StepTruths partition the log's.
        lo, hi = i0 * period, (np.inf if last else i1 * period)
        in_chunk = (self.gait.step_start >= lo) & (self.gait.step_start < hi)
        steps = StepTruth(self._to_ns(self.gait.step_start[in_chunk]), self.gait.step_kind[in_chunk])
        return SensorLog(
            t_ns=self._to_ns(t),
            acc=acc,
            gyro=gyro,
            rotvec=rotvec,
            linacc=linacc,
            label=self.gait.activity_at(t),
            steps=steps,
            meta=self.meta,
            pressure=None if self.barometer is None else self.barometer.at(t),
        )

    def _to_ns(self, seconds: np.ndarray) -> np.ndarray:
        return self.start_ns + np.round(seconds * 1e9).astype(np.int64)


def _check_args(minutes, rate_hz, seed, schedule, person, placement, sensors, reorient_per_hour, start_ns,
                barometer=None):
    """Validate the public arguments; return the duration in seconds and the checked schedule."""
    if not isinstance(seed, numbers.Integral) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    if not (isinstance(rate_hz, numbers.Real) and _RATE_RANGE_HZ[0] <= rate_hz <= _RATE_RANGE_HZ[1]):
        raise ValueError(
            f"rate_hz must be a number in [{_RATE_RANGE_HZ[0]:g}, {_RATE_RANGE_HZ[1]:g}] Hz "
            f"(phone motion sensors), got {rate_hz!r}"
        )
    if schedule is not None:
        if minutes is not None:
            raise ValueError(
                "give either minutes (a random schedule of that length) or schedule (its bouts set the "
                f"length), not both; got minutes={minutes!r} and a schedule"
            )
        schedule = check_schedule(schedule)
        duration_s = sum(seconds for _, seconds in schedule)
    else:
        minutes = _DEFAULT_MINUTES if minutes is None else minutes
        if not (isinstance(minutes, numbers.Real) and np.isfinite(minutes) and minutes > 0):
            raise ValueError(f"minutes must be a finite number > 0, got {minutes!r}")
        duration_s = 60.0 * float(minutes)
    if duration_s * rate_hz < 2:
        raise ValueError(f"a log of {duration_s:g} s at {rate_hz:g} Hz has fewer than 2 samples; make it longer")
    if person is not None and not isinstance(person, Person):
        raise TypeError(f"person must be a Person or None, got {type(person).__name__}")
    if sensors is not None and not isinstance(sensors, SensorModel):
        raise TypeError(f"sensors must be a SensorModel or None, got {type(sensors).__name__}")
    if barometer is not None and not isinstance(barometer, Barometer):
        raise TypeError(f"barometer must be a Barometer or None (no pressure stream), got {type(barometer).__name__}")
    if placement is not None and placement not in PLACEMENTS:
        raise ValueError(f"placement must be one of {sorted(PLACEMENTS)} or None (random), got {placement!r}")
    if not (np.isfinite(reorient_per_hour) and reorient_per_hour >= 0):
        raise ValueError(f"reorient_per_hour must be a finite number >= 0, got {reorient_per_hour!r}")
    if not isinstance(start_ns, numbers.Integral):
        raise ValueError(f"start_ns must be an integer number of nanoseconds, got {start_ns!r}")
    return duration_s, schedule


def simulate_chunks(
    minutes: float | None = None,
    rate_hz: float = 50.0,
    seed: int = 0,
    *,
    schedule: Sequence[tuple[int, float]] | None = None,
    person: Person | None = None,
    placement: str | None = None,
    sensors: SensorModel | None = None,
    reorient_per_hour: float = 6.0,
    start_ns: int = 0,
    barometer: Barometer | None = None,
    chunk_s: float = 600.0,
) -> Iterator[SensorLog]:
    """Simulate a log as consecutive :class:`SensorLog` blocks of about ``chunk_s`` seconds.

    Same arguments as :func:`simulate`, plus ``chunk_s``. Memory stays bounded by the chunk, whatever
    the log length, and the concatenated chunks equal ``simulate(...)`` exactly (for any ``chunk_s``).
    Every chunk carries the log's full ``meta``; its ``steps`` are the steps whose foot strike falls
    in the chunk's nominal time span.

    Examples
    --------
    >>> blocks = list(simulate_chunks(minutes=2, rate_hz=30, seed=1, chunk_s=50))
    >>> [round(b.duration_s) for b in blocks]
    [50, 50, 20]
    """
    duration_s, schedule = _check_args(
        minutes, rate_hz, seed, schedule, person, placement, sensors, reorient_per_hour, start_ns, barometer
    )
    if not (isinstance(chunk_s, numbers.Real) and chunk_s > 0):
        raise ValueError(f"chunk_s must be a number of seconds > 0, got {chunk_s!r}")
    scenario = _Scenario(
        duration_s, rate_hz, int(seed), schedule, person, placement,
        SensorModel() if sensors is None else sensors, reorient_per_hour, int(start_ns), barometer,
    )
    per_chunk = max(1, int(round(chunk_s * rate_hz)))
    for i0 in range(0, scenario.n_slots, per_chunk):
        i1 = min(i0 + per_chunk, scenario.n_slots)
        block = scenario.render(i0, i1, last=i1 == scenario.n_slots)
        if len(block):
            yield block


def simulate(
    minutes: float | None = None,
    rate_hz: float = 50.0,
    seed: int = 0,
    *,
    schedule: Sequence[tuple[int, float]] | None = None,
    person: Person | None = None,
    placement: str | None = None,
    sensors: SensorModel | None = None,
    reorient_per_hour: float = 6.0,
    start_ns: int = 0,
    barometer: Barometer | None = None,
) -> SensorLog:
    """Simulate a phone carried by one person: accelerometer, gyroscope, rotation vector, linear
    acceleration, optionally air pressure, per-sample activity labels and every foot strike.

    Parameters
    ----------
    minutes : float, optional
        Length of a random schedule of bouts (10 min when neither this nor ``schedule`` is given).
    rate_hz : float, default 50
        Nominal sampling rate, 20–200 Hz.
    seed : int, default 0
        Everything random (person, schedule, placement, noise) derives from it: the same seed gives
        identical arrays.
    schedule : sequence of (activity, seconds), optional
        Explicit bouts, activities from ``Activity.WALKING``, ``WALKING_UPSTAIRS``,
        ``WALKING_DOWNSTAIRS``, ``STANDING``, and the vertical motions without stair steps
        ``LIFT_UP``/``LIFT_DOWN``, ``ESCALATOR_UP``/``ESCALATOR_DOWN`` (standing, carried) and
        ``RAMP_UP``/``RAMP_DOWN`` (level-gait steps on a 1:12 slope); see :func:`building_walk`
        for walks between floors. Excludes ``minutes``.
    person : Person, optional
        Gait parameters; drawn from the seed when omitted.
    placement : {"trouser_pocket", "jacket_pocket", "waist", "hand", "armband", "wrist", "bag"}, optional
        Where the phone is carried; drawn from the seed when omitted.
    sensors : SensorModel, optional
        Noise, biases, timestamp jitter and drops; ``SensorModel.ideal()`` switches them off.
    reorient_per_hour : float, default 6
        Mean rate of re-pocketing: a smooth 0.5–1 s rotation to a new random attitude.
    start_ns : int, default 0
        Timestamp of the first sample slot.
    barometer : Barometer, optional
        Adds ``pressure`` (hPa): the standard-atmosphere pressure of the true altitude with this
        barometer's offset, noise, rounding, weather drift, building disturbances and warming,
        held from its own readings. Drawn from a random stream of its own:
        every other array of the log is the same with or without it. None (default): no pressure.

    Returns
    -------
    SensorLog
        With ``gyro``, ``rotvec``, ``linacc``, ``label`` and ``steps`` filled, and ``meta`` holding
        ``source="simulate"``, ``seed``, ``rate_hz``, ``person``, ``placement``, the attitudes,
        re-pocketing events, schedule and sensor model; with a barometer also ``pressure``,
        ``meta["barometer"]`` (its model, site elevation, offset) and ``meta["bout_end_altitude_m"]``
        (the true height above the start at the end of each bout).

    See Also
    --------
    simulate_chunks : the same log in bounded memory, as consecutive blocks.

    Notes
    -----
    Model and literature facts are documented in ``stream/simulate/_gait.py`` (gait) and
    ``stream/simulate/_device.py`` (orientation, sensors). Standardized with the true rotation vector, a
    step's vertical acceleration is a positive peak followed by a negative valley (spec §3.5), with
    zero mean over the step. Within a bout only whole steps are taken; the rest of the bout (less
    than one step) is spent still, under the bout's label.

    Examples
    --------
    >>> from stairsense.stream import Activity
    >>> log = simulate(minutes=1, rate_hz=50, seed=0)
    >>> round(log.rate_hz), log.meta["source"], log.gyro.shape[1], log.rotvec.shape[1]
    (50, 'simulate', 3, 4)
    >>> flight = simulate(schedule=[(Activity.WALKING_UPSTAIRS, 10.0)], seed=3)
    >>> bool(set(flight.steps.kind) == {Activity.WALKING_UPSTAIRS})
    True
    """
    chunks = list(
        simulate_chunks(
            minutes, rate_hz, seed, schedule=schedule, person=person, placement=placement, sensors=sensors,
            reorient_per_hour=reorient_per_hour, start_ns=start_ns, barometer=barometer, chunk_s=65536 / rate_hz,
        )
    )
    return _concatenate(chunks)


def _concatenate(chunks: Sequence[SensorLog]) -> SensorLog:
    """One log from consecutive blocks of the same simulation (same meta, disjoint steps)."""
    streams = {
        name: np.concatenate([getattr(c, name) for c in chunks])
        for name in ("t_ns", "acc", "gyro", "rotvec", "linacc", "label")
    }
    if chunks[0].pressure is not None:
        streams["pressure"] = np.concatenate([c.pressure for c in chunks])
    steps = StepTruth(
        np.concatenate([c.steps.t_ns for c in chunks]), np.concatenate([c.steps.kind for c in chunks])
    )
    return SensorLog(**streams, steps=steps, meta=chunks[0].meta)
