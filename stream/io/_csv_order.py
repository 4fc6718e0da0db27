"""Time order and gaps across parsed blocks: the checks, the gap split, and the repairs for what real
phones do to timestamps: ``"sort"`` (reordering), ``"dedupe"`` (repeated timestamps from sensor
batching) and ``"trim-startup"`` (a slow or bursty start before the sensor reaches its rate).

Advice in the errors names repairs as ``repair 'NAME'``: the Python readers take ``repair=("NAME",)``
and the command line ``--repair NAME`` (the CLI rewrites the phrase for its users).
"""
from __future__ import annotations

from pathlib import Path
from typing import Iterable, Iterator

import numpy as np

from ._csv_format import LogFormatError
from ._csv_parse import _Block, _join
from ._csv_report import ReadReport



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
            if t[row] == before:
                fix = ("phones repeat timestamps when they batch sensor events; use repair 'dedupe' to drop "
                       "the repeats (each is reported)")
            else:
                fix = "use repair 'sort' to put the samples in time order (each move is reported)"
            what = "repeats" if t[row] == before else "goes back before"
            raise LogFormatError(path, block.line(row), f"t_ns={t[row]} {what} t_ns={before} of line "
                                 f"{before_line}; timestamps must strictly increase: {fix}")
        cuts = []
        if (head is not None and head > max_gap_ns) or (inner.size and inner.max() > max_gap_ns):
            cuts = ([0] if head is not None and head > max_gap_ns else []) + \
                (np.flatnonzero(inner > max_gap_ns) + 1).tolist()
            if not split:
                row = cuts[0]
                before, before_line = prev_t_line(row)
                raise LogFormatError(path, block.line(row), f"gap of {(t[row] - before) / 1e9:.3f} s after "
                                     f"line {before_line} exceeds max_gap_s={max_gap_ns / 1e9:g} (the longest step the "
                                     "front end bridges); use repair 'split-gaps' to restart after each gap "
                                     "(each split is reported)")
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


def _deduped(blocks: Iterable[_Block], report: ReadReport) -> Iterator[_Block]:
    """The ``"dedupe"`` repair, streaming: drop a sample whose timestamp repeats the previous one.

    Android batches sensor events and can stamp several with one time. A repeat with the same
    values is an exact duplicate; a repeat with other values is a real sample whose time was lost,
    and there is no honest time to give it, so the first line is kept. Both are counted, separately.
    Timestamps that go back further are not repeats: that is ``"sort"``'s job.
    """
    last = None  # (t, values) of the last kept sample of the previous block
    for block in blocks:
        names = list(block.fields)
        values = np.column_stack([block.fields[c] for c in names]) if names else np.zeros((len(block), 0))
        prev_t = np.empty(len(block), dtype=block.t.dtype)
        prev_t[1:] = block.t[:-1]
        prev_t[0] = block.t[0] - 1 if last is None else last[0]  # nothing before the first sample
        repeat = block.t == prev_t
        if repeat.any():
            # Compare each repeat with the sample kept for its timestamp (the first line of the run),
            # which may sit in the previous block.
            run_start = np.maximum.accumulate(np.where(~repeat, np.arange(len(block)), -1))
            kept = values[np.maximum(run_start, 0)]
            if last is not None:
                kept[run_start < 0] = last[1]
            same = repeat & (values == kept).all(axis=1)
            report._note("dedupe", "dropped exact duplicates (timestamp and values repeat the kept line)",
                         block.lines()[same])
            report._note("dedupe", "dropped samples repeating the previous timestamp with other values "
                         "(kept the first line)", block.lines()[repeat & ~same])
            block = block.take(~repeat)
            values = values[~repeat]
        if len(block):
            last = (block.t[-1], values[-1])
            yield block


# A start-up stretch ends where the sample interval stays within this factor of the nominal one...
_STEADY_TOLERANCE = 0.5
# ... for at least this long (and at least _STEADY_MIN_SAMPLES intervals).
_STEADY_S = 0.5
_STEADY_MIN_SAMPLES = 5


def _trimmed_startup(blocks: Iterable[_Block], path: Path, report: ReadReport) -> Iterator[_Block]:
    """The ``"trim-startup"`` repair: drop the samples before the sensor reaches its steady rate.

    Phones often deliver the first samples slowly (e.g. 5 Hz) or after a pause, then the full rate.
    The nominal interval is the median interval of the first block; the log starts at the first
    sample from which every interval stays within ±50 % of it for 0.5 s. Only the start is
    trimmed; later irregularities are left to the gap rule.
    """
    blocks = iter(blocks)
    first = next(blocks, None)
    if first is None:
        return
    dt = np.diff(first.t)
    if dt.size >= _STEADY_MIN_SAMPLES:
        nominal = float(np.median(dt))
        if nominal <= 0:
            raise LogFormatError(path, first.line(0), "repair 'trim-startup' needs increasing timestamps; "
                                 "use repair 'dedupe' or 'sort' as well")
        run = max(_STEADY_MIN_SAMPLES, int(np.ceil(_STEADY_S * 1e9 / nominal)))
        steady = np.abs(dt - nominal) <= _STEADY_TOLERANCE * nominal
        # Steady runs of `run` intervals starting at i: a windowed count over the steady flags.
        counts = np.convolve(steady.astype(np.int64), np.ones(min(run, dt.size), dtype=np.int64), "valid")
        starts = np.flatnonzero(counts == min(run, dt.size))
        if starts.size == 0:
            raise LogFormatError(path, first.line(0), f"repair 'trim-startup' found no {_STEADY_S:g} s stretch at a "
                                 f"steady rate near {1e9 / nominal:.1f} Hz in the first {dt.size + 1} samples; "
                                 "the log's timing is irregular throughout, so trimming cannot help")
        cut = int(starts[0])
        if cut:
            report._note("trim-startup", f"dropped start-up samples before the steady {1e9 / nominal:.1f} Hz rate "
                         f"({(first.t[cut] - first.t[0]) / 1e9:.3f} s)", first.lines()[:cut])
            first = first.take(slice(cut, None))
    yield first
    yield from blocks
