"""Device profiles: battery, CPU, sensor currents and batching of one phone, read from a JSON file.

Every number in a profile is ``{"value": ..., "source": "..."}``: where it comes from (an AOSP
``power_profile.xml``, a HAL's ``Sensor.getPower()`` figure, a datasheet table, a published
measurement) or ``"estimate: <reasoning>"``. A hardware sensor the phone does not have is
``{"absent": "<where that is known from>"}``: a configuration that needs it is refused, never
priced at zero. The shipped profiles live in ``profiles/*.json``
beside this module; a user passes their own file with the same keys. Validation is strict and
each error is one line naming the file and the key (DESIGN.md, "errors say what was wrong, where,
and what to do").
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["DeviceProfile", "SensorCurrent", "load_profile", "profile_names", "HARDWARE_SENSORS"]

HARDWARE_SENSORS = ("accelerometer", "gyroscope", "magnetometer", "step_detector", "barometer")
VIRTUAL_SENSORS = ("rotation_vector", "linear_acceleration")

# The schema: section -> key -> kind. "number" and "flag" are {"value", "source"} leaves.
_SCHEMA = {
    "battery": {"capacity_mah": "positive", "voltage_v": "positive"},
    "cpu": {"suspend_ma": "number", "awake_ma": "number", "active_ma": "positive", "wakeup_ms": "number",
            "needs_wake_lock": "flag", "speed_ratio": "positive", "event_us": "number"},
    "batching": {"fifo_samples": "count"},
    "hub": {"fusion_on_hub": "flag", "current_ma": "number"},
}
_TOP = {"name", "description", "battery", "cpu", "sensors", "virtual_sensors", "batching", "hub",
        "reference_measurements"}


@dataclass(frozen=True)
class SensorCurrent:
    """Current of one hardware sensor: a constant (``Sensor.getPower()``) or a table over the rate."""

    points: tuple[tuple[float, float], ...]  # (rate_hz, mA), sorted by rate; one point = constant
    source: str

    def at(self, rate_hz: float) -> float:
        """Current in mA at ``rate_hz`` (linear interpolation, constant beyond the table's ends)."""
        rates, currents = zip(*self.points)
        return float(np.interp(rate_hz, rates, currents))


@dataclass(frozen=True)
class DeviceProfile:
    """One phone's energy figures (see the module docstring for the file format).

    Attributes
    ----------
    name, description, path : str
    values : dict
        ``"section.key"`` → number or bool (battery, cpu, batching, hub).
    sources : dict
        ``"section.key"`` → its source string.
    sensors : dict of str → SensorCurrent
        The hardware sensors the phone has.
    virtual : dict
        Virtual sensor name → ``{"requires": [...], "fusion_us": float}``.
    reference_measurements : list of dict
        Published measurements a test reproduces (free-form, each with a ``source``).
    absent : dict of str → str
        Hardware sensors the phone does not have → where that is known from.
    """

    name: str
    description: str
    path: str
    values: dict[str, Any]
    sources: dict[str, str]
    sensors: dict[str, SensorCurrent]
    virtual: dict[str, dict]
    reference_measurements: list = field(default_factory=list)
    absent: dict[str, str] = field(default_factory=dict)

    def __getitem__(self, key: str):
        return self.values[key]

    def with_value(self, key: str, value, source: str) -> "DeviceProfile":
        """A copy with ``key`` (``"section.key"``) replaced, e.g. a measured ``cpu.speed_ratio``."""
        if key not in self.values:
            raise ValueError(f"{self.path}: no value {key!r} to replace; known: {sorted(self.values)}")
        if isinstance(value, (int, float)) and not isinstance(value, bool) and not value > 0:
            raise ValueError(f"{key} must be > 0, got {value!r}")
        return replace(self, values={**self.values, key: value}, sources={**self.sources, key: source})

    def hardware_for(self, streams) -> set[str]:
        """Hardware sensors that must run to deliver ``streams`` (hardware or virtual names).

        Raises
        ------
        ValueError
            One line naming the profile when a stream needs a sensor the phone does not have
            (``absent`` in the profile) or one the profile does not describe.
        """
        needed = set()
        for stream in streams:
            if stream in self.virtual:
                needed.update(self.virtual[stream]["requires"])
            elif stream in self.sensors or stream in self.absent:
                needed.add(stream)
            else:
                raise ValueError(f"{self.path}: profile '{self.name}' has no sensor '{stream}' (needed by this "
                                 f"configuration); add it under 'sensors' or 'virtual_sensors'")
        missing = sorted(needed & set(self.absent))
        if missing:
            raise ValueError(f"{self.path}: profile '{self.name}' has no {missing[0]} (see "
                             f"'sensors.{missing[0]}.absent'), and this configuration turns one on; price it on a "
                             f"phone with a {missing[0]}, or without the {missing[0]}")
        return needed


def _leaf(path, where: str, node, kind: str):
    if not isinstance(node, dict) or set(node) != {"value", "source"}:
        keys = sorted(node) if isinstance(node, dict) else type(node).__name__
        raise ValueError(f"{path}: '{where}' must be an object with exactly 'value' and 'source', got {keys}")
    value, source = node["value"], node["source"]
    if not isinstance(source, str) or not source.strip():
        raise ValueError(f"{path}: '{where}.source' must say where the number comes from (or 'estimate: why')")
    if kind == "flag":
        if not isinstance(value, bool):
            raise ValueError(f"{path}: '{where}.value' must be true or false, got {value!r}")
        return value, source
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not np.isfinite(value):
        raise ValueError(f"{path}: '{where}.value' must be a number, got {value!r}")
    if value < 0 or (kind in ("positive", "count") and value == 0):
        bound = "> 0" if kind in ("positive", "count") else ">= 0"
        raise ValueError(f"{path}: '{where}.value' must be {bound} (a current, time or capacity), got {value!r}")
    if kind == "count" and value != int(value):
        raise ValueError(f"{path}: '{where}.value' must be a whole number, got {value!r}")
    return value, source


def _sensor_current(path, where: str, node) -> SensorCurrent | str:
    """A present sensor's :class:`SensorCurrent`, or for ``{"absent": why}`` the reason (a str)."""
    if isinstance(node, dict) and set(node) == {"absent"}:
        if not isinstance(node["absent"], str) or not node["absent"].strip():
            raise ValueError(f"{path}: '{where}.absent' must say where it is known that the phone has none")
        return node["absent"]
    if not isinstance(node, dict) or set(node) != {"current_ma"}:
        keys = sorted(node) if isinstance(node, dict) else type(node).__name__
        raise ValueError(f"{path}: '{where}' must hold exactly 'current_ma' (or 'absent' for a sensor the phone does "
                         f"not have), got {keys}")
    spec = node["current_ma"]
    if isinstance(spec, dict) and isinstance(spec.get("value"), list):
        if set(spec) != {"value", "source"} or not isinstance(spec["source"], str) or not spec["source"].strip():
            raise ValueError(f"{path}: '{where}.current_ma' must be an object with 'value' and a non-empty 'source'")
        points = []
        for i, pair in enumerate(spec["value"]):
            if (not isinstance(pair, list) or len(pair) != 2
                    or not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in pair)):
                raise ValueError(f"{path}: '{where}.current_ma.value[{i}]' must be [rate_hz, mA], got {pair!r}")
            if pair[0] <= 0 or pair[1] < 0:
                raise ValueError(f"{path}: '{where}.current_ma.value[{i}]' needs rate > 0 and current >= 0, got {pair!r}")
            points.append((float(pair[0]), float(pair[1])))
        if not points or len({p[0] for p in points}) != len(points):
            raise ValueError(f"{path}: '{where}.current_ma.value' needs at least one point and distinct rates")
        return SensorCurrent(tuple(sorted(points)), spec["source"])
    value, source = _leaf(path, f"{where}.current_ma", spec, "number")
    return SensorCurrent(((1.0, float(value)),), source)


