"""The one stage from standardized samples and kept windows to window rows (DESIGN.md, "features/").

A *window row* is everything a classifier, a training set or an export check reads of one kept
step window: its standardized samples, its Table 12.1 features, its step-shape and step-context
features (:mod:`._step_context`, which need the step signals and the sample period dt), its height
features when the configuration reads the barometer (:mod:`._height_features`, from the causal
:class:`~stairsense.stream.HeightFilter` of the log's pressure), its label when the log is
labelled, and its times. Replay, :func:`window_dataset`, the export's parity check,
``stairsense evaluate --model``, the energy workload and the budget optimiser all get their rows
from :class:`WindowRowStage`, and ``android_stub/core``'s ``WindowRows.java`` mirrors it, so the
phone and every Python path read a window the same way.

The stage keeps the state that crosses block boundaries: the most recent standardized samples
(enough to cover any window the duration filter keeps, since a window closing in one block can
start in the previous one), their step signals, heights and labels, the running step context,
and the height filter and height context.
``push`` (one sample) and ``process`` (a block) update that one state, so a whole log, random
chunks and single samples give the same rows (``tests/test_window_rows.py``).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from stairsense.stream import (
    STAIR_ACTIVITIES,
    Activity,
    FrontEndResult,
    HeightFilter,
    PipelineConfig,
    WindowTable,
)

from ._height_features import HEIGHT_NAMES, HeightContext, height_columns
from ._step_context import STEP_CONTEXT_NAMES, StepContext, step_context_columns, step_shape_features
from ._window_features import FEATURE_NAMES, window_features

__all__ = [
    "NO_STAIR",
    "STAIR",
    "AMBIGUOUS",
    "feature_names_for",
    "host_feature_columns",
    "step_signals",
    "window_labels",
    "MIXED_ACTIVITY",
    "window_activity",
    "WindowRows",
    "WindowRowStage",
    "WindowDataset",
    "window_dataset",
]

#: Window labels: every sample on stairs, no sample on stairs (and all labelled), anything else.
NO_STAIR, STAIR, AMBIGUOUS = 0, 1, -1
#: The activity of a window whose samples do not all share one Activity code (no Activity is negative).
MIXED_ACTIVITY = -1

_STAIR_CODES = np.array([int(a) for a in STAIR_ACTIVITIES])


def feature_names_for(config: PipelineConfig) -> list[str]:
    """Names of the feature columns: the 79 Table 12.1 features (2 × 79 for Mizell's vertical and
    horizontal streams), then the 36 :data:`~stairsense.features.STEP_CONTEXT_NAMES` when
    ``config.step_context > 0``, then the 5 :data:`~stairsense.features.HEIGHT_NAMES` when
    ``config.barometer``.

    >>> from stairsense.stream import PipelineConfig
    >>> len(feature_names_for(PipelineConfig(step_context=0))), len(feature_names_for(PipelineConfig(step_context=5)))
    (79, 115)
    >>> feature_names_for(PipelineConfig(barometer=True))[-1]
    'ctx_height_change_m'
    """
    if config.orientation == "mizell":
        names = [f"vertical_{n}" for n in FEATURE_NAMES] + [f"horizontal_{n}" for n in FEATURE_NAMES]
    else:
        names = list(FEATURE_NAMES)
    if config.step_context > 0:
        names += STEP_CONTEXT_NAMES
    return names + list(HEIGHT_NAMES) if config.barometer else names


def host_feature_columns(feature_names) -> dict[str, int]:
    """How many of a model's feature columns each per-window block computed outside the window's
    samples holds, in column order after the Table 12.1 features: ``{"step_context": 36 or 0,
    "height": 5 or 0}``.

    The keys are :meth:`WindowRows.model_inputs`'s, the keywords by which a stair-step model's
    ``predict_windows`` takes the blocks and the names of an exported graph's inputs for them
    (the host, a phone's ``WindowRows``, computes them: they need the kept windows before this
    one, or the barometer). The other columns are Table 12.1 features.

    Raises
    ------
    ValueError
        When a block's names are there but not all, in order, in their place.

    Examples
    --------
    >>> from stairsense.stream import PipelineConfig
    >>> host_feature_columns(feature_names_for(PipelineConfig(barometer=True)))
    {'step_context': 36, 'height': 7}
    >>> host_feature_columns(feature_names_for(PipelineConfig(step_context=0)))
    {'step_context': 0, 'height': 0}
    """
    names = list(feature_names)
    n_height = height_columns(names)
    return {"step_context": step_context_columns(names[:len(names) - n_height]), "height": n_height}


def step_signals(samples: np.ndarray, vertical: np.ndarray) -> np.ndarray:
    """(m, 2) per sample: ``z`` the vertical dynamic acceleration and ``h`` the horizontal magnitude,
    the two signals the step-context features read.

    ``samples`` are standardized samples: 3 columns (an Earth frame) give the hypot of the East and
    North columns, 6 (Mizell's vertical and horizontal components) the norm of the horizontal one.
    """
    samples = np.asarray(samples, np.float64)
    horizontal = samples[:, 3:6] if samples.shape[1] == 6 else samples[:, :2]
    return np.column_stack([vertical, np.linalg.norm(horizontal, axis=1)])


def window_labels(labels: np.ndarray, index: np.ndarray, offsets: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Label and stair direction of each ragged window ``labels[index[offsets[w]:offsets[w + 1]]]``.

    A window is :data:`STAIR` when every sample is on stairs (up or down: spec §3.1), :data:`NO_STAIR`
    when no sample is and every sample is labelled, else :data:`AMBIGUOUS` (it straddles a stair
    boundary or unlabelled samples). The direction is the activity code of a STAIR window's first
    sample (2 up, 3 down), 0 otherwise.

    >>> import numpy as np
    >>> labels = np.array([1, 1, 2, 2, 2, 1, 0])
    >>> window_labels(labels, np.arange(7), np.array([0, 2, 5, 7]))
    (array([ 0,  1, -1]), array([0, 2, 0]))
    """
    lab = np.asarray(labels)[index]
    n = np.diff(offsets)
    if n.size == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    starts = offsets[:-1]
    stair_count = np.add.reduceat(np.isin(lab, _STAIR_CODES).astype(np.int64), starts)
    unlabelled_count = np.add.reduceat((lab == Activity.UNLABELLED).astype(np.int64), starts)
    y = np.full(n.size, AMBIGUOUS, dtype=np.int64)
    y[stair_count == n] = STAIR
    y[(stair_count == 0) & (unlabelled_count == 0)] = NO_STAIR
    direction = np.where(y == STAIR, lab[starts], 0).astype(np.int64)
    return y, direction


def window_activity(labels: np.ndarray, index: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Activity of each ragged window ``labels[index[offsets[w]:offsets[w + 1]]]``: the Activity code
    every sample of it shares, else :data:`MIXED_ACTIVITY`.

    The same every-sample rule as :func:`window_labels`, one level finer: it tells level walking
    (``Activity.WALKING``) from the other NO_STAIR windows, which "level walking called stairs"
    counts, and an unlabelled stretch (``Activity.UNLABELLED``) from a window straddling two activities.

    >>> import numpy as np
    >>> labels = np.array([1, 1, 2, 2, 2, 1, 0])
    >>> window_activity(labels, np.arange(7), np.array([0, 2, 5, 7]))
    array([ 1,  2, -1])
    """
    lab = np.asarray(labels)[index].astype(np.int64)
    if offsets.size < 2:
        return np.zeros(0, np.int64)
    starts = offsets[:-1]
    low, high = np.minimum.reduceat(lab, starts), np.maximum.reduceat(lab, starts)
    return np.where(low == high, low, MIXED_ACTIVITY).astype(np.int64)


@dataclass(frozen=True)
class WindowRows:
    """The rows of some kept windows, in the order they closed.

    Attributes
    ----------
    samples : ndarray of shape (N, 3·B)
        The windows' standardized samples, concatenated (B = 2 blocks for Mizell).
    offsets : ndarray of int, shape (W + 1,)
        Window w is ``samples[offsets[w]:offsets[w + 1]]``: the ``(samples, offsets)`` that
        ``predict_windows`` of every stair-step model takes.
    step_context : ndarray of shape (W, 36) or None
        The :data:`~stairsense.features.STEP_CONTEXT_NAMES` features (configuration ``step_context > 0``).
    t_start_ns, t_end_ns : ndarray of int64, shape (W,)
    height : ndarray of shape (W, 7) or None
        The :data:`~stairsense.features.HEIGHT_NAMES` features (configuration ``barometer``).
    height_m : ndarray of shape (W,) or None
        The height filter's height at each window's last sample (m above the stream's first
        reading; configuration ``barometer``): not a feature (it depends on where the recording
        began), the level that climbs are measured between (``stairsense.models.ClimbCounter``).
    label, direction : ndarray of int, shape (W,), or None
        :func:`window_labels` of a labelled log, None when the log has no labels.
    activity : ndarray of int, shape (W,), or None
        :func:`window_activity` of a labelled log, None when the log has no labels.
    """

    samples: np.ndarray
    offsets: np.ndarray
    step_context: np.ndarray | None
    t_start_ns: np.ndarray
    t_end_ns: np.ndarray
    label: np.ndarray | None = None
    direction: np.ndarray | None = None
    activity: np.ndarray | None = None
    height: np.ndarray | None = None
    height_m: np.ndarray | None = None

    def __len__(self) -> int:
        return int(self.offsets.size - 1)

    def model_inputs(self) -> dict:
        """The keyword arguments of a stair-step model's ``predict_windows`` beside the samples and
        offsets: ``step_context``, and ``height`` only when the rows have it (a model without height
        features takes no such argument)."""
        return {"step_context": self.step_context, **({} if self.height is None else {"height": self.height})}

    def table_features(self) -> np.ndarray:
        """(W, 79·B) Table 12.1 features of each window (per block of 3 sample columns)."""
        return np.hstack([window_features(self.samples[:, c : c + 3], self.offsets)
                          for c in range(0, self.samples.shape[1], 3)])

    def features(self) -> np.ndarray:
        """(W, len(:func:`feature_names_for`)): the Table 12.1 features, then the step context, then
        the height features."""
        return np.hstack([self.table_features(), *(part for part in (self.step_context, self.height)
                                                   if part is not None)])


class WindowRowStage:
    """Streaming stage: blocks (or single samples) of standardized samples and the windows that
    closed in them → :class:`WindowRows` of the kept windows.

    One stage serves one stream: a log, or a segment of one (:meth:`reset` when the front end
    restarts after a gap; the step context restarts with it, as on the phone).

    Parameters
    ----------
    config : PipelineConfig
    rate_hz : float
        Rate of the stream the front end runs on; the step shape integrates with
        dt = 1 / ``config.rate_hz``, else 1 / ``rate_hz``.
    labelled : bool, default=False
        Whether blocks come with per-sample labels (then rows carry :func:`window_labels`).

    Notes
    -----
    With ``config.barometer`` every block needs the air pressure of its samples (``result.log``'s
    ``pressure``, or ``push``'s ``pressure``): the stage runs a :class:`~stairsense.stream.HeightFilter`
    over the standardized stream (its vertical acceleration and the pressure at the same samples)
    and :class:`~stairsense.features.HeightContext` over the kept windows.

    Examples
    --------
    >>> from stairsense.stream import PipelineConfig, run_front_end, simulate
    >>> config = PipelineConfig(rate_hz=30)
    >>> result = run_front_end(simulate(minutes=0.5, seed=1), config)
    >>> rows = WindowRowStage(config, result.log.rate_hz).process(result)
    >>> len(rows) == int(result.windows.kept.sum()), rows.features().shape[1] == len(feature_names_for(config))
    (True, True)
    """

    def __init__(self, config: PipelineConfig, rate_hz: float, *, labelled: bool = False):
        self.config = config
        self.dt = 1.0 / (config.rate_hz or rate_hz)
        self.labelled = labelled
        # a kept window lasts at most max_step_s (a sliding one window_ms): older samples are never read
        self._keep_ns = int(max(config.max_step_s, config.window_ms / 1e3) * 1e9)
        self.reset()

    def reset(self) -> WindowRowStage:
        """Forget the stream: window indices count from 0 again and the step context restarts."""
        self._t = np.zeros(0, np.int64)
        self._samples = self._signals = self._labels = self._heights = None
        self._offset = 0  # stream index of self._samples[0]
        config = self.config
        self._context = StepContext(config.step_context, config.step_context_gap_s) if config.step_context > 0 else None
        # the filter's gap rule is the front end's: a segment never has a longer step, so it restarts with the stage
        self._height_filter = HeightFilter(max_gap_s=config.max_gap_s) if config.barometer else None
        self._height_context = HeightContext(config.step_context, config.step_context_gap_s) if config.barometer else None
        return self

    def process(self, result: FrontEndResult, labels: np.ndarray | None = None) -> WindowRows:
        """Rows of the kept windows among ``result.windows`` (indices counted since :meth:`reset`).

        ``labels`` are the per-sample labels of ``result.standardized`` (default: those of
        ``result.log`` when the stage is ``labelled``).
        """
        std = result.standardized
        span = slice(std.first, std.first + std.t_ns.size)  # the input rows the standardized samples come from
        if self.labelled and labels is None:
            labels = result.log.label[span]
        signals = step_signals(std.samples, std.vertical) if self._context is not None else None
        heights = None
        if self._height_filter is not None:
            log = result.log
            if log is None or log.pressure is None:
                raise ValueError(_no_pressure(None if log is None else log.meta.get("path")))
            heights = np.column_stack(self._height_filter.process(std.t_ns, std.vertical, log.pressure[span]))
        return self._rows(std.t_ns, std.samples, signals, labels, result.windows, heights)

    def push(self, t_ns: int, sample, vertical: float, label: int | None = None, windows=(),
             pressure: float | None = None) -> WindowRows:
        """One standardized sample (``vertical`` its vertical acceleration, ``label`` its label,
        ``pressure`` the air pressure in hPa at it, needed with ``config.barometer``) and the
        :class:`~stairsense.stream.Window` objects that closed at it: the rows of the kept ones."""
        sample = np.asarray(sample, np.float64).reshape(1, -1)
        signals = step_signals(sample, np.array([vertical], np.float64)) if self._context is not None else None
        labels = None if label is None else np.array([label])
        heights = None
        if self._height_filter is not None:
            if pressure is None:
                raise ValueError(_no_pressure(None))
            heights = np.array([self._height_filter.push(t_ns, vertical, pressure)], np.float64)
        return self._rows(np.array([t_ns], np.int64), sample, signals, labels, WindowTable.from_windows(windows),
                          heights)

    def _rows(self, t_ns, samples, signals, labels, windows: WindowTable, heights=None) -> WindowRows:
        if self.labelled and labels is None:
            raise ValueError("this stage builds labelled rows: give every block its per-sample labels")
        self._extend(t_ns, samples, signals, labels, heights)
        kept = windows.kept
        local = windows.shifted(-self._offset)
        index, offsets = local.sample_index(kept)
        if index.size and index[0] < 0:
            raise ValueError("a kept window starts before the samples the stage holds; windows must come "
                             "with the block (or sample) they close in")
        t_start, t_end = windows.t_start_ns[kept], windows.t_end_ns[kept]
        context = None
        if self._context is not None:
            shape = step_shape_features(self._signals[index, 0], self._signals[index, 1], offsets, self.dt)
            context = np.array([self._context.push_shape(row, a, b) for row, a, b in zip(shape, t_start, t_end)],
                               dtype=np.float64).reshape(-1, len(STEP_CONTEXT_NAMES))
        height = height_m = None
        if self._height_context is not None:
            h, v = self._heights[index, 0], self._heights[index, 1]
            height = np.array([self._height_context.push(h[a:b], v[a:b], s, e)
                               for a, b, s, e in zip(offsets[:-1], offsets[1:], t_start, t_end)],
                              dtype=np.float64).reshape(-1, len(HEIGHT_NAMES))
            height_m = h[offsets[1:] - 1]
        label = direction = activity = None
        if self.labelled:
            label, direction = window_labels(self._labels, index, offsets)
            activity = window_activity(self._labels, index, offsets)
        return WindowRows(self._samples[index], offsets, context, t_start, t_end, label, direction, activity,
                          height, height_m)

    def _extend(self, t_ns, samples, signals, labels, heights) -> None:
        if self._samples is None:
            self._t, self._samples, self._signals, self._labels, self._heights = t_ns, samples, signals, labels, heights
            return
        if not t_ns.size:
            return
        drop = int(np.searchsorted(self._t, t_ns[0] - self._keep_ns, side="left"))
        self._offset += drop

        def joined(old, new):
            return None if new is None else np.concatenate([old[drop:], new])

        self._t = joined(self._t, t_ns)
        self._samples = joined(self._samples, samples)
        self._signals = joined(self._signals, signals)
        self._labels = joined(self._labels, labels)
        self._heights = joined(self._heights, heights)


def _no_pressure(path) -> str:
    """The one line for a log without air pressure reaching a stage configured for the barometer."""
    where = f"{path}: " if path else ""
    return (f"{where}the configuration reads the barometer (barometer=True: height features) but this log has no air "
            "pressure (no p column); use logs recorded with a barometer, or the accelerometer-only model "
            "(barometer=False)")


@dataclass
class WindowDataset:
    """Kept windows of many logs with features, labels and provenance.

    Attributes
    ----------
    X : ndarray, shape (m, len(feature_names))
        :meth:`WindowRows.features`: 79 Table 12.1 features (158 for Mizell), then the 36
        step-context ones when ``config.step_context > 0`` and the 7 height ones when
        ``config.barometer`` (:func:`feature_names_for`).
    y : ndarray of int, shape (m,)
        :data:`STAIR` or :data:`NO_STAIR` (:func:`window_labels`); ambiguous windows are left out,
        unless the dataset was built with ``keep_unlabelled``, where they are :data:`AMBIGUOUS`.
    groups : ndarray of object, shape (m,)
        Subject of each window (``meta["subject"]``, else the log's index) for leave-subjects-out.
    direction : ndarray of int, shape (m,)
        Activity code of STAIR windows (2 up, 3 down), 0 otherwise: the optional sub-label.
    activity : ndarray of int, shape (m,)
        The Activity code every sample of the window shares, else :data:`MIXED_ACTIVITY`
        (:func:`window_activity`): ``Activity.WALKING`` marks level walking among the NO_STAIR
        windows, ``Activity.UNLABELLED`` the windows of unlabelled stretches and logs.
    log_index, t_start_ns, t_end_ns : ndarray, shape (m,)
    n_ambiguous : int
        Kept windows that straddle a stair boundary or unlabelled samples (left out, or kept with
        ``y`` = :data:`AMBIGUOUS`).
    n_rejected : int
        Windows the duration filter rejected (never classified; NO_STAIR by definition).
    """

    X: np.ndarray
    y: np.ndarray
    groups: np.ndarray
    direction: np.ndarray
    activity: np.ndarray
    log_index: np.ndarray
    t_start_ns: np.ndarray
    t_end_ns: np.ndarray
    feature_names: list[str]
    n_ambiguous: int = 0
    n_rejected: int = 0

    _COLUMNS = ("X", "y", "groups", "direction", "activity", "log_index", "t_start_ns", "t_end_ns")

    def __len__(self) -> int:
        return int(self.y.size)

    @classmethod
    def of_log(cls, result: FrontEndResult, config: PipelineConfig, log_index: int = 0, *,
               keep_unlabelled: bool = False) -> WindowDataset:
        """The kept, unambiguous windows of one labelled log from its front-end result (``result.log``
        is the log the front end ran on; ``meta["subject"]`` groups its windows, else ``log_index``).

        Every kept window enters the step context (a phone does not know the labels); the ambiguous
        ones then leave the dataset, unless ``keep_unlabelled``: then every kept window stays, the
        ambiguous ones with ``y`` = :data:`AMBIGUOUS`, and a log without labels is accepted (all its
        windows ambiguous, of activity ``Activity.UNLABELLED``) — what counting a model's decisions on
        unlabelled recordings needs. The labelled rows are the same either way.
        """
        log = result.log
        labelled = log.label is not None
        if not labelled and not keep_unlabelled:
            raise ValueError(f"log {log.meta.get('path', log_index)} has no per-sample labels; cannot build a "
                             "training set")
        rows = WindowRowStage(config, log.rate_hz, labelled=labelled).process(result)
        if labelled:
            label, direction, activity = rows.label, rows.direction, rows.activity
        else:
            label = np.full(len(rows), AMBIGUOUS, np.int64)
            direction = np.zeros(len(rows), np.int64)
            activity = np.full(len(rows), int(Activity.UNLABELLED), np.int64)
        good = np.ones(len(rows), bool) if keep_unlabelled else label != AMBIGUOUS
        n = int(good.sum())
        return cls(rows.features()[good], label[good], np.full(n, log.meta.get("subject", log_index), dtype=object),
                   direction[good], activity[good], np.full(n, log_index), rows.t_start_ns[good],
                   rows.t_end_ns[good], feature_names_for(config), n_ambiguous=int(np.sum(label == AMBIGUOUS)),
                   n_rejected=int((~result.windows.kept).sum()))

    @classmethod
    def concatenate(cls, parts) -> WindowDataset:
        """One dataset of the windows of ``parts`` (datasets of the same configuration), in order."""
        parts = list(parts)
        if not parts:
            raise ValueError("no logs given")
        return cls(*(np.concatenate([getattr(p, c) for p in parts]) for c in cls._COLUMNS),
                   feature_names=parts[0].feature_names, n_ambiguous=sum(p.n_ambiguous for p in parts),
                   n_rejected=sum(p.n_rejected for p in parts))


def window_dataset(logs, config: PipelineConfig, *, keep_unlabelled: bool = False,
                   progress: bool = False) -> WindowDataset:
    """Run every labelled log through the front end (resampled to ``config.rate_hz`` if set) and
    return their kept, unambiguous windows (:meth:`WindowDataset.of_log`).

    Logs need per-sample ``label`` (UCI HAPT, the simulator) and must be gap-free; the step context
    runs within each log. ``keep_unlabelled`` keeps every kept window, ambiguous ones and those of
    logs without labels included, with ``y`` = :data:`AMBIGUOUS`.
    """
    from stairsense.stream import run_front_end
    from tqdm.auto import tqdm

    logs = tqdm(list(logs), desc="windows", disable=not progress, unit="log")
    return WindowDataset.concatenate(WindowDataset.of_log(run_front_end(log, config), config, i,
                                                          keep_unlabelled=keep_unlabelled)
                                     for i, log in enumerate(logs))
