"""Sensor logs, readers, dataset loaders, the simulator and the streaming front-end stages.

The bottom layer: it also holds :class:`PipelineConfig`, the front-end configuration every layer
above shares, so nothing here imports upwards.

Every stage has a per-sample form (``push``) and a block form (``process``) over the same state;
the batch functions are the block form on a fresh stage.
"""
from ._config import READ_ONLY_FIELDS, PipelineConfig, config_file_section
from ._buffer_mean import CausalBufferMean, causal_buffer_mean
from ._frontend import FrontEnd, FrontEndResult, run_front_end
from ._fusion import with_virtual_sensors
from ._csv_format import LOG_SUFFIXES, LogFormatError, steps_path
from ._csv_read import iter_log_chunks, read_log, read_segments, read_steps
from ._csv_report import REPAIRS, LogRepairedWarning, ReadReport, RepairAction
from ._csv_write import new_file_mode, write_log
from ._convert import convert_log
from ._import import ImportReport, import_log, parse_mapping
from ._datasets import load_oxford, load_uci_hapt, oxford_recordings, uci_hapt_dir, uci_hapt_experiments
from ._placement_datasets import (
    MOBIFALL_STAIRS_PER_TRIAL,
    WEDA_RATE_HZ,
    geotec_recordings,
    ipin_recordings,
    load_geotec,
    load_ipin,
    load_mobifall,
    load_placement_recording,
    load_weda,
    mobifall_recordings,
    placement_recordings,
    weda_recordings,
)
from ._log import STAIR_ACTIVITIES, STANDARD_GRAVITY, Activity, SensorLog, StepTruth
from ._orientation import MadgwickOrientation, mizell_components, quat_to_matrix, rotate_by_quaternion
from ._resample import Resampler, resample
from ._segment import (
    SlidingWindower,
    StepSegmenter,
    Window,
    WindowStatus,
    WindowTable,
    match_steps,
    segment_steps,
    sliding_windows,
)
from .simulate import Person, SensorModel, simulate, simulate_chunks
from ._standardize import Standardized, Standardizer, resolve_orientation, standardize

__all__ = [
    "PipelineConfig",
    "config_file_section",
    "READ_ONLY_FIELDS",
    "Activity",
    "SensorLog",
    "StepTruth",
    "STAIR_ACTIVITIES",
    "STANDARD_GRAVITY",
    "read_log",
    "read_segments",
    "iter_log_chunks",
    "read_steps",
    "steps_path",
    "LOG_SUFFIXES",
    "write_log",
    "new_file_mode",
    "convert_log",
    "ReadReport",
    "RepairAction",
    "LogFormatError",
    "LogRepairedWarning",
    "REPAIRS",
    "import_log",
    "parse_mapping",
    "ImportReport",
    "load_uci_hapt",
    "uci_hapt_experiments",
    "uci_hapt_dir",
    "load_oxford",
    "oxford_recordings",
    "MOBIFALL_STAIRS_PER_TRIAL",
    "WEDA_RATE_HZ",
    "mobifall_recordings",
    "load_mobifall",
    "weda_recordings",
    "load_weda",
    "geotec_recordings",
    "load_geotec",
    "ipin_recordings",
    "load_ipin",
    "placement_recordings",
    "load_placement_recording",
    "resample",
    "Resampler",
    "simulate",
    "simulate_chunks",
    "Person",
    "SensorModel",
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
    "match_steps",
    "FrontEnd",
    "FrontEndResult",
    "run_front_end",
]
