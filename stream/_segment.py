"""Step windows: the data-dependent pattern segmentation of spec §3.5 and the sliding baseline.

Pattern segmentation runs on the vertical dynamic acceleration z (positive up):

1. A Schmitt trigger with band ±h turns z into a sign state: +1 once z > h, −1 once z < −h,
   unchanged in between. An *upward crossing* is a −1 → +1 change; consecutive upward crossings
   cut the stream into *segments*, each a positive lobe followed by a negative lobe.
2. A segment has a *peak* when its maximum exceeds τ_peak and a *valley* when its minimum is below
   −τ_valley. Because τ ≥ h (checked), a peak can only lie in the positive lobe and a valley in
   the negative one, so "a local maximum followed by a negative local minimum" is exactly
   "a peak in some segment, then a valley in the same or a later segment".
3. A window opens at the upward crossing that starts the first segment with a peak after the
   previous window closed (the spec's "last upward zero-crossing" before the maximum), and closes
   at the upward crossing that ends the first segment with a valley. The next window may open at
   that same crossing, so walking gives consecutive windows.
4. The duration filter keeps windows with ``min_step_s <= t_end - t_start <= max_step_s`` and at
   least two samples; the others are rejected with their reason and never classified.

The batch form finds the same windows without a loop over samples or segments: segment k closes
a window iff it has a valley and the last segment with a peak up to k comes after the last segment
with a valley before k (induction on the state machine; see ``segment_steps``).

With ``threshold_window_s`` > 0 the three thresholds are multiples of the recent amplitude
A = max(RMS of z over the last ``threshold_window_s`` s, ``threshold_floor``): the state machine
above runs unchanged on z / A. A fixed threshold in m/s² that suits a waist or hand phone misses the
damped steps of a back pocket or bag and double-counts a swinging arm's; scaled by A, one setting
carries across placements and people better, though not yet to every recording
(benchmarks/results/step_detection.md, leave-one-user-out).

Sliding windows (the energy baseline) are ``window_ms`` long every ``window_ms·(1−overlap)``,
aligned on the first sample; every one is kept (no duration filter applies).
"""
from __future__ import annotations

import enum
import math
from collections import deque
from dataclasses import dataclass

import numpy as np

from ._buffer_mean import CausalBufferMean
from ._config import PipelineConfig

__all__ = [
    "WindowStatus",
    "Window",
    "WindowTable",
    "StepSegmenter",
    "ThresholdAmplitude",
    "SlidingWindower",
    "segment_steps",
    "sliding_windows",
    "make_windower", "match_steps"]


class WindowStatus(enum.IntEnum):
    """Why a candidate window was kept or rejected."""

    KEPT = 0
    TOO_SHORT = 1
    TOO_LONG = 2
    TOO_FEW_SAMPLES = 3


@dataclass(frozen=True)
class Window:
    """One candidate window: samples ``[start, stop)`` of the standardized stream."""

    start: int
    stop: int
    t_start_ns: int
    t_end_ns: int
    status: WindowStatus

    @property
    def duration_s(self) -> float:
        return (self.t_end_ns - self.t_start_ns) / 1e9

    @property
    def kept(self) -> bool:
        return self.status == WindowStatus.KEPT


