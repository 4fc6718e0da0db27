"""Simulated people with a phone barometer: accuracy data for the budget optimiser's barometer
candidates.

The optimiser's F1 comes from labelled recordings under one protocol (:class:`~._search.Protocol`);
the recordings it has by default (UCI HAPT) carry no air pressure, so a configuration that reads
the barometer cannot be scored on them. These people can: each walks through a building between
floors (stairs, lifts, escalators, ramps; :func:`~stairsense.stream.building_walk`), carrying a
phone in a placement the simulator draws, with a phone barometer of its own noise and resolution
(:meth:`~stairsense.stream.Barometer.draw`) read at :data:`~._workload.BAROMETER_HZ`, the rate the
energy model prices and the height filter assumes. A search on them scores every candidate, the
barometer's and its accelerometer-only twin's alike, on the same people under the same protocol:
F1 on simulated people, comparable within that search and not with F1 on real recordings.
"""
from __future__ import annotations

import hashlib
from dataclasses import replace

import numpy as np

from stairsense.stream import Barometer, Person, building_walk, simulate

from ._workload import BAROMETER_HZ

__all__ = ["simulated_people", "logs_fingerprint"]

def simulated_people(n_people: int = 24, seed: int = 0, rate_hz: float = 50.0) -> list:
    """Labelled building walks of ``n_people`` simulated people, each with a phone barometer.

    Parameters
    ----------
    n_people : int, default 24
        People, one walk each; at least 2 (leave-subjects-out needs two).
    seed : int, default 0
        Person ``i`` is drawn from ``numpy.random.default_rng([seed, i])``: the same seed gives
        the same people, and more people extend the list without changing the first ones.
    rate_hz : float, default 50
        The motion sensors' rate (UCI HAPT's); the optimiser resamples to each candidate's.

    Returns
    -------
    list of SensorLog
        With per-sample labels, ``pressure`` and ``meta["subject"]`` = ``i + 1`` (what
        ``--subjects`` and the folds of subjects group by).

    Examples
    --------
    >>> people = simulated_people(2, seed=3)
    >>> [log.meta["subject"] for log in people], all(log.pressure is not None for log in people)
    ([1, 2], True)
    """
    if isinstance(n_people, bool) or not isinstance(n_people, (int, np.integer)) or n_people < 2:
        raise ValueError(f"n_people must be a whole number >= 2 (leave-subjects-out needs two people), "
                         f"got {n_people!r}")
    people = []
    for i in range(int(n_people)):
        rng = np.random.default_rng([int(seed), i])
        schedule, person = building_walk(Person.draw(rng), rng)
        log = simulate(schedule=schedule, person=person, seed=int(rng.integers(2**31)), rate_hz=rate_hz,
                       barometer=Barometer.draw(rng, rate_hz=BAROMETER_HZ))
        people.append(replace(log, meta={**log.meta, "subject": i + 1}))
    return people


def logs_fingerprint(logs) -> str:
    """SHA-256 over every array and the subject of every log, in order: the optimiser's cache key
    for recordings that are not files (simulated people), so the cache follows the data."""
    digest = hashlib.sha256()
    for log in logs:
        digest.update(repr(log.meta.get("subject")).encode())
        for name in ("t_ns", "acc", "gyro", "rotvec", "linacc", "pressure", "label"):
            array = getattr(log, name)
            digest.update(name.encode())
            if array is not None:
                digest.update(np.ascontiguousarray(array).tobytes())
    return digest.hexdigest()
