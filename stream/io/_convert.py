"""Converting a sensor log between the CSV formats and Parquet (``stairsense convert``)."""
from __future__ import annotations

import itertools
from pathlib import Path
from typing import Iterable

from ._atomic import atomic_write
from ._csv_format import LogFormatError, _prepare_sidecar, steps_path
from ._csv_read import iter_log_chunks
from ._csv_report import ReadReport
from ._csv_write import write_log_chunks

__all__ = ["convert_log"]

# Chunk of the streamed conversion: 16 Parquet row groups, ~140 MB of 17 float64 columns.
_CONVERT_ROWS = 1 << 20


def convert_log(src: str | Path, dst: str | Path, *, repair: Iterable[str] = (), report: bool = False):
    """Rewrite the log ``src`` in the format ``dst``'s name asks for (.csv, .csv.gz or .parquet).

    The input passes every check of :func:`~stairsense.stream.read_log`; values round-trip exactly
    (CSV floats are written in shortest round-trip form, Parquet stores the float64 bits). The input
    streams through in chunks of 2^20 samples, so memory stays flat in the log's length. The steps
    sidecar is copied beside ``dst`` (a stale one there is removed).

    Parameters
    ----------
    src, dst : str or Path
        Input and output logs; ``dst`` is written atomically.
    repair : iterable of {"drop-nan", "drop-impossible", "dedupe", "trim-startup"}
        As in :func:`~stairsense.stream.read_log`.
    report : bool
        Also return the :class:`~stairsense.stream.ReadReport` of what the repairs changed.

    Returns
    -------
    int, or (int, ReadReport) when ``report=True``
        Samples written.

    Examples
    --------
    >>> import tempfile, numpy as np
    >>> from stairsense.stream import SensorLog, write_log, read_log
    >>> log = SensorLog(np.arange(4) * 20_000_000, np.random.default_rng(0).normal([0, 0, 9.8], 0.1, (4, 3)))
    >>> with tempfile.TemporaryDirectory() as d:
    ...     n = convert_log(write_log(log, d + "/w.csv"), d + "/w.parquet")
    ...     same = np.array_equal(read_log(d + "/w.parquet").acc, log.acc)
    >>> n, same
    (4, True)
    """
    src, dst = Path(src), Path(dst)
    repair = tuple(repair)
    if "split-gaps" in repair or "sort" in repair:
        raise ValueError("convert keeps one log in file order; repairs 'split-gaps' and 'sort' are not offered")
    _prepare_sidecar(dst)  # before the source's sidecar is looked up: it may be the one renamed
    read = ReadReport(str(src))
    chunks = iter_log_chunks(src, chunk_rows=_CONVERT_ROWS, repair=repair, report=read)
    first = next(chunks, None)
    if first is None:
        raise LogFormatError(src, None, "the file has a header but no samples; nothing to convert")
    write_log_chunks(itertools.chain([first], chunks), dst)  # the chunks carry no steps: a stale sidecar goes
    _copy_steps(src, dst)
    return (read.rows_kept, read) if report else read.rows_kept


def _copy_steps(src: Path, dst: Path) -> None:
    source, target = steps_path(src, existing=True), steps_path(dst)
    if source.exists():
        with atomic_write(target) as tmp:
            tmp.write_bytes(source.read_bytes())
    elif target.exists():
        target.unlink()
