"""Canonical sensor-log files: fast chunked reader, validating, with named repairs, and an atomic writer.

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

import gzip
import json
import os
import re
import tempfile
import warnings
import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Iterator

import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv

from ._config import PipelineConfig

from ._log import STANDARD_GRAVITY, Activity, SensorLog, StepTruth

__all__ = [
    "LogFormatError",
    "RepairAction",
    "ReadReport",
    "LogRepairedWarning",
    "REPAIRS",
    "write_log",
    "iter_log_chunks",
    "read_log",
    "read_segments",
    "steps_path",
    "read_steps",
]

#: Repairs a reader can apply instead of failing; each one is reported in :class:`ReadReport`.
REPAIRS = ("sort", "drop-nan", "split-gaps")

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
_UNIT_NAMES = {"m/s2": "m/s2", "m/s^2": "m/s2", "m/s²": "m/s2", "g": "g"}
# Median |acc| of any real recording with gravity included is ~9.8 m/s² or ~1 g; 4 splits the two
# with a wide margin on both sides (even free fall and hard running keep the median far from it).
_UNITS_SPLIT = 4.0
_VALID_LABELS = np.array(sorted(int(a) for a in Activity))
_FIRST_LINES_KEPT = 5
# Bytes of text the parser converts at a time. ~4 MB (about 100 k samples) parsed fastest in
# benchmarks/bench_read.py; larger blocks fall out of cache, smaller ones pay per-block overhead.
_BLOCK_BYTES = 1 << 22
# What the fast parser accepts, for the slow re-scan that names the bad line: Python's int() and
# float() are laxer (underscores, int64 overflow), so they cannot be the judge.
_INT_RE = re.compile(r"[+-]?[0-9]+")
_FLOAT_RE = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|[+-]?(?:nan|NaN|inf|Inf|infinity)")


class LogFormatError(ValueError):
    """A sensor-log file is malformed; ``path`` and ``line`` (1-based, or None) say where."""

    def __init__(self, path, line, message):
        self.path = str(path)
        self.line = line
        where = f"{path}:{line}" if line is not None else f"{path}"
        super().__init__(f"{where}: {message}")


class LogRepairedWarning(UserWarning):
    """A reader repaired a log and the caller did not ask for the :class:`ReadReport`."""


@dataclass
class RepairAction:
    """What one repair changed: how many rows, and the first file lines it touched."""

    repair: str
    what: str
    count: int = 0
    first_lines: list[int] = field(default_factory=list)

    def __str__(self) -> str:
        return f"{self.repair}: {self.what}: {self.count} rows (first lines {self.first_lines})"


@dataclass
class ReadReport:
    """Everything a reader did to a file besides parsing it.

    Attributes
    ----------
    path : str
        The file read.
    units : {"m/s2", "g"}
        Units the accelerometer had in the file (``"g"`` was converted to m/s²).
    rows_read, rows_kept : int
        Data lines parsed, and samples returned after the repairs.
    actions : list of RepairAction
        One entry per kind of change, with counts and the first file lines affected. Empty when
        nothing was repaired.
    segments : list of (int, int)
        First and last file line of each gap-free segment (one entry unless ``"split-gaps"`` split).
    """

    path: str
    units: str = "m/s2"
    rows_read: int = 0
    rows_kept: int = 0
    actions: list[RepairAction] = field(default_factory=list)
    segments: list[tuple[int, int]] = field(default_factory=list)

    @property
    def repaired(self) -> bool:
        """True when a repair changed, dropped or split anything."""
        return bool(self.actions) or len(self.segments) > 1

    def _note(self, repair: str, what: str, lines: np.ndarray) -> None:
        if lines.size == 0:
            return
        action = next((a for a in self.actions if a.repair == repair and a.what == what), None)
        if action is None:
            action = RepairAction(repair, what)
            self.actions.append(action)
        action.count += int(lines.size)
        room = _FIRST_LINES_KEPT - len(action.first_lines)
        action.first_lines.extend(int(v) for v in np.sort(lines)[:room])

    def summary(self) -> str:
        parts = [str(a) for a in self.actions]
        if len(self.segments) > 1:
            parts.append(f"split-gaps: {len(self.segments)} segments starting at lines "
                         f"{[s[0] for s in self.segments[:_FIRST_LINES_KEPT]]}")
        return f"{self.path}: " + "; ".join(parts) if parts else f"{self.path}: no repairs"


# --------------------------------------------------------------------------------------------
# writing


def steps_path(path: str | Path) -> Path:
    """The sidecar holding a log's ground-truth steps: ``walk.csv.gz`` -> ``walk.steps.csv``.

    Examples
    --------
    >>> steps_path("logs/walk.csv.gz").as_posix()
    'logs/walk.steps.csv'
    """
    path = Path(path)
    name = path.name
    for suffix in (".csv.gz", ".csv"):
        if name.endswith(suffix):
            return path.with_name(name[: -len(suffix)] + ".steps.csv")
    raise ValueError(f"{path}: a sensor log file must end in .csv or .csv.gz, got {name!r}; rename it")


def _columns_of(log: SensorLog) -> dict[str, np.ndarray]:
    cols = {"t_ns": log.t_ns}
    for fname in _FLOAT_FIELDS:
        value = getattr(log, fname)
        if value is not None:
            cols.update({c: value[:, j] for j, c in enumerate(_GROUPS[fname])})
    if log.label is not None:
        cols["label"] = log.label
    return cols


def _json_default(obj):
    # numpy scalars sneak into meta from arithmetic (e.g. a median rate); they have exact JSON forms.
    if isinstance(obj, np.generic):
        return obj.item()
    raise TypeError(f"meta value {obj!r} of type {type(obj).__name__} is not JSON-serialisable")


def _atomic_write(path: Path, write) -> None:
    """Call ``write(binary_file)`` on a temporary file beside ``path``, then rename it over ``path``.

    The rename is atomic on one filesystem, so readers see the old file or the new one, never half.
    """
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as raw:
            write(raw)
            raw.flush()
            os.fsync(raw.fileno())
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


def write_log(log: SensorLog, path: str | Path, *, compresslevel: int = 1) -> Path:
    """Write ``log`` atomically in the canonical format (gzip when ``path`` ends in ``.gz``).

    Parameters
    ----------
    log : SensorLog
        The recording. Its ``meta`` (JSON-serialisable) goes on a ``# meta:`` line, its steps to
        the sidecar :func:`steps_path`; a stale sidecar from an earlier write is removed.
    path : str or Path
        Destination ending in ``.csv`` or ``.csv.gz``; its folder must exist.
    compresslevel : int
        gzip level 1–9. Level 1 is ~4x faster to write than 6 for ~8 % larger files.

    Returns
    -------
    Path
        ``path``.

    Notes
    -----
    Floats are written in their shortest round-trip decimal form, so :func:`read_log` returns
    exactly the arrays written. Each file goes to a temporary file in the same folder and is
    renamed into place, so an existing file is never left half-written.

    Examples
    --------
    >>> import tempfile, numpy as np
    >>> rng = np.random.default_rng(0)
    >>> log = SensorLog(np.arange(5) * 20_000_000, rng.normal([0, 0, 9.8], 0.1, (5, 3)))
    >>> with tempfile.TemporaryDirectory() as d:
    ...     p = write_log(log, d + "/walk.csv.gz")
    ...     back = read_log(p)
    >>> bool(np.array_equal(back.acc, log.acc))
    True
    """
    path = Path(path)
    sidecar = steps_path(path)
    if not isinstance(log, SensorLog):
        raise TypeError(f"write_log needs a SensorLog, got {type(log).__name__}")
    if not 1 <= compresslevel <= 9:
        raise ValueError(f"compresslevel must be in 1..9, got {compresslevel!r}")
    try:
        meta_line = json.dumps(dict(log.meta), sort_keys=True, allow_nan=False, default=_json_default)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{path}: cannot write log.meta as JSON ({exc}); keep meta to str/int/float/"
                         "list/dict values") from exc
    cols = _columns_of(log)
    table = pa.table(cols)
    head = (f"{_META_PREFIX} {meta_line}\n" if log.meta else "") + ",".join(cols) + "\n"

    def write_main(raw):
        if path.name.endswith(".gz"):
            with gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=compresslevel, mtime=0) as out:
                out.write(head.encode())
                pacsv.write_csv(table, out, write_options=pacsv.WriteOptions(include_header=False))
        else:
            raw.write(head.encode())
            pacsv.write_csv(table, raw, write_options=pacsv.WriteOptions(include_header=False))

    def write_steps(raw):
        raw.write(b"t_ns,kind\n")
        pacsv.write_csv(pa.table({"t_ns": log.steps.t_ns, "kind": log.steps.kind}), raw,
                        write_options=pacsv.WriteOptions(include_header=False))

    _atomic_write(path, write_main)
    if log.steps is not None:
        _atomic_write(sidecar, write_steps)
    elif sidecar.exists():
        sidecar.unlink()
    return path


# --------------------------------------------------------------------------------------------
# reading: header


@dataclass
class _Header:
    path: Path
    meta: dict
    columns: list[str]
    first_data_line: int  # 1-based line number of the first sample


def _open_text(path: Path):
    return gzip.open(path, "rt", newline="") if path.name.endswith(".gz") else open(path, newline="")


def _read_header(path: Path) -> _Header:
    if not path.exists():
        raise LogFormatError(path, None, "no such file; check the path (logs end in .csv or .csv.gz)")
    if path.is_dir():
        raise LogFormatError(path, None, "is a folder, not a log file; pass the .csv or .csv.gz file")
    try:
        with _open_text(path) as fh:
            first = fh.readline()
            second = fh.readline() if first.startswith(_META_PREFIX) else None
    except (OSError, EOFError, zlib.error, UnicodeDecodeError) as exc:
        raise LogFormatError(path, None, f"cannot be read as {'gzip ' if path.suffix == '.gz' else ''}"
                             f"text ({exc}); a .gz name needs gzip content, other names plain CSV") from exc
    if not first:
        raise LogFormatError(path, 1, "the file is empty; expected a header line such as 't_ns,ax,ay,az'")
    meta, line = {}, 1
    if second is not None:
        try:
            meta = json.loads(first[len(_META_PREFIX):])
        except json.JSONDecodeError as exc:
            raise LogFormatError(path, 1, f"the '# meta:' line is not valid JSON ({exc}); fix or delete it")
        if not isinstance(meta, dict):
            raise LogFormatError(path, 1, f"the '# meta:' line must hold a JSON object, got {type(meta).__name__}")
        first, line = second, 2
        if not first:
            raise LogFormatError(path, 2, "the file ends after the '# meta:' line; expected a header line "
                                 "such as 't_ns,ax,ay,az'")
    columns = [c.strip() for c in first.rstrip("\r\n").split(",")]
    _check_columns(path, line, columns)
    return _Header(path, meta, columns, line + 1)


def _check_columns(path: Path, line: int, columns: list[str]) -> None:
    expected = "t_ns,ax,ay,az[,gx,gy,gz][,qx,qy,qz,qw][,lx,ly,lz][,label]"
    dup = sorted({c for c in columns if columns.count(c) > 1})
    if dup:
        raise LogFormatError(path, line, f"header repeats column(s) {dup}; each column may appear once")
    unknown = [c for c in columns if c not in _KNOWN]
    if unknown:
        raise LogFormatError(path, line, f"header has unknown column(s) {unknown}; expected {expected} "
                             "(is this line data instead of a header?)")
    for fname, group in _GROUPS.items():
        present = [c for c in group if c in columns]
        required = fname in ("t_ns", "acc")
        if (required or present) and len(present) != len(group):
            missing = [c for c in group if c not in columns]
            why = "is required" if required else "is all-or-nothing"
            raise LogFormatError(path, line, f"header lacks column(s) {missing}: the {fname} group "
                                 f"{list(group)} {why}; expected {expected}")


# --------------------------------------------------------------------------------------------
# reading: blocks


@dataclass
class _Block:
    """Parsed rows of one stretch of the file and their 1-based file line numbers.

    Rows read straight from the file sit on consecutive lines from ``line0``; the per-row array
    ``explicit`` exists only after a repair dropped or moved rows, which keeps the fast path free
    of an 8-byte-per-sample line array.
    """

    t: np.ndarray
    fields: dict[str, np.ndarray]
    line0: int
    explicit: np.ndarray | None = None

    def line(self, i: int) -> int:
        return int(self.explicit[i]) if self.explicit is not None else self.line0 + int(i)

    def lines(self) -> np.ndarray:
        if self.explicit is not None:
            return self.explicit
        return np.arange(self.line0, self.line0 + len(self), dtype=np.int64)

    def take(self, idx) -> "_Block":
        fields = {k: v[idx] for k, v in self.fields.items()}
        if isinstance(idx, slice) and self.explicit is None:
            return _Block(self.t[idx], fields, self.line0 + idx.indices(len(self))[0])
        return _Block(self.t[idx], fields, 0, self.lines()[idx])

    def __len__(self) -> int:
        return int(self.t.size)


def _join(blocks: list[_Block]) -> _Block:
    """Concatenate blocks; line numbers stay implicit while the blocks are back to back in the file."""
    if len(blocks) == 1:
        return blocks[0]
    contiguous = all(a.explicit is None and b.explicit is None and b.line0 == a.line0 + len(a)
                     for a, b in zip(blocks[:-1], blocks[1:]))
    return _Block(np.concatenate([b.t for b in blocks]),
                  {k: np.concatenate([b.fields[k] for b in blocks]) for k in blocks[0].fields},
                  blocks[0].line0, None if contiguous else np.concatenate([b.lines() for b in blocks]))


def _arrow_types(columns: list[str]) -> dict[str, pa.DataType]:
    return {c: pa.int64() if c in ("t_ns", "label") else pa.float64() for c in columns}


def _iter_batches(header: _Header, block_bytes: int) -> Iterator[tuple[int, pa.RecordBatch]]:
    """Yield ``(first_line, batch)``; on a parse failure name the exact line by a slow re-scan."""
    path = header.path
    read_opts = pacsv.ReadOptions(column_names=header.columns, skip_rows=header.first_data_line - 1,
                                  block_size=block_bytes, use_threads=False)
    parse_opts = pacsv.ParseOptions(quote_char=False, ignore_empty_lines=False)
    # No null markers: an empty field must fail rather than become a silent missing value.
    convert_opts = pacsv.ConvertOptions(column_types=_arrow_types(header.columns), null_values=[],
                                        strings_can_be_null=False)
    line = header.first_data_line
    try:
        # A memory map lets the parser read plain files in place: half the CPU of a file stream and no
        # read-ahead copies (measured in benchmarks/bench_read.py). gzip must stream through a decoder.
        source = (pa.input_stream(str(path), compression="gzip") if path.name.endswith(".gz")
                  else pa.memory_map(str(path)))
        with pacsv.open_csv(source, read_options=read_opts, parse_options=parse_opts,
                            convert_options=convert_opts) as reader:
            for batch in reader:
                yield line, batch
                line += batch.num_rows
    except (pa.ArrowInvalid, OSError) as exc:
        if "Empty CSV file" in str(exc):
            return
        _rescan(header, line, exc)


def _rescan(header: _Header, from_line: int, exc: Exception):
    """Parse lines from ``from_line`` on one at a time and raise on the first bad one."""
    path, ncol = header.path, len(header.columns)
    types = _arrow_types(header.columns)
    try:
        with _open_text(path) as fh:
            for lineno, text in enumerate(fh, start=1):
                if lineno < from_line:
                    continue
                _check_line(path, lineno, text.rstrip("\r\n"), header.columns, types, ncol)
    except (OSError, EOFError, zlib.error, UnicodeDecodeError) as io_exc:
        raise LogFormatError(path, None, f"the file is truncated or corrupt ({io_exc}); re-copy or "
                             "re-export it") from exc
    raise LogFormatError(path, None, f"the CSV parser failed ({exc}) but no bad line was found after "
                         f"line {from_line}; please report this file") from exc


def _check_line(path, lineno, text, columns, types, ncol):
    if not text:
        raise LogFormatError(path, lineno, "blank line; delete it (blank lines are not allowed in a log)")
    fields = text.split(",")
    if len(fields) != ncol:
        raise LogFormatError(path, lineno, f"expected {ncol} values ({','.join(columns)}), got "
                             f"{len(fields)}: {text[:80]!r}; the line is short, long or truncated")
    for name, value in zip(columns, fields):
        value = value.strip(" ")  # the fast parser trims spaces around a value, so do we
        if types[name] == pa.int64():
            ok = _INT_RE.fullmatch(value) is not None and -(2**63) <= int(value) < 2**63
            kind = "an integer within int64"
        else:
            ok = _FLOAT_RE.fullmatch(value) is not None
            kind = "a number"
        if not ok:
            raise LogFormatError(path, lineno, f"column {name!r} must be {kind}, got {value!r}; "
                                 "fix or delete the line")


def _blocks(header: _Header, units: str, drop_nan: bool,
            report: ReadReport) -> Iterator[_Block]:
    """Parse, check finiteness, labels and units, and convert g to m/s²."""
    path = header.path
    units_checked = False
    # gzip: Arrow reads decoded blocks ahead of the parser; 1 MB blocks cut that queue's memory
    # 4x at the same CPU (benchmarks/bench_read.py), while memory-mapped plain files queue nothing.
    gz = path.name.endswith(".gz")
    for line0, batch in _iter_batches(header, min(_BLOCK_BYTES, 1 << 20) if gz else _BLOCK_BYTES):
        n = batch.num_rows
        cols = {name: batch.column(i).to_numpy() for i, name in enumerate(header.columns)}
        report.rows_read += n
        block = _Block(cols.pop("t_ns"), cols, line0)
        floats = [c for c in cols if c != "label"]
        # Fast path: a nan or inf makes its column sum non-finite. A finite-but-huge sum can overflow
        # too, which only sends us to the exact per-sample check below.
        finite = np.ones(n, dtype=bool)
        with np.errstate(over="ignore"):
            sums = [cols[c].sum() for c in floats]
        if not np.isfinite(sums).all():
            for c in floats:
                finite &= np.isfinite(cols[c])
        if not finite.all():
            if not drop_nan:
                i = int(np.flatnonzero(~finite)[0])
                raise LogFormatError(path, block.line(i), "non-finite value (nan or inf); fix the line or "
                                     "read with repair=('drop-nan',) to drop such samples")
            report._note("drop-nan", "dropped samples with nan/inf values", block.lines()[~finite])
            block = block.take(finite)
        if "label" in cols:
            bad = ~np.isin(block.fields["label"], _VALID_LABELS)
            if bad.any():
                i = int(np.flatnonzero(bad)[0])
                raise LogFormatError(path, block.line(i), f"label {int(block.fields['label'][i])} is "
                                     f"not an Activity code {_VALID_LABELS.tolist()}; fix the label column")
        if len(block) and not units_checked:
            _check_units(path, block.line(0), [block.fields[c] for c in _GROUPS["acc"]], units)
            units_checked = True
        if units == "g":
            block.fields.update({c: block.fields[c] * STANDARD_GRAVITY for c in _GROUPS["acc"]})
        if len(block):
            yield block


def _check_units(path: Path, line: int, acc: list[np.ndarray], units: str) -> None:
    with np.errstate(over="ignore"):  # magnitudes past 1e308 are inf, which still reads as "not g"
        median = float(np.median(np.hypot(np.hypot(acc[0], acc[1]), acc[2])))
    if units == "m/s2" and median < _UNITS_SPLIT:
        raise LogFormatError(path, line, f"median |acc| of the first chunk is {median:.3g}, which looks "
                             "like g, not m/s² (gravity is 9.81 m/s²); read with units='g' to convert")
    if units == "g" and median >= _UNITS_SPLIT:
        raise LogFormatError(path, line, f"units='g' was given but median |acc| is {median:.3g}, which "
                             "looks like m/s² already; drop units='g'")


# --------------------------------------------------------------------------------------------
# reading: time order and gaps


def _ordered(blocks: Iterable[_Block], path: Path, max_gap_ns: float, split: bool,
             report: ReadReport) -> Iterator[tuple[int, _Block]]:
    """Check time order across blocks and cut at gaps; yield ``(segment_index, block)``."""
    segment, last_t, last_line = 0, None, None
    for block in blocks:
        t = block.t
        # Whole-block min/max first: the common, valid case costs one diff and two reductions.
        inner = np.diff(t)  # inner[j] is the step into row j + 1
        head = None if last_t is None else int(t[0]) - last_t  # the step into row 0

        def prev_t_line(row):
            return (int(t[row - 1]), block.line(row - 1)) if row > 0 else (last_t, last_line)

        if (head is not None and head <= 0) or (inner.size and inner.min() <= 0):
            row = 0 if head is not None and head <= 0 else int(np.flatnonzero(inner <= 0)[0]) + 1
            before, before_line = prev_t_line(row)
            what = "repeats" if t[row] == before else "goes back before"
            raise LogFormatError(path, block.line(row), f"t_ns={t[row]} {what} t_ns={before} of line "
                                 f"{before_line}; timestamps must strictly increase. "
                                 "Read with repair=('sort',) to sort and drop repeated timestamps")
        cuts = []
        if (head is not None and head > max_gap_ns) or (inner.size and inner.max() > max_gap_ns):
            cuts = ([0] if head is not None and head > max_gap_ns else []) + \
                (np.flatnonzero(inner > max_gap_ns) + 1).tolist()
            if not split:
                row = cuts[0]
                before, before_line = prev_t_line(row)
                raise LogFormatError(path, block.line(row), f"gap of {(t[row] - before) / 1e9:.3f} s after "
                                     f"line {before_line} exceeds max_gap_s={max_gap_ns / 1e9:g}; "
                                     "use read_segments(...) (repair 'split-gaps') or raise max_gap_s")
        if last_t is None:
            report.segments.append((block.line(0), block.line(0)))
        bounds = [0, *cuts, len(block)]
        for k, (lo, hi) in enumerate(zip(bounds[:-1], bounds[1:])):
            if k > 0:
                segment += 1
                report.segments.append((block.line(lo), block.line(lo)))
            if hi > lo:
                report.segments[-1] = (report.segments[-1][0], block.line(hi - 1))
                yield segment, block.take(slice(lo, hi))
        last_t, last_line = int(t[-1]), block.line(len(block) - 1)


def _sorted_block(blocks: list[_Block], report: ReadReport) -> list[_Block]:
    """The ``"sort"`` repair: one block in time order, repeated timestamps dropped (first line kept)."""
    if not blocks:
        return []
    whole = _join(blocks)
    # A sample is out of order when it is earlier than some sample above it in the file.
    late = whole.t < np.maximum.accumulate(whole.t)
    report._note("sort", "moved samples that were out of time order", whole.lines()[late])
    order = np.argsort(whole.t, kind="stable")  # stable: among equal times, file order decides
    whole = whole.take(order)
    repeat = np.zeros(len(whole), dtype=bool)
    repeat[1:] = whole.t[1:] == whole.t[:-1]
    report._note("sort", "dropped samples repeating an earlier timestamp (kept the first line)",
                 whole.lines()[repeat])
    return [whole.take(~repeat)]


# --------------------------------------------------------------------------------------------
# reading: public


def _resolve(path, repair, units, max_gap_s):
    repair = (repair,) if isinstance(repair, str) else tuple(repair)
    unknown = [r for r in repair if r not in REPAIRS]
    if unknown:
        raise ValueError(f"unknown repair(s) {unknown}; choose from {list(REPAIRS)}")
    if units not in _UNIT_NAMES:
        raise ValueError(f"{path}: units must be one of {sorted(_UNIT_NAMES)} (from the units argument, "
                         f"else the file's meta, else 'm/s2'), got {units!r}")
    if max_gap_s is None:
        max_gap_s = PipelineConfig().max_gap_s
    if not max_gap_s > 0:
        raise ValueError(f"max_gap_s must be > 0 (math.inf disables the check), got {max_gap_s!r}")
    return set(repair), _UNIT_NAMES[units], max_gap_s * 1e9


def _rechunk(blocks: Iterable[tuple[int, _Block]], chunk_rows: int) -> Iterator[tuple[int, list[_Block]]]:
    """Group block pieces into chunks of at most ``chunk_rows`` rows, never across a segment boundary."""
    pending, pending_seg, size = [], None, 0

    def flush():
        return pending_seg, pending

    for seg, block in blocks:
        if pending and seg != pending_seg:
            yield flush()
            pending, size = [], 0
        pending_seg = seg
        while len(block):
            take = min(chunk_rows - size, len(block))
            pending.append(block.take(slice(0, take)))
            size += take
            block = block.take(slice(take, None))
            if size == chunk_rows:
                yield flush()
                pending, size = [], 0
    if pending:
        yield flush()


def _to_log(blocks: list[_Block], meta: dict, steps: StepTruth | None) -> SensorLog:
    """Assemble blocks into a log, copying each column once straight into its (n, k) stream."""
    n = sum(len(b) for b in blocks)
    streams = {}
    for fname in _FLOAT_FIELDS:
        if _GROUPS[fname][0] in blocks[0].fields:
            out = np.empty((n, len(_GROUPS[fname])))
            for j, c in enumerate(_GROUPS[fname]):
                np.concatenate([b.fields[c] for b in blocks], out=out[:, j])
            streams[fname] = out
    if "label" in blocks[0].fields:
        streams["label"] = np.concatenate([b.fields["label"] for b in blocks])
    return SensorLog(t_ns=np.concatenate([b.t for b in blocks]), steps=steps, meta=meta, **streams)


def read_steps(path: str | Path) -> StepTruth | None:
    """Ground-truth steps of the log at ``path``, from its sidecar :func:`steps_path`; None if absent.

    :func:`read_log` attaches them itself; this is for callers that stream the log with
    :func:`iter_log_chunks`, whose chunks carry no steps.
    """
    sidecar = steps_path(path)
    if not sidecar.exists():
        return None
    header = _Header(sidecar, {}, ["t_ns", "kind"], 2)
    with _open_text(sidecar) as fh:
        columns = [c.strip() for c in fh.readline().rstrip("\r\n").split(",")]
    if columns != ["t_ns", "kind"]:
        raise LogFormatError(sidecar, 1, f"a steps sidecar has the header 't_ns,kind', got {columns}")
    batches = [b for _, b in _iter_batches(header, 1 << 20)]
    t = np.concatenate([b.column(0).to_numpy() for b in batches]) if batches else np.zeros(0, np.int64)
    kind = np.concatenate([b.column(1).to_numpy() for b in batches]) if batches else np.zeros(0, np.int64)
    if t.size > 1 and np.any(np.diff(t) < 0):
        i = int(np.flatnonzero(np.diff(t) < 0)[0]) + 1
        raise LogFormatError(sidecar, i + 2, "step times must be non-decreasing; sort the file")
    return StepTruth(t, kind)


def _segments_of(path, repair, units, max_gap_s, allow_sort):
    """Set up parse -> repairs -> order checks for ``path``; return ``(meta, report, segments)``."""
    path = Path(path)
    header = _read_header(path)
    if units is None:
        units = header.meta.get("units", "m/s2")
    repairs, units, max_gap_ns = _resolve(path, repair, units, max_gap_s)
    if "sort" in repairs and not allow_sort:
        raise ValueError("repair 'sort' needs the whole file; use read_log or read_segments, "
                         "or sort the file once with read_log(..., repair=('sort',)) + write_log")
    report = ReadReport(str(path), units=units)
    meta = dict(header.meta)
    if units == "g":
        meta["units"] = "m/s2"
        meta["converted_from_units"] = "g"
    blocks = _blocks(header, units, "drop-nan" in repairs, report)
    if "sort" in repairs:
        blocks = _sorted_block(list(blocks), report)
    return meta, report, _ordered(blocks, path, max_gap_ns, "split-gaps" in repairs, report)


def iter_log_chunks(path: str | Path, chunk_rows: int = 1_000_000, *, repair: Iterable[str] = (),
                    units: str | None = None, max_gap_s: float | None = None) -> Iterator[SensorLog]:
    """Read a canonical log as consecutive :class:`SensorLog` chunks, validating as it goes.

    Memory stays flat whatever the file length: at most about two chunks are held at once.

    Parameters
    ----------
    path : str or Path
        A ``.csv`` or ``.csv.gz`` log (see the module docstring for the format).
    chunk_rows : int
        Maximum samples per chunk; chunks are this long except the last and, with
        ``"split-gaps"``, the last of each segment.
    repair : iterable of {"drop-nan", "split-gaps"}
        ``"drop-nan"`` drops samples with nan/inf; ``"split-gaps"`` ends a chunk at every gap
        longer than ``max_gap_s`` and counts segments in ``chunk.meta["segment"]``. ``"sort"``
        needs the whole file and is refused here: use :func:`read_log`. Repairs are not reported
        by this generator; use :func:`read_log` or :func:`read_segments` with ``report=True``.
    units : {"m/s2", "g"} or None
        Accelerometer units in the file. ``None`` takes ``meta["units"]`` from the file, else
        m/s². A median magnitude that disagrees with the units is an error: nothing is guessed.
    max_gap_s : float or None
        Largest allowed time step; ``None`` uses :attr:`PipelineConfig.max_gap_s` (0.3 s).

    Yields
    ------
    SensorLog
        Consecutive chunks; the file's meta on each, steps (from the sidecar) on none.

    Raises
    ------
    LogFormatError
        Naming file, line and fix, on any malformed input, including timestamps that repeat or go
        back across a chunk boundary.

    Examples
    --------
    >>> import tempfile, numpy as np
    >>> acc = np.random.default_rng(0).normal([0, 0, 9.8], 0.1, (10, 3))
    >>> with tempfile.TemporaryDirectory() as d:
    ...     p = write_log(SensorLog(np.arange(10) * 20_000_000, acc), d + "/w.csv")
    ...     [len(c) for c in iter_log_chunks(p, chunk_rows=4)]
    [4, 4, 2]
    """
    if not (isinstance(chunk_rows, (int, np.integer)) and chunk_rows >= 1):
        raise ValueError(f"chunk_rows must be a positive int, got {chunk_rows!r}")
    meta, _, chunks = _segments_of(path, repair, units, max_gap_s, allow_sort=False)
    split = "split-gaps" in ((repair,) if isinstance(repair, str) else tuple(repair))
    for seg, blocks in _rechunk(chunks, chunk_rows):
        yield _to_log(blocks, {**meta, "segment": seg} if split else meta, None)


def _finish(report: ReadReport, want_report: bool, result):
    report.rows_kept = sum(len(log) for log in (result if isinstance(result, list) else [result]))
    if want_report:
        return result, report
    if report.repaired:
        warnings.warn(report.summary() + " (pass report=True to get the ReadReport)",
                      LogRepairedWarning, stacklevel=3)
    return result


def _nonempty(blocks: list, path: Path) -> list:
    if not blocks:
        raise LogFormatError(path, None, "the file has a header but no samples (after repairs); "
                             "check that the recording was not truncated")
    return blocks


def read_log(path: str | Path, *, repair: Iterable[str] = (), units: str | None = None,
             max_gap_s: float | None = None, report: bool = False):
    """Read a whole canonical log (with its steps sidecar) into one :class:`SensorLog`.

    Parameters
    ----------
    path : str or Path
        A ``.csv`` or ``.csv.gz`` log.
    repair : iterable of {"sort", "drop-nan"}
        Fix instead of failing: ``"sort"`` puts samples in time order and drops samples whose
        timestamp repeats an earlier one (the first line wins); ``"drop-nan"`` drops samples
        with nan/inf. ``"split-gaps"`` cannot return one log: use :func:`read_segments`.
    units, max_gap_s
        As in :func:`iter_log_chunks`.
    report : bool
        Also return the :class:`ReadReport`. Without it, any repair that changed something
        raises a :class:`LogRepairedWarning` with the summary, so nothing is dropped silently.

    Returns
    -------
    SensorLog, or (SensorLog, ReadReport) when ``report=True``.

    Examples
    --------
    >>> import tempfile, numpy as np
    >>> acc = np.random.default_rng(0).normal([0, 0, 1.0], 0.01, (4, 3))  # in g
    >>> with tempfile.TemporaryDirectory() as d:
    ...     p = d + "/w.csv"
    ...     with open(p, "w") as f:
    ...         _ = f.write("t_ns,ax,ay,az\\n0,0,0,1\\n20000000,nan,0,1\\n10000000,0,0,1.01\\n")
    ...     log, rep = read_log(p, units="g", repair=("sort", "drop-nan"), report=True)
    >>> log.t_ns.tolist(), round(float(log.acc[1, 2]), 4)
    ([0, 10000000], 9.9047)
    >>> [(a.repair, a.count, a.first_lines) for a in rep.actions]
    [('drop-nan', 1, [3])]
    """
    repairs = (repair,) if isinstance(repair, str) else tuple(repair)
    if "split-gaps" in repairs:
        raise ValueError("repair 'split-gaps' returns several logs; call read_segments(path, ...) instead")
    path = Path(path)
    meta, rep, chunks = _segments_of(path, repairs, units, max_gap_s, allow_sort=True)
    log = _to_log(_nonempty([b for _, b in chunks], path), meta, read_steps(path))
    return _finish(rep, report, log)


def read_segments(path: str | Path, *, repair: Iterable[str] = (), units: str | None = None,
                  max_gap_s: float | None = None, report: bool = False):
    """Read a log split at every gap longer than ``max_gap_s``: the ``"split-gaps"`` repair.

    Parameters
    ----------
    path, units, max_gap_s
        As in :func:`read_log`.
    repair : iterable of {"sort", "drop-nan"}
        Further repairs; ``"split-gaps"`` is implied.
    report : bool
        Also return the :class:`ReadReport`; its ``segments`` give each segment's file lines.

    Returns
    -------
    list of SensorLog, or (list, ReadReport)
        Gap-free logs in time order; ``meta["segment"]`` numbers them from 0 and each holds the
        ground-truth steps that fall within its time span.

    Examples
    --------
    >>> import tempfile, numpy as np
    >>> t = np.array([0, 20, 40, 1000, 1020]) * 1_000_000  # a 0.96 s gap after the third sample
    >>> acc = np.random.default_rng(0).normal([0, 0, 9.8], 0.1, (5, 3))
    >>> with tempfile.TemporaryDirectory() as d:
    ...     p = write_log(SensorLog(t, acc), d + "/w.csv")
    ...     segs, rep = read_segments(p, report=True)
    >>> [len(s) for s in segs], rep.segments
    ([3, 2], [(2, 4), (5, 6)])
    """
    repairs = (repair,) if isinstance(repair, str) else tuple(repair)
    path = Path(path)
    meta, rep, chunks = _segments_of(path, (*repairs, "split-gaps"), units, max_gap_s, allow_sort=True)
    by_segment: dict[int, list[_Block]] = {}
    for seg, block in chunks:
        by_segment.setdefault(seg, []).append(block)
    steps = read_steps(path)
    logs = []
    for seg, blocks in _nonempty(sorted(by_segment.items()), path):
        log = _to_log(blocks, {**meta, "segment": seg}, steps)
        logs.append(log.slice(0, len(log)) if steps is not None else log)
    return _finish(rep, report, logs)

