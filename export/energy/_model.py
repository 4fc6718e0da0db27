"""The energy model: a device profile × a measured workload × a day → charge per pipeline stage.

Seed 003 §12.7.2 measured the whole pipeline on a Galaxy Nexus with a Monsoon power monitor and
reports relative figures only (spec §3.8). This model prices what the pipeline really does, stage
by stage, so the relative figures can be checked rather than calibrated:

* **sensors** — every hardware sensor the configuration's orientation method needs (a virtual
  rotation vector or linear acceleration powers accelerometer, gyroscope and magnetometer), at its
  current for the sampling rate, plus the sensor hub when it fuses. A sensor the profile says the
  phone lacks is refused, not priced;
* **barometer** — a sensor at its own rate (:meth:`Workload.side_streams`): the barometer a
  configuration with ``barometer=True`` reads, or one turned on beside any configuration, at its
  current for that rate, plus the delivery of its events to the app. Its events ride in the
  accelerometer's FIFO drains (the report latency sets them), so it adds no wake-ups;
* **wakeups** — the application processor kept awake: a partial wake lock for the whole time on a
  phone without a hub, else one resume + suspend per FIFO drain (``rate / fifo_samples`` per s);
* **events** — delivering each sample of the orientation method's streams to the app, and fusion
  on the application processor when there is no hub;
* **smoothing**, **gravity_rotation**, **segmentation**, **height_filter** — measured desktop ns
  per sample of the actual code × ``cpu.speed_ratio`` (the height filter only with
  ``barometer=True``: it runs on every sample);
* **step_context**, **height_features** — per kept window, the step-shape and step-context
  features and (``barometer=True``) the 7 height features the host computes outside the ONNX
  graph: measured desktop µs per window × ``cpu.speed_ratio``;
* **features**, **inference** — per classified window (the duration filter's rejects cost
  nothing beyond segmentation): ONNX Runtime latency of the exported graph's features part and
  of the rest (scaling + RBF decision) × ``cpu.speed_ratio``.

CPU charge = active time × ``cpu.active_ma`` + awake/wake-up charge. The phone's own suspend
current is not the pipeline's and is reported apart (``baseline_mah``).
"""
from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ._profile import DeviceProfile
    from ._workload import Workload

__all__ = ["STAGES", "EnergyReport", "estimate", "parse_day", "DEFAULT_DAY", "ACTIVITY_CLASSES", "streams_for",
           "OPTIONAL_STREAMS"]

#: Sensors that run at their own rate beside the orientation method's streams
#: (:meth:`Workload.side_streams`), each priced as a stage of its own: the barometer samples at
#: 1-25 Hz whatever the accelerometer's rate.
OPTIONAL_STREAMS = ("barometer",)
STAGES = ("sensors", *OPTIONAL_STREAMS, "wakeups", "events", "smoothing", "gravity_rotation", "segmentation",
          "height_filter", "step_context", "height_features", "features", "inference")
DEFAULT_DAY = "16h idle, 6h walking, 10m stairs"
#: The parts of a day the model prices: the phone idle, walking on the level, on stairs.
ACTIVITY_CLASSES = ("idle", "walking", "stairs")


def streams_for(orientation: str) -> tuple[str, ...]:
    """Sensor streams the app registers for an orientation method (seed 003 §12.4, spec §3.4).

    Mizell and the vertical projection read the accelerometer only; the thesis's method the
    accelerometer and the rotation vector; the "Linear" baseline the linear-acceleration sensor
    and the rotation vector; AHRS the accelerometer and the gyroscope.
    """
    table = {"mizell": ("accelerometer",), "vertical": ("accelerometer",),
             "rotvec": ("accelerometer", "rotation_vector"), "linear": ("linear_acceleration", "rotation_vector"),
             "ahrs": ("accelerometer", "gyroscope")}
    if orientation not in table:
        raise ValueError(f"orientation {orientation!r} has no sensor set; resolve 'auto' to one of {sorted(table)}")
    return table[orientation]


_UNITS = {"h": 3600.0, "hour": 3600.0, "hours": 3600.0, "m": 60.0, "min": 60.0, "mins": 60.0, "minutes": 60.0,
          "s": 1.0, "sec": 1.0, "seconds": 1.0}


