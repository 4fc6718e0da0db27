"""Parsing a canonical log into validated blocks that keep their file line numbers.

Reading parses with Arrow's CSV parser (the fastest candidate measured by ``benchmarks/bench_read.py``):
a plain file is memory-mapped and cut at line ends into stretches of a few blocks, each parsed in one
call; gzip streams through Arrow's streaming reader. With more than one thread in Arrow's CPU pool
(``pyarrow.cpu_count()``: every core by default; ``OMP_NUM_THREADS=1`` or ``pyarrow.set_cpu_count(1)``
makes it one), the next stretch is parsed in a background thread while the caller checks and uses the
current one, and Arrow parses a stretch's blocks in parallel. On cores nobody else is using, replay's
wall time then tends to the larger of parsing and the front end instead of their sum; the threads cost
more CPU in all, so on a machine already busy they do not help (``benchmarks/bench_log_formats.py``
gives both settings). The batches, their line numbers and every error are the same either way.
Arrow does not say on which line a value failed, so when a stretch fails to parse it is re-scanned
line by line to name the exact line; the slow path runs only on bad input.
"""
from __future__ import annotations

import gzip
import json
import re
import zlib
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv

from ._csv_format import (_GROUPS, _HEADER_SPEC, _KNOWN, _META_PREFIX, _REQUIRED, LogFormatError,
                          pressure_out_of_range)
from ._csv_report import ReadReport
from .._log import PHYSICAL_LIMITS, STANDARD_GRAVITY, Activity

# Median |acc| of any real recording with gravity included is ~9.8 m/s² or ~1 g; 4 splits the two
# with a wide margin on both sides (even free fall and hard running keep the median far from it).
_UNITS_SPLIT = 4.0
_BOM = "\ufeff"
_VALID_LABELS = np.array(sorted(int(a) for a in Activity))
# Bytes of text the parser converts at a time. In a sweep (256 KB to 4 MB) on the files of
# benchmarks/bench_log_formats.py, 1 MB parsed the 15-column all-sensor log ~25 % faster (CPU) than
# 4 MB and the accelerometer-only log about as fast: a block's text and parsed columns then fit a 2 MB
# per-core cache. Smaller blocks pay per-block overhead.
_BLOCK_BYTES = 1 << 20
# The longest line a log may hold: a line the parser cannot take in one block. A sample line is under
# 500 characters; without a bound, a file that never ends a line (or never ends) is read into memory whole.
_MAX_LINE = _BLOCK_BYTES
# Blocks per stretch of a plain file parsed in one call: enough for Arrow to parse a stretch's blocks in
# parallel, few enough that the stretch being parsed ahead and the one in use stay small (~2 x 8 MB).
_STRETCH_BLOCKS = 8
# What the fast parser accepts, for the slow re-scan that names the bad line: Python's int() and
# float() are laxer (underscores, int64 overflow), so they cannot be the judge.
_INT_RE = re.compile(r"[+-]?[0-9]+")
_FLOAT_RE = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|[+-]?(?:nan|NaN|inf|Inf|infinity)")


# A barometer (or any stream slower than the accelerometer) with a value only on some lines is merged
# onto every line when the log is made; the reader does not guess values between readings.
_EMPTY_CELL_FIX = {"p": "Lines without a barometer reading of their own need the pressure at their time: import the "
                        "file with `stairsense import LOG --map \"t=t_ns,ax=ax,ay=ay,az=az,p=p\" --out NEW` (add "
                        "the other columns), which interpolates the readings onto every accelerometer time"}


# reading: header


@dataclass
class _Header:
    path: Path
    meta: dict
    columns: list[str]
    first_data_line: int  # 1-based line number of the first sample


def _open_text(path: Path):
    if path.name.endswith(".gz"):
        return gzip.open(path, "rt", encoding="utf-8", newline="")
    return open(path, encoding="utf-8", newline="")


def check_log_file(path: Path, what: str) -> None:
    """Refuse a missing path, a folder, or a device or pipe (which may never end) before opening it
    (``what``: the file the user should pass)."""
    if not path.exists():
        raise LogFormatError(path, None, "no such file; check the path (logs end in .csv, .csv.gz or .parquet)")
    if path.is_dir():
        raise LogFormatError(path, None, f"is a folder, not a log file; pass the {what} file")
    if not path.is_file():
        raise LogFormatError(path, None, f"is not a regular file (a device, pipe or socket, which may never end); "
                             f"pass the {what} file itself")