@dataclass(frozen=True)
class WindowTable:
    """Many windows as parallel arrays (the batch form of :class:`Window`)."""

    start: np.ndarray
    stop: np.ndarray
    t_start_ns: np.ndarray
    t_end_ns: np.ndarray
    status: np.ndarray

    def __len__(self) -> int:
        return int(self.start.size)

    @property
    def kept(self) -> np.ndarray:
        return self.status == WindowStatus.KEPT

    @property
    def duration_s(self) -> np.ndarray:
        return (self.t_end_ns - self.t_start_ns) / 1e9

    def select(self, mask) -> "WindowTable":
        return WindowTable(self.start[mask], self.stop[mask], self.t_start_ns[mask], self.t_end_ns[mask], self.status[mask])

    def shifted(self, offset: int) -> "WindowTable":
        """The same windows with sample indices moved by ``offset`` (to concatenate streams)."""
        return WindowTable(self.start + offset, self.stop + offset, self.t_start_ns, self.t_end_ns, self.status)

    @classmethod
    def from_windows(cls, windows) -> "WindowTable":
        windows = list(windows)
        return cls(
            np.array([w.start for w in windows], dtype=np.int64),
            np.array([w.stop for w in windows], dtype=np.int64),
            np.array([w.t_start_ns for w in windows], dtype=np.int64),
            np.array([w.t_end_ns for w in windows], dtype=np.int64),
            np.array([int(w.status) for w in windows], dtype=np.int8),
        )

    @classmethod
    def concatenate(cls, tables) -> "WindowTable":
        tables = list(tables)
        if not tables:
            return cls.from_windows([])
        return cls(*(np.concatenate([getattr(t, f) for t in tables]) for f in ("start", "stop", "t_start_ns", "t_end_ns", "status")))

    def sample_index(self, mask=None):
        """Flat sample indices and offsets of the windows (for ragged feature extraction)."""
        start, stop = (self.start, self.stop) if mask is None else (self.start[mask], self.stop[mask])
        lengths = stop - start
        offsets = np.zeros(lengths.size + 1, dtype=np.int64)
        np.cumsum(lengths, out=offsets[1:])
        index = np.repeat(start - offsets[:-1], lengths) + np.arange(offsets[-1])
        return index, offsets


def _status(duration_s, n_samples, config: PipelineConfig):
    status = np.zeros(np.shape(duration_s), dtype=np.int8)
    status[np.asarray(n_samples) < 2] = WindowStatus.TOO_FEW_SAMPLES
    status[duration_s > config.max_step_s] = WindowStatus.TOO_LONG
    status[duration_s < config.min_step_s] = WindowStatus.TOO_SHORT
    return status


def _check_thresholds(config: PipelineConfig):
    if config.peak_threshold < config.hysteresis or config.valley_threshold < config.hysteresis:
        raise ValueError(
            "pattern segmentation needs peak_threshold and valley_threshold >= hysteresis "
            f"(got {config.peak_threshold}, {config.valley_threshold} and {config.hysteresis}); "
            "a smaller threshold could see a peak inside the negative lobe."
        )


def segment_steps(t_ns, z, config: PipelineConfig) -> WindowTable:
    """Batch form of the pattern segmentation (spec §3.5): ``StepSegmenter(config).process(t_ns, z)``."""
    return StepSegmenter(config).process(t_ns, z)


def _pair_peaks_with_valleys(peak, valley):
    """Segments that open and close each window, and every peak segment (see ``process``)."""
    k = np.arange(peak.size)
    last_peak = np.maximum.accumulate(np.where(peak, k, -1)) if k.size else k
    last_valley_before = np.concatenate([[-1], np.maximum.accumulate(np.where(valley, k, -1))[:-1]])
    closes = np.flatnonzero(valley & (last_peak > last_valley_before))
    peaks = np.flatnonzero(peak)
    previous_close = np.concatenate([[-1], closes])[:-1]
    opens = peaks[np.searchsorted(peaks, previous_close + 1)]
    return opens, closes, peaks


