"""Sensor logs, readers, dataset loaders, the simulator and the streaming front-end stages."""
from ._log import STAIR_ACTIVITIES, Activity, SensorLog, StepTruth

__all__ = ["Activity", "SensorLog", "StepTruth", "STAIR_ACTIVITIES"]
