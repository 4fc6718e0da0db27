"""The sensor-log data model (DESIGN.md, "Data model").

A :class:`SensorLog` is one recording: strictly increasing int64 nanosecond timestamps, the
accelerometer in m/s² (gravity included) and whichever optional streams were recorded, all
aligned to the accelerometer's timestamps.
"""
from __future__ import annotations

import enum
from dataclasses import dataclass, field, replace
from typing import Any, Mapping

import numpy as np

__all__ = ["Activity", "StepTruth", "SensorLog", "STAIR_ACTIVITIES", "STANDARD_GRAVITY", "PRESSURE_RANGE_HPA"]

#: m/s² per g: Android's SensorManager.STANDARD_GRAVITY, the g → m/s² conversion everywhere.
STANDARD_GRAVITY = 9.80665
#: Air pressure a phone barometer measures, hPa: the rated range of the Bosch BMP280/BMP380 and ST
#: LPS22HB class of sensors, from the Dead Sea (~1,060 hPa) to above Everest's summit (~340 hPa).
#: Outside it a value is in other units (Pa, kPa, inHg) or broken.
PRESSURE_RANGE_HPA = (300.0, 1100.0)

#: The largest magnitude a sample of a float group can have (canonical units), and the unit. A value
#: beyond it is no measurement but a damaged field (a lost decimal point, a timestamp in a value column):
#: phone accelerometers saturate at ±16 g (157 m/s²) at most and gyroscopes at ±2000 °/s (35 rad/s),
#: and a rotation vector is a unit quaternion, each component in [-1, 1]. The limits leave a wide margin
#: above every phone sensor (1000 m/s² ≈ 102 g, 100 rad/s ≈ 5700 °/s, 2 for a component drifting off
#: unit norm by rounding) and keep every square and sum the front end takes far from float overflow.
PHYSICAL_LIMITS = {"acc": (1000.0, "m/s²"), "gyro": (100.0, "rad/s"), "rotvec": (2.0, ""),
                   "linacc": (1000.0, "m/s²")}


def check_sensor_values(path, group: str, values, lines) -> None:
    """Refuse a recording whose ``group`` stream holds nan/inf or a value no phone sensor gives.

    The dataset loaders' counterpart of the log readers' check (the same :data:`PHYSICAL_LIMITS`
    and :data:`PRESSURE_RANGE_HPA`); a published file never holds such values, so they are refused
    rather than repaired.

    Parameters
    ----------
    path : str or Path
        The file, named by the error.
    group : {"acc", "gyro", "rotvec", "linacc", "pressure"}
        The stream, in canonical units (m/s², rad/s, hPa).
    values : array-like of shape (n,) or (n, k)
    lines : array-like of int, shape (n,)
        The file line (or row) of each sample, named by the error.

    Raises
    ------
    ValueError
        Naming the file, the line, the value and the accepted range.

    Examples
    --------
    >>> check_sensor_values("walk.csv", "acc", [[0.0, 0.0, 9.8], [0.0, 1e5, 9.8]], [2, 3])
    Traceback (most recent call last):
    ...
    ValueError: walk.csv:3: acc y = 100000 m/s² is beyond any phone sensor (accepted: |acc| <= 1000 m/s²); the file is damaged: re-download it
    """
    values = np.asarray(values, dtype=np.float64)
    values = values.reshape(values.shape[0], -1)
    if group == "pressure":
        (low, high), unit = PRESSURE_RANGE_HPA, "hPa"
        accepted = f"{low:g}–{high:g} hPa"
    else:
        limit, unit = PHYSICAL_LIMITS[group]
        low, high = -limit, limit
        accepted = f"|{group}| <= {limit:g}{' ' + unit if unit else ''}"
    with np.errstate(invalid="ignore"):
        bad = ~((values >= low) & (values <= high))  # nan fails both comparisons
    if not bad.any():
        return
    i, j = (int(k[0]) for k in np.nonzero(bad))
    name = group if values.shape[1] == 1 else f"{group} {'xyzw'[j]}"
    value = values[i, j]
    what = (f"non-finite value ({value}) in {name}" if not np.isfinite(value) else
            f"{name} = {value:g}{' ' + unit if unit else ''} is beyond any phone sensor (accepted: {accepted})")
    raise ValueError(f"{path}:{int(np.asarray(lines)[i])}: {what}; the file is damaged: re-download it")


