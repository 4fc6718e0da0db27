"""Reading canonical sensor logs: whole, by gap-free segment, or in chunks, with named repairs.

The pieces: the format (``_csv_format``), parsing to line-numbered blocks (``_csv_parse``), time
order and gaps (``_csv_order``) and the report of repairs (``_csv_report``); this module composes
them into the public readers.
"""
from __future__ import annotations

import warnings
from pathlib import Path
from typing import Iterable, Iterator

import numpy as np

from .._config import PipelineConfig
from ._csv_format import _GROUPS, LogFormatError, steps_path
from ._csv_order import _deduped, _ordered, _sorted_block, _trimmed_startup
from ._csv_parse import _blocks, _Block, _column_values, _Header, _iter_batches, _open_text, _read_header, read_line
from ._csv_report import REPAIRS, LogRepairedWarning, ReadReport
from .._log import SensorLog, StepTruth
from ._parquet import is_parquet, parquet_batches, parquet_header

__all__ = ["iter_log_chunks", "read_log", "read_segments", "read_steps"]

_UNIT_NAMES = {"m/s2": "m/s2", "m/s^2": "m/s2", "m/s²": "m/s2", "g": "g"}


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
    """Assemble blocks into a log, copying each column once straight into its stream: (n, k) for a
    group of k columns, (n,) for a one-column stream (``p``, ``label``)."""
    n = sum(len(b) for b in blocks)
    streams = {}
    for fname, names in _GROUPS.items():
        if fname == "t_ns" or names[0] not in blocks[0].fields:
            continue
        if len(names) == 1:
            streams[fname] = np.concatenate([b.fields[names[0]] for b in blocks])
            continue
        out = np.empty((n, len(names)))
        for j, c in enumerate(names):
            np.concatenate([b.fields[c] for b in blocks], out=out[:, j])
        streams[fname] = out
    return SensorLog(t_ns=np.concatenate([b.t for b in blocks]), steps=steps, meta=meta, **streams)


def read_steps(path: str | Path) -> StepTruth | None:
    """Ground-truth steps of the log at ``path``, from its sidecar :func:`steps_path`; None if absent.

    :func:`read_log` attaches them itself; this is for callers that stream the log with
    :func:`iter_log_chunks`, whose chunks carry no steps.
    """
    sidecar = steps_path(path, existing=True)
    if not sidecar.exists():
        return None
    if not sidecar.is_file():
        raise LogFormatError(sidecar, None, f"is {'a folder' if sidecar.is_dir() else 'not a regular file'}, not the "
                             f"steps sidecar of {Path(path).name}; rename or remove it")
    header = _Header(sidecar, {}, ["t_ns", "kind"], 2)
    with _open_text(sidecar) as fh:
        columns = [c.strip() for c in read_line(fh, sidecar, 1).rstrip("\r\n").split(",")]
    if columns != ["t_ns", "kind"]:
        raise LogFormatError(sidecar, 1, f"a steps sidecar has the header 't_ns,kind', got {columns}")
    batches = [b for _, b in _iter_batches(header, 1 << 20)]
    t = np.concatenate([_column_values(b.column(0)) for b in batches]) if batches else np.zeros(0, np.int64)
    kind = np.concatenate([_column_values(b.column(1)) for b in batches]) if batches else np.zeros(0, np.int64)
    if t.size > 1 and np.any(np.diff(t) < 0):
        i = int(np.flatnonzero(np.diff(t) < 0)[0]) + 1
        raise LogFormatError(sidecar, i + 2, "step times must be non-decreasing; sort the file")
    return StepTruth(t, kind)


def _segments_of(path, repair, units, max_gap_s, report: ReadReport | None = None):
    """Set up parse -> repairs -> order checks for ``path``; return ``(meta, report, segments)``.

    The repairs run in a fixed order whatever order they are named in: drop-nan and drop-impossible
    while parsing, sort (whole file), dedupe, trim-startup, then the order and gap checks (split-gaps).
    """
    path = Path(path)
    parquet = is_parquet(path)  # the binary log format: same batches, same checks (_parquet)
    header = parquet_header(path) if parquet else _read_header(path)
    if units is None:
        units = header.meta.get("units", "m/s2")
    repairs, units, max_gap_ns = _resolve(path, repair, units, max_gap_s)
    report = report if report is not None else ReadReport(str(path))
    report.path, report.units = str(path), units
    meta = dict(header.meta)
    if units == "g":
        meta["units"] = "m/s2"
        meta["converted_from_units"] = "g"
    blocks = _blocks(header, units, "drop-nan" in repairs, report, parquet_batches(header) if parquet else None,
                     drop_impossible="drop-impossible" in repairs)
    if "sort" in repairs:
        blocks = _sorted_block(list(blocks), report)
    if "dedupe" in repairs:
        blocks = _deduped(blocks, report)
    if "trim-startup" in repairs:
        blocks = _trimmed_startup(blocks, path, report)
    return meta, report, _ordered(blocks, path, max_gap_ns, "split-gaps" in repairs, report)