def read_line(fh, path: Path, line: int) -> str:
    """The next line of the text file ``fh`` (line number ``line``), refused if longer than any log line."""
    text = fh.readline(_MAX_LINE + 1)
    if len(text) > _MAX_LINE:
        raise LogFormatError(path, line, f"the line is longer than {_MAX_LINE:,} characters (a sample line has "
                             "under 500); the file is damaged or not a sensor log: fix or delete the line")
    return text


def parse_meta(path: Path, line: int | None, raw, where: str) -> dict:
    """The JSON object of a log's meta (``where`` names it in errors: a line or a metadata key)."""
    try:
        meta = json.loads(raw)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise LogFormatError(path, line, f"{where} is not valid JSON ({exc}); fix or delete it") from None
    if not isinstance(meta, dict):
        raise LogFormatError(path, line, f"{where} must hold a JSON object, got {type(meta).__name__}")
    return meta


def _read_header(path: Path) -> _Header:
    check_log_file(path, ".csv, .csv.gz or .parquet")
    try:
        with _open_text(path) as fh:
            # Windows editors and spreadsheet exports put a UTF-8 byte-order mark before the first line.
            first = read_line(fh, path, 1).removeprefix(_BOM)
            second = read_line(fh, path, 2) if first.startswith(_META_PREFIX) else None
    except (OSError, EOFError, zlib.error, UnicodeDecodeError) as exc:
        raise LogFormatError(path, None, f"cannot be read as {'gzip ' if path.suffix == '.gz' else ''}"
                             f"text ({exc}); a .gz name needs gzip content, other names plain CSV") from exc
    if not first:
        raise LogFormatError(path, 1, "the file is empty; expected a header line such as 't_ns,ax,ay,az'")
    meta, line = {}, 1
    if second is not None:
        meta = parse_meta(path, 1, first[len(_META_PREFIX):], "the '# meta:' line")
        first, line = second, 2
        if not first:
            raise LogFormatError(path, 2, "the file ends after the '# meta:' line; expected a header line "
                                 "such as 't_ns,ax,ay,az'")
    columns = [c.strip() for c in first.rstrip("\r\n").split(",")]
    _check_columns(path, line, columns)
    return _Header(path, meta, columns, line + 1)


def _check_columns(path: Path, line: int, columns: list[str]) -> None:
    expected = _HEADER_SPEC
    dup = sorted({c for c in columns if columns.count(c) > 1})
    if dup:
        raise LogFormatError(path, line, f"header repeats column(s) {dup}; each column may appear once")
    unknown = [c for c in columns if c not in _KNOWN]
    if unknown:
        raise LogFormatError(path, line, f"header has unknown column(s) {unknown}; expected {expected} "
                             "(is this line data instead of a header?)")
    for fname, group in _GROUPS.items():
        present = [c for c in group if c in columns]
        required = fname in _REQUIRED
        if (required or present) and len(present) != len(group):
            missing = [c for c in group if c not in columns]
            why = "is required" if required else "is all-or-nothing"
            raise LogFormatError(path, line, f"header lacks column(s) {missing}: the {fname} group "
                                 f"{list(group)} {why}; expected {expected}")


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


