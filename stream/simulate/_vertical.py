"""True altitude of a simulated person over time: stairs, ramps, lifts, escalators.

The altitude is a deterministic function of the gait timeline (no randomness of its own), built as
a sequence of non-overlapping *vertical segments*, each rising (or falling) by a known height:

- a stair step rises or falls by the person's riser height, at a constant speed from its foot strike
  to the next (the step's vertical acceleration template has zero mean, so the body's mean vertical
  speed over a flight is constant: riser / step period);
- a ramp step, the same with the rise of one level step length on the ramp's slope;
- a lift or escalator ride carries the standing person: cruise speed reached and left through
  smooth (smoothstep) speed ramps, so the ride's vertical acceleration, which the phone's
  accelerometer feels, is continuous and zero at both ends;
- level walking and standing keep the altitude.

References for the speeds below
-------------------------------
- Ramps: at most 1:12 (8.33 %) on an accessible route, 2010 ADA Standards for Accessible Design
  §405.2 (the same limit in the UK Approved Document M and EN 17210); ramps are built at the
  limit to keep them short, so that is the slope used.
- Escalators: nominal speed 0.5 m/s along an inclination of 30° (EN 115-1:2017 §5.2.2 allows up to
  0.75 m/s at ≤ 30°; 0.5 m/s is the common setting), i.e. 0.25 m/s vertical; on and off through
  the flat landing steps and the transition curve, about 2 s each way.
- Lifts: 1.0–2.5 m/s rated speed in offices and flats (high-rise lifts are faster), accelerating
  at about 0.8–1.2 m/s², the comfortable range of passenger lifts (ISO 18738-1:2012 measures it;
  CIBSE Guide D gives 1.0–1.5 m/s² as the usual design limit). Here 1.6 m/s and 1.0 m/s².
"""
from __future__ import annotations

import numpy as np

from .._log import Activity
from ._gait import GaitTimeline, Person

__all__ = ["VerticalTimeline", "RAMP_SLOPE", "ramp_step_rise_m", "ride_seconds", "ride_rise_m"]

#: Rise over run of a simulated ramp (ADA 2010 §405.2 maximum).
RAMP_SLOPE = 1.0 / 12.0

# Per ride: (vertical cruise speed m/s, duration of each smooth speed ramp s). A smoothstep speed
# ramp of length T to speed V peaks at 1.5·V/T m/s²: the lift's 1.6 m/s over 2.4 s is 1.0 m/s².
_RIDES = {
    Activity.LIFT_UP: (1.6, 2.4, +1.0),
    Activity.LIFT_DOWN: (1.6, 2.4, -1.0),
    Activity.ESCALATOR_UP: (0.5 * np.sin(np.radians(30.0)), 2.0, +1.0),
    Activity.ESCALATOR_DOWN: (0.5 * np.sin(np.radians(30.0)), 2.0, -1.0),
}


def ramp_step_rise_m(person: Person) -> float:
    """Height one level-gait step of ``person`` gains along a ramp: step length × sin(atan(slope))."""
    return person.step_length_m * RAMP_SLOPE / np.hypot(1.0, RAMP_SLOPE)


def _ride_shape(activity: int, seconds: float) -> tuple[float, float, float]:
    """Cruise speed (m/s, signed), speed-ramp length (s) and total rise (m, signed) of a ride of ``seconds``.

    A ride too short for two full speed ramps keeps the ramps' acceleration and reaches a lower top
    speed (ramps of half the ride each): a lift called for one floor never reaches cruise speed.
    """
    speed, ramp, sign = _RIDES[Activity(activity)]
    if 2.0 * ramp > seconds:
        speed, ramp = speed * (0.5 * seconds) / ramp, 0.5 * seconds
    # The two ramps cover ½·V·T each (a smoothstep's mean is ½), the cruise V·(D − 2T).
    return sign * speed, ramp, sign * speed * (seconds - ramp)


def ride_rise_m(activity: int, seconds: float) -> float:
    """Height (m, signed) a lift or escalator ride of ``seconds`` carries its passenger."""
    return _ride_shape(activity, seconds)[2]


def ride_seconds(activity: int, rise_m: float) -> float:
    """Duration of the ride of ``activity`` (a lift or escalator code) that covers ``|rise_m|`` metres.

    The inverse of :func:`ride_rise_m`: a full ride (both speed ramps) lasts ``h/V + T``; a short
    one, whose ramps meet at a lower top speed, ``2·√(h·T/V)`` (from ``h = ¼·(V/T)·D²``).

    Examples
    --------
    >>> d = ride_seconds(Activity.LIFT_UP, 9.0)
    >>> round(ride_rise_m(Activity.LIFT_UP, d), 9)
    9.0
    """
    speed, ramp, _ = _RIDES[Activity(activity)]
    height = abs(float(rise_m))
    if height >= speed * ramp:
        return height / speed + ramp
    return 2.0 * np.sqrt(height * ramp / speed)


