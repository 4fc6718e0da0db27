"""From recording paths to step windows: what ``stairsense train`` and ``evaluate`` read, and the
public :func:`recording_windows` that gives scripts and benchmarks the very same windows.

Composition only (DESIGN.md): read each recording with its loader (canonical logs, UCI HAPT, Oxford,
the placement datasets), add the virtual sensors a configuration needs, and cut and featurise the
windows with :func:`stairsense.features.window_dataset`.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np

from stairsense.features import WindowDataset, window_dataset
from stairsense.stream import (
    PipelineConfig,
    SensorLog,
    load_placement_recording,
    load_uci_hapt,
    placement_recordings,
    read_log,
    read_segments,
    resolve_orientation,
    uci_hapt_dir,
    with_virtual_sensors,
)

__all__ = ["load_labelled_logs", "prepare_logs", "RecordingWindows", "recording_windows"]

# Orientation methods that read streams UCI-like recordings lack but can get from acc + gyro fusion.
_FUSED_STREAMS = {"rotvec": ("rotvec",), "linear": ("rotvec", "linacc")}


def _is_uci(path: Path) -> bool:
    if not path.is_dir():
        return False
    try:
        uci_hapt_dir(path)
    except FileNotFoundError:
        return False
    return True


def _oxford_walking(path: Path) -> list[SensorLog] | None:
    """The Oxford recordings under ``path`` labelled level walking (NO_STAIR), or None if there are none.

    The Oxford step counter is level walking in six placements on three phones; as NO_STAIR
    windows it teaches the classifier that a pocket, a hand or an armband is not a staircase.
    """
    import warnings

    from stairsense.stream import Activity, load_oxford, oxford_recordings

    if (path / "stepcounter.csv").is_file():
        folders = [path] if (path / "accelerometer.csv").is_file() else []
    else:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", UserWarning)  # the patient folders without accelerometer.csv
                folders = oxford_recordings(path)
        except (FileNotFoundError, NotADirectoryError):
            return None
    logs = []
    for folder in folders:
        log = load_oxford(folder)
        label = np.full(log.t_ns.size, int(Activity.WALKING), np.int64)
        logs.append(replace(log, label=label, meta={**log.meta, "path": str(folder)}))
    return logs


def load_labelled_logs(paths: Iterable[str | Path], *, repair: Iterable[str] = (), units: str | None = None,
                       max_gap_s: float | None = None, reports: list | None = None,
                       require_labels: bool = True) -> list[SensorLog]:
    """Read labelled recordings: canonical CSV logs with a ``label`` column, UCI HAPT RawData,
    Oxford step-counter recordings (level walking, every sample labelled WALKING), or MobiFall,
    WEDA-FALL, GeoTecINIT and IPIN 2023 track-3 recordings (their own labels).

    Parameters
    ----------
    paths : iterable of str or Path
        ``.csv`` / ``.csv.gz`` canonical logs, a UCI HAPT ``RawData`` folder (or a folder above
        it), recognised by its ``labels.txt``, an Oxford step-counter folder (``optimisation``,
        its ``data`` folder, or one recording), recognised by ``stepcounter.csv`` files, or a
        placement dataset's folder or one of its recording files, recognised by the published file
        names (:func:`~stairsense.stream.placement_recordings`).
    repair, units, max_gap_s
        How canonical logs are read (:func:`~stairsense.stream.read_log`). With ``"split-gaps"``
        every gap-free segment is a log of its own, keeping its file as the subject (so
        leave-subjects-out never splits one recording across folds). A dataset's recording, which
        no repair option reaches, is always split at every gap longer than ``max_gap_s`` the same
        way, each part keeping the recording's subject and path (MobiFall's files hold gaps of up
        to 0.21 s: a front end smoothing over less would otherwise stop at them).
    reports : list, optional
        Receives the :class:`~stairsense.stream.ReadReport` of each canonical log read.
    require_labels : bool, default=True
        Refuse a canonical log without a ``label`` column; False reads it too (its windows can be
        counted, never trained or scored on).

    Returns
    -------
    list of SensorLog
        Each with ``meta["path"]``; UCI logs carry their ``subject``.

    Raises
    ------
    ValueError
        Naming the file when it has no per-sample labels or is neither kind of input.
    """
    logs: list[SensorLog] = []
    for path in map(Path, paths):
        if _is_uci(path):
            logs.extend(part for log in load_uci_hapt(path)
                        for part in replace(log, meta={**log.meta, "path": str(path)}).split_at_gaps(max_gap_s))
            continue
        recordings = placement_recordings(path)
        if recordings:
            logs.extend(part for p in recordings for part in load_placement_recording(p).split_at_gaps(max_gap_s))
            continue
        if path.is_dir():
            oxford = _oxford_walking(path)
            if oxford:
                logs.extend(part for log in oxford for part in log.split_at_gaps(max_gap_s))
                continue
            raise ValueError(f"{path}: a folder but neither UCI HAPT RawData (no labels.txt), Oxford step-counter "
                             "recordings (no stepcounter.csv), nor MobiFall, WEDA-FALL, GeoTecINIT or IPIN 2023 "
                             "recordings (no file with their published names); pass log files or one of those "
                             "folders")
        if not path.exists():
            raise ValueError(f"{path}: no such file")
        repair = tuple(repair)
        if "split-gaps" in repair:
            rest = tuple(r for r in repair if r != "split-gaps")
            parts, report = read_segments(path, repair=rest, units=units, max_gap_s=max_gap_s, report=True)
            parts = [replace(p, meta={"subject": str(path), **p.meta}) for p in parts]
        else:
            log, report = read_log(path, repair=repair, units=units, max_gap_s=max_gap_s, report=True)
            parts = [log]
        if reports is not None:
            reports.append(report)
        # as documented: every log names its file (errors further on, e.g. a barometer model's, cite it)
        parts = [replace(p, meta={"path": str(path), **p.meta}) for p in parts]
        if require_labels and parts[0].label is None:
            raise ValueError(f"{path}: no 'label' column; training and evaluation need per-sample activity "
                             "labels (Activity codes)")
        logs.extend(parts)
    if not logs:
        raise ValueError("no input given: pass labelled log files or a UCI HAPT RawData folder")
    return logs


def prepare_logs(logs: Sequence[SensorLog], config: PipelineConfig, *, progress: bool = False) -> list[SensorLog]:
    """Add virtual rotation-vector / linear-acceleration streams where ``config`` needs them.

    UCI HAPT records only accelerometer and gyroscope; ``orientation="rotvec"`` and ``"linear"``
    run on the streams a phone's fusion would give (:func:`~stairsense.stream.with_virtual_sensors`,
    Madgwick at the recorded rate). Logs that already have the streams are returned unchanged.
    ``orientation="ahrs"`` needs no preparation: the front end runs the same filter itself (after
    resampling to ``config.rate_hz``).
    """
    from tqdm.auto import tqdm

    needed = _FUSED_STREAMS.get(config.orientation, ())
    out = []
    for log in tqdm(logs, desc="virtual sensors", unit="log", disable=not progress or not needed):
        missing = [s for s in needed if getattr(log, s) is None]
        out.append(with_virtual_sensors(log) if missing and log.gyro is not None else log)
    return out


@dataclass
class RecordingWindows:
    """The kept windows of some recordings, with the logs and the paths they came from.

    Attributes
    ----------
    dataset : WindowDataset
        The windows; ``dataset.log_index`` indexes :attr:`logs`.
    logs : list of SensorLog
        Every log read, as the front end ran on it (virtual sensors added), with ``meta["path"]``.
    sources : list of str
        The paths as given.
    log_source : ndarray of int, shape (len(logs),)
        Index in :attr:`sources` of the path each log was read from.
    config : PipelineConfig
        The configuration the windows were cut with.
    """

    dataset: WindowDataset
    logs: list
    sources: list
    log_source: np.ndarray
    config: PipelineConfig

    @property
    def orientation_methods(self) -> list[str]:
        """What ``config.orientation`` resolved to over the logs, sorted: ``"auto"`` resolves per log,
        and a model records what its training windows really used, so that a replay on a log that
        resolves otherwise is refused instead of silently fed other features."""
        return sorted({resolve_orientation(self.config, log) for log in self.logs})

    @property
    def window_source(self) -> np.ndarray:
        """(m,) object array: the path (as given) each window was read from."""
        return np.array(self.sources, dtype=object)[self.log_source[self.dataset.log_index]]

    def log_meta(self, key: str, default=None) -> np.ndarray:
        """(m,) object array: ``meta[key]`` of each window's log (``default`` where it has none)."""
        values = np.empty(len(self.logs), dtype=object)  # filled one by one: a list value stays one element
        for i, log in enumerate(self.logs):
            values[i] = log.meta.get(key, default)
        return values[self.dataset.log_index]