class Activity(enum.IntEnum):
    """Per-sample activity codes; 1–12 are UCI HAPT's own codes, 0 means unlabelled.

    ``STAIRS`` (13) is on stairs in a direction the recording does not say: WEDA-FALL labels a whole
    file "walking up and down stairs" (:func:`~stairsense.stream.load_weda`).

    14–19 move a person up or down without stair steps: standing in a lift
    or on an escalator, walking level-gait steps up or down a ramp. None of them is a stair
    activity; the simulator produces them, and a recording may label them.

    ``HANDLING`` (20) is a device handled rather than carried on a walk: waved about, turned over,
    then held still, as in IPIN's calibration opening (:func:`~stairsense.stream.load_ipin`). Not
    stairs, so a model trains on it as a negative.
    """

    UNLABELLED = 0
    WALKING = 1
    WALKING_UPSTAIRS = 2
    WALKING_DOWNSTAIRS = 3
    SITTING = 4
    STANDING = 5
    LAYING = 6
    STAND_TO_SIT = 7
    SIT_TO_STAND = 8
    SIT_TO_LIE = 9
    LIE_TO_SIT = 10
    STAND_TO_LIE = 11
    LIE_TO_STAND = 12
    STAIRS = 13
    LIFT_UP = 14
    LIFT_DOWN = 15
    ESCALATOR_UP = 16
    ESCALATOR_DOWN = 17
    RAMP_UP = 18
    RAMP_DOWN = 19
    HANDLING = 20


#: Activities whose windows are labelled STAIR (spec §3.1: both directions are STAIR, and so are
#: stairs of unrecorded direction).
STAIR_ACTIVITIES = (Activity.WALKING_UPSTAIRS, Activity.WALKING_DOWNSTAIRS, Activity.STAIRS)


@dataclass(frozen=True)
class StepTruth:
    """Ground-truth steps: the time of each foot strike and the activity it belongs to.

    Attributes
    ----------
    t_ns : ndarray of int64, shape (k,)
        Step times, non-decreasing.
    kind : ndarray of int8, shape (k,)
        :class:`Activity` code of each step (WALKING, WALKING_UPSTAIRS, ...), or 0 when unknown.
    """

    t_ns: np.ndarray
    kind: np.ndarray

    def __post_init__(self):
        t = np.asarray(self.t_ns, dtype=np.int64)
        k = np.asarray(self.kind, dtype=np.int8)
        if t.ndim != 1 or k.shape != t.shape:
            raise ValueError(f"StepTruth needs 1-D t_ns and kind of equal length, got {t.shape} and {k.shape}")
        if t.size > 1 and np.any(np.diff(t) < 0):
            raise ValueError("StepTruth.t_ns must be non-decreasing")
        object.__setattr__(self, "t_ns", t)
        object.__setattr__(self, "kind", k)

    def __len__(self) -> int:
        return int(self.t_ns.size)


_OPTIONAL_WIDTH = {"gyro": 3, "rotvec": 4, "linacc": 3}


