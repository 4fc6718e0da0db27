"""Training and evaluation from labelled recordings: what ``stairsense train`` / ``evaluate`` call.

Composition only (DESIGN.md): read logs, add the virtual sensors a configuration needs, cut and
featurise windows with :func:`stairsense.features.window_dataset`, then fit
(:class:`~stairsense.models.StairstepModel`) or evaluate
(:func:`~stairsense.models.evaluate_protocol`).
"""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np

from stairsense.models import StairstepModel, default_grid, evaluate_protocol, make_classifier
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

from stairsense.features import window_dataset

__all__ = ["load_labelled_logs", "prepare_logs", "train_from_recordings", "evaluate"]

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

    Issue 9: the Oxford step counter is level walking in six placements on three phones; as NO_STAIR
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
                       max_gap_s: float | None = None, reports: list | None = None) -> list[SensorLog]:
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
        leave-subjects-out never splits one recording across folds).
    reports : list, optional
        Receives the :class:`~stairsense.stream.ReadReport` of each canonical log read.

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
            logs.extend(replace(log, meta={**log.meta, "path": str(path)}) for log in load_uci_hapt(path))
            continue
        recordings = placement_recordings(path)
        if recordings:
            logs.extend(load_placement_recording(p) for p in recordings)
            continue
        if path.is_dir():
            oxford = _oxford_walking(path)
            if oxford:
                logs.extend(oxford)
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
        if parts[0].label is None:
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


def _dataset(paths, config, progress, read=None):
    read = read or {}
    raw = load_labelled_logs(paths, max_gap_s=config.read_gap_s(), **read)
    logs = prepare_logs(raw, config, progress=progress)
    # "auto" resolves per log: record what the training windows really used, so a replay on a log
    # that resolves otherwise is refused instead of silently fed other features.
    methods = sorted({resolve_orientation(config, log) for log in logs})
    ds = window_dataset(logs, config, progress=progress)
    if len({type(g) for g in ds.groups}) > 1:  # named subjects (UCI, Oxford) beside unnamed logs (their index)
        ds.groups = ds.groups.astype(str).astype(object)
    return ds, methods, logs


def _false_stair_rates(held_out, y, placement) -> dict:
    """Share of held-out NO_STAIR windows decided STAIR, per placement (issue 9)."""
    tested = (held_out >= 0) & (y == 0)
    return {str(p): float(np.mean(held_out[tested & (placement == p)] == 1))
            for p in np.unique(placement) if np.any(tested & (placement == p))}


def train_from_recordings(paths: Iterable[str | Path], config: PipelineConfig | None = None, *, k=49, lam=0.1,
                          gamma="scale", n_landmarks=None, invariant=False, progress: bool = False,
                          read: dict | None = None) -> StairstepModel:
    """Fit the stair-step classifier on every labelled window of ``paths``.

    Parameters
    ----------
    paths : iterable of str or Path
        As in :func:`load_labelled_logs`.
    config : PipelineConfig, optional
        Front end used to cut the windows (default ``PipelineConfig()``); saved with the model.
    k, lam, gamma, n_landmarks
        EasyMKL's kept features, KOMD's Λ and RBF γ, and the support-vector budget
        (:func:`make_stairstep_pipeline`; ``None`` = exact KOMD).
    invariant : bool
        Let the selector choose only heading-invariant features
        (:func:`~stairsense.models.stairstep.heading_invariant_mask`).
    progress : bool
        tqdm progress bars.
    read : dict, optional
        Keyword arguments of :func:`load_labelled_logs` (``repair``, ``units``, ``reports``).

    Returns
    -------
    StairstepModel
        Its ``summary["orientation_methods"]`` lists the orientation methods the training windows
        were standardized with (what ``auto`` resolved to).
    """
    from stairsense.models import make_stairstep_pipeline
    from stairsense.models.stairstep import heading_invariant_mask

    config = config or PipelineConfig()
    paths = [str(p) for p in paths]
    ds, methods, _ = _dataset(paths, config, progress, read)
    if len(set(ds.y.tolist())) < 2:
        raise ValueError(f"the windows of {paths} hold only class {ds.y[:1].tolist()}: training needs both STAIR "
                         "and NO_STAIR windows; add recordings with stairs and with level walking")
    pipeline = make_stairstep_pipeline(k=k, lam=lam, gamma=gamma, n_landmarks=n_landmarks, random_state=0,
                                       allowed=heading_invariant_mask(ds.feature_names) if invariant else None)
    model = StairstepModel.train(pipeline, ds.X, ds.y, config=config, feature_names=ds.feature_names,
                                 groups=ds.groups, sources=paths)
    model.summary["orientation_methods"] = methods
    return model


def evaluate(paths: Iterable[str | Path], config: PipelineConfig | None = None, *, protocol="loso",
             classifier="komd", k=49, grid="small", n_outer=None, n_inner=5, random_state=0, client=None,
             n_jobs=1, progress: bool = False, read: dict | None = None) -> dict:
    """Evaluate a Table 12.2 classifier on labelled recordings with a nested protocol (spec §3.7).

    Parameters
    ----------
    paths : iterable of str or Path
    config : PipelineConfig, optional
    protocol : {"loso", "nested-cv"}
        Leave-subjects-out (one subject per outer fold when ``n_outer`` is None) or the thesis's
        nested stratified 10-fold CV (``n_outer`` None means 10).
    classifier : {"komd", "knn", "dt"}
    k : int or "all"
        Features EasyMKL keeps for KOMD.
    grid : {"small", "full"} or dict
        Hyper-parameter candidates for the inner selection (:func:`default_grid`).
    n_outer, n_inner, random_state, client, n_jobs, progress
        As in :func:`~stairsense.models.evaluate_protocol`.
    read : dict, optional
        As in :func:`train_from_recordings`.

    Returns
    -------
    dict
        :meth:`CVResult.summary` plus ``per_fold`` (precision, recall, F1 lists), ``test_groups``,
        ``false_stair_rate`` (held-out NO_STAIR windows decided STAIR, per ``meta["placement"]`` —
        Oxford recordings name theirs, others count as "unknown"), ``n_windows``, ``n_stair``,
        ``config`` and ``classifier``.

    Notes
    -----
    Subjects for ``"loso"`` come from each log's ``meta["subject"]`` (UCI HAPT sets it); a log
    without one counts as its own subject.
    """
    config = config or PipelineConfig()
    ds, _, logs = _dataset([str(p) for p in paths], config, progress, read)
    placement = np.array([str(logs[i].meta.get("placement", "unknown")).lower() for i in ds.log_index])
    grid = default_grid(classifier, grid) if isinstance(grid, str) else grid
    if protocol == "nested-cv" and n_outer is None:
        n_outer = 10
    result = evaluate_protocol(make_classifier(classifier, k=k, random_state=random_state), ds.X, ds.y,
                               groups=ds.groups, protocol=protocol, param_grid=grid, n_outer=n_outer,
                               n_inner=n_inner, random_state=random_state, client=client, n_jobs=n_jobs,
                               progress=progress)
    per_fold = result.per_fold
    return {
        **result.summary(),
        "per_fold": {"precision": per_fold[:, 0].tolist(), "recall": per_fold[:, 1].tolist(),
                     "f1": per_fold[:, 2].tolist()},
        "test_groups": result.test_groups,
        "false_stair_rate": _false_stair_rates(result.held_out_stair, ds.y, placement),
        "n_windows": len(ds),
        "n_stair": int(ds.y.sum()),
        "classifier": classifier,
        "config": config.to_dict(),
    }