def _check_keys(path, where: str, node, allowed, required=(), missing_hint: str = ""):
    if not isinstance(node, dict):
        raise ValueError(f"{path}: '{where}' must be an object, got {type(node).__name__}")
    unknown = sorted(set(node) - set(allowed))
    if unknown:
        raise ValueError(f"{path}: unknown key '{where + '.' if where else ''}{unknown[0]}'; allowed here: "
                         f"{sorted(allowed)}")
    missing = [k for k in required if k not in node]
    if missing:
        raise ValueError(f"{path}: missing key '{where + '.' if where else ''}{missing[0]}'{missing_hint}")


def parse_profile(data: Any, path: str) -> DeviceProfile:
    """Validate a decoded profile and build a :class:`DeviceProfile`; ``ValueError`` names the key."""
    _check_keys(path, "", data, _TOP, required=_TOP - {"reference_measurements"})
    if not isinstance(data["name"], str) or not data["name"]:
        raise ValueError(f"{path}: 'name' must be a non-empty string")
    values, sources = {}, {}
    for section, keys in _SCHEMA.items():
        _check_keys(path, section, data[section], keys, required=keys)
        for key, kind in keys.items():
            values[f"{section}.{key}"], sources[f"{section}.{key}"] = _leaf(path, f"{section}.{key}",
                                                                            data[section][key], kind)
    _check_keys(path, "sensors", data["sensors"], HARDWARE_SENSORS, required=HARDWARE_SENSORS,
                missing_hint='; a sensor the phone does not have is {"absent": "<where that is known from>"}')
    parsed = {name: _sensor_current(path, f"sensors.{name}", data["sensors"][name]) for name in HARDWARE_SENSORS}
    sensors = {name: s for name, s in parsed.items() if isinstance(s, SensorCurrent)}
    absent = {name: s for name, s in parsed.items() if isinstance(s, str)}
    _check_keys(path, "virtual_sensors", data["virtual_sensors"], VIRTUAL_SENSORS)
    virtual = {}
    for name, node in data["virtual_sensors"].items():
        where = f"virtual_sensors.{name}"
        _check_keys(path, where, node, ("requires", "requires_source", "fusion_us"),
                    required=("requires", "requires_source", "fusion_us"))
        requires = node["requires"]
        if not isinstance(requires, list) or not requires or any(r not in HARDWARE_SENSORS for r in requires):
            raise ValueError(f"{path}: '{where}.requires' must list hardware sensors from {list(HARDWARE_SENSORS)}, "
                             f"got {requires!r}")
        fusion_us, source = _leaf(path, f"{where}.fusion_us", node["fusion_us"], "number")
        virtual[name] = {"requires": list(requires), "fusion_us": float(fusion_us)}
        sources[f"{where}.fusion_us"] = source
        sources[f"{where}.requires"] = str(node["requires_source"])
    references = data.get("reference_measurements", [])
    if not isinstance(references, list) or any(not isinstance(r, dict) or "source" not in r for r in references):
        raise ValueError(f"{path}: 'reference_measurements' must be a list of objects, each with a 'source'")
    return DeviceProfile(data["name"], str(data.get("description", "")), path, values, sources, sensors, virtual,
                         references, absent)