@dataclass(frozen=True)
class SensorLog:
    """One recording, every stream aligned to the accelerometer timestamps.

    Parameters
    ----------
    t_ns : array of int64, shape (n,)
        Strictly increasing timestamps in nanoseconds.
    acc : array, shape (n, 3)
        Accelerometer, m/s², gravity included, device frame.
    gyro : array, shape (n, 3), optional
        Gyroscope, rad/s, device frame.
    rotvec : array, shape (n, 4), optional
        Rotation vector as a unit quaternion (x, y, z, w) mapping device to East-North-Up.
    linacc : array, shape (n, 3), optional
        Linear acceleration (gravity removed by the phone), m/s², device frame.
    label : array of int, shape (n,), optional
        :class:`Activity` code of each sample.
    steps : StepTruth, optional
        Ground-truth step times.
    meta : mapping
        Free-form provenance: ``source``, ``device``, ``placement``, ``rate_hz``, ``subject``, ...
    pressure : array, shape (n,), optional
        Air pressure from a barometer, hPa. Last so that positional construction keeps its meaning;
        the CSV and Parquet formats do not hold it yet.

    Notes
    -----
    Construction validates shapes, finiteness and time order and raises ``ValueError`` naming the
    stream; readers report file and line themselves before they build a log.
    """

    t_ns: np.ndarray
    acc: np.ndarray
    gyro: np.ndarray | None = None
    rotvec: np.ndarray | None = None
    linacc: np.ndarray | None = None
    label: np.ndarray | None = None
    steps: StepTruth | None = None
    meta: Mapping[str, Any] = field(default_factory=dict)
    pressure: np.ndarray | None = None

    def __post_init__(self):
        t = np.ascontiguousarray(self.t_ns, dtype=np.int64)
        if t.ndim != 1:
            raise ValueError(f"t_ns must be 1-D, got shape {t.shape}")
        n = t.size
        if n > 1 and not np.all(t[1:] > t[:-1]):
            i = int(np.flatnonzero(t[1:] <= t[:-1])[0]) + 1
            raise ValueError(
                f"t_ns must be strictly increasing; sample {i} has t={t[i]} after t={t[i - 1]}. "
                "Use repair='sort' (or --repair sort) to sort and drop duplicates."
            )
        object.__setattr__(self, "t_ns", t)
        object.__setattr__(self, "acc", _checked("acc", self.acc, n, 3))
        for name, width in _OPTIONAL_WIDTH.items():
            value = getattr(self, name)
            if value is not None:
                object.__setattr__(self, name, _checked(name, value, n, width))
        if self.label is not None:
            lab = np.ascontiguousarray(self.label, dtype=np.int8)
            if lab.shape != (n,):
                raise ValueError(f"label must have shape ({n},), got {lab.shape}")
            object.__setattr__(self, "label", lab)
        if self.pressure is not None:
            pressure = np.asarray(self.pressure, dtype=np.float64)
            if pressure.shape != (n,):
                raise ValueError(f"pressure must have shape ({n},) to match t_ns, got {pressure.shape}")
            object.__setattr__(self, "pressure", _checked("pressure", pressure[:, None], n, 1)[:, 0])
        object.__setattr__(self, "meta", dict(self.meta))

    def __len__(self) -> int:
        return int(self.t_ns.size)

    @property
    def duration_s(self) -> float:
        """Seconds from the first to the last sample (0 for fewer than two samples)."""
        return float(self.t_ns[-1] - self.t_ns[0]) / 1e9 if len(self) > 1 else 0.0

    @property
    def rate_hz(self) -> float:
        """Median sampling rate; robust to jitter and dropped samples."""
        if len(self) < 2:
            return float("nan")
        return 1e9 / float(np.median(np.diff(self.t_ns)))

    def slice(self, start: int, stop: int) -> "SensorLog":
        """Samples ``start:stop`` as a new log; steps outside the time span are dropped."""
        sl = slice(start, stop)
        steps = self.steps
        if steps is not None and stop > start:
            lo, hi = self.t_ns[start], self.t_ns[stop - 1]
            keep = (steps.t_ns >= lo) & (steps.t_ns <= hi)
            steps = StepTruth(steps.t_ns[keep], steps.kind[keep])
        return replace(
            self,
            t_ns=self.t_ns[sl],
            acc=self.acc[sl],
            gyro=None if self.gyro is None else self.gyro[sl],
            rotvec=None if self.rotvec is None else self.rotvec[sl],
            linacc=None if self.linacc is None else self.linacc[sl],
            label=None if self.label is None else self.label[sl],
            pressure=None if self.pressure is None else self.pressure[sl],
            steps=steps,
        )

    def split_at_gaps(self, max_gap_s: float | None) -> "list[SensorLog]":
        """The log split at every time step longer than ``max_gap_s`` (None: never), as the
        ``"split-gaps"`` repair splits a file; each part keeps the meta and numbers its ``segment``
        from 0. A log without such a gap comes back whole, its meta untouched.

        >>> t = np.array([0, 20, 40, 1000, 1020]) * 1_000_000
        >>> parts = SensorLog(t, np.zeros((5, 3)), meta={"subject": "s1"}).split_at_gaps(0.3)
        >>> [len(p) for p in parts], [p.meta for p in parts]
        ([3, 2], [{'subject': 's1', 'segment': 0}, {'subject': 's1', 'segment': 1}])
        """
        if max_gap_s is None or len(self) < 2:
            return [self]
        cuts = (np.flatnonzero(np.diff(self.t_ns) > max_gap_s * 1e9) + 1).tolist()
        if not cuts:
            return [self]
        bounds = [0, *cuts, len(self)]
        return [replace(self.slice(a, b), meta={**self.meta, "segment": i})
                for i, (a, b) in enumerate(zip(bounds[:-1], bounds[1:]))]


def _checked(name: str, value, n: int, width: int) -> np.ndarray:
    arr = np.ascontiguousarray(value, dtype=np.float64)
    if arr.shape != (n, width):
        raise ValueError(f"{name} must have shape ({n}, {width}) to match t_ns, got {arr.shape}")
    if not np.all(np.isfinite(arr)):
        i = int(np.flatnonzero(~np.isfinite(arr).all(axis=1))[0])
        raise ValueError(
            f"{name} has a non-finite value at sample {i}: {arr[i].tolist()}. "
            "Use repair='drop-nan' (or --repair drop-nan) to drop such samples."
        )
    return arr
