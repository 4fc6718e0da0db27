"""Synthetic sensor logs with exact step truth (spec donini-easymkl-komd-climbtheworld-admm §3.1, §3.5).

A person's gait (``_gait``: walking, stairs up and down, standing, with per-step timing) drives a
phone sensor model (``_device``: placement, orientation drift, noise, bias, rate jitter; ``_barometer``:
air pressure from the true altitude of ``_vertical``, on request) to produce
a :class:`~stairsense.stream.SensorLog` whose steps are known, for tests and demos where recorded
data has no per-step labels; ``_building`` writes walks between floors (stairs, lifts, escalators,
ramps). Any chunking of ``simulate_chunks`` gives the same samples.

Note: ``stairsense.stream.simulate`` is the function; import this sub-package's names from
``stairsense.stream`` (``from stairsense.stream import simulate, Person``).
"""
from ..lazy import lazy_exports as _lazy_exports

__getattr__, __dir__ = _lazy_exports(__name__, {
    "._simulate": ("simulate", "simulate_chunks"),
    "._gait": ("Person",),
    "._device": ("PLACEMENTS", "SensorModel"),
    "._barometer": ("Barometer",),
    "._building": ("building_walk",),
})

__all__ = ["simulate", "simulate_chunks", "Person", "PLACEMENTS", "SensorModel", "Barometer", "building_walk"]
