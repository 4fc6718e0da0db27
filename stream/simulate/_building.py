"""Walks through a building between floors: the schedules of the multi-floor scenarios.

"Walks with stairs between floors, ramps, lifts and escalators (vertical motion without stair
steps)": a walk is a sequence of *legs*, each a corridor walk followed by a change of floor by one
means. It only writes a schedule (``[(activity, seconds), ...]``) for :func:`simulate`; the altitude
the schedule produces is ``_vertical``'s, recorded in the log's meta when it has a barometer.

Building facts: 3 m from floor to floor (the floor Apple's ``CMPedometer`` counts, and a common
storey height of offices and flats); a storey of stairs is ``round(3 m / riser)`` risers, 17–18 for
the 0.17 m riser of common stairs, in two flights with a half landing between them (a few level
steps and a turn).
"""
from __future__ import annotations

from dataclasses import replace
from typing import Sequence

import numpy as np

from .._log import Activity
from ._gait import Person
from ._vertical import ramp_step_rise_m, ride_seconds

__all__ = ["FLOOR_HEIGHT_M", "LEG_MODES", "building_walk"]

FLOOR_HEIGHT_M = 3.0
#: How a leg changes floor: up and down activity codes of each means.
LEG_MODES = {
    "stairs": (Activity.WALKING_UPSTAIRS, Activity.WALKING_DOWNSTAIRS),
    "lift": (Activity.LIFT_UP, Activity.LIFT_DOWN),
    "escalator": (Activity.ESCALATOR_UP, Activity.ESCALATOR_DOWN),
    "ramp": (Activity.RAMP_UP, Activity.RAMP_DOWN),
}


def _random_legs(rng: np.random.Generator, n_legs: int) -> list[tuple[str, float]]:
    """``n_legs`` legs of random means; 1–3 floors by stairs, lift or escalator, half a floor by ramp
    (ramps join split levels; a whole storey at 1:12 is a 36 m ramp)."""
    legs = []
    for mode in rng.choice(sorted(LEG_MODES), size=n_legs):
        floors = 0.5 if mode == "ramp" else float(rng.integers(1, 4))
        legs.append((str(mode), floors * float(rng.choice([-1.0, 1.0]))))
    return legs


