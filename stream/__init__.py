"""Sensor logs, readers, dataset loaders, the simulator and the streaming front-end stages.

Every stage has a per-sample form (``push``) and a block form (``process``) over the same state;
the batch functions are the block form on a fresh stage.
"""
from ._buffer_mean import CausalBufferMean, causal_buffer_mean
from ._frontend import FrontEnd, FrontEndResult, run_front_end
from ._fusion import with_virtual_sensors
from ._log import STAIR_ACTIVITIES, Activity, SensorLog, StepTruth
from ._orientation import MadgwickOrientation, mizell_components, quat_to_matrix, rotate_by_quaternion
from ._segment import (
    SlidingWindower,
    StepSegmenter,
    Window,
    WindowStatus,
    WindowTable,
    segment_steps,
    sliding_windows,
)
from ._standardize import Standardized, Standardizer, resolve_orientation, standardize

__all__ = [
    "Activity",
    "SensorLog",
    "StepTruth",
    "STAIR_ACTIVITIES",
    "CausalBufferMean",
    "causal_buffer_mean",
    "MadgwickOrientation",
    "quat_to_matrix",
    "rotate_by_quaternion",
    "mizell_components",
    "with_virtual_sensors",
    "Standardized",
    "Standardizer",
    "standardize",
    "resolve_orientation",
    "Window",
    "WindowStatus",
    "WindowTable",
    "StepSegmenter",
    "SlidingWindower",
    "segment_steps",
    "sliding_windows",
    "FrontEnd",
    "FrontEndResult",
    "run_front_end",
]
