"""Composition of the stages: logs → standardized windows → features → labels, and replay.

No algorithm lives here (DESIGN.md): this module wires ``stream`` and ``features`` together the
same way for training, evaluation and replay, so all three see exactly the same windows.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Iterator

import numpy as np

from stairsense.features import (
    FEATURE_NAMES,
    STEP_CONTEXT_NAMES,
    StepContext,
    step_shape_features,
    window_features,
)
from stairsense.stream import (
    STAIR_ACTIVITIES,
    Activity,
    FrontEnd,
    FrontEndResult,
    PipelineConfig,
    ReadReport,
    SensorLog,
    Standardized,
    StepTruth,
    WindowStatus,
    WindowTable,
    iter_log_chunks,
    read_steps,
    Resampler,
    resample,
    resolve_orientation,
    run_front_end,
)

__all__ = [
    "WindowDataset",
    "front_end",
    "window_features_of",
    "log_features",
    "step_signals",
    "window_dataset",
    "feature_names_for",
    "match_steps",
    "ReplayReport",
    "replay",
]

NO_STAIR, STAIR = 0, 1

# Rows per replay chunk: small enough that every per-chunk array stays in a few MB (flat memory on
# day-long logs), large enough that per-chunk overhead is negligible (measured in bench_frontend).
REPLAY_CHUNK_ROWS = 1 << 16


def feature_names_for(config: PipelineConfig) -> list[str]:
    """Names of the feature columns: the 79 Table 12.1 features (2 × 79 for Mizell's vertical and
    horizontal streams), then the 36 :data:`~stairsense.features.STEP_CONTEXT_NAMES` when
    ``config.step_context > 0``."""
    if config.orientation == "mizell":
        names = [f"vertical_{n}" for n in FEATURE_NAMES] + [f"horizontal_{n}" for n in FEATURE_NAMES]
    else:
        names = list(FEATURE_NAMES)
    return names + list(STEP_CONTEXT_NAMES) if config.step_context > 0 else names


def front_end(log: SensorLog, config: PipelineConfig) -> FrontEndResult:
    """Resample to ``config.rate_hz`` (if set), then the batch front end."""
    if config.rate_hz is not None:
        log = resample(log, config.rate_hz)
    return run_front_end(log, config)


def window_features_of(samples: np.ndarray, windows: WindowTable, mask=None) -> np.ndarray:
    """Table 12.1 features of the (masked) windows over standardized ``samples`` (3 or 6 columns).

    The step context needs more than the samples (the vertical signal, the rate, the windows
    before); :func:`log_features` gives every column of :func:`feature_names_for`.
    """
    index, offsets = windows.sample_index(mask)
    parts = [window_features(samples[index, c : c + 3], offsets) for c in range(0, samples.shape[1], 3)]
    return np.hstack(parts)


def step_signals(standardized: Standardized) -> np.ndarray:
    """(m, 2) per sample: ``z`` the vertical dynamic acceleration and ``h`` the horizontal magnitude,
    the two signals the step-context features read (``STEPCTX``: hypot of the East and North
    columns for the Earth-frame methods, the norm of Mizell's horizontal component)."""
    samples = standardized.samples
    horizontal = samples[:, 3:6] if standardized.method == "mizell" else samples[:, :2]
    return np.column_stack([standardized.vertical, np.linalg.norm(horizontal, axis=1)])


def _step_dt(config: PipelineConfig, rate_hz: float) -> float:
    """Sample period the step shape integrates with: 1 / ``config.rate_hz``, else 1 / the log's rate.

    Without ``rate_hz`` a replay knows only the rate of a segment's first chunk (the median interval
    of up to ``REPLAY_CHUNK_ROWS`` samples, as the front end's count smoothing does), a batch run the
    whole log's: the same for logs of one chunk (< 65536 samples), else close (the rates of a jittery
    log's first 65536 samples and of all of it differ by 2.6e-4 on a 30-minute simulated walk at
    50 Hz with 5 % timestamp jitter). With ``rate_hz`` both are exact.
    """
    return 1.0 / (config.rate_hz or rate_hz)


def _step_context_of(signals: np.ndarray, windows: WindowTable, mask, dt: float, context: StepContext) -> np.ndarray:
    """(m, 36) step-context features of the (masked) windows, pushed in order into ``context``.

    ``context`` is the running :class:`~stairsense.features.StepContext` of one stream: a fresh
    one for a whole log; replay keeps one across chunks and resets it with every segment, so the
    rows are the same either way. ``signals`` are :func:`step_signals` of the samples the windows
    index.
    """
    index, offsets = windows.sample_index(mask)
    shape = step_shape_features(signals[index, 0], signals[index, 1], offsets, dt)
    kept = windows if mask is None else windows.select(mask)
    rows = [context.push_shape(row, a, b) for row, a, b in zip(shape, kept.t_start_ns, kept.t_end_ns)]
    return np.array(rows, dtype=np.float64).reshape(-1, len(STEP_CONTEXT_NAMES))


def _new_step_context(config: PipelineConfig) -> StepContext | None:
    """The running step context of ``config``, None when it has none (``step_context=0``)."""
    return StepContext(config.step_context, config.step_context_gap_s) if config.step_context > 0 else None


def log_features(result: FrontEndResult, config: PipelineConfig, rate_hz: float, mask=None) -> np.ndarray:
    """Every feature column of :func:`feature_names_for` for the (masked) windows of one log.

    Parameters
    ----------
    result : FrontEndResult
        The front end run over the whole (resampled) log.
    config : PipelineConfig
    rate_hz : float
        Rate of the log the front end ran on (used when ``config.rate_hz`` is None).
    mask : array of bool, optional
        The windows to featurise, usually ``windows.kept``; the step context runs over them in
        order within this log only.
    """
    X = window_features_of(result.standardized.samples, result.windows, mask)
    return X if config.step_context == 0 else np.hstack([X, _log_step_context(result, config, rate_hz, mask)])


def _log_step_context(result: FrontEndResult, config: PipelineConfig, rate_hz: float, mask=None) -> np.ndarray:
    """(m, 36) step-context rows of the (masked) windows of one log (``config.step_context > 0``)."""
    return _step_context_of(step_signals(result.standardized), result.windows, mask, _step_dt(config, rate_hz),
                            _new_step_context(config))


@dataclass
class WindowDataset:
    """Kept windows of many logs with features, labels and provenance.

    Attributes
    ----------
    X : ndarray, shape (m, len(feature_names))
        79 Table 12.1 features (158 for Mizell), then the 36 step-context ones when
        ``config.step_context > 0`` (:func:`feature_names_for`).
    y : ndarray of int, shape (m,)
        1 = STAIR (every sample of the window is in an upstairs or downstairs segment), 0 = NO_STAIR
        (no sample is, and every sample is labelled).
    groups : ndarray of object, shape (m,)
        Subject of each window (``meta["subject"]``, else the log's index) for leave-subjects-out.
    direction : ndarray of int, shape (m,)
        Activity code of STAIR windows (2 up, 3 down), 0 otherwise: the optional sub-label.
    log_index, t_start_ns, t_end_ns : ndarray, shape (m,)
    n_ambiguous : int
        Kept windows left out because they straddle a stair boundary or unlabelled samples.
    n_rejected : int
        Windows the duration filter rejected (never classified; NO_STAIR by definition).
    """

    X: np.ndarray
    y: np.ndarray
    groups: np.ndarray
    direction: np.ndarray
    log_index: np.ndarray
    t_start_ns: np.ndarray
    t_end_ns: np.ndarray
    feature_names: list[str]
    n_ambiguous: int = 0
    n_rejected: int = 0

    def __len__(self) -> int:
        return int(self.y.size)


def _window_labels(labels: np.ndarray, index: np.ndarray, offsets: np.ndarray):
    """Per window: STAIR / NO_STAIR / ambiguous (-1), and the stair direction."""
    lab = labels[index]
    is_stair = np.isin(lab, [int(a) for a in STAIR_ACTIVITIES]).astype(np.int64)
    unlabelled = (lab == Activity.UNLABELLED).astype(np.int64)
    starts = offsets[:-1]
    n = np.diff(offsets)
    stair_count = np.add.reduceat(is_stair, starts) if n.size else np.zeros(0, np.int64)
    unlabelled_count = np.add.reduceat(unlabelled, starts) if n.size else np.zeros(0, np.int64)
    y = np.full(n.size, -1)
    y[stair_count == n] = STAIR
    y[(stair_count == 0) & (unlabelled_count == 0)] = NO_STAIR
    direction = np.where(y == STAIR, lab[starts] if n.size else 0, 0)
    return y, direction


def _labelled_windows(log: SensorLog, result: FrontEndResult, config: PipelineConfig, log_index: int):
    """One log's kept, unambiguous windows as the columns of a :class:`WindowDataset`, and its
    numbers of ambiguous and rejected windows. ``log`` is the log the front end ran on (resampled
    to ``config.rate_hz`` if set): its labels and rate."""
    std, windows = result.standardized, result.windows
    kept = windows.kept
    index, offsets = windows.sample_index(kept)
    y, direction = _window_labels(log.label, std.first + index, offsets)
    # every kept window enters the step context (the phone does not know the labels), then the
    # ambiguous ones leave the training set
    X = log_features(result, config, log.rate_hz, kept)
    good = y >= 0
    subject = log.meta.get("subject", log_index)
    columns = (X[good], y[good], np.full(good.sum(), subject, dtype=object), direction[good],
               np.full(good.sum(), log_index), windows.t_start_ns[kept][good], windows.t_end_ns[kept][good])
    return columns, int((~good).sum()), int((~kept).sum())


def _dataset_of(parts, config: PipelineConfig, n_ambiguous: int, n_rejected: int) -> WindowDataset:
    """The :class:`WindowDataset` of the per-log columns of :func:`_labelled_windows`."""
    if not parts:
        raise ValueError("no logs given")
    cols = [np.concatenate(c) for c in zip(*parts)]
    return WindowDataset(*cols, feature_names=feature_names_for(config), n_ambiguous=n_ambiguous,
                         n_rejected=n_rejected)


def window_dataset(logs: Iterable[SensorLog], config: PipelineConfig, *, progress: bool = False) -> WindowDataset:
    """Run every log through the front end and return its kept, unambiguous windows.

    Logs need per-sample ``label`` (UCI HAPT, the simulator). Each log must be gap-free. The
    features are :func:`log_features`: the step context runs within each log.
    """
    from tqdm.auto import tqdm

    parts = []
    n_ambiguous = n_rejected = 0
    for i, log in enumerate(tqdm(list(logs), desc="windows", disable=not progress, unit="log")):
        if log.label is None:
            raise ValueError(f"log {log.meta.get('path', i)} has no per-sample labels; cannot build a training set")
        if config.rate_hz is not None:
            log = resample(log, config.rate_hz)
        columns, ambiguous, rejected = _labelled_windows(log, run_front_end(log, config), config, i)
        parts.append(columns)
        n_ambiguous += ambiguous
        n_rejected += rejected
    return _dataset_of(parts, config, n_ambiguous, n_rejected)


def match_steps(truth_ns: np.ndarray, t_start_ns: np.ndarray, t_end_ns: np.ndarray) -> int:
    """Number of windows ``[t_start, t_end)`` that contain at least one ground-truth step.

    Kept pattern windows never overlap, so each true step is credited to at most one window;
    a window holding two steps counts once (the second is a miss).
    """
    lo = np.searchsorted(truth_ns, t_start_ns, side="left")
    hi = np.searchsorted(truth_ns, t_end_ns, side="left")
    return int(np.count_nonzero(hi > lo))


@dataclass
class ReplayReport:
    """What a replay found; ``to_dict`` is the ``--json`` output."""

    source: str
    samples: int = 0
    duration_s: float = 0.0
    segments: int = 0
    method: str = ""
    windows: int = 0
    kept: int = 0
    rejected: dict = field(default_factory=dict)
    steps_per_minute: float = 0.0
    truth_steps: int | None = None
    matched: int | None = None
    precision: float | None = None
    recall: float | None = None
    count_error: float | None = None
    stair_steps: int | None = None
    truth_stair_steps: int | None = None
    read: dict | None = None

    def to_dict(self) -> dict:
        return asdict(self)


def _chunks_of(source, config: PipelineConfig, repair, units,
               read: ReadReport) -> tuple[str, Iterator[SensorLog], Callable[[], StepTruth | None]]:
    """Name, chunks and a function giving the ground truth (read after the log, whose errors come first)."""
    if isinstance(source, SensorLog):
        return str(source.meta.get("path", "<log>")), iter([source]), lambda: source.steps
    path = Path(source)
    # One gap rule for reader and front end (PipelineConfig.read_gap_s): what the reader lets
    # through, the front end bridges; what it splits, the front end restarts after.
    chunks = iter_log_chunks(path, chunk_rows=REPLAY_CHUNK_ROWS, repair=repair, units=units,
                             max_gap_s=config.read_gap_s(), report=read)
    return str(path), chunks, lambda: read_steps(path)


def trained_orientations(model) -> list[str] | None:
    """The orientation methods a model's training windows were standardized with, or None if unknown.

    ``stairsense train`` stores them (``summary["orientation_methods"]``) because ``auto`` resolves
    per log; a model with an explicit method was trained with that method only.
    """
    summary = getattr(model, "summary", None)
    if summary is None:  # an exported model keeps the training summary in its metadata
        summary = (getattr(model, "metadata", None) or {}).get("training", {})
    methods = summary.get("orientation_methods")
    if methods:
        return list(methods)
    config = getattr(model, "config", None)
    if config is not None and config.orientation != "auto":
        return [config.orientation]
    return None


def _orientation_for(config: PipelineConfig, chunk: SensorLog, name: str, trained) -> str:
    """The concrete orientation method for ``chunk``.

    Without a model (or with one whose methods are unknown) ``config.orientation`` is resolved on
    the log. With a model, the method its training windows used is run whenever the log records
    the streams it needs (``auto`` is not re-resolved: a model trained on gyroscope logs runs
    ``ahrs`` on a log that also has a rotation vector), and a log that cannot give any of them is
    refused: its features would differ from the training set's.
    """
    if trained is None:
        try:
            return resolve_orientation(config, chunk)
        except ValueError as exc:
            raise ValueError(f"{name}: {exc}") from exc
    for method in trained:
        try:
            return resolve_orientation(config.replace(orientation=method), chunk)
        except ValueError:
            continue
    streams = ", ".join(["acc", *(s for s in ("gyro", "rotvec", "linacc") if getattr(chunk, s) is not None)])
    raise ValueError(f"{name}: the model was trained with orientation {trained} (configured "
                     f"{config.orientation!r}), which needs streams this log lacks (it records {streams}); its "
                     "features would differ. Replay a log that records them, or retrain the model on logs like "
                     "this one")



def replay(source, config: PipelineConfig | None = None, *, model=None, repair=(), units=None,
           progress: bool = False, on_windows=None) -> ReplayReport:
    """Run a log through the exact on-device front end, streamed in chunks (flat memory).

    Parameters
    ----------
    source : path or SensorLog
        A canonical ``.csv``/``.csv.gz`` log (read in chunks; its ``.steps.csv`` sidecar gives the
        ground truth) or a log in memory.
    config : PipelineConfig
    model : StairstepModel or OnnxStairModel, optional
        A stair-step classifier; kept windows it calls STAIR are counted as stair steps. A model
        with ``wants_samples = True`` gets each window's samples (``predict_windows``, with
        ``step_context=`` rows when ``config.step_context > 0``), others every feature column
        (``predict``). The step context runs over the kept windows of a segment and restarts with
        every segment, so the columns equal :func:`log_features` of that segment in one piece.
    repair : iterable of str
        Reader repairs (:data:`~stairsense.stream.REPAIRS`); with ``split-gaps`` the front end
        restarts after every gap, as a phone does when the sensor stream stops. What they did is
        in ``report.read`` (a :meth:`ReadReport.to_dict`).
    units : {"m/s2", "g"} or None
        Accelerometer units of the file (None: its meta, else m/s²).
    on_windows : callable, optional
        Called with ``(FrontEndResult, chunk)`` after every chunk (used by ``--plot``).
    """
    from tqdm.auto import tqdm

    config = config or PipelineConfig()
    read = ReadReport()
    name, chunks, steps_of = _chunks_of(source, config, repair, units, read)
    report = ReplayReport(source=name)
    trained = trained_orientations(model) if model is not None else None
    front = resampler = None
    segment = None
    tail = _SampleTail(config)
    steps = None  # the running step context of the segment, when a model reads it
    starts, ends = [], []
    rejected = np.zeros(len(WindowStatus), dtype=np.int64)
    stair_windows = 0
    first_t = last_t = None
    with tqdm(desc="replay", unit=" samples", unit_scale=True, disable=not progress) as bar:
        for chunk in chunks:
            if chunk.meta.get("segment", 0) != segment:  # the first chunk, or a new segment after a gap
                segment = chunk.meta.get("segment", 0)
                # The resampling grid, like every stage's state, carries across chunks and
                # restarts only with a new segment, so replay equals resampling the whole log.
                resampler = Resampler(config.rate_hz) if config.rate_hz is not None else None
                front = None
            if resampler is not None:
                chunk = resampler.process(chunk)
                if not len(chunk):
                    continue
            if front is None:
                report.method = _orientation_for(config, chunk, name, trained)
                front = FrontEnd(config, report.method, rate_hz=chunk.rate_hz or config.rate_hz)
                tail.reset()
                # a new segment is a new stream for the step context too (the phone's sensor stopped)
                context = _new_step_context(config) if model is not None else None
                steps = None if context is None else (context, _step_dt(config, front.standardizer.rate_hz))
                report.segments += 1
            result = front.process(chunk)
            first_t = chunk.t_ns[0] if first_t is None else first_t
            last_t = chunk.t_ns[-1]
            report.samples += len(chunk)
            windows = result.windows
            rejected += np.bincount(windows.status, minlength=rejected.size)
            kept = windows.kept
            starts.append(windows.t_start_ns[kept])
            ends.append(windows.t_end_ns[kept])
            tail.extend(result.standardized.t_ns, result.standardized.samples,
                        None if steps is None else step_signals(result.standardized))
            if model is not None and kept.any():
                stair_windows += int(np.count_nonzero(_classify(model, tail, windows, kept, steps) == STAIR))
            if on_windows is not None:
                on_windows(result, chunk)
            bar.update(len(chunk))
    if first_t is None:
        raise ValueError(f"{name}: no samples to replay (a header but no data lines); check that the recording "
                         "was not truncated")
    if not isinstance(source, SensorLog):
        report.read = read.to_dict()
    report.duration_s = float(last_t - first_t) / 1e9
    report.windows = int(rejected.sum())
    report.kept = int(rejected[WindowStatus.KEPT])
    report.rejected = {s.name.lower(): int(rejected[s]) for s in WindowStatus if s != WindowStatus.KEPT}
    report.steps_per_minute = report.kept / report.duration_s * 60 if report.duration_s else 0.0
    truth = steps_of()
    if truth is not None and len(truth):
        t_start, t_end = np.concatenate(starts), np.concatenate(ends)
        report.truth_steps = len(truth)
        report.matched = match_steps(truth.t_ns, t_start, t_end)
        report.precision = report.matched / report.kept if report.kept else 0.0
        report.recall = report.matched / report.truth_steps
        report.count_error = abs(report.kept - report.truth_steps) / report.truth_steps
        report.truth_stair_steps = int(np.isin(truth.kind, [int(a) for a in STAIR_ACTIVITIES]).sum())
    if model is not None:
        report.stair_steps = stair_windows
    return report


def _classify(model, tail, windows: WindowTable, kept, steps) -> np.ndarray:
    """Labels of the kept windows. Models with ``wants_samples`` (the exported ONNX graph, which
    computes its own features, as on the phone) get the windows' samples and, when the
    configuration has a step context, its rows; others get every feature column.

    ``steps`` is ``(StepContext, dt)`` of the segment, or None without a step context: the kept
    windows are pushed into the running context in order, so its rows equal the batch
    :func:`log_features` of the segment.
    """
    local = windows.shifted(-tail.offset)
    rows = None if steps is None else _step_context_of(tail.signals, local, kept, steps[1], steps[0])
    if getattr(model, "wants_samples", False):
        index, offsets = local.sample_index(kept)
        if rows is None:
            return np.asarray(model.predict_windows(tail.samples[index], offsets))
        return np.asarray(model.predict_windows(tail.samples[index], offsets, step_context=rows))
    X = window_features_of(tail.samples, local, kept)
    return np.asarray(model.predict(X if rows is None else np.hstack([X, rows])))


class _SampleTail:
    """The most recent standardized samples (and their step signals, when the step context needs
    them), enough to cover any window the filter keeps.

    A window that closes in a chunk can start in the previous one, but a kept window lasts at
    most ``max_step_s`` (a sliding one ``window_ms``), so older samples are never needed.
    """

    def __init__(self, config: PipelineConfig):
        self.longest_ns = int(max(config.max_step_s, config.window_ms / 1e3) * 1e9)
        self.reset()

    def reset(self):
        self.t_ns = np.zeros(0, dtype=np.int64)
        self.samples = self.signals = None
        self.offset = 0  # global index of self.samples[0]

    def extend(self, t_ns: np.ndarray, samples: np.ndarray, signals: np.ndarray | None = None):
        if self.samples is None:
            self.t_ns, self.samples, self.signals = t_ns, samples, signals
            return
        if t_ns.size:
            drop = int(np.searchsorted(self.t_ns, t_ns[0] - self.longest_ns, side="left"))
            self.offset += drop
            self.t_ns = np.concatenate([self.t_ns[drop:], t_ns])
            self.samples = np.concatenate([self.samples[drop:], samples])
            if signals is not None:
                self.signals = np.concatenate([self.signals[drop:], signals])
