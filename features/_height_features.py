"""Height features of a kept step and of its step context, from the barometer.

An accelerometer cannot see the 0.15–0.19 m a person rises per stair step: climbing at a steady pace
has zero mean vertical acceleration (:mod:`._step_context`). A barometer sees the level, and the
front end's :class:`~stairsense.stream.HeightFilter` turns it, with the vertical acceleration, into
a causal height ``h`` (m, relative to the first reading) and vertical speed ``v`` (m/s) per sample.
Seven features per kept window read them (:data:`HEIGHT_NAMES`), taken over the window, over the
same block of kept steps as the step context (:class:`~._step_context.StepRun`: this step and up to
``context − 1`` before it, a run broken by a pause longer than ``max_gap_s``) and over a longer
block of the same run (up to :data:`LONG_STEPS` steps):

* ``abs_step_height_change_m`` — |h at the window's last sample − h at its first|: ≈ 0.17 m on
  stairs, 0 on the level, but one step is at the filter's noise (≈ 0.1 m), so the context follows;
* ``abs_step_vertical_speed_m_s`` — |mean of v over the window's samples|: the filter's own
  estimate, which the accelerometer keeps responsive where the height difference lags;
* ``abs_ctx_vertical_speed_m_s`` — |mean of v over every sample of the block's windows|;
* ``abs_ctx_rise_per_step_m`` — |ctx_height_change_m| divided by the block's number of steps:
  the riser height itself, what makes a stair step a stair step. It does not depend on the
  cadence, unlike the speeds, and it parts stairs (0.15–0.19 m per step) from a 1:12 ramp walked
  with a level gait (about 0.05 m per step), which the speed alone would confuse with slow stairs;
* ``abs_long_vertical_speed_m_s`` and ``abs_long_rise_per_step_m`` — the same two over the long
  block: a phone barometer's noise (0.01–0.05 hPa, 0.1–0.4 m) and its slow wander (a door, a warm
  hand) move five steps' height by as much as a stair step does, and twenty steps (about 11 s)
  average it down, while a flight of stairs keeps climbing through them. Long blocks of 10, 15,
  20 and 30 steps were tried on the 7 training draws of ``bench_barometer.py`` and
  ``bench_komd_recipe.py`` (48 simulated people each, the trees head) and 20 chosen; on 3 draws
  that chose nothing (``train --barometer``'s recipe fitted on 48 simulated people of seeds 15, 16
  and 17, with and without the long block), against 9 held-out draws of 56 people (seeds 18, 19,
  20) and the 40 real IPIN walks: stair-step recall median 0.927 → 0.938, level walking called stairs 0.58 → 0.73 %, F1
  0.948 → 0.944, and the real walks' stair steps in the calibration openings 6, 2, 1 → 0, 0, 0 and
  between the way-points 4, 21, 3 → 0, 16, 0;
* ``ctx_height_change_m`` — h at this window's last sample minus h at the first sample of the
  block's oldest window, signed: ≈ ±0.85 m over five stair steps, well above the noise, and its
  sign is the direction (``stairsense.models.ClimbCounter`` reads it).

Why magnitudes: the classifier has one class for stairs up and down, so a signed height is
non-monotonic in it (stairs on both sides of the level) and the RBF kernel, among some 45 other
features, must carve the level out of the middle; the magnitude puts the level at one end. On
held-out simulated building walks (12 people to train, 8 others to test, four placements, the
shipped recipe with 100 landmarks) the signed five gave stair-step recall 0.81 and level walking
called stairs 1.3 %, the magnitudes 0.86 and 0.9 %. The one signed feature keeps the direction for the counts.

Lifts and escalators move the height without steps, so they cut no kept windows and give no rows.

:class:`HeightContext` is the streaming form (push one kept window's h and v as it closes);
``WindowRowStage`` runs it next to the step context, and ``tests/test_height_features.py``
checks it against a brute-force reading of these definitions over the filter's per-sample output.
"""
from __future__ import annotations

