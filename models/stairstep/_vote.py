"""A step's stair decision as the majority of its own and its neighbours' in the run.

A stair-step classifier decides each kept window alone, but stairs come in flights: a window the
model calls STAIR between two level steps is most likely a level step, and a level call inside a
flight most likely a stair step. :class:`StepVote` replaces each decision with the majority over
``steps`` consecutive kept windows centred on it (``steps`` odd; 1 keeps every decision as it is),
within the run it belongs to: the same runs as the step context (:class:`~stairsense.features.StepRun`,
a new run where the time from one window's end to the next one's start exceeds ``max_gap_s``, or at
a new segment). Near a run's ends, where a side has fewer than ``steps // 2`` windows, the nearest
window of the run stands in for the missing ones (scipy's ``median_filter(mode="nearest")`` within
each run): a run's first and last windows keep their own decision with ``steps=3``, so a run of
one or two windows is decided as before.

The price is latency: a window is decided when the ``steps // 2``-th window after it closes, or when
its run ends (the next window starts a new run, a segment ends, the log ends): about 0.6 s later
with ``steps=3`` while walking on.

**A flight's onset.** A barometer model also says which windows reach a lower, *onset* threshold
(``GatedTreesClassifier.onset_threshold``): the barometer lags a climb, so a flight's first stair
step often scores below the decision threshold while the steps after it do not (recall by a
step's place in its flight: ``benchmarks/bench_barometer.py``, "A flight's first step"). Such a
window is STAIR where the next window of its run is STAIR before the vote. The vote already waits
for that window, so the rule decides no later; with ``steps=1`` there is no vote and no rule (it
would have to wait). Pushed without ``onset`` the vote is the majority alone.

Measured (``benchmarks/bench_barometer.py`` and ``benchmarks/bench_placements.py``, default run
against ``steps=1``, in the README's tables): 3 lowers level walking called stairs on simulated
people in every placement and on real pockets, the GeoTecINIT phone, wrists and an arm-swinging
hand, and raises stair-step recall; where a model is wrong for whole runs (a phone in a neck pouch
or a purse) it cannot help and makes those errors slightly more consistent.
"""
from __future__ import annotations

from collections import deque

import numpy as np

from stairsense.features import STAIR, StepRun

__all__ = ["StepVote", "vote_decisions"]