class ThresholdAmplitude:
    """The amplitude A that adaptive thresholds are multiples of, per sample or per block.

    A = max(RMS of z over the last ``threshold_window_s`` seconds, this sample included,
    ``threshold_floor``), and the floor until the first window has passed. The pattern segmenter
    with adaptive thresholds is the one with absolute thresholds run on z / A.
    """

    def __init__(self, config: PipelineConfig):
        self.floor = config.threshold_floor
        # The mean of z² over the window, the current sample included (the gravity buffer's convention).
        self._power = CausalBufferMean(span_ns=int(round(config.threshold_window_s * 1e9)), include_current=True)

    def reset(self):
        self._power.reset()

    def push(self, t_ns, z) -> float:
        mean = self._power.push(t_ns, z * z, 0.0, 0.0)
        return self.floor if mean is None else max(math.sqrt(mean[0]), self.floor)

    def process(self, t_ns, z) -> np.ndarray:
        """A for a block, as ``push`` sample by sample (to rounding); the buffer carries over."""
        z = np.asarray(z, dtype=np.float64)
        first, means = self._power.process(t_ns, np.c_[z * z, np.zeros((z.size, 2))])
        amplitude = np.full(z.size, self.floor)
        np.maximum(np.sqrt(means[:, 0]), amplitude[first:], out=amplitude[first:])
        return amplitude


