"""Gait part of the synthetic sensor simulator: who walks, what they do, and how their body accelerates.

Everything here is a deterministic function of continuous time built once per simulated log (the
"timeline": bouts, foot strikes, heading knots), so that samples can be rendered in any blocks and
at any (jittered) instants. The device side (orientation, sensors, noise) is in ``_device.py``.

References for the facts used below
-----------------------------------
- Level walking cadence of healthy adults is about 100–125 steps/min (1.6–2.1 steps/s):
  Tudor-Locke et al., "How fast is fast enough? Walking cadence (steps/min) as a practical estimate
  of intensity in adults", Int J Behav Nutr Phys Act 15:62 (2018).
- Stair ascent and descent are slower, about 80–105 steps/min, with larger hip flexion on ascent and
  larger vertical force peaks on descent: Riener, Rabuffetti & Frigo, "Stair ascent and descent at
  different inclinations", Gait & Posture 15:32–44 (2002); McFadyen & Winter, "An integrated
  biomechanical analysis of normal stair ascent and descent", J Biomech 21:733–744 (1988).
- Stride-time variability of healthy adults is a coefficient of variation of about 1–3 %:
  Hausdorff, "Gait variability: methods, modeling and meaning", J NeuroEng Rehabil 2:19 (2005).
- Stair riser heights are typically 0.15–0.19 m (building codes cap risers near 0.18 m).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from .._log import Activity

__all__ = [
    "Person", "MOVING_ACTIVITIES", "RAMP_ACTIVITIES", "RIDE_ACTIVITIES", "SIMULATED_ACTIVITIES", "random_schedule",
    "GaitTimeline",
]

#: Activities with steps of their own gait; STANDING is the only still activity of a random day.
MOVING_ACTIVITIES = (Activity.WALKING, Activity.WALKING_UPSTAIRS, Activity.WALKING_DOWNSTAIRS)
#: Walking up or down a ramp: level-walking steps (a ramp of at most 1:12 barely changes the gait)
#: while the altitude changes slowly (``_vertical``). Their steps keep the ramp's code as truth.
RAMP_ACTIVITIES = (Activity.RAMP_UP, Activity.RAMP_DOWN)
#: Riding a lift or an escalator: the person stands, takes no step, and is carried up or down.
RIDE_ACTIVITIES = (Activity.LIFT_UP, Activity.LIFT_DOWN, Activity.ESCALATOR_UP, Activity.ESCALATOR_DOWN)
SIMULATED_ACTIVITIES = MOVING_ACTIVITIES + (Activity.STANDING,) + RAMP_ACTIVITIES + RIDE_ACTIVITIES
#: The gait template each stepping activity walks with: its own, or level walking on a ramp.
_GAIT_OF = {**{a: a for a in MOVING_ACTIVITIES}, Activity.RAMP_UP: Activity.WALKING, Activity.RAMP_DOWN: Activity.WALKING}

# The still-standing body is not perfectly still: postural sway and breathing move a pocketed or
# hand-held phone by a few cm/s² at 0.1–1 Hz. Three incommensurate sinusoids per axis stand in for it.
_SWAY_AMPLITUDE = 0.03
_SWAY_BAND_HZ = (0.1, 1.0)


def require_fields(owner, names: Sequence[str], is_valid: Callable[[float], bool], requirement: str,
                   *, hint: str = "") -> None:
    """Raise ``ValueError`` naming the first field of ``owner`` in ``names`` whose value fails ``is_valid``.

    The frozen parameter classes of the simulator (``Person``, ``SensorModel``) validate their fields
    in ``__post_init__`` with this one helper, so every message has the same shape:
    ``"<Class>.<field> must be <requirement>, got <value><hint>"``. A value for which ``is_valid``
    is not true (including NaN, where every comparison is false) is rejected.

    Examples
    --------
    >>> require_fields(Person(), ("step_cv",), lambda v: v > 0.5, "> 0.5")
    Traceback (most recent call last):
    ...
    ValueError: Person.step_cv must be > 0.5, got 0.02
    """
    for name in names:
        value = getattr(owner, name)
        if not is_valid(value):
            raise ValueError(f"{type(owner).__name__}.{name} must be {requirement}, got {value!r}{hint}")


@dataclass(frozen=True)
class Person:
    """Gait parameters of one simulated person.

    Parameters
    ----------
    cadence_walk : float
        Level-walking cadence, steps/s (adults: about 1.6–2.1, Tudor-Locke et al. 2018).
    cadence_up, cadence_down : float
        Stair ascent and descent cadence, steps/s (about 1.3–1.8, Riener et al. 2002).
    step_length_m : float
        Level step length in metres; scales the forward (braking/propulsion) acceleration.
    stair_rise_m : float
        Riser height of the stairs walked, metres (typically 0.15–0.19).
    step_cv : float
        Coefficient of variation of step duration (healthy adults about 0.01–0.03, Hausdorff 2005).
        ``0`` gives a metronome: exactly ``floor(cadence * seconds)`` steps per bout.
    amplitude_cv : float
        Step-to-step log-normal spread of the acceleration amplitude.
    vertical_gain : float
        This person's overall acceleration scale (a heavy-footed walker has a larger one).

    Examples
    --------
    >>> import numpy as np
    >>> p = Person.draw(np.random.default_rng(0))
    >>> 1.6 <= p.cadence_walk <= 2.1 and p.cadence_up < p.cadence_walk
    True
    """

    cadence_walk: float = 1.85
    cadence_up: float = 1.50
    cadence_down: float = 1.60
    step_length_m: float = 0.70
    stair_rise_m: float = 0.17
    step_cv: float = 0.02
    amplitude_cv: float = 0.12
    vertical_gain: float = 1.0

    def __post_init__(self):
        require_fields(
            self, ("cadence_walk", "cadence_up", "cadence_down"), lambda v: 0.5 <= v <= 4.0,
            "a cadence in [0.5, 4] steps/s", hint="; adults walk at about 1.6–2.1 steps/s.",
        )
        require_fields(self, ("step_length_m", "stair_rise_m", "vertical_gain"), lambda v: v > 0, "> 0")
        require_fields(self, ("step_cv", "amplitude_cv"), lambda v: 0 <= v <= 0.3, "in [0, 0.3]")

    @classmethod
    def draw(cls, rng: np.random.Generator) -> "Person":
        """A random adult: cadences, step length and stair rise spread over their literature ranges."""
        cadence_walk = rng.uniform(1.6, 2.1)
        # Stair cadence is tied to the person's walking cadence (a brisk walker is also a brisk
        # climber), stays below it, and descent is slightly quicker than ascent (Riener 2002).
        cadence_up = float(np.clip(cadence_walk * rng.uniform(0.72, 0.88), 1.3, 1.8))
        cadence_down = float(np.clip(cadence_up * rng.uniform(1.0, 1.12), 1.3, 1.8))
        return cls(
            cadence_walk=float(cadence_walk),
            cadence_up=cadence_up,
            cadence_down=cadence_down,
            step_length_m=float(rng.uniform(0.60, 0.80)),
            stair_rise_m=float(np.clip(rng.normal(0.17, 0.01), 0.15, 0.19)),
            step_cv=float(rng.uniform(0.01, 0.03)),
            amplitude_cv=0.12,
            vertical_gain=float(np.exp(rng.normal(0.0, 0.2))),
        )

    def cadence(self, activity: int) -> float:
        """Steps per second for one of :data:`MOVING_ACTIVITIES`."""
        return {
            Activity.WALKING: self.cadence_walk,
            Activity.WALKING_UPSTAIRS: self.cadence_up,
            Activity.WALKING_DOWNSTAIRS: self.cadence_down,
        }[Activity(activity)]


# Step templates, one row per activity code, on the step phase φ ∈ [0, 1) from one foot strike to the
# next. Vertical: a wrapped Gaussian peak (upward acceleration while the leg takes the body's weight)
# then a wrapped Gaussian valley (downward acceleration while the body passes over the stance leg);
# the valley's depth is set so the step's mean acceleration is exactly zero, i.e. vertical velocity
# is periodic and the body neither sinks nor flies away over many steps. Forward: −F·sin 2πφ
# (braking after the strike, propulsion before the next). Lateral: sway with the stride (two steps).
#
# Why the three activities differ (McFadyen & Winter 1988, Riener et al. 2002):
# - level walking: inverted pendulum; moderately sharp peak soon after the strike, broad valley at
#   mid-stance; the largest forward oscillation (longest step).
# - upstairs: the body is lifted by the leading leg during single support, so the upward push is
#   later and broader, and the slow-down at the top is shorter and deeper than the push: the
#   peak/valley asymmetry flips. Short horizontal progress (tread ≈ 0.28 m) makes the forward
#   component small; slower cadence and a wider base give more lateral sway.
# - downstairs: the body drops one riser and is caught by the landing leg: a tall, narrow impact peak
#   right at the strike, then a long shallow valley while it is lowered to the next step.
# Stair amplitudes scale with stair_rise_m / 0.17 (a taller riser needs more lift / a harder catch).
_TEMPLATE_COLUMNS = (
    "peak_phase", "peak_width", "peak_amp", "valley_phase", "valley_width",
    "forward_amp", "lateral_amp",
)
_TEMPLATES = {
    Activity.WALKING: (0.12, 0.10, 3.0, 0.58, 0.15, 1.6, 0.5),
    Activity.WALKING_UPSTAIRS: (0.22, 0.13, 2.4, 0.68, 0.12, 0.6, 0.8),
    Activity.WALKING_DOWNSTAIRS: (0.06, 0.07, 4.6, 0.52, 0.16, 0.8, 0.7),
}
_TEMPLATE_TABLE = np.zeros((len(Activity), len(_TEMPLATE_COLUMNS)))
for _activity, _row in _TEMPLATES.items():
    _TEMPLATE_TABLE[_activity] = _row
_NOMINAL_RISE_M = 0.17
_NOMINAL_STEP_LENGTH_M = 0.70
_STAIR_GOING_M = 0.28  # tread depth of common stairs (codes ask for ≥ 0.25–0.28 m)
# No two steps look identical: the timing of the peak and valley moves by a few % of the step, and
# their widths (hence the peak/valley asymmetry) by a log-normal factor each. The width spread is what
# keeps the three activities' shapes overlapping, as real steps do (a single shape feature must not
# separate stairs from level walking).
_PHASE_JITTER = 0.02
_WIDTH_SPREAD = 0.18
_WIDTH_RANGE = (0.03, 0.2)  # the wrapped Gaussian is exact to 1e-12 only up to width 0.2


def _wrapped_gaussian(phase: np.ndarray, centre: np.ndarray, width: np.ndarray) -> np.ndarray:
    """exp(−d²/2w²) summed over the images d, d ± 1 of the phase distance (periodic on [0, 1)).

    Three images are enough for width ≤ 0.2: the next ones are ≥ 1.5 away (weight < 1e-12), so the
    integral over one period equals w·√(2π) to that precision, which the zero-mean valley relies on.
    """
    d = np.mod(phase - centre + 0.5, 1.0) - 0.5
    two_w2 = 2.0 * width**2
    return np.exp(-(d**2) / two_w2) + np.exp(-((d - 1.0) ** 2) / two_w2) + np.exp(-((d + 1.0) ** 2) / two_w2)


# Random schedule: a Markov chain over bouts. People rarely reverse on a flight of stairs, they walk
# after stairs, and they pause between walking bouts (rows: from, columns: to, in the order below).
_CHAIN_STATES = (Activity.WALKING, Activity.WALKING_UPSTAIRS, Activity.WALKING_DOWNSTAIRS, Activity.STANDING)
_CHAIN = np.array(
    [
        [0.00, 0.25, 0.25, 0.50],
        [0.60, 0.00, 0.10, 0.30],
        [0.60, 0.10, 0.00, 0.30],
        [0.60, 0.20, 0.20, 0.00],
    ]
)


def random_schedule(duration_s: float, person: Person, rng: np.random.Generator) -> list[tuple[int, float]]:
    """A plausible day-in-the-life sequence of ``(activity, seconds)`` bouts filling ``duration_s``.

    Standing pauses last 3 s plus an exponential of mean 15 s, walks 8 s plus an exponential of mean
    40 s; a stair bout is 1–3 flights of 8–16 steps at the person's stair cadence. The last bout is
    cut at ``duration_s``.
    """
    schedule: list[tuple[int, float]] = []
    state = 3  # start standing: a recording starts when the phone is picked up, not mid-stride
    total = 0.0
    while total < duration_s:
        activity = _CHAIN_STATES[state]
        if activity == Activity.STANDING:
            seconds = 3.0 + rng.exponential(15.0)
        elif activity == Activity.WALKING:
            seconds = 8.0 + rng.exponential(40.0)
        else:
            n_steps = int(rng.integers(8, 17, size=int(rng.integers(1, 4))).sum())
            # Half a step of slack so the last step of the flight fits despite step-time variability.
            seconds = (n_steps + 0.5) / person.cadence(activity)
        seconds = min(seconds, duration_s - total)
        schedule.append((int(activity), float(seconds)))
        total += seconds
        state = int(rng.choice(len(_CHAIN_STATES), p=_CHAIN[state]))
    return schedule


def check_schedule(schedule: Sequence[tuple[int, float]]) -> list[tuple[int, float]]:
    """Validate an explicit ``[(activity, seconds), ...]`` list; return it as plain ints and floats."""
    allowed = {int(a) for a in SIMULATED_ACTIVITIES}
    checked = []
    for i, item in enumerate(schedule):
        try:
            activity, seconds = item
        except (TypeError, ValueError):
            raise ValueError(f"schedule[{i}] must be an (activity, seconds) pair, got {item!r}") from None
        if int(activity) not in allowed:
            names = ", ".join(Activity(a).name for a in sorted(allowed))
            raise ValueError(
                f"schedule[{i}] has activity {activity!r}; the simulator produces only {names} "
                f"(codes {sorted(allowed)})."
            )
        if not (np.isfinite(seconds) and seconds > 0):
            raise ValueError(f"schedule[{i}] must last a finite number of seconds > 0, got {seconds!r}")
        checked.append((int(activity), float(seconds)))
    if not checked:
        raise ValueError("schedule is empty; give at least one (activity, seconds) bout or schedule=None")
    return checked


class GaitTimeline:
    """Bouts, foot strikes and heading of one simulated log, evaluable at any instants.

    Built once from the schedule (memory grows with the number of steps, ~2 per second, not with the
    sampling rate); :meth:`body_acceleration` and :meth:`gait_phase` are vectorised over times.

    Attributes
    ----------
    bout_start, bout_activity : ndarray, shape (b,)
        Start time (s) and activity code of each bout.
    step_start, step_period, step_kind : ndarray, shape (k,)
        Foot-strike time (s), duration until the next strike of the same bout (s), activity code
        (the bout's: a ramp's steps are RAMP_UP or RAMP_DOWN steps, never stair steps).
    step_gait : ndarray, shape (k,)
        The gait each step is walked with (WALKING for a ramp's steps, else ``step_kind``).
    duration_s : float
    """

    def __init__(self, schedule: Sequence[tuple[int, float]], person: Person, rng: np.random.Generator):
        seconds = np.array([s for _, s in schedule], dtype=float)
        self.bout_activity = np.array([a for a, _ in schedule], dtype=np.int8)
        self.bout_start = np.concatenate([[0.0], np.cumsum(seconds)[:-1]])
        self.duration_s = float(seconds.sum())
        self._build_steps(seconds, person, rng)
        self._build_heading(rng)
        # Postural sway: fixed random frequencies/phases per axis for this person.
        self._sway_freq = rng.uniform(*_SWAY_BAND_HZ, size=(3, 3))
        self._sway_phase = rng.uniform(0.0, 2.0 * np.pi, size=(3, 3))

    def _build_steps(self, seconds: np.ndarray, person: Person, rng: np.random.Generator) -> None:
        starts, periods, kinds = [], [], []
        for activity, t0, length in zip(self.bout_activity, self.bout_start, seconds):
            if activity not in _GAIT_OF:  # standing, or standing in a lift or on an escalator
                continue
            nominal = 1.0 / person.cadence(_GAIT_OF[activity])
            n_max = int(np.ceil(length / (nominal * 0.85))) + 1
            period = nominal * (1.0 + person.step_cv * np.clip(rng.standard_normal(n_max), -3.0, 3.0))
            ends = np.cumsum(period)
            # Only whole steps fit in a bout (the tolerance stops 30 s × 1.8 steps/s from losing its
            # 54th step to rounding); the remainder of the bout is spent coming to a halt.
            n = int(np.searchsorted(ends, length + 1e-9, side="right"))
            starts.append(t0 + ends[:n] - period[:n])
            periods.append(period[:n])
            kinds.append(np.full(n, activity, dtype=np.int8))
        self.step_start = np.concatenate([np.zeros(0), *starts])
        self.step_period = np.concatenate([np.zeros(0), *periods])
        self.step_kind = np.concatenate([np.zeros(0, np.int8), *kinds])
        gait_of = np.arange(len(Activity), dtype=np.int8)
        gait_of[list(_GAIT_OF)] = list(_GAIT_OF.values())
        self.step_gait = gait_of[self.step_kind]
        k = self.step_start.size
        cadence = np.ones(len(Activity))
        cadence[list(MOVING_ACTIVITIES)] = [person.cadence(a) for a in MOVING_ACTIVITIES]
        rise = np.where(self.step_gait == Activity.WALKING, 1.0, person.stair_rise_m / _NOMINAL_RISE_M)
        # The same excursion in less time needs (T_nominal / T)² more acceleration.
        self._step_gain = (
            person.vertical_gain
            * np.exp(person.amplitude_cv * rng.standard_normal(k))
            * (1.0 / (cadence[self.step_gait] * self.step_period)) ** 2
            * rise
        )
        # A longer level step means a larger forward speed swing; on stairs the tread fixes progress.
        self._forward_scale = np.where(
            self.step_gait == Activity.WALKING, person.step_length_m / _NOMINAL_STEP_LENGTH_M, 1.0
        )
        # Mean horizontal speed: one step length (level) or one tread (stairs) per step.
        progress = np.where(self.step_gait == Activity.WALKING, person.step_length_m, _STAIR_GOING_M)
        self._step_speed = progress / self.step_period
        self._step_shift = _PHASE_JITTER * np.clip(rng.standard_normal(k), -2.0, 2.0)
        self._step_width_factor = np.exp(_WIDTH_SPREAD * np.clip(rng.standard_normal((k, 2)), -2.5, 2.5))

    def _build_heading(self, rng: np.random.Generator) -> None:
        # The walking direction wanders as a random walk sampled every second and interpolated by a
        # cubic spline (a smooth, differentiable heading, so turn rates are finite). Walking turns
        # freely, stairwells and standing barely; each new bout starts with a turn (corridor
        # corners, turning onto a staircase).
        from scipy.interpolate import CubicSpline  # here, not at import: it costs ~0.4 s of every CLI start

        knots = np.arange(int(np.ceil(self.duration_s)) + 2, dtype=float)
        activity = self.activity_at(knots)
        sigma = np.where(activity == Activity.WALKING, 0.12, 0.03)
        increments = sigma * rng.standard_normal(knots.size)
        bout_knot = np.minimum(np.ceil(self.bout_start).astype(int), knots.size - 1)
        np.add.at(increments, bout_knot[1:], rng.normal(0.0, 0.8, size=bout_knot.size - 1))
        increments[0] = rng.uniform(-np.pi, np.pi)
        self._heading = CubicSpline(knots, np.cumsum(increments))

    def activity_at(self, t: np.ndarray) -> np.ndarray:
        """Activity code of the bout containing each time (times outside the log clamp to its ends)."""
        i = np.searchsorted(self.bout_start, t, side="right") - 1
        return self.bout_activity[np.clip(i, 0, self.bout_activity.size - 1)]

    def heading(self, t: np.ndarray) -> np.ndarray:
        """Walking direction ψ (rad), counter-clockwise from North: forward is (−sin ψ, cos ψ, 0) in ENU."""
        return self._heading(t)

    def heading_rate(self, t: np.ndarray) -> np.ndarray:
        """dψ/dt (rad/s), the body's turn rate about the vertical."""
        return self._heading(t, 1)

    def heading_acceleration(self, t: np.ndarray) -> np.ndarray:
        """d²ψ/dt² (rad/s²)."""
        return self._heading(t, 2)

    def gait_phase(self, t: np.ndarray):
        """For each time: the step index k, the phase φ ∈ [0, 1) within it, and whether a step is under way."""
        t = np.asarray(t, dtype=float)
        if self.step_start.size == 0:
            return np.zeros(t.shape, dtype=np.intp), np.zeros(t.shape), np.zeros(t.shape, dtype=bool)
        k = np.searchsorted(self.step_start, t, side="right") - 1
        kc = np.clip(k, 0, None)
        phase = (t - self.step_start[kc]) / self.step_period[kc]
        moving = (k >= 0) & (phase < 1.0)
        return kc, np.where(moving, phase, 0.0), moving

    def stride_wave(self, t: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """sin(π(k + φ)), the leg-swing oscillation (one period per stride), its first and second
        time derivatives, and the gait each time is walked with (0 when still).

        Being zero at each foot strike makes the swing continuous where walking starts and stops.
        Within a step the period is constant, so the second derivative is −(π/T)²·wave.
        """
        k, phase, moving = self.gait_phase(t)
        if self.step_kind.size == 0:
            zeros = np.zeros(phase.shape)
            return zeros, zeros, zeros, np.zeros(phase.shape, dtype=np.int8)
        angle = np.pi * (k + phase)
        frequency = np.pi / self.step_period[k]
        wave = np.where(moving, np.sin(angle), 0.0)
        rate = np.where(moving, frequency * np.cos(angle), 0.0)
        return wave, rate, -frequency**2 * wave, np.where(moving, self.step_gait[k], 0)

    def body_acceleration(self, t: np.ndarray, oscillation_gain: float = 1.0) -> np.ndarray:
        """Acceleration of the carried phone's body point in East-North-Up, m/s², shape (n, 3).

        The gait's oscillations and postural sway, scaled by ``oscillation_gain`` (where on the body
        the phone rides), plus the centripetal acceleration v·ψ̇ of turning while walking at the mean
        forward speed v (which the phone shares wherever it rides). Gravity is not included.
        The phone's own swing about a joint is the device's part
        (:meth:`~._device.DeviceTimeline.acceleration`).
        """
        t = np.asarray(t, dtype=float)
        sway = np.sin(2.0 * np.pi * self._sway_freq[None] * t[:, None, None] + self._sway_phase[None])
        acc = (oscillation_gain * _SWAY_AMPLITUDE / np.sqrt(3.0)) * sway.sum(axis=2)
        if self.step_kind.size == 0:
            return acc
        k, phase, moving = self.gait_phase(t)
        gain = oscillation_gain * np.where(moving, self._step_gain[k], 0.0)
        shift = self._step_shift[k]
        peak_phase, peak_width, peak_amp, valley_phase, valley_width, forward_amp, lateral_amp = (
            _TEMPLATE_TABLE[self.step_gait[k]].T
        )
        peak_width = np.clip(peak_width * self._step_width_factor[k, 0], *_WIDTH_RANGE)
        valley_width = np.clip(valley_width * self._step_width_factor[k, 1], *_WIDTH_RANGE)
        peak = _wrapped_gaussian(phase, peak_phase + shift, peak_width)
        valley = _wrapped_gaussian(phase, valley_phase + shift, valley_width)
        vertical = gain * peak_amp * (peak - (peak_width / valley_width) * valley)
        forward = -gain * self._forward_scale[k] * forward_amp * np.sin(2.0 * np.pi * phase)
        # Turning left (ψ̇ > 0) at speed v pulls the body left, i.e. along −right, by v·ψ̇.
        turning = np.where(moving, self._step_speed[k], 0.0) * self.heading_rate(t)
        lateral = -gain * lateral_amp * np.sin(np.pi * (k + phase)) - turning
        psi = self.heading(t)
        sin_psi, cos_psi = np.sin(psi), np.cos(psi)
        acc[:, 0] += -sin_psi * forward + cos_psi * lateral
        acc[:, 1] += cos_psi * forward + sin_psi * lateral
        acc[:, 2] += vertical
        return acc