def _shipped():
    return resources.files("stairsense.export.energy").joinpath("profiles")


def profile_names() -> list[str]:
    """Names of the profiles shipped in the package (``stairsense energy profiles``)."""
    return sorted(p.name[:-5] for p in _shipped().iterdir() if p.name.endswith(".json"))


def load_profile(name_or_path) -> DeviceProfile:
    """A shipped profile by name (``"nexus-2012"``) or a user's JSON file by path, validated.

    Raises
    ------
    ValueError
        One line naming the file and the offending key (unknown key, missing field, negative
        current, a number without a source), or the unknown profile name and the known ones.

    Examples
    --------
    >>> nexus = load_profile("nexus-2012")
    >>> nexus["battery.capacity_mah"], nexus.sensors["gyroscope"].at(30)
    (1750, 6.1)
    >>> sorted(nexus.hardware_for(["accelerometer", "rotation_vector"]))
    ['accelerometer', 'gyroscope', 'magnetometer']
    """
    text = str(name_or_path)
    if text in profile_names():
        source = _shipped().joinpath(f"{text}.json")
        path, raw = f"{text} (shipped profile)", source.read_text()
    else:
        file = Path(text)
        if not file.is_file():
            raise ValueError(f"{text}: no such profile; shipped profiles are {profile_names()}, or pass a JSON file")
        path, raw = str(file), file.read_text()
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}: not valid JSON (line {exc.lineno}: {exc.msg})") from exc
    return parse_profile(data, path)
