"""The canonical sensor-log file format, shared by the reader (``_csv_read``) and the writer (``_csv_write``).

The format is the one of DESIGN.md ("Data model"):

* CSV, gzip-compressed when the name ends in ``.gz``;
* an optional first line ``# meta: {json}`` carrying :attr:`SensorLog.meta` (one line of JSON);
* a header naming the columns ``t_ns,ax,ay,az[,gx,gy,gz][,qx,qy,qz,qw][,lx,ly,lz][,label]`` in any
  order; every group is all-or-nothing; ``label`` is an int :class:`Activity` code;
* one sample per line, no quoting, no blank lines; ``t_ns`` is an integer, the rest are floats
  written in their shortest round-trip form, so a written log reads back bit-exactly;
* ground-truth steps, when the log has them, in a plain sidecar ``<stem>.steps.csv`` (``t_ns,kind``)
  beside ``<stem>.csv`` or ``<stem>.csv.gz``.

Reading parses with Arrow's streaming CSV reader (the fastest candidate measured by
``benchmarks/bench_read.py``). Arrow does not say on which line a value failed, so when a block
fails to parse the offending block is re-scanned line by line to name the exact line; the slow path
runs only on bad input.
"""
from __future__ import annotations

from pathlib import Path

__all__ = ["LOG_SUFFIXES", "LogFormatError", "steps_path"]

#: The names a sensor log file may end in: the canonical CSV (plain or gzip) and Parquet.
LOG_SUFFIXES = (".csv.gz", ".csv", ".parquet")

#: Column groups in canonical order, keyed by the SensorLog field they fill.
_GROUPS = {
    "t_ns": ("t_ns",),
    "acc": ("ax", "ay", "az"),
    "gyro": ("gx", "gy", "gz"),
    "rotvec": ("qx", "qy", "qz", "qw"),
    "linacc": ("lx", "ly", "lz"),
    "label": ("label",),
}
_FLOAT_FIELDS = ("acc", "gyro", "rotvec", "linacc")
_KNOWN = [c for cols in _GROUPS.values() for c in cols]
_META_PREFIX = "# meta:"


class LogFormatError(ValueError):
    """A sensor-log file is malformed; ``path`` and ``line`` (1-based, or None) say where."""

    def __init__(self, path, line, message):
        self.path = str(path)
        self.line = line
        where = f"{path}:{line}" if line is not None else f"{path}"
        super().__init__(f"{where}: {message}")


def steps_path(path: str | Path) -> Path:
    """The sidecar holding a log's ground-truth steps: ``walk.csv.gz`` -> ``walk.steps.csv``.

    Examples
    --------
    >>> steps_path("logs/walk.csv.gz").as_posix()
    'logs/walk.steps.csv'
    """
    path = Path(path)
    name = path.name
    for suffix in LOG_SUFFIXES:
        if name.endswith(suffix):
            return path.with_name(name[: -len(suffix)] + ".steps.csv")
    raise ValueError(f"{path}: a sensor log file must end in .csv, .csv.gz or .parquet, got {name!r}; rename it")
