"""Loaders for the two public datasets, in their official download layouts.

See ``shared/data/README.md``:

* UCI HAPT RawData (Reyes-Ortiz et al., 2016): ``acc_expNN_userUU.txt`` in g, ``gyro_expNN_userUU.txt``
  in rad/s, both 50 Hz without a time column, and ``labels.txt`` with per-segment activities.
* Oxford step counter (Salvi et al., EMBC 2018): ``data/<Phone>_<User>_<Surface>_<Position>_<n>/``
  with ``accelerometer.csv`` (``t_ns, sensor_type, ax, ay, az`` in m/s²) and ``stepcounter.csv``
  (``t_ns, foot1, foot2``), and ``stats.csv`` with each recording's ground-truth step total.
"""
from __future__ import annotations

import re
import warnings
from pathlib import Path

import numpy as np

from ._log import STANDARD_GRAVITY, Activity, SensorLog, StepTruth, check_sensor_values

__all__ = [
    "UCI_HAPT_RATE_HZ",
    "uci_hapt_experiments",
    "uci_hapt_dir",
    "load_uci_hapt",
    "oxford_recordings",
    "load_oxford",
]

#: UCI HAPT's sampling rate: both sensors at 50 Hz, no time column in the files.
UCI_HAPT_RATE_HZ = 50
_UCI_PERIOD_NS = 1_000_000_000 // UCI_HAPT_RATE_HZ
_UCI_NAME = re.compile(r"acc_exp(\d+)_user(\d+)\.txt$")


def uci_hapt_dir(root: str | Path) -> Path:
    """Accept the RawData folder itself or any folder above it up to the dataset root."""
    root = Path(root)
    for cand in (root, root / "RawData", root / "uci-hapt" / "RawData"):
        if (cand / "labels.txt").is_file():
            return cand
    raise FileNotFoundError(f"{root}: no UCI HAPT RawData here (looked for labels.txt in {root}, "
                            f"{root / 'RawData'} and {root / 'uci-hapt' / 'RawData'}); pass the RawData folder")


def uci_hapt_experiments(root: str | Path) -> list[tuple[int, int]]:
    """The ``(experiment, user)`` pairs present under ``root``, sorted by experiment.

    Parameters
    ----------
    root : str or Path
        The ``RawData`` folder, or a folder holding ``RawData`` or ``uci-hapt/RawData``.

    Returns
    -------
    list of (int, int)
    """
    raw = uci_hapt_dir(root)
    pairs = [(int(m[1]), int(m[2])) for p in raw.iterdir() if (m := _UCI_NAME.match(p.name))]
    return sorted(pairs)


def _read_matrix(path: Path, width: int) -> np.ndarray:
    try:
        arr = np.loadtxt(path, dtype=np.float64, ndmin=2)
    except ValueError as exc:
        raise ValueError(f"{path}: not {width} numbers per line ({exc}); re-download the file") from exc
    if arr.shape[1] != width:
        raise ValueError(f"{path}: expected {width} columns, got {arr.shape[1]}; re-download the file")
    return arr


