"""Stair steps up and down, metres and floors climbed, from a barometer model's decisions.

Apple's ``CMPedometerData.floorsAscended``/``floorsDescended`` count "floors ascended by walking"
up or down stairs, not by lift or other assisted means, a floor being "approximately three
meters" (Core Motion documentation). :class:`ClimbCounter` counts the same from the stair steps a
model decides, with the window rows' heights (``WindowRows.height_m``, ``WindowRows.height``):

* **Direction** of a stair step: the sign of its context's height change
  (``ctx_height_change_m``), over up to ``step_context`` steps (≈ 0.85 m on five stair steps),
  not the step's own (≈ 0.17 m, at the height filter's noise). This is the live up/down count.
* **Flights**: stair steps chain into a flight while each one's previous stair step is in its
  context block (the same run of kept steps, at most ``step_context − 1`` steps back); a level
  step or two between them (a half landing) does not break it, a longer stretch or a run break
  does.
* **Metres**: a flight's height is the change from the start of its first stair step's context
  (that step's end height less its ``ctx_height_change_m``) to the end of its last stair step, so
  stair steps a model misses at a flight's start (their context is still level) lose no height,
  and a height change far from any stair step (a lift, an escalator, a ramp leg) is never counted.
  The flight's height counts as climbed or descended by its own sign, all of it. Apportioning
  each step's rise by that step's context sign, as the direction count does, would put the
  noise of a flight's first steps (whose context is still nearly level) on the wrong side: a
  3 m climb picks up a phantom metre of descent, and on the held-out simulated walks of
  ``benchmarks/bench_barometer.py`` the multi-floor walks counted exactly fall from 95 to 88 of
  100 (four sets of 56 people, one model).
* **Flights only**: a flight's height counts once it holds at least ``min_flight`` stair steps
  (3 by default); a shorter one, typically a false stair decision where a pressure step (a door,
  stepping off an escalator while the height filter still catches up) meets a step, counts as
  stair steps up or down but climbs nothing.
* **Live**: :attr:`ClimbCounter.climbed_m` and :attr:`~ClimbCounter.descended_m` include the open
  flight once it is long enough, so the figures grow during a climb; if its sign turns (noise on
  a level stretch decided as stairs), the metres move from one side to the other.
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
        Stair steps a flight must hold before its height counts (module docstring); a smaller
        ``context`` lowers it to ``context``.

    Attributes
    ----------
    up, down : int
        Stair steps up and down.
    climbed_m, descended_m : float
        Metres climbed and descended on stairs, in flights of at least ``min_flight`` stair
        steps, the open flight included (both ≥ 0).

    Examples
    --------
    Five stair steps up, 0.17 m each, each window's context holding it and the ones before:

    >>> import numpy as np
    >>> counter = ClimbCounter(context=5)
    >>> for i in range(5):
    ...     h_end = 0.17 * (i + 1)
    ...     height = np.array([[0.17, 0.3, 0.3, 0.17, 0.3, 0.17, h_end]])  # HEIGHT_NAMES: magnitudes, then the signed change
    ...     _ = counter.push([1], height, [h_end], [i * 10**9], [(i + 1) * 10**9])
    >>> counter.up, counter.down, round(counter.climbed_m, 2), counter.floors_ascended
    (5, 0, 0.85, 0)

    A lone stair step (a door's pressure step met a level step) is a stair step, not a climb:

    >>> lone = ClimbCounter(context=5)
    >>> _ = lone.push([0, 1, 0], np.array([[0.0, 0, 0, 0, 0, 0, 0.0], [0.4, 0, 0, 0.1, 0, 0.1, 0.4],
    ...                              [0.0, 0, 0, 0, 0, 0, 0.4]]),
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
        self._closed_up_m = self._closed_down_m = 0.0  # flights that ended
        self._flight_steps, self._flight_m = 0, 0.0  # the open flight: stair steps, signed height

    def new_segment(self) -> "ClimbCounter":
        """A new stream starts (after a sensor gap): its heights have a new zero, the run restarts;
        the open flight ends and the counts go on."""
        self._end_flight()
        self._run.reset()
        return self

    def push(self, decided, height, height_m, t_start_ns, t_end_ns) -> "ClimbCounter":
        """Count kept windows, in the order they closed.

        Parameters
        ----------
        decided : array-like of int, shape (W,)
            The model's decisions (1 = STAIR).
        height, height_m, t_start_ns, t_end_ns : arrays of shape (W, 7) and (W,)
            The windows' ``WindowRows.height``, ``height_m`` and times.
        """
        height = np.asarray(height, dtype=np.float64).reshape(-1, len(HEIGHT_NAMES))
        for stair, row, end_m, start, end in zip(np.asarray(decided) == STAIR, height, np.asarray(height_m, float),
                                                 t_start_ns, t_end_ns):
            block = self._run.push((bool(stair), float(end_m)), start, end)
            previous = [m for was_stair, m in list(block)[:-1] if was_stair]
            if not previous:  # a new run, or the stair steps ran out of the block
                self._end_flight()
            if not stair:
                continue
            change = float(row[_CONTEXT_CHANGE])
            if change >= 0:
                self.up += 1
            else:
                self.down += 1
            reference = previous[-1] if previous else float(end_m) - change
            self._flight_steps += 1
            self._flight_m += float(end_m) - reference
        return self

    def _open_flight_m(self) -> float:
        """The open flight's signed height once it holds ``min_flight`` stair steps, else 0."""
        return self._flight_m if self._flight_steps >= self.min_flight else 0.0

    def _end_flight(self) -> None:
        rise = self._open_flight_m()
        self._closed_up_m += max(rise, 0.0)
        self._closed_down_m += max(-rise, 0.0)
        self._flight_steps, self._flight_m = 0, 0.0

    @property
    def climbed_m(self) -> float:
        """Metres climbed on stairs (flights that went up, the open one included)."""
        return self._closed_up_m + max(self._open_flight_m(), 0.0)

    @property
    def descended_m(self) -> float:
        """Metres descended on stairs (flights that went down, the open one included)."""
        return self._closed_down_m + max(-self._open_flight_m(), 0.0)

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
