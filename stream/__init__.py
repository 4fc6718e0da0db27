"""Sensor logs, readers, dataset loaders, the simulator and the streaming front-end stages.

The bottom layer: it also holds :class:`PipelineConfig`, the front-end configuration every layer
above shares, so nothing here imports upwards. The log files (CSV, Parquet, conversion, import,
atomic writes) are the sub-package :mod:`.io`.

Every stage has a per-sample form (``push``) and a block form (``process``) over the same state;
the batch functions are the block form on a fresh stage.
"""
from .lazy import lazy_exports as _lazy_exports

# ``stairsense.stream.simulate`` is both a sub-package and its function. The import system binds a
# sub-package to its parent's attribute once, when it first loads it; loading it here (its
# ``__init__`` is lazy, so this costs nothing) and unbinding it lets ``simulate`` resolve to the
# function below, whatever imports the sub-package's modules later.
from . import simulate

del simulate

# Every name resolves on first use: the simulator alone would bring in NumPy, the log readers pyarrow.
__getattr__, __dir__ = _lazy_exports(__name__, {
    ".simulate._simulate": ("simulate", "simulate_chunks"),
    ".simulate._gait": ("Person",),
    ".simulate._device": ("SensorModel",),
    "._config": ("ORIENTATION_METHODS", "ORIENTATIONS", "READ_ONLY_FIELDS", "PipelineConfig", "config_file_section"),
    "._buffer_mean": ("CausalBufferMean", "causal_buffer_mean"),
    "._frontend": ("FrontEnd", "FrontEndResult", "run_front_end"),
    "._fusion": ("with_virtual_sensors",),
    ".io._atomic": ("atomic_write", "new_file_mode"),
    ".io._convert": ("convert_log",),
    ".io._csv_format": ("LOG_SUFFIXES", "LogFormatError", "steps_path"),
    ".io._csv_read": ("iter_log_chunks", "read_log", "read_segments", "read_steps"),
    ".io._csv_report": ("REPAIRS", "LogRepairedWarning", "ReadReport", "RepairAction"),
    ".io._csv_write": ("write_log",),
    ".io._import": ("ImportReport", "import_log", "parse_mapping"),
    "._datasets": ("load_oxford", "load_uci_hapt", "oxford_recordings", "uci_hapt_dir", "uci_hapt_experiments"),
    "._placement_datasets": ("MOBIFALL_STAIRS_PER_TRIAL", "WEDA_RATE_HZ", "geotec_recordings", "ipin_recordings",
                             "load_geotec", "load_ipin", "load_mobifall", "load_placement_recording", "load_weda",
                             "mobifall_recordings", "placement_recordings", "weda_recordings"),
    "._log": ("STAIR_ACTIVITIES", "STANDARD_GRAVITY", "Activity", "SensorLog", "StepTruth"),
    "._orientation": ("MadgwickOrientation", "mizell_components", "quat_to_matrix", "rotate_by_quaternion"),
    "._resample": ("Resampler", "resample", "values_at"),
    "._segment": ("SlidingWindower", "StepSegmenter", "Window", "WindowStatus", "WindowTable", "match_steps",
                  "segment_steps", "sliding_windows"),
    "._standardize": ("Standardized", "Standardizer", "resolve_orientation", "standardize"),
})

__all__ = [
    "PipelineConfig",
    "config_file_section",
    "READ_ONLY_FIELDS",
    "ORIENTATIONS",
    "ORIENTATION_METHODS",
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
    "atomic_write",
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
    "values_at",
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