class StepSegmenter:
    """Per-sample form of :func:`segment_steps`.

    ``push(t_ns, z)`` consumes one vertical sample and returns the :class:`Window` that closes at
    it, or ``None``. Sample indices count pushes since the last ``reset``.
    """

    def __init__(self, config: PipelineConfig):
        _check_thresholds(config)
        self.config = config
        self._amplitude = ThresholdAmplitude(config) if config.threshold_window_s > 0 else None
        self.reset()

    def reset(self):
        if self._amplitude is not None:
            self._amplitude.reset()
        self._i = 0
        self._state = 0
        self._seg_start = None  # (index, t) of the current segment's upward crossing
        self._seg_max = self._seg_min = 0.0
        self._open = None  # (index, t) where the current window opened

    def push(self, t_ns, z):
        cfg = self.config
        if self._amplitude is not None:
            z = z / self._amplitude.push(t_ns, z)
        i = self._i
        self._i += 1
        state = self._state
        if z > cfg.hysteresis:
            state = 1
        elif z < -cfg.hysteresis:
            state = -1
        closed = None
        if state == 1 and self._state == -1:
            if self._seg_start is not None:
                closed = self._end_segment(i, t_ns)
            self._seg_start = (i, t_ns)
            self._seg_max = self._seg_min = z
        elif self._seg_start is not None:
            if z > self._seg_max:
                self._seg_max = z
            elif z < self._seg_min:
                self._seg_min = z
        self._state = state
        return closed

    def process(self, t_ns, z) -> WindowTable:
        """Consume a block of vertical samples; return the windows that close in it.

        Vectorised over samples and segments; the state carries over exactly as with ``push``.
        Segment k closes a window iff it has a valley and the last peak segment up to k comes
        after the last valley segment before k: a valley in between would already have closed
        the window that peak opened (induction on the state machine).
        """
        cfg = self.config
        t_ns = np.asarray(t_ns, dtype=np.int64)
        z = np.asarray(z, dtype=np.float64)
        n = z.size
        if n == 0:
            return WindowTable.from_windows([])
        if self._amplitude is not None:
            z = z / self._amplitude.process(t_ns, z)
        i0 = self._i
        state, up = self._schmitt(z)
        peak, valley, seg_start, seg_end = self._segments(t_ns, z, up, i0)
        opens, closes, peaks = _pair_peaks_with_valleys(peak, valley)
        start, stop = seg_start[0][opens], seg_end[0][closes]
        t_start, t_end = seg_start[1][opens], seg_end[1][closes]
        windows = WindowTable(
            start.astype(np.int64), stop.astype(np.int64), t_start.astype(np.int64), t_end.astype(np.int64),
            _status((t_end - t_start) / 1e9, stop - start, cfg),
        )
        self._carry(t_ns, z, i0, state, up, seg_start, peaks, closes)
        return windows

    def _schmitt(self, z):
        """Schmitt state after each sample, and the block-local indices of the upward crossings."""
        local = np.arange(z.size)
        # Schmitt state: sign of the last sample outside the band, else the carried state.
        last = np.where(np.abs(z) > self.config.hysteresis, local, -1)
        np.maximum.accumulate(last, out=last)
        state = np.where(last >= 0, np.sign(z[np.maximum(last, 0)]), self._state).astype(np.int8)
        previous = np.concatenate([[self._state], state[:-1]])
        return state, np.flatnonzero((state == 1) & (previous == -1))

    def _segments(self, t_ns, z, up, i0):
        """Peak and valley flags of the segments that complete in this block, with their
        ``(index, t)`` starts and ends; the window left open before the block comes first."""
        cfg = self.config
        carried = self._seg_start is not None
        # Boundaries of complete segments, as global indices and times.
        b_idx = i0 + up
        b_t = t_ns[up]
        if carried:
            b_idx = np.concatenate([[self._seg_start[0]], b_idx])
            b_t = np.concatenate([[self._seg_start[1]], b_t])
        starts_local = np.concatenate([[0], up[:-1]]) if carried else up[:-1]
        ends_local = up if carried else up[1:]
        n_seg = ends_local.size
        seg_max = np.full(n_seg, -np.inf)
        seg_min = np.full(n_seg, np.inf)
        nonempty = ends_local > starts_local
        if nonempty.any():
            head = z[: ends_local[nonempty][-1]]
            seg_max[nonempty] = np.maximum.reduceat(head, starts_local[nonempty])
            seg_min[nonempty] = np.minimum.reduceat(head, starts_local[nonempty])
        if carried and n_seg:
            seg_max[0] = max(seg_max[0], self._seg_max)
            seg_min[0] = min(seg_min[0], self._seg_min)
        peak = seg_max > cfg.peak_threshold
        valley = seg_min < -cfg.valley_threshold
        seg_start_idx, seg_start_t = b_idx[:n_seg], b_t[:n_seg]
        seg_end_idx, seg_end_t = b_idx[1 : n_seg + 1], b_t[1 : n_seg + 1]
        if self._open is not None:
            # An open window is a peak segment seen before this block that has not closed.
            peak = np.concatenate([[True], peak])
            valley = np.concatenate([[False], valley])
            seg_start_idx = np.concatenate([[self._open[0]], seg_start_idx])
            seg_start_t = np.concatenate([[self._open[1]], seg_start_t])
            seg_end_idx = np.concatenate([[-1], seg_end_idx])
            seg_end_t = np.concatenate([[-1], seg_end_t])
        return peak, valley, (seg_start_idx, seg_start_t), (seg_end_idx, seg_end_t)

    def _carry(self, t_ns, z, i0, state, up, seg_start, peaks, closes):
        """Leave the state ``push`` would have after the block's last sample."""
        carried = self._seg_start is not None
        self._i = i0 + z.size
        self._state = int(state[-1])
        if up.size:
            self._seg_start = (i0 + int(up[-1]), int(t_ns[up[-1]]))
            self._seg_max, self._seg_min = float(z[up[-1] :].max()), float(z[up[-1] :].min())
        elif carried:
            self._seg_max = max(self._seg_max, float(z.max()))
            self._seg_min = min(self._seg_min, float(z.min()))
        last_close = closes[-1] if closes.size else -1
        pending = peaks[peaks > last_close]
        self._open = (int(seg_start[0][pending[0]]), int(seg_start[1][pending[0]])) if pending.size else None

    def _end_segment(self, i, t_ns):
        cfg = self.config
        if self._open is None and self._seg_max > cfg.peak_threshold:
            self._open = self._seg_start
        if self._open is not None and self._seg_min < -cfg.valley_threshold:
            start, t_start = self._open
            self._open = None
            duration = (t_ns - t_start) / 1e9
            status = _status(np.array(duration), np.array(i - start), cfg)
            return Window(start, i, t_start, t_ns, WindowStatus(int(status)))
        return None