def load_uci_hapt(root: str | Path, exp=None, user=None) -> list[SensorLog]:
    """Load UCI HAPT RawData experiments as logs in SI units with per-sample labels.

    Parameters
    ----------
    root : str or Path
        The ``RawData`` folder (or a folder above it, see :func:`uci_hapt_experiments`).
    exp, user : int, iterable of int, or None
        Keep only these experiments / users (``None``: all).

    Returns
    -------
    list of SensorLog
        One per experiment, sorted by experiment. Acceleration is converted from g to m/s² by
        ×9.80665 (standard gravity); gyroscope stays rad/s; ``t_ns`` is synthesised at 50 Hz from
        0; ``label`` holds the :class:`Activity` of each sample from ``labels.txt`` (0 where no
        segment covers it); ``meta`` has subject, experiment, rate_hz, source, device, placement.

    Raises
    ------
    ValueError
        When the filter matches nothing (the message lists what exists), or files disagree.
    """
    raw = uci_hapt_dir(root)
    present = uci_hapt_experiments(raw)

    def wanted(value, allowed):
        return allowed is None or value in ({allowed} if np.isscalar(allowed) else set(allowed))

    chosen = [(e, u) for e, u in present if wanted(e, exp) and wanted(u, user)]
    if not chosen:
        raise ValueError(f"{raw}: no experiment matches exp={exp!r}, user={user!r}; present (exp, user) "
                         f"pairs: {present}")
    labels = _read_matrix(raw / "labels.txt", 5).astype(np.int64)
    logs = []
    for e, u in chosen:
        acc_path = raw / f"acc_exp{e:02d}_user{u:02d}.txt"
        gyro_path = raw / f"gyro_exp{e:02d}_user{u:02d}.txt"
        acc = _read_matrix(acc_path, 3) * STANDARD_GRAVITY
        gyro = _read_matrix(gyro_path, 3)
        check_sensor_values(acc_path, "acc", acc, np.arange(1, acc.shape[0] + 1))
        check_sensor_values(gyro_path, "gyro", gyro, np.arange(1, gyro.shape[0] + 1))
        if gyro.shape[0] != acc.shape[0]:
            raise ValueError(f"{gyro_path}: {gyro.shape[0]} samples but {acc_path.name} has "
                             f"{acc.shape[0]}; both sensors share timestamps, re-download the pair")
        n = acc.shape[0]
        label = np.zeros(n, dtype=np.int8)
        for _, _, activity, first, last in labels[(labels[:, 0] == e) & (labels[:, 1] == u)]:
            if not (0 <= first <= last < n) or activity not in Activity._value2member_map_:
                raise ValueError(f"{raw / 'labels.txt'}: row (exp={e}, user={u}, activity={activity}, "
                                 f"{first}..{last}) does not fit {n} samples or is not an activity code")
            label[first : last + 1] = activity  # inclusive sample indices in labels.txt
        meta = {
            "source": "UCI HAPT RawData", "subject": u, "experiment": e, "rate_hz": float(UCI_HAPT_RATE_HZ),
            "device": "Samsung Galaxy S II", "placement": "waist", "units": "m/s2",
            "converted_from_units": "g",
        }
        logs.append(SensorLog(np.arange(n, dtype=np.int64) * _UCI_PERIOD_NS, acc, gyro=gyro,
                              label=label, meta=meta))
    return logs


# --------------------------------------------------------------------------------------------
# Oxford step counter


def oxford_recordings(root: str | Path) -> list[Path]:
    """Recording folders under ``root`` that have an ``accelerometer.csv``, sorted by name.

    Folders without one (``_Patient_1``, ``_Patient_2``, ``_Patient_4`` in the official data) are
    skipped with one :class:`UserWarning` naming them.

    Parameters
    ----------
    root : str or Path
        The ``data`` folder, or a folder holding ``data`` (e.g. ``.../optimisation``) or
        ``oxford-stepcounter/optimisation/data``.
    """
    root = Path(root)
    for cand in (root, root / "data", root / "oxford-stepcounter" / "optimisation" / "data"):
        folders = sorted(p for p in cand.iterdir() if p.is_dir() and (p / "stepcounter.csv").is_file()) \
            if cand.is_dir() else []
        if folders:
            break
    else:
        raise FileNotFoundError(f"{root}: no Oxford step-counter recordings (folders with stepcounter.csv) "
                                "here or in its data/ subfolder; pass the dataset's data folder")
    missing = [p.name for p in folders if not (p / "accelerometer.csv").is_file()]
    if missing:
        warnings.warn(f"{cand}: skipping {missing}: no accelerometer.csv (only step ground truth was "
                      "published for them)", UserWarning, stacklevel=2)
    return [p for p in folders if p.name not in missing]


def _folder_meta(folder: Path) -> dict:
    if folder.name.startswith("_"):
        return {"recording": folder.name, "patient": folder.name.strip("_")}
    parts = folder.name.split("_")
    if len(parts) != 5:
        raise ValueError(f"{folder}: expected a folder named <Phone>_<User>_<Surface>_<Position>_<n>, "
                         f"got {folder.name!r}")
    phone, user, surface, position, index = parts
    return {"recording": folder.name, "device": phone, "subject": user, "surface": surface,
            "placement": position, "take": int(index)}


def _stats_total(folder: Path) -> int | None:
    """The recording's step total from ``stats.csv`` one level above ``data/``, if there is one."""
    stats = folder.parent.parent / "stats.csv"
    if not stats.is_file():
        return None
    for row in stats.read_text().splitlines():
        cells = [c.strip() for c in row.split(",")]
        if cells and cells[0] == folder.name:
            return int(cells[-1])
    return None