def building_walk(
    person: Person,
    rng: np.random.Generator,
    legs: Sequence[tuple[str, float]] | None = None,
    *,
    n_legs: int = 4,
    floor_height_m: float = FLOOR_HEIGHT_M,
    pause: float = 0.5,
) -> tuple[list[tuple[int, float]], Person]:
    """A walk between floors of a building: the schedule, and the person with this building's riser.

    Parameters
    ----------
    person : Person
        Who walks; their cadences set the stair and ramp bouts' lengths.
    rng : numpy.random.Generator
        Draws the corridor and waiting times (and the legs when ``legs`` is None).
    legs : sequence of (mode, floors), optional
        ``mode`` one of ``"stairs"``, ``"lift"``, ``"escalator"``, ``"ramp"``; ``floors`` signed (+2:
        two floors up), whole for stairs, lifts and escalators. Drawn at random when omitted.
    n_legs : int, default 4
        Number of random legs when ``legs`` is omitted.
    floor_height_m : float, default 3
        Storey height.
    pause : float, default 0.5
        Probability that a storey of stairs starts from standing (2–10 s at the stairwell's door,
        or waiting for someone), so its first stair step starts a run of steps: a stair model
        must find a flight without level steps before it, whose height context is empty.

    Returns
    -------
    schedule : list of (activity, seconds)
        Standing, then per leg: a 5–30 s corridor walk and the change of floor (stairs: per floor
        perhaps a pause, then two flights with a 2–4 s half-landing walk between; a lift: 5–20 s waiting and the ride; an
        escalator: one ride per floor with a 4–10 s walk round to the next; a ramp: its steps),
        then standing.
    person : Person
        ``person`` with ``stair_rise_m`` set to this building's riser, ``floor_height_m / n``
        (``n = round(floor_height_m / person.stair_rise_m)``), so a storey of stairs rises exactly
        one floor.

    Notes
    -----
    A stair or ramp bout lasts its steps plus half a step (as :func:`random_schedule`'s flights), so
    with the usual 1–3 % step-time variability all planned steps fit; the altitude truth of the log
    counts the steps actually taken (``meta["bout_end_altitude_m"]`` with a barometer).

    Examples
    --------
    >>> import numpy as np
    >>> from stairsense.stream import Activity
    >>> schedule, person = building_walk(Person(), np.random.default_rng(0), [("stairs", 1), ("lift", -1)])
    >>> round(person.stair_rise_m * 18, 6), [Activity(a).name for a, _ in schedule if a != Activity.WALKING]
    (3.0, ['STANDING', 'STANDING', 'WALKING_UPSTAIRS', 'WALKING_UPSTAIRS', 'STANDING', 'LIFT_DOWN', 'STANDING', 'STANDING'])
    """
    if not (np.isfinite(floor_height_m) and floor_height_m > 0):
        raise ValueError(f"floor_height_m must be a finite number > 0, got {floor_height_m!r}")
    if not 0.0 <= pause <= 1.0:
        raise ValueError(f"pause must be a probability in [0, 1], got {pause!r}")
    legs = _random_legs(rng, n_legs) if legs is None else list(legs)
    risers = max(2, int(round(floor_height_m / person.stair_rise_m)))
    person = replace(person, stair_rise_m=floor_height_m / risers)
    schedule: list[tuple[int, float]] = [(Activity.STANDING, float(rng.uniform(3.0, 8.0)))]
    for i, (mode, floors) in enumerate(legs):
        if mode not in LEG_MODES:
            raise ValueError(f"legs[{i}] has mode {mode!r}; use one of {sorted(LEG_MODES)}")
        if not (np.isfinite(floors) and floors != 0) or (mode != "ramp" and float(floors) != int(floors)):
            raise ValueError(f"legs[{i}] must move a non-zero number of floors (whole for {mode}), got {floors!r}")
        up, down = LEG_MODES[mode]
        activity = up if floors > 0 else down
        n_floors = abs(float(floors))
        schedule.append((Activity.WALKING, float(rng.uniform(5.0, 30.0))))
        if mode == "stairs":
            cadence = person.cadence(activity)
            first = risers // 2
            for _ in range(int(n_floors)):
                if rng.random() < pause:
                    schedule.append((Activity.STANDING, float(rng.uniform(2.0, 10.0))))
                schedule.append((activity, (first + 0.5) / cadence))
                schedule.append((Activity.WALKING, float(rng.uniform(2.0, 4.0))))  # the half landing
                schedule.append((activity, (risers - first + 0.5) / cadence))
        elif mode == "lift":
            schedule.append((Activity.STANDING, float(rng.uniform(5.0, 20.0))))  # call and board
            schedule.append((activity, ride_seconds(activity, n_floors * floor_height_m)))
            schedule.append((Activity.STANDING, float(rng.uniform(2.0, 4.0))))  # doors open
        elif mode == "escalator":
            for k in range(int(n_floors)):
                if k:
                    schedule.append((Activity.WALKING, float(rng.uniform(4.0, 10.0))))  # round to the next one
                schedule.append((activity, ride_seconds(activity, floor_height_m)))
        else:
            steps = int(round(n_floors * floor_height_m / ramp_step_rise_m(person)))
            schedule.append((activity, (steps + 0.5) / person.cadence_walk))
    schedule.append((Activity.WALKING, float(rng.uniform(5.0, 15.0))))
    schedule.append((Activity.STANDING, float(rng.uniform(3.0, 8.0))))
    return [(int(a), float(s)) for a, s in schedule], person
