"""Synthetic sensor logs with exact step truth (spec donini-easymkl-komd-climbtheworld-admm §3.1, §3.5).

A person's gait (``_gait``: walking, stairs up and down, standing, with per-step timing) drives a
phone sensor model (``_device``: placement, orientation drift, noise, bias, rate jitter) to produce
a :class:`~stairsense.stream.SensorLog` whose steps are known, for tests and demos where recorded
data has no per-step labels. Any chunking of ``simulate_chunks`` gives the same samples.

Note: ``stairsense.stream.simulate`` is the function; import this sub-package's names from
``stairsense.stream`` (``from stairsense.stream import simulate, Person``).
"""
from ..lazy import lazy_exports as _lazy_exports

__getattr__, __dir__ = _lazy_exports(__name__, {
    "._simulate": ("simulate", "simulate_chunks"),
    "._gait": ("Person",),
    "._device": ("SensorModel",),
})

__all__ = ["simulate", "simulate_chunks", "Person", "SensorModel"]
