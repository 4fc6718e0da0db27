"""Sensor-log files: the canonical CSV(.gz) and Parquet formats (chunked reader with its repairs,
atomic writer), conversion between them, and import of other apps' CSV files.

Every name here is re-exported by :mod:`stairsense.stream`.
"""
from ._atomic import atomic_write, new_file_mode
from ._convert import convert_log
from ._csv_format import LOG_SUFFIXES, LogFormatError, steps_path
from ._csv_read import iter_log_chunks, read_log, read_segments, read_steps
from ._csv_report import REPAIRS, LogRepairedWarning, ReadReport, RepairAction
from ._csv_write import write_log
from ._import import ImportReport, import_log, parse_mapping

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
    "ImportReport",
    "import_log",
    "parse_mapping",
]