def _column_values(column: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """The values of a null-free int64 or float64 column, as ``column.to_numpy()`` gives them (a
    read-only view of one chunk; several chunks concatenated).

    Arrow's ``to_numpy`` runs its pandas conversion, whose first call imports pandas wherever it is
    installed: about 0.5 s, as long as the rest of a replay of a two-hour all-sensor log. The readers'
    columns have no nulls (CSV has no null markers; Parquet nulls are refused), so the data buffer
    is the whole column.
    """
    dtype = np.dtype(column.type.to_pandas_dtype())
    chunks = column.chunks if isinstance(column, pa.ChunkedArray) else [column]
    views = [np.frombuffer(chunk.buffers()[1], dtype=dtype, count=len(chunk), offset=chunk.offset * dtype.itemsize)
             for chunk in chunks if len(chunk)]
    if len(views) == 1:
        return views[0]
    return np.concatenate(views) if views else np.zeros(0, dtype)


def _iter_batches(header: _Header, block_bytes: int) -> Iterator[tuple[int, pa.Table | pa.RecordBatch]]:
    """Yield ``(first_line, table)`` per stretch (plain file) or block (gzip); on a parse failure name
    the exact line by a slow re-scan."""
    threads = pa.cpu_count() > 1
    parse_opts = pacsv.ParseOptions(quote_char=False, ignore_empty_lines=False)
    # No null markers: an empty field must fail rather than become a silent missing value.
    convert_opts = pacsv.ConvertOptions(column_types=_arrow_types(header.columns), null_values=[],
                                        strings_can_be_null=False)

    def read_options(skip_rows, block_size=block_bytes):
        return pacsv.ReadOptions(column_names=header.columns, skip_rows=skip_rows, block_size=block_size,
                                 use_threads=threads)

    pieces = (_stream_pieces(header, read_options, parse_opts, convert_opts) if header.path.name.endswith(".gz")
              else _stretch_pieces(header, block_bytes, read_options, parse_opts, convert_opts))
    if threads:
        pieces = _read_ahead(pieces)
    line = header.first_data_line
    try:
        for table in pieces:
            yield line, table
            line += table.num_rows
    except (pa.ArrowInvalid, OSError) as exc:
        if "Empty CSV file" in str(exc):
            return
        _rescan(header, line, exc)
    finally:
        pieces.close()  # now, not at garbage collection: stops the read-ahead thread, closes the file


def _stream_pieces(header, read_options, parse_opts, convert_opts) -> Iterator[pa.RecordBatch]:
    """A gzip log through Arrow's streaming reader, a block at a time (a decoder cannot seek)."""
    source = pa.input_stream(str(header.path), compression="gzip")
    with pacsv.open_csv(source, read_options=read_options(header.first_data_line - 1), parse_options=parse_opts,
                        convert_options=convert_opts) as reader:
        yield from reader


def _stretch_pieces(header, block_bytes, read_options, parse_opts, convert_opts) -> Iterator[pa.Table]:
    """A plain log, memory-mapped (read in place: no copies), parsed one stretch of whole lines at a time.

    Each stretch comes as one table of contiguous columns: the checks and the chunking downstream then
    run once per stretch rather than once per block (their per-call cost was ~12 % of the read), and
    the copy that joins the blocks is made here, in the read-ahead thread when there is one.
    """
    text = pa.memory_map(str(header.path)).read_buffer()
    data = np.frombuffer(text, dtype=np.uint8)
    start = 0
    for _ in range(header.first_data_line - 1):
        start = _line_end(data, start)
    if start == data.size:
        # No '\n' after the header: lines end in a lone '\r' (Arrow and the header reader accept it, but
        # there is nothing to cut at), or there are no samples. One stretch; Arrow skips the header lines.
        yield _parse(text, read_options(header.first_data_line - 1, data.size + 1), parse_opts, convert_opts)
        return
    while start < data.size:
        end = _line_end(data, start + _STRETCH_BLOCKS * block_bytes)
        yield _parse(text.slice(start, end - start), read_options(0), parse_opts, convert_opts)
        start = end


def _parse(text: pa.Buffer, read_options, parse_opts, convert_opts) -> pa.Table:
    table = pacsv.read_csv(pa.BufferReader(text), read_options=read_options, parse_options=parse_opts,
                           convert_options=convert_opts)
    return table.combine_chunks()


def _line_end(data: np.ndarray, pos: int) -> int:
    """Offset just past the first ``\n`` at or after ``pos``; the end of ``data`` if there is none."""
    step = 1 << 12  # lines are short: look a page at a time
    while pos < data.size:
        found = np.flatnonzero(data[pos:pos + step] == ord("\n"))
        if found.size:
            return pos + int(found[0]) + 1
        pos += step
    return data.size


_DONE = object()


def _read_ahead(pieces: Iterator) -> Iterator:
    """Yield ``pieces`` while the next one is computed in a background thread.

    Arrow's parser and numpy release the GIL, so parsing the next stretch overlaps the caller's work on
    this one. Items and exceptions arrive in the same order as without the thread.
    """
    pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="stairsense-read")
    pending = pool.submit(next, pieces, _DONE)
    try:
        while (piece := pending.result()) is not _DONE:
            pending = pool.submit(next, pieces, _DONE)
            yield piece
    finally:
        # Never wait for the thread here: this also runs when garbage collection finalizes a reader
        # dropped mid-file, possibly inside threading's own locks, where a join deadlocks. The source is
        # closed once the piece in progress is done (at once if none is), then the thread exits.
        pending.add_done_callback(lambda _: pieces.close())
        pool.shutdown(wait=False, cancel_futures=True)


def _rescan(header: _Header, from_line: int, exc: Exception):
    """Parse lines from ``from_line`` on one at a time and raise on the first bad one."""
    path, ncol = header.path, len(header.columns)
    types = _arrow_types(header.columns)
    try:
        with _open_text(path) as fh:
            lineno = 0
            while text := read_line(fh, path, lineno + 1):
                lineno += 1
                if lineno >= from_line:
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
        if not value:
            raise LogFormatError(path, lineno, f"column {name!r} is empty; every line holds a value in every "
                                 f"column. {_EMPTY_CELL_FIX.get(name, 'Fill it or delete the line')}")
        if types[name] == pa.int64():
            ok = _INT_RE.fullmatch(value) is not None and -(2**63) <= int(value) < 2**63
            kind = "an integer within int64"
        else:
            ok = _FLOAT_RE.fullmatch(value) is not None
            kind = "a number"
        if not ok:
            raise LogFormatError(path, lineno, f"column {name!r} must be {kind}, got {value!r}; "
                                 "fix or delete the line")


