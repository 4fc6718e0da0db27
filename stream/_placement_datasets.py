"""Loaders for the four placement datasets, in their published layouts (``shared/data/README.md``).

* MobiFall v2.0 (Vavoulas et al., IEEE BIBE 2013): a phone in a trouser pocket,
  ``subN/ADL/<CODE>/<CODE>_<acc|gyro|ori>_<N>_<trial>.txt``, one activity per file.
* WEDA-FALL (Marques & Moreno, Sensors 2023): a Fitbit Sense on the wrist, ``D01/`` walking and
  ``D03/`` stairs up and down, ``U<id>_R<trial>_<accel|gyro|...>.csv``, one activity per file.
* GeoTecINIT (Matey-Sanz et al., Data in Brief 2023): a phone (``_sp``) and a watch (``_sw``) in one
  execution, ``DATA/sXX/sXX_YY_<sp|sw>.csv``, one activity per sample.
* IPIN 2023 track 3: ``GetSensorData`` logs of a hand-held phone with a barometer, all on one floor.

Each ``load_*`` reads one recording (``.gz`` or not) into a :class:`SensorLog`: accelerometer in
m/s² at its own timestamps, gyroscope and air pressure merged onto them, :class:`Activity` labels per
sample, and ``meta`` with ``dataset``, ``subject`` (prefixed by the dataset, so subjects of different
datasets never share a leave-subjects-out fold), ``placement``, ``device``, ``trial``, ``path``,
``rate_hz`` and ``repairs``. Each ``*_recordings`` lists a dataset folder's recordings.

Streams recorded with their own timestamps are merged as :func:`~stairsense.stream.import_log` does:
linear interpolation onto the accelerometer's times, never extrapolation; accelerometer samples
outside another stream's span are dropped and counted in ``meta["repairs"]["dropped_outside_overlap"]``.
Timestamps that repeat or go backwards are repaired in the loader and counted there too; nothing is
dropped silently.
"""
from __future__ import annotations

import gzip
import re
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv

from ._log import Activity, SensorLog, check_sensor_values
from ._resample import values_at

__all__ = [
    "MOBIFALL_STAIRS_PER_TRIAL",
    "WEDA_RATE_HZ",
    "mobifall_recordings",
    "load_mobifall",
    "weda_recordings",
    "load_weda",
    "geotec_recordings",
    "load_geotec",
    "ipin_recordings",
    "load_ipin",
    "placement_recordings",
    "load_placement_recording",
]

_REPORTED_LINES = 5  # first affected file lines listed per repair


def _text(path: Path) -> str:
    opener = gzip.open if path.suffix == ".gz" else open
    try:
        with opener(path, "rt", encoding="utf-8", errors="replace") as fh:
            return fh.read()
    except (OSError, EOFError) as exc:
        raise ValueError(f"{path}: cannot be read ({exc}); re-download the file") from exc


def _table(path: Path, header: list[str]) -> pa.Table:
    """A published CSV whose header must be exactly ``header``."""
    try:
        table = pacsv.read_csv(pa.input_stream(str(path), compression="detect"))
    except (OSError, pa.ArrowInvalid) as exc:
        raise ValueError(f"{path}: not a CSV table ({exc}); re-download the file") from exc
    if table.column_names != header:
        raise ValueError(f"{path}: expected the columns {header}, got {table.column_names}; is this the "
                         "published file?")
    if table.num_rows < 2:
        raise ValueError(f"{path}: {table.num_rows} samples; a recording needs at least two")
    return table


def _columns(table: pa.Table, names: list[str], path: Path) -> np.ndarray:
    for name in names:
        if table.column(name).null_count:
            row = int(np.flatnonzero(np.asarray(table.column(name).is_null()))[0])
            raise ValueError(f"{path}:{row + 2}: column {name!r} is empty; re-download the file")
    return np.column_stack([table.column(n).to_numpy().astype(np.float64) for n in names])