def recording_windows(paths: Iterable[str | Path], config: PipelineConfig | None = None, *,
                      keep_unlabelled: bool = False, progress: bool = False,
                      read: dict | None = None) -> RecordingWindows:
    """Read recordings and cut their windows exactly as ``stairsense train`` and ``evaluate`` do.

    Parameters
    ----------
    paths : iterable of str or Path
        As in :func:`load_labelled_logs`: canonical logs, a UCI HAPT or Oxford folder, a placement
        dataset's folder or recording file.
    config : PipelineConfig, optional
        Front end that cuts the windows (default ``PipelineConfig()``); its ``read_gap_s()`` is the
        readers' gap limit.
    keep_unlabelled : bool, default=False
        Keep ambiguous windows and accept logs without labels, with ``y`` = ``AMBIGUOUS``
        (:func:`~stairsense.features.window_dataset`): for counting a model's decisions on
        unlabelled recordings. The labelled windows are the same either way.
    progress : bool, default=False
        tqdm progress bars.
    read : dict, optional
        Keyword arguments of :func:`load_labelled_logs` (``repair``, ``units``, ``reports``).

    Returns
    -------
    RecordingWindows
        Subjects (``dataset.groups``) are ``meta["subject"]``, else the log's index; when both kinds
        occur, every group is a string, so they sort together.

    Examples
    --------
    >>> import tempfile
    >>> from stairsense.stream import simulate, write_log
    >>> with tempfile.TemporaryDirectory() as d:
    ...     paths = [write_log(simulate(minutes=1, rate_hz=30, seed=s), f"{d}/p{s}.csv.gz") for s in (1, 2)]
    ...     found = recording_windows(paths)
    >>> len(found.logs), sorted({str(p)[-9:] for p in found.window_source}), found.orientation_methods
    (2, ['p1.csv.gz', 'p2.csv.gz'], ['rotvec'])
    """
    config = config or PipelineConfig()
    sources = [str(p) for p in paths]
    if not sources:
        raise ValueError("no input given: pass labelled log files or a UCI HAPT RawData folder")
    read = read or {}
    raw, log_source = [], []
    for i, source in enumerate(sources):
        found = load_labelled_logs([source], max_gap_s=config.read_gap_s(), require_labels=not keep_unlabelled,
                                   **read)
        raw += found
        log_source += [i] * len(found)
    logs = prepare_logs(raw, config, progress=progress)
    ds = window_dataset(logs, config, keep_unlabelled=keep_unlabelled, progress=progress)
    if len({type(g) for g in ds.groups}) > 1:  # named subjects (UCI, Oxford) beside unnamed logs (their index)
        ds.groups = ds.groups.astype(str).astype(object)
    return RecordingWindows(ds, logs, sources, np.array(log_source, dtype=np.int64), config)