def _limits(columns, units: str) -> dict[str, tuple[float, str]]:
    """Each float column's largest magnitude and unit as the file states values (an accelerometer in g
    is checked in g: converting first could overflow); a column without one (``p``, which has a
    range of its own) is only checked to be finite."""
    limits = {c: (np.inf, "") for c in columns if c not in ("t_ns", "label")}
    for group, (limit, unit) in PHYSICAL_LIMITS.items():
        if group == "acc" and units == "g":
            limit, unit = limit / STANDARD_GRAVITY, "g"
        limits.update({c: (limit, unit) for c in _GROUPS[group] if c in columns})
    return limits


def _within(column: np.ndarray, limit: float) -> bool:
    """Whether every value of ``column`` is finite and at most ``limit`` in magnitude (nan reaches the
    min and the max, and fails both tests)."""
    low, high = column.min(), column.max()
    return bool(np.isfinite(low) and np.isfinite(high) and -limit <= low and high <= limit)


def _possible(block: _Block, limits, drop_nan: bool, drop_impossible: bool, path: Path,
              report: ReadReport) -> _Block:
    """``block`` without samples holding nan/inf or values beyond a phone sensor's range (each
    dropped only by its named repair, and reported), else an error naming the first such line."""
    finite = np.ones(len(block), dtype=bool)
    for c in limits:
        finite &= np.isfinite(block.fields[c])
    if not finite.all():
        if not drop_nan:
            i = int(np.flatnonzero(~finite)[0])
            column = next(c for c in limits if not np.isfinite(block.fields[c][i]))
            raise LogFormatError(path, block.line(i), f"non-finite value (nan or inf) in column {column!r}; fix "
                                 "the line or use repair 'drop-nan' to drop such samples (each is reported)")
        report._note("drop-nan", "dropped samples with nan/inf values", block.lines()[~finite])
        block = block.take(finite)
    possible = np.ones(len(block), dtype=bool)
    for c, (limit, _) in limits.items():
        possible &= np.abs(block.fields[c]) <= limit
    if not possible.all():
        if not drop_impossible:
            i = int(np.flatnonzero(~possible)[0])
            c = next(c for c, (limit, _) in limits.items() if abs(block.fields[c][i]) > limit)
            limit, unit = limits[c]
            unit = f" {unit}" if unit else ""
            raise LogFormatError(path, block.line(i), f"{c} = {block.fields[c][i]:g}{unit} is beyond any phone "
                                 f"sensor (accepted: |{c}| <= {limit:.4g}{unit}); fix or delete the line, or use "
                                 "repair 'drop-impossible' to drop such samples (each is reported)")
        report._note("drop-impossible", "dropped samples with values beyond a phone sensor's range",
                     block.lines()[~possible])
        block = block.take(possible)
    return block


def _blocks(header: _Header, units: str, drop_nan: bool,
            report: ReadReport, batches: Iterator[tuple[int, pa.RecordBatch]] | None = None,
            drop_impossible: bool = False) -> Iterator[_Block]:
    """Parse (or take ``batches``, e.g. a Parquet log's), check values (finite, within a phone sensor's
    range), labels and units, convert g to m/s²."""
    path = header.path
    units_checked = False
    limits = _limits(header.columns, units)
    if batches is None:
        batches = _iter_batches(header, _BLOCK_BYTES)
    for line0, batch in batches:
        n = batch.num_rows
        cols = {name: _column_values(batch.column(i)) for i, name in enumerate(header.columns)}
        report.rows_read += n
        block = _Block(cols.pop("t_ns"), cols, line0)
        # Fast path: one min and one max per column. A nan fails every comparison, so only a block
        # with a nan, an inf or an impossible value goes to the per-sample checks.
        if n and not all(_within(cols[c], limit) for c, (limit, _) in limits.items()):
            block = _possible(block, limits, drop_nan, drop_impossible, path, report)
        if "p" in cols:
            bad = pressure_out_of_range(block.fields["p"])
            if bad is not None:
                i, reason, _ = bad
                raise LogFormatError(path, block.line(i), f"air pressure p: {reason}; p must be in hPa (= mbar), "
                                     "convert the column")
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