def _smoothstep_integral(u: np.ndarray) -> np.ndarray:
    """∫₀ᵘ (3s² − 2s³) ds: the distance covered while the speed ramps up, in units of V·T."""
    return u**3 - 0.5 * u**4


class VerticalTimeline:
    """Altitude (m, relative to the start) and the vertical transport acceleration of one simulated log.

    Parameters
    ----------
    gait : GaitTimeline
    person : Person
        Its ``stair_rise_m`` is the riser of every stair step, its ``step_length_m`` sets a ramp step's rise.

    Attributes
    ----------
    start, duration, rise : ndarray, shape (m,)
        Each vertical segment (a stair or ramp step, a ride): start (s), length (s), height gained (m).
    has_rides : bool
        Whether any lift or escalator moves the person (only then is there a transport acceleration).
    """

    def __init__(self, gait: GaitTimeline, person: Person):
        step_rise = np.zeros(gait.step_kind.size)
        for kind, rise in (
            (Activity.WALKING_UPSTAIRS, person.stair_rise_m),
            (Activity.WALKING_DOWNSTAIRS, -person.stair_rise_m),
            (Activity.RAMP_UP, ramp_step_rise_m(person)),
            (Activity.RAMP_DOWN, -ramp_step_rise_m(person)),
        ):
            step_rise[gait.step_kind == kind] = rise
        climbing = step_rise != 0.0
        bout_end = np.append(gait.bout_start[1:], gait.duration_s)
        rides = [
            (start, end - start, *_ride_shape(a, end - start))
            for a, start, end in zip(gait.bout_activity, gait.bout_start, bout_end)
            if a in _RIDES
        ]
        ride = np.array(rides, dtype=float).reshape(-1, 5)  # start, duration, speed, ramp, rise
        start = np.concatenate([gait.step_start[climbing], ride[:, 0]])
        order = np.argsort(start, kind="stable")
        self.start = start[order]
        self.duration = np.concatenate([gait.step_period[climbing], ride[:, 1]])[order]
        self.rise = np.concatenate([step_rise[climbing], ride[:, 4]])[order]
        # A step is a segment at constant speed: no speed ramp (T = 0), speed rise / duration.
        self._ramp = np.concatenate([np.zeros(int(climbing.sum())), ride[:, 3]])[order]
        self._speed = np.concatenate([step_rise[climbing] / gait.step_period[climbing], ride[:, 2]])[order]
        # Altitude before each segment: the sum of the rises of the segments before it.
        self._base = np.concatenate([[0.0], np.cumsum(self.rise)[:-1]])
        self.has_rides = bool(len(rides))

    def _segment(self, t: np.ndarray):
        """Index of the latest segment started by each time (−1 if none, clipped to 0), and the
        time since its start clipped to its duration."""
        k = np.searchsorted(self.start, t, side="right") - 1
        kc = np.clip(k, 0, None)
        tau = np.where(k >= 0, np.clip(t - self.start[kc], 0.0, self.duration[kc]), 0.0)
        return k, kc, tau

    def altitude(self, t: np.ndarray) -> np.ndarray:
        """Height above the log's starting level, m, at each time (a pure function of the time, so any
        chunking of the log gives the same values)."""
        t = np.asarray(t, dtype=float)
        if self.start.size == 0:
            return np.zeros(t.shape)
        k, kc, tau = self._segment(t)
        speed, ramp, duration = self._speed[kc], self._ramp[kc], self.duration[kc]
        safe_ramp = np.where(ramp > 0.0, ramp, 1.0)
        # Up to the end of the first speed ramp, cruise, then the mirror image of the first ramp.
        cruise = speed * (0.5 * ramp + (tau - ramp))
        rising = speed * ramp * _smoothstep_integral(tau / safe_ramp)
        landing = self.rise[kc] - speed * ramp * _smoothstep_integral((duration - tau) / safe_ramp)
        within = np.where(tau < ramp, rising, np.where(tau > duration - ramp, landing, cruise))
        return np.where(k >= 0, self._base[kc] + within, 0.0)

    def acceleration(self, t: np.ndarray) -> np.ndarray:
        """Vertical acceleration of the lift or escalator carrying the person, m/s² (zero elsewhere:
        stair and ramp steps move at constant mean speed, their oscillation is the gait's)."""
        t = np.asarray(t, dtype=float)
        if not self.has_rides:
            return np.zeros(t.shape)
        k, kc, tau = self._segment(t)
        speed, ramp, duration = self._speed[kc], self._ramp[kc], self.duration[kc]
        safe_ramp = np.where(ramp > 0.0, ramp, 1.0)
        u_on, u_off = tau / safe_ramp, (duration - tau) / safe_ramp
        # d/dt of V·smoothstep(τ/T) is (V/T)·6u(1 − u); leaving the ride it is the negative.
        on = (speed / safe_ramp) * 6.0 * u_on * (1.0 - u_on)
        off = -(speed / safe_ramp) * 6.0 * u_off * (1.0 - u_off)
        acc = np.where(tau < ramp, on, np.where(tau > duration - ramp, off, 0.0))
        return np.where((k >= 0) & (ramp > 0.0), acc, 0.0)