def parse_day(text: str) -> dict[str, float]:
    """``"16h idle, 6h walking, 10m stairs"`` → seconds per activity class.

    Raises
    ------
    ValueError
        One line naming the part that is not ``<number><unit> <activity>`` with unit h/m/s and
        activity idle/walking/stairs, or a total above 24 h.

    Examples
    --------
    >>> parse_day("16h idle, 6h walking, 10m stairs")
    {'idle': 57600.0, 'walking': 21600.0, 'stairs': 600.0}
    """
    day: dict[str, float] = {}
    for part in filter(None, (p.strip() for p in str(text).split(","))):
        match = re.fullmatch(r"(\d+(?:\.\d+)?)\s*([a-z]+)\s+([a-z]+)", part.lower())
        if not match or match.group(2) not in _UNITS or match.group(3) not in ACTIVITY_CLASSES:
            raise ValueError(f"--day part {part!r} is not '<number><h|m|s> <{'|'.join(ACTIVITY_CLASSES)}>' "
                             f"(example: {DEFAULT_DAY!r})")
        day[match.group(3)] = day.get(match.group(3), 0.0) + float(match.group(1)) * _UNITS[match.group(2)]
    if not day:
        raise ValueError(f"--day is empty; example: {DEFAULT_DAY!r}")
    if sum(day.values()) > 86400 + 1e-6:
        raise ValueError(f"--day {text!r} adds up to {sum(day.values()) / 3600:.2f} h, more than a day")
    return day


@dataclass
class EnergyReport:
    """Charge of the pipeline over one day, by stage; ``to_dict`` is the ``--json`` output.
    ``side_streams`` are the sensors priced at their own rates, name → Hz
    (:meth:`Workload.side_streams`)."""

    profile: str
    config: dict
    day_s: dict
    stage_mah: dict
    total_mah: float
    mah_per_hour: float
    percent_per_day: float
    baseline_mah: float
    battery_mah: float
    notes: list = field(default_factory=list)
    workload: dict = field(default_factory=dict)
    side_streams: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        return asdict(self)

    def percent(self, stage: str) -> float:
        """Share of the pipeline's charge spent in ``stage``, in %."""
        return 100.0 * self.stage_mah[stage] / self.total_mah if self.total_mah else 0.0


def _sensor_current(profile: DeviceProfile, streams, rate_hz: float) -> float:
    """mA of the hardware behind ``streams`` at ``rate_hz``, with the hub when it fuses one of them."""
    current = sum(profile.sensors[s].at(rate_hz) for s in sorted(profile.hardware_for(streams)))
    if profile["hub.fusion_on_hub"] and any(s in profile.virtual for s in streams):
        current += profile["hub.current_ma"]
    return current


def _measured(value, what: str, workload: Workload):
    """A per-sample or per-window cost the workload must carry; None (a record from before that
    work was priced) is refused rather than counted as free."""
    if value is None:
        raise ValueError(f"the workload ({workload.source or 'unnamed'}) has no {what}, measured before that work "
                         "was priced; measure it again (measure_stage_costs)")
    return value


