"""Time order and gaps across parsed blocks: the checks, the gap split and the ``"sort"`` repair."""
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