class StepVote:
    """Streaming majority vote of each kept window's decision with its neighbours in the run.

    Push the model's decisions as windows close; each push returns the voted decisions of the
    windows it completes, oldest first, with the matching rows of any arrays carried along (the
    climb counter's heights, say). :meth:`flush` decides the windows still waiting (a segment or
    the stream ended). Any split of the same windows into pushes gives the same decisions
    (tests/test_step_vote.py).

    Parameters
    ----------
    steps : int, odd ≥ 1, default=3
        Windows in the vote, this one in the middle (``PipelineConfig.vote_steps``).
    max_gap_s : float > 0, default=1.5
        The run break (``PipelineConfig.step_context_gap_s``).

    Examples
    --------
    >>> vote = StepVote(steps=3)
    >>> t = np.arange(6) * 10**9
    >>> vote.push([0, 1, 0, 1, 1, 0], t, t + 10**9)[0]     # the last window waits for its successor
    array([0, 0, 1, 1, 1])
    >>> vote.flush()[0]                                   # the run ended: the last keeps its own decision
    array([0])

    A window at the onset threshold before a STAIR window starts the flight:

    >>> vote.push([0, 1, 1], t[:3], t[:3] + 10**9, onset=[1, 1, 1])[0]
    array([1, 1])
    """

    def __init__(self, steps: int = 3, max_gap_s: float = 1.5):
        if isinstance(steps, bool) or int(steps) != steps or steps < 1 or steps % 2 == 0:
            raise ValueError(f"StepVote steps must be an odd whole number >= 1 (1 = no vote), got {steps!r}")
        self.steps = int(steps)
        self._half = self.steps // 2
        # The run rule lives in StepRun; a block of 2 means this window continues the run.
        self._run = StepRun(2, max_gap_s, "StepVote")
        self._values: deque = deque(maxlen=2 * self._half + 1)  # the run's last raw decisions
        self._onsets: deque = deque(maxlen=2 * self._half + 1)  # and whether each reached the onset threshold
        self._waiting = 0  # windows at the end of _values not yet decided (≤ half)
        self._carried: list = []  # rows of the carried arrays for the waiting windows

    @property
    def waiting(self) -> int:
        """Windows pushed but not yet decided (at most ``steps // 2``)."""
        return self._waiting

    def push(self, decided, t_start_ns, t_end_ns, *carried, onset=None) -> tuple[np.ndarray, ...]:
        """Add kept windows in the order they closed.

        Parameters
        ----------
        decided : array-like of int, shape (W,)
            The model's decisions (1 = STAIR).
        t_start_ns, t_end_ns : array-like of int, shape (W,)
            The windows' times, for the run breaks.
        *carried : arrays of length W
            Rows to hand back beside the decisions they belong to.
        onset : array-like of bool, shape (W,), optional
            Whether each window reaches the model's onset threshold (module docstring); None: none does.

        Returns
        -------
        tuple of arrays
            The voted decisions (int, 1 = STAIR) of the windows decided by this push, oldest first,
            then the rows of each carried array for those windows.
        """
        decided = np.asarray(decided).reshape(-1)
        starts, ends = np.asarray(t_start_ns).reshape(-1), np.asarray(t_end_ns).reshape(-1)
        onset = np.zeros(decided.size, dtype=bool) if onset is None else np.asarray(onset).reshape(-1).astype(bool)
        if not decided.size == starts.size == ends.size == onset.size or any(len(c) != decided.size for c in carried):
            raise ValueError("StepVote.push needs one decision, start, end, onset flag and carried row per window")
        if len(self._carried) != len(carried):
            self._carried = [np.asarray(c)[:0] for c in carried]
        out = []
        for stair, at_onset, start, end in zip(decided == STAIR, onset, starts, ends):
            if len(self._run.push(None, int(start), int(end))) == 1:
                self._finish_run(out)
            self._values.append(bool(stair))
            self._onsets.append(bool(at_onset))
            self._waiting += 1
            if self._waiting > self._half:
                out.append(self._decide(len(self._values) - 1 - self._half))
                self._waiting -= 1
        return self._emit(out, carried)

    def flush(self) -> tuple[np.ndarray, ...]:
        """Decide every waiting window (its run ended: a new segment, or the end of the stream) and
        start afresh; returns what :meth:`push` returns."""
        out: list[int] = []
        self._finish_run(out)
        self._run.reset()
        return self._emit(out, ())

    def _finish_run(self, out: list) -> None:
        while self._waiting:
            out.append(self._decide(len(self._values) - self._waiting))
            self._waiting -= 1
        self._values.clear()
        self._onsets.clear()

    def _decide(self, i: int) -> int:
        """Majority over positions i − half … i + half of ``_values``, the nearest end standing in; or
        a flight's onset: ``_onsets[i]`` before a STAIR window of the run (module docstring)."""
        last = len(self._values) - 1
        votes = sum(self._values[min(max(j, 0), last)] for j in range(i - self._half, i + self._half + 1))
        onset = self._half and i < last and self._onsets[i] and self._values[i + 1]
        return int(votes > self._half or onset)

    def _emit(self, out: list, carried) -> tuple[np.ndarray, ...]:
        """The decided windows' votes and carried rows; keeps the waiting windows' rows."""
        rows = [np.concatenate([held, np.asarray(new)]) for held, new in zip(self._carried, carried)] \
            if carried else self._carried
        n = len(out)
        self._carried = [r[n:] for r in rows]
        return (np.asarray(out, dtype=np.int64), *(r[:n] for r in rows))


def vote_decisions(decided, t_start_ns, t_end_ns, steps: int = 3, max_gap_s: float = 1.5, *,
                   log_index=None, onset=None) -> np.ndarray:
    """:class:`StepVote` over kept windows in one go: the voted decision of every window.

    Parameters
    ----------
    decided, t_start_ns, t_end_ns : array-like, shape (m,)
        Each window's decision and times, in time order within its stream.
    steps, max_gap_s
        As in :class:`StepVote`.
    log_index : array-like of int, shape (m,), optional
        The stream (log) each window belongs to, when the arrays hold several, interleaved or not
        (as pooled test folds do): each log is voted on its own, never across logs. ``None``: one
        stream.
    onset : array-like of bool, shape (m,), optional
        Whether each window reaches the model's onset threshold, as in :meth:`StepVote.push`.

    >>> t = np.arange(5) * 10**9
    >>> vote_decisions([1, 0, 1, 0, 0], t, t + 10**9)
    array([1, 1, 0, 0, 0])
    >>> vote_decisions([1, 1, 0, 1, 0, 0], np.tile(t[:3], 2), np.tile(t[:3], 2) + 10**9, log_index=[0, 0, 0, 1, 1, 1])
    array([1, 1, 0, 1, 0, 0])
    """
    if log_index is None:
        vote = StepVote(steps, max_gap_s)
        return np.concatenate([vote.push(decided, t_start_ns, t_end_ns, onset=onset)[0], vote.flush()[0]])
    decided, t_start_ns, t_end_ns, log_index = (np.asarray(a) for a in (decided, t_start_ns, t_end_ns, log_index))
    onset = np.zeros(decided.shape, dtype=bool) if onset is None else np.asarray(onset, dtype=bool)
    out = np.empty(decided.shape, dtype=np.int64)
    for log in np.unique(log_index):
        rows = np.flatnonzero(log_index == log)
        out[rows] = vote_decisions(decided[rows], t_start_ns[rows], t_end_ns[rows], steps, max_gap_s, onset=onset[rows])
    return out
