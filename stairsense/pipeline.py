"""Replay: a log through the exact on-device pipeline, streamed in chunks.

No algorithm lives here (DESIGN.md): replay composes the reader (``stream``), the resampler and the
front end (``stream``), the window-row stage (``features``), a stair-step model's
``decide_windows``, the step vote and, for a model that reads the barometer, the climb counter
(``models``) the way the phone does, chunk after chunk with every stage's state carried across,
and counts what they produce.
"""
from __future__ import annotations

from contextlib import nullcontext
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable, Iterator

import numpy as np

from stairsense.features import STAIR, WindowRowStage
from stairsense.stream import (
    STAIR_ACTIVITIES,
    Activity,
    FrontEnd,
    PipelineConfig,
    ReadReport,
    Resampler,
    SensorLog,
    StepTruth,
    WindowStatus,
    iter_log_chunks,
    match_steps,
    read_steps,
    resolve_orientation,
)

__all__ = ["ReplayReport", "replay", "trained_orientations", "model_kind", "REPLAY_CHUNK_ROWS"]

# Rows per replay chunk: small enough that every per-chunk array stays in a few MB (flat memory on
# day-long logs), large enough that per-chunk overhead is negligible (measured in bench_frontend).
REPLAY_CHUNK_ROWS = 1 << 16


@dataclass
class ReplayReport:
    """What a replay found; ``to_dict`` is the ``--json`` output.

    ``model`` is the kind of stair-step model that ran (:func:`model_kind`), None without one. With a
    model that reads the barometer, ``stair_steps_up``/``_down``, ``metres_climbed``/``_descended``
    and ``floors_ascended``/``_descended`` come from
    :class:`~stairsense.models.ClimbCounter`; with an accelerometer-only model they are
    None: without a height there is no direction, metre or floor to count, only stair steps.
    """

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
    model: str | None = None
    stair_steps: int | None = None
    stair_steps_up: int | None = None
    stair_steps_down: int | None = None
    metres_climbed: float | None = None
    metres_descended: float | None = None
    floors_ascended: int | None = None
    floors_descended: int | None = None
    truth_stair_steps: int | None = None
    truth_stair_steps_up: int | None = None
    truth_stair_steps_down: int | None = None
    read: dict | None = None

    def to_dict(self) -> dict:
        return asdict(self)


def _progress_bar(progress: bool):
    """A tqdm bar over samples, or a null context: importing tqdm costs ~45 ms that a replay without a bar
    need not pay."""
    if not progress:
        return nullcontext()
    from tqdm.auto import tqdm

    return tqdm(desc="replay", unit=" samples", unit_scale=True)


def _chunks_of(source, config: PipelineConfig, repair, units,
               read: ReadReport) -> tuple[str, Iterator[SensorLog], Callable[[], StepTruth | None]]:
    """Name, chunks and a function giving the ground truth (read after the log, whose errors come first)."""
    if isinstance(source, SensorLog):
        name = str(source.meta.get("path", "<log>"))
        return name, iter(_segments_of_log(source, name, repair, config.read_gap_s())), lambda: source.steps
    path = Path(source)
    # One gap rule for reader and front end (PipelineConfig.read_gap_s): what the reader lets
    # through, the front end bridges; what it splits, the front end restarts after.
    chunks = iter_log_chunks(path, chunk_rows=REPLAY_CHUNK_ROWS, repair=repair, units=units,
                             max_gap_s=config.read_gap_s(), report=read)
    return str(path), chunks, lambda: read_steps(path)


def _segments_of_log(log: SensorLog, name: str, repair, max_gap_s: float) -> list[SensorLog]:
    """A log in memory as the segments replay restarts on: split at every gap the front end cannot
    bridge with ``split-gaps``, else refused with the fix. The readers' other repairs do not apply:
    the log was read already."""
    repairs = {repair} if isinstance(repair, str) else set(repair)
    if repairs - {"split-gaps"}:
        raise ValueError(f"{name}: repairs {sorted(repairs - {'split-gaps'})} are done while reading a file; "
                         "a log in memory takes only 'split-gaps'")
    parts = log.split_at_gaps(max_gap_s)
    if len(parts) > 1 and "split-gaps" not in repairs:
        i = len(parts[0])
        raise ValueError(f"{name}: the {(log.t_ns[i] - log.t_ns[i - 1]) / 1e9:.3f} s gap before sample {i} "
                         f"(t_ns={log.t_ns[i]}) is longer than the {max_gap_s:g} s this front end bridges "
                         "(PipelineConfig.read_gap_s()); replay with repair=('split-gaps',) (--repair split-gaps) "
                         "to restart after every such gap")
    return parts


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


def model_kind(config: PipelineConfig) -> str:
    """Which kind of stair-step model a configuration makes: ``"with barometer"`` (it reads the log's
    air pressure: height features) or ``"accelerometer only"``; what replay reports."""
    return "with barometer" if config.barometer else "accelerometer only"


