"""Sensor-log files: the canonical CSV(.gz) and Parquet formats (chunked reader with its repairs,
atomic writer), conversion between them, and import of other apps' files (with ready presets).

:mod:`stairsense.stream` re-exports every name here but the import presets (``IMPORT_PRESETS``,
``ImportPreset``) and ``parse_records``, which are used from here.
"""
from ..lazy import lazy_exports as _lazy_exports

# Resolved on first use: the Parquet reader and writer bring in pyarrow, which a command that only
# looks at a file's name never needs.
__getattr__, __dir__ = _lazy_exports(__name__, {
    "._atomic": ("atomic_write", "new_file_mode"),
    "._convert": ("convert_log",),
    "._csv_format": ("LOG_SUFFIXES", "LogFormatError", "steps_path"),
    "._csv_read": ("iter_log_chunks", "read_log", "read_segments", "read_steps"),
    "._csv_report": ("REPAIRS", "LogRepairedWarning", "ReadReport", "RepairAction"),
    "._csv_write": ("write_log", "write_log_chunks"),
    "._import": ("ImportReport", "import_log", "parse_mapping", "parse_records"),
    "._presets": ("IMPORT_PRESETS", "ImportPreset"),
})

__all__ = [
    "atomic_write",
    "new_file_mode",
    "convert_log",
    "LOG_SUFFIXES",
    "LogFormatError",
    "steps_path",
    "iter_log_chunks",
    "read_log",
    "read_segments",
    "read_steps",
    "REPAIRS",
    "LogRepairedWarning",
    "ReadReport",
    "RepairAction",
    "write_log",
    "write_log_chunks",
    "ImportReport",
    "import_log",
    "parse_mapping",
    "parse_records",
    "IMPORT_PRESETS",
    "ImportPreset",
]