def estimate(profile: DeviceProfile, workload: Workload, day: dict[str, float] | None = None) -> EnergyReport:
    """Price ``workload`` on ``profile`` over ``day`` (seconds per activity class).

    Parameters
    ----------
    profile : DeviceProfile
    workload : Workload
    day : dict, optional
        Seconds per activity class (:func:`parse_day`); default the workload's own log mix scaled
        to 24 h. Every class in ``day`` must have been replayed.

    Returns
    -------
    EnergyReport

    Raises
    ------
    ValueError
        When the day has time in an activity the replay lacks, the configuration needs a sensor
        the profile says the phone lacks (a barometer on a Nexus One), or work it does must be
        priced with a cost that was never measured (the step context or the height work of a
        workload recorded before they were priced).
    """
    day = workload.day_from_log() if day is None else day
    missing = [a for a, s in day.items() if s > 0 and (a not in workload.counts or workload.counts[a].seconds <= 0)]
    if missing:
        raise ValueError(f"the day has {missing[0]!r} time but the replayed log ({workload.source}) has none; replay a "
                         f"labelled log with that activity, or describe the day without it")
    cfg = workload.config
    rate = workload.rate_hz
    streams = streams_for(cfg["orientation"])
    side = workload.side_streams()
    reads_barometer = bool(cfg.get("barometer", False))
    speed = profile["cpu.speed_ratio"]
    active_ma = profile["cpu.active_ma"]
    stages = workload.stages
    seconds = sum(day.values())
    notes = []

    def cpu_mah(active_seconds: float) -> float:
        return active_seconds * active_ma / 3600.0

    charge = dict.fromkeys(STAGES, 0.0)
    charge["sensors"] = _sensor_current(profile, streams, rate) * seconds / 3600.0
    for name, hz in side.items():  # its hardware, then delivering its events to the app
        charge[name] = (_sensor_current(profile, [name], hz) * seconds / 3600.0
                        + cpu_mah(hz * seconds * profile["cpu.event_us"] * 1e-6))
    fifo = profile["batching.fifo_samples"]
    if profile["cpu.needs_wake_lock"]:
        charge["wakeups"] = profile["cpu.awake_ma"] * seconds / 3600.0
    else:
        wakeups_per_s = rate / fifo
        awake_fraction = min(1.0, wakeups_per_s * profile["cpu.wakeup_ms"] / 1000.0)
        charge["wakeups"] = awake_fraction * seconds * active_ma / 3600.0
    fused_on_ap = not profile["hub.fusion_on_hub"]
    fusion_us = max((profile.virtual[s]["fusion_us"] for s in streams if s in profile.virtual), default=0.0)
    per_sample_event_s = len(streams) * profile["cpu.event_us"] * 1e-6 + (fusion_us * 1e-6 if fused_on_ap else 0.0)
    charge["events"] = cpu_mah(rate * seconds * per_sample_event_s)
    samples = rate * seconds
    charge["smoothing"] = cpu_mah(samples * stages.smoothing_ns * 1e-9 * speed) if cfg["smoothing"] != "none" else 0.0
    charge["gravity_rotation"] = cpu_mah(samples * stages.gravity_rotation_ns * 1e-9 * speed)
    charge["segmentation"] = cpu_mah(samples * stages.segmentation_ns * 1e-9 * speed)
    if reads_barometer:
        filter_ns = _measured(stages.height_filter_ns, "height-filter cost per sample", workload)
        charge["height_filter"] = cpu_mah(samples * filter_ns * 1e-9 * speed)
    classified = sum(workload.counts[a].per_second()["classified"] * s for a, s in day.items() if s > 0)
    if cfg.get("step_context", 0) > 0 and classified > 0:
        context_us = _measured(stages.step_context_us, "step-context cost per kept window", workload)
        charge["step_context"] = cpu_mah(classified * context_us * 1e-6 * speed)
    if reads_barometer and classified > 0:
        height_us = _measured(stages.height_features_us, "height-feature cost per kept window", workload)
        charge["height_features"] = cpu_mah(classified * height_us * 1e-6 * speed)
    if workload.inference is None:
        notes.append("no model given: window features and inference priced at zero")
    else:
        charge["features"] = cpu_mah(classified * workload.inference.features_us * 1e-6 * speed)
        charge["inference"] = cpu_mah(classified * workload.inference.classifier_us * 1e-6 * speed)
    for name, hz in sorted(side.items()):
        read = name == "barometer" and reads_barometer
        notes.append(f"{name} at {hz:g} Hz: " + ("read by the pipeline (height filter per sample, height features per "
                                                 "kept window)" if read else
                                                 "turned on beside the configuration's streams, priced as its current "
                                                 "and events; the configuration does not read it"))
    total = sum(charge.values())
    battery = profile["battery.capacity_mah"]
    hours = seconds / 3600.0
    return EnergyReport(
        profile=profile.name, config=cfg, day_s=dict(day), stage_mah=charge, total_mah=total,
        mah_per_hour=total / hours if hours else 0.0, percent_per_day=100.0 * total / battery,
        baseline_mah=profile["cpu.suspend_ma"] * seconds / 3600.0, battery_mah=battery, notes=notes,
        workload=workload.to_dict(), side_streams=side,
    )