def _increasing(t_ns: np.ndarray, lines: np.ndarray) -> tuple[np.ndarray, np.ndarray, dict]:
    """Order and times that make one stream strictly increasing without dropping a sample.

    Samples that arrive with an earlier time than one before them are put in time order (a stable
    sort, so equal times keep file order). Samples that share a time — a clock coarser than the rate
    (GeoTecINIT stamps in whole ms at 100 Hz) — are spread evenly from that time to the next distinct
    one (after the last, by the median period). Returns the order, the new times and a report with
    counts and the first file lines of each repair.
    """
    late = t_ns < np.maximum.accumulate(t_ns)
    order = np.argsort(t_ns, kind="stable")
    t = t_ns[order]
    tie = np.zeros(t.size, dtype=bool)
    tie[1:] = t[1:] == t[:-1]
    if tie.any():
        run_start = np.flatnonzero(~tie)
        if run_start.size < 2:
            raise ValueError(f"all {t.size} samples share one timestamp; the recording has no timing")
        run_of = np.cumsum(~tie) - 1
        position = np.arange(t.size) - run_start[run_of]
        length = np.diff(np.append(run_start, t.size))
        starts = t[run_start]
        gap = np.diff(np.append(starts, starts[-1] + int(np.median(np.diff(starts)))))
        t = t + position * gap[run_of] // length[run_of]
    report = {
        "out_of_order": int(late.sum()), "out_of_order_lines": lines[late][:_REPORTED_LINES].tolist(),
        "repeated_spread": int(tie.sum()), "repeated_lines": np.sort(lines[order][tie])[:_REPORTED_LINES].tolist(),
    }
    return order, t, report


def _merge(t_acc: np.ndarray, streams: dict) -> tuple[np.ndarray, dict]:
    """The accelerometer samples inside every other stream's span, and each stream at their times.

    ``streams`` maps a name to ``(t_ns, values (k, w))``; values are linearly interpolated (the
    :func:`~stairsense.stream.import_log` merge), never extrapolated.
    """
    inside = np.ones(t_acc.size, dtype=bool)
    for t, _ in streams.values():
        inside &= (t_acc >= t[0]) & (t_acc <= t[-1])
    t_out = t_acc[inside]
    return inside, {name: values_at(t_out, t, values) for name, (t, values) in streams.items()}


def _merged_log(path: Path, t_acc, acc, label, streams: dict, meta: dict, repairs: dict) -> SensorLog:
    inside, merged = _merge(t_acc, streams)
    repairs["dropped_outside_overlap"] = int((~inside).sum())
    if inside.sum() < 2:
        raise ValueError(f"{path}: the accelerometer and {sorted(streams)} overlap in {int(inside.sum())} "
                         "sample(s); the files do not share a clock")
    t = t_acc[inside]
    meta = {**meta, "rate_hz": 1e9 / float(np.median(np.diff(t))), "units": "m/s2", "repairs": repairs}
    pressure = merged.get("pressure")
    return SensorLog(t, acc[inside], gyro=merged.get("gyro"), label=label[inside], meta=meta,
                     pressure=None if pressure is None else pressure[:, 0])


def _listing(root: str | Path, patterns: tuple[str, ...], name: re.Pattern, what: str) -> list[Path]:
    """The files matching ``name`` under the first of ``patterns`` (relative to ``root``) that has any."""
    root = Path(root)
    if root.is_dir():
        for pattern in patterns:
            found = sorted(p for p in root.glob(pattern) if name.match(p.name))
            if found:
                return found
    raise FileNotFoundError(f"{root}: no {what} recordings here (looked for {', '.join(patterns)}); pass the "
                            "dataset folder")


def _run_spans(t_ns: np.ndarray, mask: np.ndarray) -> list[list[int]]:
    """``[first, last]`` times of each run of True in ``mask``: spans that survive slicing and resampling."""
    edges = np.diff(np.concatenate([[0], mask.astype(np.int8), [0]]))
    return [[int(t_ns[a]), int(t_ns[b - 1])] for a, b in zip(np.flatnonzero(edges == 1), np.flatnonzero(edges == -1))]


# --------------------------------------------------------------------------------------------
# MobiFall v2.0

#: Stairs climbed (or descended) in each MobiFall STU / STN trial, per the dataset's description:
#: an approximate step-count truth (within ±2).
MOBIFALL_STAIRS_PER_TRIAL = 10

