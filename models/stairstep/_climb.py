"""Stair steps up and down, metres and floors climbed, from a barometer model's decisions (issue 24).

Apple's ``CMPedometerData.floorsAscended``/``floorsDescended`` count "floors ascended by walking"
up or down stairs, not by lift or other assisted means, a floor being "approximately three
meters" (Core Motion documentation). :class:`ClimbCounter` counts the same from the stair steps a
model decides, with the window rows' heights (``WindowRows.height_m``, ``WindowRows.height``):

* **Direction** of a stair step: the sign of its context's height change
  (``ctx_height_change_m``), over up to ``step_context`` steps (≈ 0.85 m on five stair steps),
  not the step's own (≈ 0.17 m, at the height filter's noise).
* **Metres**: each stair step adds the height change from a reference to its last sample: the
  end of the previous stair step when that one is in this step's context block (the same run of
  kept steps, at most ``step_context − 1`` steps back), else the start of the block. The changes
  then telescope: a flight adds the height from the start of its first stair step's context to
  the end of its last stair step, so stair steps a model misses at a flight's start (their
  context is still level) and level steps in between (a half landing) lose no height, and a
  height change far from any stair step (a lift, an escalator, a ramp leg) is never counted.
* **Flights only**: a stair step's height counts once its block holds at least ``min_flight``
  stair steps (3 by default: a flight); until then it waits, and it is dropped if the block runs
  out of stair steps first. A lone stair decision, typically a false one where a pressure step
  (a door, stepping off an escalator while the height filter still catches up) meets a step,
  counts as a stair step up or down but climbs nothing. On the held-out simulated walks of
  ``benchmarks/bench_barometer.py`` this took floors counted exactly on multi-floor walks from 61 %
  to 79 % (2 gave the same, 4–5 lost short flights).
* **Floors**: metres / 3 rounded to the nearest whole floor, not truncated: a flight's height ends
  at its last stair step's end, where the height filter still lags the climb by about 0.1–0.2 m,
  so a truncating count would lose a floor to a few centimetres.

Without a barometer there are stair steps but no height: the direction, metres and floors are
unknown, and replay says so rather than guess.
"""
from __future__ import annotations

import math

import numpy as np

from stairsense.features import HEIGHT_NAMES, STAIR, StepRun

__all__ = ["ClimbCounter", "FLOOR_M"]

#: The height of one floor Apple's CMPedometer counts ("approximately three meters").
FLOOR_M = 3.0
# The height feature whose sign gives a stair step's direction (module docstring).
_CONTEXT_CHANGE = HEIGHT_NAMES.index("ctx_height_change_m")


class ClimbCounter:
    """Counts stair steps up and down and the metres and floors they climb and descend.

    Parameters
    ----------
    context : int, default=5
        The step context's size (``PipelineConfig.step_context``): how far back a stair step's
        height is referred (module docstring).
    max_gap_s : float, default=1.5
        The step context's run break (``PipelineConfig.step_context_gap_s``).
    min_flight : int, default=3
        Stair steps a block must hold before their height counts (module docstring); a smaller
        ``context`` lowers it to ``context``.

    Attributes
    ----------
    up, down : int
        Stair steps up and down.
    climbed_m, descended_m : float
        Metres climbed and descended on stairs, in flights (both ≥ 0 on a true climb; noise can
        make one slightly negative on a short flight).

    Examples
    --------
    Five stair steps up, 0.17 m each, each window's context holding it and the ones before:

    >>> import numpy as np
    >>> counter = ClimbCounter(context=5)
    >>> for i in range(5):
    ...     h_end = 0.17 * (i + 1)
    ...     height = np.array([[0.17, 0.3, 0.3, 0.17, h_end]])  # HEIGHT_NAMES: magnitudes, then the signed change
    ...     _ = counter.push([1], height, [h_end], [i * 10**9], [(i + 1) * 10**9])
    >>> counter.up, counter.down, round(counter.climbed_m, 2), counter.floors_ascended
    (5, 0, 0.85, 0)

    A lone stair step (a door's pressure step met a level step) is a stair step, not a climb:

    >>> lone = ClimbCounter(context=5)
    >>> _ = lone.push([0, 1, 0], np.array([[0.0, 0, 0, 0, 0.0], [0.4, 0, 0, 0.1, 0.4], [0.0, 0, 0, 0, 0.4]]),
    ...               [0.0, 0.4, 0.4], [0, 10**9, 2 * 10**9], [10**9, 2 * 10**9, 3 * 10**9])
    >>> lone.up, lone.climbed_m
    (1, 0.0)
    """

    def __init__(self, context: int = 5, max_gap_s: float = 1.5, min_flight: int = 3):
        self._run = StepRun(context, max_gap_s, "ClimbCounter")
        if int(min_flight) != min_flight or min_flight < 1:
            raise ValueError(f"ClimbCounter min_flight must be a whole number >= 1, got {min_flight!r}")
        self.min_flight = min(int(min_flight), self._run.size)
        self.up = self.down = 0
        self.climbed_m = self.descended_m = 0.0
        self._waiting: list[tuple[bool, float]] = []  # (up, rise) of stair steps not yet in a flight

    def new_segment(self) -> "ClimbCounter":
        """A new stream starts (after a sensor gap): its heights have a new zero, the run restarts;
        the counts go on."""
        self._run.reset()
        self._waiting.clear()
        return self

    def push(self, decided, height, height_m, t_start_ns, t_end_ns) -> "ClimbCounter":
        """Count kept windows, in the order they closed.

        Parameters
        ----------
        decided : array-like of int, shape (W,)
            The model's decisions (1 = STAIR).
        height, height_m, t_start_ns, t_end_ns : arrays of shape (W, 5) and (W,)
            The windows' ``WindowRows.height``, ``height_m`` and times.
        """
        height = np.asarray(height, dtype=np.float64).reshape(-1, 5)
        for stair, row, end_m, start, end in zip(np.asarray(decided) == STAIR, height, np.asarray(height_m, float),
                                                 t_start_ns, t_end_ns):
            block = self._run.push((bool(stair), float(end_m)), start, end)
            stairs_in_block = sum(was_stair for was_stair, _ in block)
            if len(block) == 1 or stairs_in_block == 0:  # a new run, or the stair steps ran out
                self._waiting.clear()
            if not stair:
                continue
            change = float(row[_CONTEXT_CHANGE])
            previous = [m for was_stair, m in list(block)[:-1] if was_stair]
            reference = previous[-1] if previous else float(end_m) - change
            if change >= 0:
                self.up += 1
            else:
                self.down += 1
            self._waiting.append((change >= 0, float(end_m) - reference))
            if stairs_in_block >= self.min_flight:
                for up, rise in self._waiting:
                    if up:
                        self.climbed_m += rise
                    else:
                        self.descended_m -= rise
                self._waiting.clear()
        return self

    @property
    def floors_ascended(self) -> int:
        """Floors climbed on stairs: :attr:`climbed_m` / 3 m, to the nearest whole floor (≥ 0)."""
        return _floors(self.climbed_m)

    @property
    def floors_descended(self) -> int:
        """Floors descended on stairs: :attr:`descended_m` / 3 m, to the nearest whole floor (≥ 0)."""
        return _floors(self.descended_m)


def _floors(metres: float) -> int:
    return max(0, math.floor(metres / FLOOR_M + 0.5))