def _check_pressure(config: PipelineConfig, chunk: SensorLog, name: str) -> None:
    """Refuse, in one line naming the log and the fix, a log without air pressure for a barometer model."""
    if config.barometer and chunk.pressure is None:
        raise ValueError(f"{name}: the model reads the barometer (it was trained with height features, barometer=True) "
                         "but this log has no air pressure (no p column); replay it with the accelerometer-only "
                         "model (one trained without --barometer)")


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
        A stair-step classifier; kept windows it calls STAIR, after the vote of ``config.vote_steps``
        consecutive windows (:class:`~stairsense.models.StepVote`; the last ones are decided at each
        segment's end; a window at the model's onset threshold before a STAIR window too), are
        counted as stair steps. Its ``decide_windows`` gets each chunk's :class:`~stairsense.features.WindowRows` (samples,
        offsets and, when ``config.step_context > 0``, the step context; when ``config.barometer``,
        the height features, and the log must record air pressure: a log without it is refused). One
        :class:`~stairsense.features.WindowRowStage` runs per segment, so the rows equal those of the
        segment in one piece. With ``config.rate_hz`` unset, the segment's rate (the step shape's
        dt, ``smoothing='count'``) is the median rate of its first chunk, as a phone knows only
        the rate it requested, and a batch run uses the whole log's: the same for logs of one chunk
        (< 65536 samples), else close (2.6e-4 apart on a 30-minute simulated walk at 50 Hz with 5 %
        timestamp jitter). With ``config.rate_hz`` both are exact.
    repair : iterable of str
        Reader repairs (:data:`~stairsense.stream.REPAIRS`); with ``split-gaps`` the front end
        restarts after every gap longer than ``config.read_gap_s()``, as a phone does when the sensor
        stream stops. What they did to a file is in ``report.read`` (a :meth:`ReadReport.to_dict`).
        A log in memory takes ``split-gaps`` only (``report.segments`` counts its parts); without
        it, such a gap is an error, as it is in a file.
    units : {"m/s2", "g"} or None
        Accelerometer units of the file (None: its meta, else m/s²).
    on_windows : callable, optional
        Called with ``(FrontEndResult, chunk)`` after every chunk (used by ``--plot``).
    """
    config = config or PipelineConfig()
    read = ReadReport()
    name, chunks, steps_of = _chunks_of(source, config, repair, units, read)
    report = ReplayReport(source=name)
    trained = trained_orientations(model) if model is not None else None
    climb = vote = None
    if model is not None:
        from stairsense.models import StepVote

        report.model = model_kind(config)
        vote = StepVote(config.vote_steps, config.step_context_gap_s)
        if config.barometer:
            from stairsense.models import ClimbCounter

            climb = ClimbCounter(config.step_context, config.step_context_gap_s)
    stair_windows = 0

    def count(voted, *climb_rows):
        nonlocal stair_windows
        stair_windows += int(np.count_nonzero(voted == STAIR))
        if climb is not None and len(voted):
            climb.push(voted, *climb_rows)
    front = resampler = None
    segment = None
    rows = None  # the segment's window-row stage, when a model reads the rows
    starts, ends = [], []
    rejected = np.zeros(len(WindowStatus), dtype=np.int64)
    first_t = last_t = None
    with _progress_bar(progress) as bar:
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
                if model is not None:
                    _check_pressure(config, chunk, name)
                report.method = _orientation_for(config, chunk, name, trained)
                front = FrontEnd(config, report.method, rate_hz=chunk.rate_hz or config.rate_hz)
                # a new segment is a new stream for the rows too (the phone's sensor stopped)
                rows = WindowRowStage(config, front.standardizer.rate_hz) if model is not None else None
                if vote is not None:  # the last segment's runs ended with it
                    count(*vote.flush())
                if climb is not None:
                    climb.new_segment()
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
            if rows is not None:
                closed = rows.process(result)
                if len(closed):
                    decided, onset = model.decide_windows(closed.samples, closed.offsets, **closed.model_inputs())
                    climb_rows = (closed.height, closed.height_m, closed.t_start_ns, closed.t_end_ns) \
                        if climb is not None else ()
                    count(*vote.push(decided, closed.t_start_ns, closed.t_end_ns, *climb_rows, onset=onset))
            if on_windows is not None:
                on_windows(result, chunk)
            if bar is not None:
                bar.update(len(chunk))
    if vote is not None:
        count(*vote.flush())
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
        report.truth_stair_steps_up = int(np.sum(truth.kind == Activity.WALKING_UPSTAIRS))
        report.truth_stair_steps_down = int(np.sum(truth.kind == Activity.WALKING_DOWNSTAIRS))
    if model is not None:
        report.stair_steps = stair_windows
    if climb is not None:
        report.stair_steps_up, report.stair_steps_down = climb.up, climb.down
        report.metres_climbed, report.metres_descended = climb.climbed_m, climb.descended_m
        report.floors_ascended, report.floors_descended = climb.floors_ascended, climb.floors_descended
    return report
