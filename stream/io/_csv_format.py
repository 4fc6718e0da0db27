"""The canonical sensor-log file format, shared by the reader (``_csv_read``) and the writer (``_csv_write``).

The format is the one of DESIGN.md ("Data model"):

* CSV, gzip-compressed when the name ends in ``.gz``;
* an optional first line ``# meta: {json}`` carrying :attr:`SensorLog.meta` (one line of JSON);
* a header naming the columns ``t_ns,ax,ay,az[,gx,gy,gz][,qx,qy,qz,qw][,lx,ly,lz][,p][,label]`` in any
  order; every group is all-or-nothing; ``label`` is an int :class:`Activity` code;
* ``p`` is air pressure in hPa, 300–1,100 (what phone barometers read from the Dead Sea to above
  Everest's summit). A barometer reports at 1–25 Hz, the accelerometer at 50–400 Hz: like every other
  stream, ``p`` is the pressure *at each accelerometer sample's time*, a value on every line. A
  cell left empty on lines without a reading of their own is an error naming the line, never a
  guess: the readings are merged onto the accelerometer's times when the log is made
  (``stairsense import`` takes the lines with a value as the barometer's samples and interpolates
  them onto every line; the lines before the first reading and after the last are dropped, counted);
* one sample per line, no quoting, no blank lines, no empty cells; ``t_ns`` is an integer, the rest
  are floats written in their shortest round-trip form, so a written log reads back bit-exactly;
* ground-truth steps, when the log has them, in a plain sidecar named after the whole log name
  (``walk.csv.gz.steps.csv``, columns ``t_ns,kind``; see :func:`steps_path`).

Reading parses with Arrow's streaming CSV reader (the fastest candidate measured by
``benchmarks/bench_read.py``). Arrow does not say on which line a value failed, so when a block
fails to parse the offending block is re-scanned line by line to name the exact line; the slow path
runs only on bad input.
"""
from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from .._log import PRESSURE_RANGE_HPA

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
    "pressure": ("p",),
    "label": ("label",),
}
_REQUIRED = ("t_ns", "acc")
_KNOWN = [c for cols in _GROUPS.values() for c in cols]
#: The header as the errors spell it: required groups bare, optional ones in brackets.
_HEADER_SPEC = "".join((("," if i else "") if f in _REQUIRED else "[,") + ",".join(cols) + ("" if f in _REQUIRED else "]")
                       for i, (f, cols) in enumerate(_GROUPS.items()))
_META_PREFIX = "# meta:"

# Units a pressure column is often written in by mistake, and what one hPa is in each.
_PRESSURE_UNITS = (("Pa", 100.0), ("kPa", 0.1), ("bar", 0.001), ("psi", 0.0145038))


class LogFormatError(ValueError):
    """A sensor-log file is malformed; ``path`` and ``line`` (1-based, or None) say where."""

    def __init__(self, path, line, message):
        self.path = str(path)
        self.line = line
        where = f"{path}:{line}" if line is not None else f"{path}"
        super().__init__(f"{where}: {message}")


def pressure_out_of_range(p: np.ndarray) -> tuple[int, str, str | None] | None:
    """The first value of ``p`` outside :data:`PRESSURE_RANGE_HPA`, what is wrong with it, and the unit
    it would be in range in (``"Pa"``, ``"kPa"``, ``"bar"``, ``"psi"``, or None); None if all are in range.

    Nothing is converted here: the caller says which conversion to apply.

    Examples
    --------
    >>> pressure_out_of_range(np.array([1013.2, 101320.0]))
    (1, '101320 hPa is outside 300–1100 hPa; it looks like Pa (1013.2 hPa)', 'Pa')
    >>> pressure_out_of_range(np.array([1013.2])) is None
    True
    """
    low, high = PRESSURE_RANGE_HPA
    if p.size == 0 or (p.min() >= low and p.max() <= high):  # the valid case: two reductions (nan fails both)
        return None
    with np.errstate(invalid="ignore"):
        bad = ~((p >= low) & (p <= high))
    i = int(np.flatnonzero(bad)[0])
    value = float(p[i])
    reason = f"{value:.6g} hPa is outside {low:g}–{high:g} hPa"
    unit = next((name for name, per_hpa in _PRESSURE_UNITS if low <= value / per_hpa <= high), None)
    if unit is not None:
        reason += f"; it looks like {unit} ({value / dict(_PRESSURE_UNITS)[unit]:.6g} hPa)"
    return i, reason, unit


def _stem(path: Path) -> str:
    for suffix in LOG_SUFFIXES:
        if path.name.endswith(suffix):
            return path.name[: -len(suffix)]
    raise ValueError(f"{path}: a sensor log file must end in .csv, .csv.gz or .parquet, got {path.name!r}; rename it")


def _stem_sidecar(path: Path) -> Path:
    """Where sidecars were written before :func:`steps_path` named them after the whole log name."""
    return path.with_name(_stem(path) + ".steps.csv")


def _logs_of_stem(path: Path) -> list[Path]:
    """The logs in ``path``'s folder whose name differs from ``path``'s by the suffix only (``path`` included)."""
    stem = _stem(path)
    return [p for p in (path.with_name(stem + s) for s in LOG_SUFFIXES) if p.exists()]


def steps_path(path: str | Path, *, existing: bool = False) -> Path:
    """The sidecar holding a log's ground-truth steps: the log's whole name plus ``.steps.csv``.

    ``walk.csv.gz`` -> ``walk.csv.gz.steps.csv``, so logs of one stem (``walk.csv.gz`` and
    ``walk.parquet``) each keep their own truth. Sidecars written before were named by the stem
    alone (``walk.steps.csv``), which two such logs shared. A reader (``existing=True``) still takes
    such a sidecar when its log has none of its own and is the only log of that stem in the folder
    (the sidecar then belongs to no other log); a writer first renames it to its log's own sidecar
    (``_prepare_sidecar``).

    Parameters
    ----------
    path : str or Path
        A log ending in .csv, .csv.gz or .parquet.
    existing : bool
        Return the sidecar the readers open: the log's own, else an unambiguous old one, else the
        log's own name (which does not exist).

    Examples
    --------
    >>> steps_path("logs/walk.csv.gz").as_posix()
    'logs/walk.csv.gz.steps.csv'
    """
    path = Path(path)
    _stem(path)  # refuses a name that is not a log's
    own = path.with_name(path.name + ".steps.csv")
    if existing and not own.exists():
        old = _stem_sidecar(path)
        if old.exists() and [p.name for p in _logs_of_stem(path)] == [path.name]:
            return old
    return own


def _prepare_sidecar(path: str | Path) -> None:
    """Before a log is written at ``path``: refuse a sidecar path that is a folder (found after the log was
    written, it would leave the log without its truth), and rename an old stem-named sidecar
    (``walk.steps.csv``) that belongs to one log (the only one of that stem) to that log's own
    :func:`steps_path`, so it stays with that log whatever is written beside it."""
    path = Path(path)
    sidecar = steps_path(path)
    if sidecar.exists() and not sidecar.is_file():
        raise LogFormatError(sidecar, None, f"is {'a folder' if sidecar.is_dir() else 'not a regular file'}, where "
                             f"the steps sidecar of {path.name} goes; rename or remove it")
    old, owners = _stem_sidecar(path), _logs_of_stem(path)
    if old.is_file() and len(owners) == 1 and not steps_path(owners[0]).exists():
        os.replace(old, steps_path(owners[0]))
