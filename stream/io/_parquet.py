"""Sensor logs as Parquet files: the binary log format.

Parsing CSV bounds replay of all-sensor logs (17 columns): decimal text costs far more to read than
the front end costs to run. A ``.parquet`` log holds the same columns as the canonical CSV
(``_csv_format``: ``t_ns`` int64, the sensor groups float64, ``label`` int64) as binary column
chunks, and :attr:`SensorLog.meta` as JSON in the file's key-value metadata
(``stairsense.meta``); ground-truth steps stay in the plain CSV sidecar of ``steps_path``. The
readers (``read_log``, ``read_segments``, ``iter_log_chunks``, hence ``replay``) take either
format: a Parquet log gives the same record batches the CSV parser gives, and they pass through the
same checks (finite values, labels, units, time order and gaps). Error positions are 1-based row
numbers in place of line numbers.

Why Parquet rather than Arrow IPC: it is the format other tools (pandas, polars, DuckDB, Spark)
read. A memory-mapped IPC file decodes faster still (measured ~190 M rows/s against ~20 M rows/s
for these 15 columns, one core), but at 20 M rows/s decoding is already a small part of a read
that copies, checks and front-end-processes every sample. Row groups of 2^16 rows and no
compression: sensor floats hardly compress (their low bits are noise), and decompression would cost
the read speed this format exists for. Files hold 8 bytes a value, ~40 % of the CSV.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Iterable, Iterator

import pyarrow as pa
import pyarrow.parquet as pq

from ._atomic import atomic_write
from ._csv_format import LogFormatError
from ._csv_parse import _arrow_types, _check_columns, _Header, check_log_file, parse_meta
from ._csv_write import _columns_of, _json_default
from .._log import SensorLog

__all__ = ["PARQUET_SUFFIX", "is_parquet", "parquet_header", "parquet_batches", "write_parquet_chunks"]

PARQUET_SUFFIX = ".parquet"
_META_KEY = b"stairsense.meta"
# Rows per row group and per batch read: the replay chunk (REPLAY_CHUNK_ROWS = 2^16), so a chunk is
# one decoded row group, not slices stitched from two (bare decoding ran ~20 % faster than batches
# cut from 2^20-row groups); the first batch also feeds the units check, whose median costs O(rows).
_ROW_GROUP_ROWS = 1 << 16
_READ_ROWS = _ROW_GROUP_ROWS


def is_parquet(path: str | Path) -> bool:
    """Whether ``path`` names a Parquet log (by its ``.parquet`` suffix, as ``.gz`` names gzip)."""
    return Path(path).name.endswith(PARQUET_SUFFIX)


def parquet_header(path: Path) -> _Header:
    """Columns and meta of a Parquet log, checked like a CSV header (row 1 is the first sample)."""
    check_log_file(path, ".parquet")
    try:
        schema = pq.read_schema(path)
    except (pa.ArrowInvalid, OSError) as exc:
        raise LogFormatError(path, None, f"cannot be read as Parquet ({exc}); a .parquet name needs a Parquet "
                             "file (write one with `stairsense convert LOG.csv LOG.parquet`)") from None
    columns = list(schema.names)
    _check_columns(path, None, columns)
    for name, wanted in _arrow_types(columns).items():
        kind = schema.field(name).type
        numeric = pa.types.is_integer(kind) if wanted == pa.int64() else (pa.types.is_floating(kind)
                                                                           or pa.types.is_integer(kind))
        if not numeric:
            raise LogFormatError(path, None, f"column {name!r} has type {kind}, expected "
                                 f"{'an integer' if wanted == pa.int64() else 'a number'}")
    raw = (schema.metadata or {}).get(_META_KEY)
    meta = {} if raw is None else parse_meta(path, None, raw, f"the '{_META_KEY.decode()}' metadata")
    return _Header(path, meta, columns, 1)


def parquet_batches(header: _Header, rows: int = _READ_ROWS) -> Iterator[tuple[int, pa.RecordBatch]]:
    """Yield ``(first_row, batch)`` with the canonical column types, like ``_csv_parse._iter_batches``."""
    types = _arrow_types(header.columns)
    schema = pa.schema([(c, types[c]) for c in header.columns])
    row = header.first_data_line
    try:
        # pre_buffer (Arrow's default) keeps every column chunk read so far until the file is closed:
        # memory grew with the log (a 24 h 100 Hz replay peaked at 1.35 GB). Off, a local read is as fast
        # (measured on a 4 h log) and holds one row group.
        with pq.ParquetFile(header.path, pre_buffer=False) as source:
            for batch in source.iter_batches(batch_size=rows, columns=header.columns, use_threads=False):
                if batch.schema != schema:
                    batch = batch.cast(schema)
                if any(column.null_count for column in batch.columns):
                    i = next(i for i, column in enumerate(batch.columns) if column.null_count)
                    first = batch.columns[i].is_null().index(True).as_py()
                    raise LogFormatError(header.path, row + first, f"column {header.columns[i]!r} has a missing "
                                         "value (null); fix the file or drop the row")
                yield row, batch
                row += batch.num_rows
    except (pa.ArrowInvalid, OSError) as exc:
        raise LogFormatError(header.path, None, f"the Parquet file is truncated or corrupt ({exc}); re-copy or "
                             "re-convert it") from None


def write_parquet_chunks(chunks: Iterable[SensorLog], path: str | Path, meta: dict) -> Path:
    """Write consecutive chunks of one log as a Parquet log, atomically (temporary file, then rename).

    Parameters
    ----------
    chunks : iterable of SensorLog
        With the same streams each; consumed once (a generator keeps memory at one chunk).
    path : str or Path
        Ends in ``.parquet``.
    meta : dict
        JSON-serialisable; stored as the file's ``stairsense.meta``.

    Returns
    -------
    Path

    Examples
    --------
    >>> import tempfile, numpy as np
    >>> from stairsense.stream import read_log
    >>> log = SensorLog(np.arange(6) * 20_000_000, np.random.default_rng(0).normal([0, 0, 9.8], 0.1, (6, 3)))
    >>> with tempfile.TemporaryDirectory() as d:
    ...     p = write_parquet_chunks([log.slice(0, 3), log.slice(3, 6)], d + "/w.parquet", {"subject": 7})
    ...     back = read_log(p)
    >>> bool(np.array_equal(back.acc, log.acc)), back.meta
    (True, {'subject': 7})
    """
    path = Path(path)
    metadata = {_META_KEY: json.dumps(dict(meta), sort_keys=True, allow_nan=False, default=_json_default)}

    with atomic_write(path) as tmp, open(tmp, "wb") as raw:
        writer, pending = None, None
        try:
            for chunk in chunks:
                table = pa.table(_columns_of(chunk))
                if writer is None:
                    schema = table.schema.with_metadata(metadata)
                    writer = pq.ParquetWriter(raw, schema, compression="none", use_dictionary=False,
                                              write_statistics=False)
                elif table.schema.names != writer.schema.names:
                    raise ValueError(f"{path}: a chunk has columns {table.schema.names}, the first had "
                                     f"{writer.schema.names}; every chunk of a log must record the same streams")
                # Whole row groups whatever the chunks' lengths; the rest waits for the next chunk.
                pending = table if pending is None else pa.concat_tables([pending, table])
                whole = pending.num_rows - pending.num_rows % _ROW_GROUP_ROWS
                if whole:
                    writer.write_table(pending.slice(0, whole).replace_schema_metadata(metadata),
                                       row_group_size=_ROW_GROUP_ROWS)
                    pending = pending.slice(whole)
            if writer is None:
                raise ValueError(f"{path}: no samples to write")
            if pending.num_rows:
                writer.write_table(pending.replace_schema_metadata(metadata), row_group_size=_ROW_GROUP_ROWS)
        finally:
            if writer is not None:
                writer.close()
    return path