def iter_log_chunks(path: str | Path, chunk_rows: int = 1_000_000, *, repair: Iterable[str] = (),
                    units: str | None = None, max_gap_s: float | None = None,
                    report: ReadReport | None = None) -> Iterator[SensorLog]:
    """Read a canonical log as consecutive :class:`SensorLog` chunks, validating as it goes.

    Memory stays flat whatever the file length: at most about two chunks are held at once.

    Parameters
    ----------
    path : str or Path
        A ``.csv`` or ``.csv.gz`` log (see the module docstring for the format).
    chunk_rows : int
        Maximum samples per chunk; chunks are this long except the last and, with
        ``"split-gaps"``, the last of each segment.
    repair : iterable of {"drop-nan", "drop-impossible", "dedupe", "trim-startup", "split-gaps", "sort"}
        ``"drop-nan"`` drops samples with nan/inf; ``"drop-impossible"`` samples with a value beyond
        any phone sensor's range (|acc| > 1000 m/s², |gyro| > 100 rad/s, a quaternion component
        beyond ±2), which are otherwise an error; ``"dedupe"`` drops samples repeating the
        previous timestamp; ``"trim-startup"`` drops the samples before the steady rate;
        ``"split-gaps"`` ends a chunk at every gap longer than ``max_gap_s`` and counts segments
        in ``chunk.meta["segment"]``. ``"sort"`` reorders, which holds the whole file in memory.
        What the repairs did goes to ``report`` (see :class:`ReadReport`).
    units : {"m/s2", "g"} or None
        Accelerometer units in the file. ``None`` takes ``meta["units"]`` from the file, else
        m/s². A median magnitude that disagrees with the units is an error: nothing is guessed.
    max_gap_s : float or None
        Largest allowed time step; ``None`` uses :attr:`PipelineConfig.max_gap_s` (0.3 s). Pass
        :meth:`PipelineConfig.read_gap_s` to read for a given front end.
    report : ReadReport, optional
        Filled in as the chunks are read: rows read, repairs, segments (``rows_kept`` too once
        the generator is exhausted).

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
    >>> from stairsense.stream import write_log
    >>> acc = np.random.default_rng(0).normal([0, 0, 9.8], 0.1, (10, 3))
    >>> with tempfile.TemporaryDirectory() as d:
    ...     p = write_log(SensorLog(np.arange(10) * 20_000_000, acc), d + "/w.csv")
    ...     [len(c) for c in iter_log_chunks(p, chunk_rows=4)]
    [4, 4, 2]
    """
    if not (isinstance(chunk_rows, (int, np.integer)) and chunk_rows >= 1):
        raise ValueError(f"chunk_rows must be a positive int, got {chunk_rows!r}")
    meta, report, chunks = _segments_of(path, repair, units, max_gap_s, report)
    split = "split-gaps" in ((repair,) if isinstance(repair, str) else tuple(repair))
    for seg, blocks in _rechunk(chunks, chunk_rows):
        chunk = _to_log(blocks, {**meta, "segment": seg} if split else meta, None)
        report.rows_kept += len(chunk)
        yield chunk


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
    repair : iterable of {"sort", "dedupe", "drop-nan", "drop-impossible", "trim-startup"}
        Fix instead of failing: ``"sort"`` puts samples in time order and drops samples whose
        timestamp repeats an earlier one (the first line wins); ``"dedupe"`` drops samples that
        repeat the previous timestamp (exact duplicates and same-time samples counted apart);
        ``"drop-nan"`` drops samples with nan/inf, ``"drop-impossible"`` samples beyond a phone sensor's
        range (see :func:`iter_log_chunks`); ``"trim-startup"`` drops a slow or bursty
        start before the steady rate. ``"split-gaps"`` cannot return one log: use :func:`read_segments`.
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
    >>> from stairsense.stream import write_log
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
    meta, rep, chunks = _segments_of(path, repairs, units, max_gap_s)
    log = _to_log(_nonempty([b for _, b in chunks], path), meta, read_steps(path))
    return _finish(rep, report, log)


def read_segments(path: str | Path, *, repair: Iterable[str] = (), units: str | None = None,
                  max_gap_s: float | None = None, report: bool = False):
    """Read a log split at every gap longer than ``max_gap_s``: the ``"split-gaps"`` repair.

    Parameters
    ----------
    path, units, max_gap_s
        As in :func:`read_log`.
    repair : iterable of {"sort", "dedupe", "drop-nan", "drop-impossible", "trim-startup"}
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
    >>> from stairsense.stream import write_log
    >>> acc = np.random.default_rng(0).normal([0, 0, 9.8], 0.1, (5, 3))
    >>> with tempfile.TemporaryDirectory() as d:
    ...     p = write_log(SensorLog(t, acc), d + "/w.csv")
    ...     segs, rep = read_segments(p, report=True)
    >>> [len(s) for s in segs], rep.segments
    ([3, 2], [(2, 4), (5, 6)])
    """
    repairs = (repair,) if isinstance(repair, str) else tuple(repair)
    path = Path(path)
    meta, rep, chunks = _segments_of(path, (*repairs, "split-gaps"), units, max_gap_s)
    by_segment: dict[int, list[_Block]] = {}
    for seg, block in chunks:
        by_segment.setdefault(seg, []).append(block)
    steps = read_steps(path)
    logs = []
    for seg, blocks in _nonempty(sorted(by_segment.items()), path):
        log = _to_log(blocks, {**meta, "segment": seg}, steps)
        logs.append(log.slice(0, len(log)) if steps is not None else log)
    return _finish(rep, report, logs)