import numpy as np

from ._step_context import StepRun, trailing_columns

__all__ = ["HEIGHT_NAMES", "HeightContext", "LONG_STEPS", "height_columns"]

HEIGHT_NAMES: tuple[str, ...] = (
    "abs_step_height_change_m", "abs_step_vertical_speed_m_s", "abs_ctx_vertical_speed_m_s", "abs_ctx_rise_per_step_m",
    "abs_long_vertical_speed_m_s", "abs_long_rise_per_step_m", "ctx_height_change_m",
)
#: Kept steps in the long block (this one included), whatever the step context's size.
LONG_STEPS = 20


class HeightContext:
    """Streaming height features: push each kept window's per-sample height and speed as it closes.

    Parameters
    ----------
    context : int, default=5
        Steps in the block (this one included), as the step context's; the long block holds
        :data:`LONG_STEPS`.
    max_gap_s : float, default=1.5
        A longer time between one kept window's end and the next one's start starts a new run.

    Examples
    --------
    >>> ctx = HeightContext(context=2)
    >>> ctx.push([0.0, -0.1, -0.2], [-0.3, -0.3, -0.3], 0, 10**9).round(3).tolist()
    [0.2, 0.3, 0.3, 0.2, 0.3, 0.2, -0.2]
    >>> ctx.push([-0.2, -0.3, -0.4], [-0.3, -0.3, -0.3], 10**9, 2 * 10**9).round(3).tolist()
    [0.2, 0.3, 0.3, 0.2, 0.3, 0.2, -0.4]
    >>> ctx.push([-0.4, -0.4, -0.4], [0.0, 0.0, 0.0], 2 * 10**9, 3 * 10**9).round(3).tolist()  # a level step
    [0.0, 0.0, 0.15, 0.1, 0.2, 0.133, -0.2]
    """

    def __init__(self, context: int = 5, max_gap_s: float = 1.5):
        if int(context) != context or context < 1:
            raise ValueError(f"HeightContext context must be an integer >= 1, got {context!r}")
        self.context = int(context)
        self._run = StepRun(max(self.context, LONG_STEPS), max_gap_s, "HeightContext")  # both blocks: one run

    def reset(self) -> "HeightContext":
        """Forget every step: a new segment starts."""
        self._run.reset()
        return self

    def push(self, height, speed, t_start_ns: int, t_end_ns: int) -> np.ndarray:
        """The 7 :data:`HEIGHT_NAMES` features of the window that just closed, from the filter's
        height and speed at each of its samples."""
        height = np.asarray(height, dtype=np.float64)
        speed = np.asarray(speed, dtype=np.float64)
        if height.size == 0 or speed.shape != height.shape:
            raise ValueError(f"HeightContext needs height and speed of the same non-zero length, got {height.size} "
                             f"and {speed.size}")
        first, last = float(height[0]), float(height[-1])
        run = list(self._run.push((first, float(speed.sum()), speed.size), t_start_ns, t_end_ns))

        def rise_and_speed(block):
            """The block's signed height change, its |mean speed| and its |change| per step."""
            change = last - block[0][0]
            speed_mean = sum(s for _, s, _ in block) / sum(n for _, _, n in block)
            return change, abs(speed_mean), abs(change) / len(block)

        change, ctx_speed, ctx_rise = rise_and_speed(run[-self.context:])
        _, long_speed, long_rise = rise_and_speed(run[-LONG_STEPS:])
        return np.array([abs(last - first), abs(float(speed.mean())), ctx_speed, ctx_rise, long_speed, long_rise,
                         change])


def height_columns(feature_names) -> int:
    """How many trailing columns of ``feature_names`` are height features: 7 or 0.

    Raises
    ------
    ValueError
        When some, but not all 7 in order at the end, are there.
    """
    return trailing_columns(feature_names, HEIGHT_NAMES, "HEIGHT_NAMES", "height", "at the end")
