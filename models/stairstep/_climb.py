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

    Attributes
    ----------
    up, down : int
        Stair steps up and down.
    climbed_m, descended_m : float
        Metres climbed and descended on stairs (both ≥ 0 on a true climb; noise can make a
        count's sum slightly negative on a flight of one step).

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
    """

    def __init__(self, context: int = 5, max_gap_s: float = 1.5):
        self._run = StepRun(context, max_gap_s, "ClimbCounter")
        self.up = self.down = 0
        self.climbed_m = self.descended_m = 0.0

    def new_segment(self) -> "ClimbCounter":
        """A new stream starts (after a sensor gap): its heights have a new zero, the run restarts;
        the counts go on."""
        self._run.reset()
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
            if not stair:
                continue
            change = float(row[_CONTEXT_CHANGE])
            previous = [m for was_stair, m in list(block)[:-1] if was_stair]
            reference = previous[-1] if previous else float(end_m) - change
            rise = float(end_m) - reference
            if change >= 0:
                self.up += 1
                self.climbed_m += rise
            else:
                self.down += 1
                self.descended_m -= rise
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