def _foot_steps(path: Path) -> StepTruth:
    """Every 0→1 transition of either foot switch is one step (as ``stats.js`` counts them)."""
    sc = np.loadtxt(path, delimiter=",", dtype=np.int64, ndmin=2)
    if sc.shape[1] != 3:
        raise ValueError(f"{path}: expected 't_ns,foot1,foot2' rows, got {sc.shape[1]} columns")
    t, feet = sc[:, 0], sc[:, 1:]
    if np.any(np.diff(t) < 0):
        raise ValueError(f"{path}: foot-switch times go backwards at row "
                         f"{int(np.flatnonzero(np.diff(t) < 0)[0]) + 2}; the ground truth is unusable")
    rises = (feet[1:] == 1) & (feet[:-1] == 0)  # (rows - 1, 2): a rise of foot j at row i + 1
    row = np.repeat(np.arange(1, t.size), rises.sum(axis=1))
    return StepTruth(t[row], np.full(row.size, int(Activity.WALKING)))


def load_oxford(recording_dir: str | Path) -> SensorLog:
    """Load one Oxford step-counter recording with its foot-switch step ground truth.

    Parameters
    ----------
    recording_dir : str or Path
        A folder ``<Phone>_<User>_<Surface>_<Position>_<n>`` (or ``_Patient_3``) holding
        ``accelerometer.csv`` and ``stepcounter.csv``.

    Returns
    -------
    SensorLog
        Accelerometer in m/s² at the phone's own irregular timing (~200 or ~400 Hz); steps from
        every 0→1 foot-switch transition, kind WALKING; ``meta`` with device, subject, surface,
        placement, take, ``rate_hz`` (median), ``stats_steps`` (stats.csv's total, when found)
        and ``timestamp_repairs``.

    Notes
    -----
    Phones can deliver samples with repeated or backward timestamps. They are put in time order
    by a stable sort and, among samples with the same timestamp, the first in the file is kept.
    ``meta["timestamp_repairs"]`` counts both and gives the first affected file lines (1-based),
    so nothing is dropped silently; in the published data both counts are 0.
    """
    folder = Path(recording_dir)
    acc_path = folder / "accelerometer.csv"
    if not acc_path.is_file():
        hint = " (the _Patient_1, _2 and _4 folders were published without one)" if folder.name.startswith("_") else ""
        raise FileNotFoundError(f"{folder}: no accelerometer.csv{hint}; skip this folder "
                                "(oxford_recordings() lists the loadable ones)")
    meta = {"source": "Oxford step counter", **_folder_meta(folder), "units": "m/s2"}
    raw = np.loadtxt(acc_path, delimiter=",", dtype=np.float64, ndmin=2, usecols=(1, 2, 3, 4))
    # t_ns needs int64: ~1e14 ns values lose their last digits as float64.
    t = np.loadtxt(acc_path, delimiter=",", dtype=np.int64, ndmin=1, usecols=(0,))
    check_sensor_values(acc_path, "acc", raw[:, 1:], np.arange(1, t.size + 1))
    late = t < np.maximum.accumulate(t)
    order = np.argsort(t, kind="stable")
    lines = order + 1
    t_sorted = t[order]
    repeat = np.zeros(t.size, dtype=bool)
    repeat[1:] = t_sorted[1:] == t_sorted[:-1]
    meta["timestamp_repairs"] = {
        "backwards": int(late.sum()), "backwards_first_lines": (np.flatnonzero(late)[:5] + 1).tolist(),
        "duplicates_dropped": int(repeat.sum()), "duplicates_first_lines": np.sort(lines[repeat])[:5].tolist(),
    }
    keep = order[~repeat]
    t_kept = t[keep]
    meta["rate_hz"] = 1e9 / float(np.median(np.diff(t_kept))) if t_kept.size > 1 else None
    meta["sensor_type"] = int(raw[0, 0])
    total = _stats_total(folder)
    if total is not None:
        meta["stats_steps"] = total
    return SensorLog(t_kept, raw[keep, 1:], steps=_foot_steps(folder / "stepcounter.csv"), meta=meta)