def sliding_windows(t_ns, config: PipelineConfig) -> WindowTable:
    """Batch form of the time-based sliding windows: ``SlidingWindower(config).process(t_ns)``."""
    return SlidingWindower(config).process(t_ns)


def _sliding_geometry(config: PipelineConfig):
    length = int(round(config.window_ms * 1e6))
    hop = int(round(config.window_ms * (1 - config.window_overlap) * 1e6))
    return length, hop


class SlidingWindower:
    """Per-sample form of :func:`sliding_windows`; ``push`` returns the windows ending at a sample."""

    def __init__(self, config: PipelineConfig):
        self.config = config
        self._length, self._hop = _sliding_geometry(config)
        self.reset()

    def reset(self):
        self._i = 0
        self._times = deque()  # (index, t) of samples that may still start a window
        self._t0 = None
        self._next = 0  # index k of the next window to emit

    def process(self, t_ns, z=None) -> WindowTable:
        """Consume a block of timestamps; return the windows that end in it (state carried)."""
        t_ns = np.asarray(t_ns, dtype=np.int64)
        n = t_ns.size
        if n == 0:
            return WindowTable.from_windows([])
        i0 = self._i
        if self._t0 is None:
            self._t0 = int(t_ns[0])
        hist_i = np.fromiter((s[0] for s in self._times), dtype=np.int64, count=len(self._times))
        hist_t = np.fromiter((s[1] for s in self._times), dtype=np.int64, count=len(self._times))
        all_i = np.concatenate([hist_i, i0 + np.arange(n)])
        all_t = np.concatenate([hist_t, t_ns])
        # A window [t0 + k·hop, + length) is emitted by the first sample at or after its end.
        k_last = (int(t_ns[-1]) - self._t0 - self._length) // self._hop
        ks = np.arange(self._next, k_last + 1, dtype=np.int64)
        t_start = self._t0 + ks * self._hop
        t_end = t_start + self._length
        start = all_i[np.searchsorted(all_t, t_start, side="left")]
        stop = all_i[np.searchsorted(all_t, t_end, side="left")]
        status = np.where(stop - start < 2, WindowStatus.TOO_FEW_SAMPLES, WindowStatus.KEPT).astype(np.int8)
        self._i = i0 + n
        self._next = max(self._next, int(k_last) + 1)
        keep = np.searchsorted(all_t, self._t0 + self._next * self._hop, side="left")
        self._times = deque(zip(all_i[keep:].tolist(), all_t[keep:].tolist()))
        return WindowTable(start, stop, t_start, t_end, status)

    def push(self, t_ns, z=None):
        i = self._i
        self._i += 1
        if self._t0 is None:
            self._t0 = t_ns
        out = []
        while True:
            t_start = self._t0 + self._next * self._hop
            t_end = t_start + self._length
            if t_ns < t_end:
                break
            # Drop samples before this window: later windows start later still.
            while self._times and self._times[0][1] < t_start:
                self._times.popleft()
            start = self._times[0][0] if self._times else i
            status = WindowStatus.KEPT if i - start >= 2 else WindowStatus.TOO_FEW_SAMPLES
            out.append(Window(start, i, t_start, t_end, status))
            self._next += 1
        self._times.append((i, t_ns))
        return out


def make_windower(config: PipelineConfig):
    """The streaming windower the configuration asks for."""
    return StepSegmenter(config) if config.segmentation == "pattern" else SlidingWindower(config)


def match_steps(truth_ns: np.ndarray, t_start_ns: np.ndarray, t_end_ns: np.ndarray) -> int:
    """Number of windows ``[t_start, t_end)`` that contain at least one ground-truth step.

    Kept pattern windows never overlap, so each true step is credited to at most one window;
    a window holding two steps counts once (the second is a miss).
    """
    lo = np.searchsorted(truth_ns, t_start_ns, side="left")
    hi = np.searchsorted(truth_ns, t_end_ns, side="left")
    return int(np.count_nonzero(hi > lo))