_MOBIFALL_NAME = re.compile(r"([A-Z]{3})_acc_(\d+)_(\d+)\.txt(\.gz)?$")
_MOBIFALL_ACTIVITY = {"STU": Activity.WALKING_UPSTAIRS, "STN": Activity.WALKING_DOWNSTAIRS,
                      "WAL": Activity.WALKING, "STD": Activity.STANDING}


def mobifall_recordings(root: str | Path) -> list[Path]:
    """The accelerometer files of MobiFall's activity trials under ``root``, sorted.

    Parameters
    ----------
    root : str or Path
        The dataset folder (holding ``subN/ADL``), one ``subN`` folder, its ``ADL`` folder or one
        activity folder (``ADL/STU``).

    Returns
    -------
    list of Path
        One ``<CODE>_acc_<N>_<trial>.txt[.gz]`` per trial; pass each to :func:`load_mobifall`.
    """
    return _listing(root, ("sub*/ADL/*/*_acc_*", "ADL/*/*_acc_*", "*/*_acc_*", "*_acc_*"), _MOBIFALL_NAME,
                    "MobiFall (subN/ADL/<CODE>/<CODE>_acc_<N>_<trial>.txt)")


def _mobifall_stream(path: Path) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``timestamp_ns, x, y, z`` rows after the ``@DATA`` line: times, values and file lines."""
    lines = _text(path).splitlines()
    try:
        first = lines.index("@DATA") + 1
    except ValueError:
        raise ValueError(f"{path}: no '@DATA' line ending the header; not a MobiFall sensor file") from None
    rows = [(i, line.split(",")) for i, line in enumerate(lines[first:], start=first + 1) if line.strip()]
    bad = next(((i, r) for i, r in rows if len(r) != 4), None)
    if bad is not None or len(rows) < 2:
        where = f":{bad[0]}: {len(bad[1])} fields" if bad else f": {len(rows)} samples"
        raise ValueError(f"{path}{where}; expected 'timestamp_ns, x, y, z' rows after '@DATA'")
    try:
        cells = np.array([r for _, r in rows])
        t, values = cells[:, 0].astype(np.int64), cells[:, 1:].astype(np.float64)
    except ValueError as exc:
        raise ValueError(f"{path}: a row after '@DATA' is not numbers ({exc}); re-download the file") from exc
    return t, values, np.array([i for i, _ in rows])


def load_mobifall(acc_path: str | Path) -> SensorLog:
    """Load one MobiFall v2.0 trial (phone in a trouser pocket) with its per-file label.

    Parameters
    ----------
    acc_path : str or Path
        ``<CODE>_acc_<N>_<trial>.txt[.gz]`` (see :func:`mobifall_recordings`); the gyroscope is read
        from ``<CODE>_gyro_<N>_<trial>`` beside it when present.

    Returns
    -------
    SensorLog
        Accelerometer in m/s² at its own irregular timing (73–95 samples/s per trial, 88 the median);
        gyroscope (rad/s, about 200 Hz) merged onto it; every sample labelled by the file's code:
        ``STU`` WALKING_UPSTAIRS, ``STN`` WALKING_DOWNSTAIRS, ``WAL`` WALKING, ``STD`` STANDING, any
        other code (``JOG``, ...) UNLABELLED with ``meta["unlabelled_reason"]``. ``meta`` has
        ``activity_code``, ``subject`` (``"mobifall-<N>"``), ``trial``, ``placement`` ``"pocket"``,
        ``device`` and, for stairs trials, ``stairs`` (:data:`MOBIFALL_STAIRS_PER_TRIAL`).

    Notes
    -----
    A trial may open or close with a pause; its label is still the file's. The ``ori`` files
    (Android's deprecated orientation angles) are not read. In the published files no timestamp
    repeats or goes backwards, so ``meta["repairs"]`` counts 0.
    """
    acc_path = Path(acc_path)
    match = _MOBIFALL_NAME.match(acc_path.name)
    if not match:
        raise ValueError(f"{acc_path}: not a MobiFall accelerometer file (<CODE>_acc_<N>_<trial>.txt[.gz])")
    code, subject, trial = match[1], int(match[2]), int(match[3])
    t, acc, lines = _mobifall_stream(acc_path)
    check_sensor_values(acc_path, "acc", acc, lines)
    order, t, acc_repairs = _increasing(t, lines)
    repairs = {"acc": acc_repairs}
    streams = {}
    gyro_path = acc_path.with_name(acc_path.name.replace("_acc_", "_gyro_", 1))
    if gyro_path.is_file():
        tg, gyro, glines = _mobifall_stream(gyro_path)
        check_sensor_values(gyro_path, "gyro", gyro, glines)
        gorder, tg, repairs["gyro"] = _increasing(tg, glines)
        streams["gyro"] = (tg, gyro[gorder])
    activity = _MOBIFALL_ACTIVITY.get(code, Activity.UNLABELLED)
    meta = {"dataset": "mobifall", "source": "MobiFall v2.0", "path": str(acc_path), "activity_code": code,
            "subject": f"mobifall-{subject}", "trial": trial, "placement": "pocket",
            "device": "Samsung Galaxy S3", "label_scope": "file"}
    if code in ("STU", "STN"):
        meta["stairs"] = MOBIFALL_STAIRS_PER_TRIAL
    if activity == Activity.UNLABELLED:
        meta["unlabelled_reason"] = f"{code}: no Activity code for it (neither stairs nor level walking)"
    label = np.full(t.size, int(activity), dtype=np.int8)
    return _merged_log(acc_path, t, acc[order], label, streams, meta, repairs)


# --------------------------------------------------------------------------------------------
# WEDA-FALL

#: WEDA-FALL's published rate: the watch samples at 50 Hz but stamps batches on arrival.
WEDA_RATE_HZ = 50
_WEDA_PERIOD_NS = 1_000_000_000 // WEDA_RATE_HZ
_WEDA_NAME = re.compile(r"U(\d+)_R(\d+)_accel\.csv(\.gz)?$")
_WEDA_GROUPS = {"accel": "acc", "gyro": "gyro"}  # file kind -> stream
_WEDA_ACTIVITY = {"D01": (Activity.WALKING, "walking"), "D03": (Activity.STAIRS, "walking up and down stairs")}


def weda_recordings(root: str | Path) -> list[Path]:
    """The accelerometer files of WEDA-FALL's walking (``D01``) and stairs (``D03``) trials, sorted.

    Parameters
    ----------
    root : str or Path
        The folder holding ``D01`` and ``D03`` (the published ``50Hz`` folder), or one of them.
        Other activities (falls, jogging, ...) are not listed: they are neither stairs nor walking.
    """
    root = Path(root)
    folders = [root / code for code in _WEDA_ACTIVITY if (root / code).is_dir()]
    if not folders and root.name in _WEDA_ACTIVITY:
        folders = [root]
    found = sorted(p for folder in folders for p in folder.glob("*_accel.csv*") if _WEDA_NAME.match(p.name))
    if not found:
        raise FileNotFoundError(f"{root}: no WEDA-FALL walking or stairs recordings here (looked for "
                                f"{'/, '.join(_WEDA_ACTIVITY)}/ with U<id>_R<trial>_accel.csv); pass the folder "
                                "holding D01 and D03")
    return found


def _weda_stream(path: Path, kind: str) -> tuple[np.ndarray, np.ndarray, dict]:
    """One WEDA-FALL sensor file on the 50 Hz grid, with what its recorded times looked like."""
    names = [f"{kind}_{c}_list" for c in ("time", "x", "y", "z")]
    table = _table(path, names)
    recorded = _columns(table, names[:1], path)[:, 0]
    values = _columns(table, names[1:], path)
    check_sensor_values(path, _WEDA_GROUPS[kind], values, np.arange(values.shape[0]) + 2)  # line 1: the header
    step = np.diff(recorded)
    back = np.flatnonzero(step < 0) + 3  # file line of the later sample (header is line 1)
    report = {
        "retimed_to_hz": WEDA_RATE_HZ,
        "recorded_span_s": float(recorded[-1] - recorded[0]),
        "repeated": int(np.count_nonzero(step == 0)),
        "backwards": int(back.size), "backwards_lines": back[:_REPORTED_LINES].tolist(),
    }
    return np.arange(values.shape[0], dtype=np.int64) * _WEDA_PERIOD_NS, values, report


def load_weda(accel_path: str | Path) -> SensorLog:
    """Load one WEDA-FALL trial (Fitbit Sense on the wrist) with its per-file label.

    Parameters
    ----------
    accel_path : str or Path
        ``D01/`` or ``D03/`` ``U<id>_R<trial>_accel.csv[.gz]``; the gyroscope is read from
        ``U<id>_R<trial>_gyro.csv[.gz]`` beside it when present.

    Returns
    -------
    SensorLog
        Accelerometer in m/s² and gyroscope in rad/s at 50 Hz; every sample of ``D01`` labelled
        WALKING and of ``D03`` :attr:`Activity.STAIRS` (up and down in one file, the direction of a
        sample is not recorded). ``meta`` has ``activity_code``, ``activity``, ``subject``
        (``"weda-U<id>"``), ``trial``, ``placement`` ``"wrist"`` and ``device``.

    Notes
    -----
    Timing: the watch delivers about five samples every 100 ms, stamped on arrival in whole ms, and
    its clock sometimes steps back by about 0.7 s; the stamps are not sample times. Each stream is
    therefore put on the published 50 Hz grid (sample ``i`` at ``i`` × 20 ms), and
    ``meta["repairs"][stream]`` reports the recorded times: ``repeated`` and ``backwards`` steps
    (with their first file lines) and ``recorded_span_s`` (the recorded rate, samples over span,
    is 49.4–49.7 Hz in the published walking and stairs files, within 1.2 % of the grid's).

    Labels: a ``D03`` file also holds the level steps between flights, so its windows are STAIR by
    file, not by step. Read evaluation on these files per file: the share of steps decided STAIR
    on ``D03`` files against that on ``D01`` files. Per-direction recall leaves them out (their
    direction code is :attr:`Activity.STAIRS`, neither up nor down).
    """
    accel_path = Path(accel_path)
    match = _WEDA_NAME.match(accel_path.name)
    code = accel_path.parent.name
    if not match or code not in _WEDA_ACTIVITY:
        raise ValueError(f"{accel_path}: not a WEDA-FALL walking or stairs accelerometer file "
                         "(D01/ or D03/ U<id>_R<trial>_accel.csv[.gz])")
    t, acc, acc_report = _weda_stream(accel_path, "accel")
    repairs = {"acc": acc_report}
    streams = {}
    gyro_path = accel_path.with_name(accel_path.name.replace("_accel.", "_gyro.", 1))
    if gyro_path.is_file():
        tg, gyro, repairs["gyro"] = _weda_stream(gyro_path, "gyro")
        streams["gyro"] = (tg, gyro)
    activity, name = _WEDA_ACTIVITY[code]
    meta = {"dataset": "weda", "source": "WEDA-FALL", "path": str(accel_path), "activity_code": code,
            "activity": name, "subject": f"weda-U{int(match[1]):02d}", "trial": int(match[2]),
            "placement": "wrist", "device": "Fitbit Sense", "label_scope": "file"}
    label = np.full(t.size, int(activity), dtype=np.int8)
    return _merged_log(accel_path, t, acc, label, streams, meta, repairs)


# --------------------------------------------------------------------------------------------
# GeoTecINIT smartphone and smartwatch

_GEOTEC_NAME = re.compile(r"(s\d+)_(\d+)_(sp|sw)\.csv(\.gz)?$")
_GEOTEC_COLUMNS = ["x_acc", "y_acc", "z_acc", "x_gyro", "y_gyro", "z_gyro", "timestamp", "label"]
# Turning is walking on the level with a change of heading: steps, and not stairs.
_GEOTEC_ACTIVITY = {"SEATED": Activity.SITTING, "STANDING_UP": Activity.SIT_TO_STAND, "WALKING": Activity.WALKING,
                    "TURNING": Activity.WALKING, "SITTING_DOWN": Activity.STAND_TO_SIT}
_GEOTEC_DEVICE = {"sp": ("smartphone", "pocket"), "sw": ("smartwatch", "wrist")}


def geotec_recordings(root: str | Path, devices=("sp", "sw")) -> list[Path]:
    """GeoTecINIT's recordings under ``root``, sorted: one file per execution and device.

    Parameters
    ----------
    root : str or Path
        The ``DATA`` folder, the folder holding it, or one subject's ``sXX`` folder.
    devices : iterable of {"sp", "sw"}
        ``sp`` the phone (in a trouser pocket), ``sw`` the watch (on the wrist).
    """
    devices = tuple(devices)
    unknown = [d for d in devices if d not in _GEOTEC_DEVICE]
    if unknown:
        raise ValueError(f"devices {unknown} are not GeoTecINIT devices; choose from {sorted(_GEOTEC_DEVICE)}")
    found = _listing(root, ("s*/s*_*_s?.csv*", "DATA/s*/s*_*_s?.csv*", "s*_*_s?.csv*"), _GEOTEC_NAME,
                     "GeoTecINIT (DATA/sXX/sXX_YY_sp.csv)")
    return [p for p in found if _GEOTEC_NAME.match(p.name)[3] in devices]


def _phone_orientation(path: Path) -> str | None:
    """The phone's orientation in this execution from ``DATA/executions_info.csv``, if it is there."""
    info = path.parent.parent / "executions_info.csv"
    execution = path.name.split("_s")[0]
    if info.is_file():
        for row in info.read_text().splitlines()[1:]:
            cells = row.split(",")
            if cells[0] == execution:
                return cells[1]
    return None


def load_geotec(path: str | Path) -> SensorLog:
    """Load one GeoTecINIT recording (a phone in the pocket or a watch on the wrist) with per-sample labels.

    Parameters
    ----------
    path : str or Path
        ``sXX_YY_sp.csv[.gz]`` (phone) or ``sXX_YY_sw.csv[.gz]`` (watch).

    Returns
    -------
    SensorLog
        Accelerometer (m/s²) and gyroscope (rad/s; the published README misnames their columns) at
        about 100 Hz; labels SEATED → SITTING, STANDING_UP → SIT_TO_STAND, WALKING → WALKING,
        TURNING → WALKING (level steps with a turn; ``meta["turning_ns"]`` lists each turn's first
        and last time so turns can be scored apart), SITTING_DOWN → STAND_TO_SIT. ``meta`` has
        ``subject`` (``"geotec-sXX"``), ``trial`` (the execution), ``placement``, ``device`` and,
        for the phone, ``phone_orientation`` from ``executions_info.csv``.

    Notes
    -----
    Timestamps are UNIX milliseconds, coarser than the 10 ms period: consecutive samples often share
    one (about 8 % of the phone's samples). Each run of equal times is spread evenly up to the next
    time, and ``meta["repairs"]["acc"]`` counts them (``repeated_spread``) with their first lines.
    """
    path = Path(path)
    match = _GEOTEC_NAME.match(path.name)
    if not match:
        raise ValueError(f"{path}: not a GeoTecINIT recording (sXX_YY_sp.csv or sXX_YY_sw.csv[.gz])")
    table = _table(path, _GEOTEC_COLUMNS)
    values = _columns(table, _GEOTEC_COLUMNS[:6], path)
    for group, columns in (("acc", values[:, :3]), ("gyro", values[:, 3:])):
        check_sensor_values(path, group, columns, np.arange(values.shape[0]) + 2)  # line 1: the header
    if table.column("timestamp").null_count or not pa.types.is_integer(table.column("timestamp").type):
        raise ValueError(f"{path}: the timestamp column is not whole UNIX milliseconds; re-download the file")
    names = np.asarray(table.column("label").to_pylist(), dtype=object)
    unknown = sorted(set(names.tolist()) - set(_GEOTEC_ACTIVITY), key=str)
    if unknown:
        row = int(np.flatnonzero(names == unknown[0])[0])
        raise ValueError(f"{path}:{row + 2}: label {unknown[0]!r} is not one of {sorted(_GEOTEC_ACTIVITY)}")
    label = np.zeros(names.size, dtype=np.int8)
    for name, activity in _GEOTEC_ACTIVITY.items():
        label[names == name] = int(activity)
    t_ms = table.column("timestamp").to_numpy().astype(np.int64)
    order, t, acc_repairs = _increasing(t_ms * 1_000_000, np.arange(t_ms.size) + 2)
    device, placement = _GEOTEC_DEVICE[match[3]]
    meta = {"dataset": "geotec", "source": "GeoTecINIT smartphone and smartwatch HAR", "path": str(path),
            "subject": f"geotec-{match[1]}", "trial": int(match[2]), "placement": placement, "device": device,
            "label_scope": "sample", "turning_ns": _run_spans(t, names[order] == "TURNING")}
    if match[3] == "sp":
        meta["phone_orientation"] = _phone_orientation(path)
    values = values[order]
    return _merged_log(path, t, values[:, :3], label[order], {"gyro": (t, values[:, 3:])}, meta,
                       {"acc": acc_repairs})


# --------------------------------------------------------------------------------------------
# IPIN 2023 competition, track 3 (GetSensorData logs)

_IPIN_NAME = re.compile(r"IPIN2023_T3_TrainingTrial(\d+)_repetition(\d+)\.txt(\.gz)?$")
_IPIN_FIELDS = {"ACCE": 3, "GYRO": 3, "PRES": 1}  # values after the two timestamps
_IPIN_MODELS = {"SM-A520F": "Samsung Galaxy A5 2017 (SM-A520F)", "SM-G930F": "Samsung Galaxy S7 (SM-G930F)"}


def ipin_recordings(root: str | Path) -> list[Path]:
    """The IPIN 2023 track-3 logs (``IPIN2023_T3_TrainingTrial<TT>_repetition<RR>.txt[.gz]``) in ``root``, sorted."""
    return _listing(root, ("IPIN2023_T3_*.txt*",), _IPIN_NAME, "IPIN 2023 track 3")


def _ipin_lines(path: Path) -> tuple[dict, list, str | None]:
    """Per sensor type: (app times s, sensor times s, values, file lines); POSI (app time s, floor); the model."""
    rows = {kind: ([], [], [], []) for kind in _IPIN_FIELDS}
    posi, model = [], None
    for number, line in enumerate(_text(path).splitlines(), start=1):
        kind = line[:4]
        if kind in rows:
            cells = line.split(";")
            width = _IPIN_FIELDS[kind]
            try:
                app, sensor, values = float(cells[1]), float(cells[2]), [float(c) for c in cells[3:3 + width]]
            except (ValueError, IndexError):
                raise ValueError(f"{path}:{number}: a {kind} line needs AppTimestamp;SensorTimestamp;"
                                 f"{width} value(s), got {line!r}") from None
            if len(values) != width:
                raise ValueError(f"{path}:{number}: a {kind} line needs {width} value(s), got {line!r}")
            for store, value in zip(rows[kind], (app, sensor, values, number)):
                store.append(value)
        elif kind == "POSI":
            cells = line.split(";")
            try:
                posi.append((float(cells[1]), int(cells[5])))
            except (ValueError, IndexError):
                raise ValueError(f"{path}:{number}: a POSI line needs its timestamp and floor, got {line!r}") from None
        elif line.startswith("% Model:"):
            model = line.split(":", 1)[1].strip()
    return rows, posi, model


def load_ipin(path: str | Path) -> SensorLog:
    """Load one IPIN 2023 track-3 log (phone held in the hand, with a barometer).

    Parameters
    ----------
    path : str or Path
        ``IPIN2023_T3_TrainingTrial<TT>_repetition<RR>.txt[.gz]``, written by ``GetSensorData``.

    Returns
    -------
    SensorLog
        Accelerometer (m/s², about 50 Hz) at its ``SensorTimestamp``; gyroscope (rad/s, 50 or
        100 Hz) and air pressure (``pressure``, mbar = hPa, 6 or 10 Hz) merged onto it. Samples from
        the first to the last ``POSI`` way-point are WALKING (level walking with turns and pauses:
        every log is on one floor); those before it are HANDLING: the calibration opening (the
        phone waved, then held still), whose span ``meta["calibration_ns"]`` gives; the seconds
        after the last way-point are UNLABELLED. ``meta`` also has ``walk_ns``, ``waypoints``, ``floors``, ``trial``,
        ``repetition``, ``device`` and ``subject`` ``"ipin-2023-t3"``: the logs do not name their
        walkers, so all count as one subject and leave-subjects-out never tests on a walker it
        trained on.

    Notes
    -----
    ``POSI`` lines carry only the app's clock; they are moved to the sensor clock by the median
    ``AppTimestamp − SensorTimestamp`` of the accelerometer lines (its spread is a few ms in the
    published logs). ACCE, GYRO and PRES share the sensor clock.
    """
    path = Path(path)
    match = _IPIN_NAME.match(path.name)
    if not match:
        raise ValueError(f"{path}: not an IPIN 2023 track-3 log (IPIN2023_T3_TrainingTrial<TT>_repetition<RR>.txt)")
    rows, posi, model = _ipin_lines(path)
    for kind in ("ACCE", "PRES"):
        if len(rows[kind][1]) < 2:
            raise ValueError(f"{path}: {len(rows[kind][1])} {kind} lines; the log holds no {kind} stream")
    if not posi:
        raise ValueError(f"{path}: no POSI way-point; the walk's start and end are unknown")
    repairs, streams = {}, {}
    for kind, name in (("ACCE", "acc"), ("GYRO", "gyro"), ("PRES", "pressure")):
        _, sensor_s, values, lines = rows[kind]
        if len(sensor_s) < 2:
            continue
        values = np.asarray(values, dtype=np.float64)
        check_sensor_values(path, name, values, lines)
        t = np.rint(np.asarray(sensor_s) * 1e9).astype(np.int64)
        order, t, repairs[name] = _increasing(t, np.asarray(lines))
        streams[name] = (t, values[order])
    t_acc, acc = streams.pop("acc")
    offset_ns = float(np.median(np.asarray(rows["ACCE"][0]) - np.asarray(rows["ACCE"][1]))) * 1e9
    walk = [int(round(posi[0][0] * 1e9 - offset_ns)), int(round(posi[-1][0] * 1e9 - offset_ns))]
    label = np.select([t_acc < walk[0], t_acc <= walk[1]], [int(Activity.HANDLING), int(Activity.WALKING)],
                      int(Activity.UNLABELLED))
    meta = {"dataset": "ipin", "source": "IPIN 2023 competition track 3", "path": str(path),
            "subject": "ipin-2023-t3", "trial": int(match[1]), "repetition": int(match[2]), "placement": "hand",
            "device": _IPIN_MODELS.get(model, model), "label_scope": "sample", "walk_ns": walk,
            "calibration_ns": [int(t_acc[0]), walk[0]], "waypoints": len(posi), "floors": sorted({floor for _, floor in posi}),
            "pressure_units": "hPa"}
    return _merged_log(path, t_acc, acc, label.astype(np.int8), streams, meta, repairs)


# --------------------------------------------------------------------------------------------
# Any of the four

_LAYOUTS = (  # (file name pattern, lister, loader)
    (_MOBIFALL_NAME, mobifall_recordings, load_mobifall),
    (_WEDA_NAME, weda_recordings, load_weda),
    (_GEOTEC_NAME, geotec_recordings, load_geotec),
    (_IPIN_NAME, ipin_recordings, load_ipin),
)


def placement_recordings(path: str | Path) -> list[Path] | None:
    """The recordings of whichever placement dataset ``path`` is, or None if it is none of them.

    Parameters
    ----------
    path : str or Path
        A folder any of :func:`mobifall_recordings`, :func:`weda_recordings`,
        :func:`geotec_recordings` or :func:`ipin_recordings` accepts, or one recording file.
    """
    path = Path(path)
    if path.is_file():
        return [path] if any(name.match(path.name) for name, _, _ in _LAYOUTS) else None
    for _, lister, _ in _LAYOUTS:
        try:
            return lister(path)
        except FileNotFoundError:
            continue
    return None


def load_placement_recording(path: str | Path) -> SensorLog:
    """Load one recording of any placement dataset, chosen by its file name.

    Raises
    ------
    ValueError
        When the name matches none of MobiFall, WEDA-FALL, GeoTecINIT or IPIN 2023 track 3.
    """
    path = Path(path)
    for name, _, loader in _LAYOUTS:
        if name.match(path.name):
            return loader(path)
    raise ValueError(f"{path}: not a MobiFall, WEDA-FALL, GeoTecINIT or IPIN 2023 track-3 recording file name")
