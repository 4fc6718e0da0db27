"""Writing canonical sensor logs atomically (format: ``_csv_format``), whole or chunk by chunk, with the
steps sidecar."""
from __future__ import annotations

import contextlib
import gzip
import itertools
import json
from pathlib import Path
from typing import Iterable

import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv

from ._atomic import atomic_write
from ._csv_format import _GROUPS, _META_PREFIX, _prepare_sidecar, pressure_out_of_range, steps_path
from .._log import SensorLog, StepTruth

__all__ = ["write_log", "write_log_chunks"]



def _columns_of(log: SensorLog) -> dict[str, np.ndarray]:
    """The log's columns in canonical order: ``t_ns`` first, then every stream it has."""
    cols = {}
    for fname, names in _GROUPS.items():
        value = getattr(log, fname)
        if value is not None:
            value = value.reshape(len(value), -1)  # a one-column stream (t_ns, p, label) is 1-D in the log
            cols.update({c: value[:, j] for j, c in enumerate(names)})
    return cols


def _json_default(obj):
    # numpy scalars sneak into meta from arithmetic (e.g. a median rate); they have exact JSON forms.
    if isinstance(obj, np.generic):
        return obj.item()
    raise TypeError(f"meta value {obj!r} of type {type(obj).__name__} is not JSON-serialisable")


def write_log(log: SensorLog, path: str | Path, *, compresslevel: int = 1) -> Path:
    """Write ``log`` atomically in the canonical format (gzip when ``path`` ends in ``.gz``).

    Parameters
    ----------
    log : SensorLog
        The recording. Its ``meta`` (JSON-serialisable) goes on a ``# meta:`` line, its steps to
        the sidecar :func:`steps_path`; a stale sidecar from an earlier write is removed.
    path : str or Path
        Destination ending in ``.csv``, ``.csv.gz`` or ``.parquet`` (the binary format of
        ``_parquet``, fastest to replay); its folder must exist.
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
    >>> from stairsense.stream import read_log
    >>> rng = np.random.default_rng(0)
    >>> log = SensorLog(np.arange(5) * 20_000_000, rng.normal([0, 0, 9.8], 0.1, (5, 3)))
    >>> with tempfile.TemporaryDirectory() as d:
    ...     p = write_log(log, d + "/walk.csv.gz")
    ...     back = read_log(p)
    >>> bool(np.array_equal(back.acc, log.acc))
    True
    """
    if not isinstance(log, SensorLog):
        raise TypeError(f"write_log needs a SensorLog, got {type(log).__name__}")
    return write_log_chunks([log], path, compresslevel=compresslevel)


def write_log_chunks(chunks: Iterable[SensorLog], path: str | Path, *, compresslevel: int = 1) -> Path:
    """Write consecutive chunks of one log as :func:`write_log` writes the whole log, holding one chunk
    at a time: memory stays flat whatever the log's length, and the file is the same.

    Parameters
    ----------
    chunks : iterable of SensorLog
        Consecutive parts of one log, e.g. :func:`~stairsense.stream.simulate_chunks`'s. The first
        gives the meta; every chunk records the same streams; the steps of all of them go to the
        sidecar (none if no chunk has steps).
    path, compresslevel
        As in :func:`write_log`.

    Returns
    -------
    Path
        ``path``.

    Examples
    --------
    >>> import tempfile, numpy as np
    >>> from stairsense.stream import read_log
    >>> log = SensorLog(np.arange(6) * 20_000_000, np.random.default_rng(0).normal([0, 0, 9.8], 0.1, (6, 3)))
    >>> with tempfile.TemporaryDirectory() as d:
    ...     p = write_log_chunks([log.slice(0, 4), log.slice(4, 6)], d + "/walk.csv.gz")
    ...     same = np.array_equal(read_log(p).acc, log.acc)
    >>> same
    True
    """
    path = Path(path)
    sidecar = steps_path(path)
    if not 1 <= compresslevel <= 9:
        raise ValueError(f"compresslevel must be in 1..9, got {compresslevel!r}")
    chunks = iter(chunks)
    first = next(chunks, None)
    if first is None:
        raise ValueError(f"{path}: no samples to write")
    try:
        meta_line = json.dumps(dict(first.meta), sort_keys=True, allow_nan=False, default=_json_default)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{path}: cannot write log.meta as JSON ({exc}); keep meta to str/int/float/"
                         "list/dict values") from exc
    columns = list(_columns_of(first))
    steps: list[StepTruth] = []  # about two steps a second: small beside the samples

    def checked():
        offset = 0
        for chunk in itertools.chain([first], chunks):
            if not isinstance(chunk, SensorLog):
                raise TypeError(f"write_log needs SensorLog chunks, got {type(chunk).__name__}")
            if chunk.pressure is not None and (bad := pressure_out_of_range(chunk.pressure)) is not None:
                raise ValueError(f"{path}: pressure of sample {offset + bad[0]}: {bad[1]}; SensorLog.pressure is in "
                                 "hPa (= mbar): convert it before writing (the readers would refuse the file)")
            if chunk.steps is not None:
                steps.append(chunk.steps)
            offset += len(chunk)
            yield chunk

    _prepare_sidecar(path)
    if path.name.endswith(".parquet"):  # the binary log format (_parquet imports this module, hence here)
        from ._parquet import write_parquet_chunks

        write_parquet_chunks(checked(), path, first.meta)
    else:
        head = (f"{_META_PREFIX} {meta_line}\n" if first.meta else "") + ",".join(columns) + "\n"
        gz = path.name.endswith(".gz")
        with atomic_write(path) as tmp, open(tmp, "wb") as raw, (
                gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=compresslevel, mtime=0) if gz
                else contextlib.nullcontext(raw)) as out:
            out.write(head.encode())
            for chunk in checked():
                cols = _columns_of(chunk)
                if list(cols) != columns:
                    raise ValueError(f"{path}: a chunk has columns {list(cols)}, the first had {columns}; every "
                                     "chunk of a log must record the same streams")
                pacsv.write_csv(pa.table(cols), out, write_options=pacsv.WriteOptions(include_header=False))
    if steps:
        with atomic_write(sidecar) as tmp, open(tmp, "wb") as raw:
            raw.write(b"t_ns,kind\n")
            for part in steps:
                pacsv.write_csv(pa.table({"t_ns": part.t_ns, "kind": part.kind}), raw,
                                write_options=pacsv.WriteOptions(include_header=False))
    elif sidecar.exists():
        sidecar.unlink()
    return path
