"""Causal buffer means: the smoothing buffer (spec §3.3) and the gravity buffer (spec §3.4).

Both stages of the thesis are "the per-axis mean of the readings in a short buffer"; they differ
only in whether the newest reading is already in the buffer when the mean is taken:

* smoothing (§3.3): the mean m of the last 300 ms is computed *before* the new reading is
  inserted, so the current sample is excluded;
* gravity (§3.4): the spec resolves the thesis's silence by including the current sample.

One piece of code serves both through ``include_current``. The buffer of sample i holds the
samples j with ``t_j >= t_i - span`` (time mode, the spec's proposal for "the last 300 ms") or the
last ``count`` samples (count mode, the thesis's literal cyclic buffer). Nothing is emitted until
the buffer is full: in time mode until ``span`` has elapsed since the first sample; in count mode
until ``count`` samples are buffered.

:class:`CausalBufferMean` has both forms over one state: ``push`` (one sample, O(1) amortised,
pure Python floats because a numpy call per sample costs more than the arithmetic) and ``process``
(a block with prefix sums, the buffer carried over as scipy's ``lfilter`` carries ``zi``).
"""
from __future__ import annotations

from collections import deque

import numpy as np

__all__ = ["CausalBufferMean", "causal_buffer_mean"]

_RESUM_EVERY = 4096  # the running sums of ``push`` are recomputed from the buffer this often


def _gap_message(t_ns, span_ns):
    return (
        f"no sample within the {span_ns / 1e6:.0f} ms buffer before t_ns={t_ns}: the log has a gap "
        "longer than the buffer. Split the log at gaps first (repair 'split-gaps', with "
        "max_gap_s=PipelineConfig.read_gap_s())."
    )


class CausalBufferMean:
    """Causal buffer mean of a three-axis stream, per sample or per block.

    Parameters
    ----------
    span_ns : int, optional
        Buffer length in nanoseconds (time mode).
    count : int, optional
        Buffer length in samples (count mode). Give exactly one of the two.
    include_current : bool
        Whether sample i is in its own buffer (gravity) or not (smoothing).

    Examples
    --------
    >>> import numpy as np
    >>> smoother = CausalBufferMean(span_ns=300_000_000)
    >>> [smoother.push(i * 100_000_000, float(i), 0.0, 0.0) for i in range(5)]
    [None, None, None, (1.0, 0.0, 0.0), (2.0, 0.0, 0.0)]
    >>> first, m = CausalBufferMean(span_ns=300_000_000).process(
    ...     np.arange(5) * 100_000_000, np.c_[np.arange(5.0), np.zeros(5), np.zeros(5)])
    >>> first, m[:, 0].tolist()
    (3, [1.0, 2.0])
    """

    def __init__(self, *, span_ns=None, count=None, include_current=False):
        if (span_ns is None) == (count is None):
            raise ValueError("give exactly one of span_ns (time mode) or count (count mode)")
        if span_ns is not None and span_ns <= 0:
            raise ValueError(f"span_ns must be > 0, got {span_ns}")
        if count is not None and count < 1:
            raise ValueError(f"count must be >= 1, got {count}")
        self.span_ns = span_ns
        self.count = count
        self.include_current = include_current
        self.reset()

    def reset(self):
        self._buf = deque()
        self._sx = self._sy = self._sz = 0.0
        self._t_first = None
        self._seen = 0
        self._since_resum = 0

    # -- per sample ---------------------------------------------------------------------------
    def _full(self, t_ns):
        if self.span_ns is not None:
            return t_ns - self._t_first >= self.span_ns
        return self._seen >= (self.count - 1 if self.include_current else self.count)

    def _evict(self, t_ns):
        buf = self._buf
        if self.span_ns is not None:
            limit = t_ns - self.span_ns
            while buf and buf[0][0] < limit:
                self._drop(buf.popleft())
        else:
            while len(buf) > self.count:
                self._drop(buf.popleft())

    def _drop(self, sample):
        self._sx -= sample[1]
        self._sy -= sample[2]
        self._sz -= sample[3]

    def _insert(self, t_ns, x, y, z):
        self._buf.append((t_ns, x, y, z))
        self._sx += x
        self._sy += y
        self._sz += z
        self._since_resum += 1
        if self._since_resum >= _RESUM_EVERY:
            self._resum()

    def _resum(self):
        # A plain left-to-right loop, not sum(): CPython >= 3.12's sum() of floats is compensated, so
        # the result would depend on the Python version and the Java port could not match it.
        self._since_resum = 0
        sx = sy = sz = 0.0
        for _, x, y, z in self._buf:
            sx += x
            sy += y
            sz += z
        self._sx, self._sy, self._sz = sx, sy, sz

    def _mean(self, t_ns):
        n = len(self._buf)
        if n == 0:
            raise ValueError(_gap_message(t_ns, self.span_ns))
        return (self._sx / n, self._sy / n, self._sz / n)

    def push(self, t_ns, x, y, z):
        """Consume one sample; return the buffer mean ``(x, y, z)`` or ``None`` while filling."""
        if self._t_first is None:
            self._t_first = t_ns
        full = self._full(t_ns)
        self._seen += 1
        if self.span_ns is not None:
            self._evict(t_ns)
        if self.include_current:
            self._insert(t_ns, x, y, z)
            self._evict(t_ns)
            return self._mean(t_ns) if full else None
        out = self._mean(t_ns) if full else None
        self._insert(t_ns, x, y, z)
        self._evict(t_ns)
        return out

    # -- per block ----------------------------------------------------------------------------
    def process(self, t_ns, values):
        """Consume a block; return ``(first, means)`` with means for ``t_ns[first:]``.

        Equivalent to calling :meth:`push` on every row (to rounding): the buffer is carried
        from the previous call and left as ``push`` would leave it.
        """
        t_ns = np.asarray(t_ns, dtype=np.int64)
        values = np.asarray(values, dtype=np.float64)
        n = t_ns.size
        if n == 0:
            return 0, values[:0]
        if self._t_first is None:
            self._t_first = int(t_ns[0])
        h = len(self._buf)
        if h:
            hist = np.array(self._buf)
            t_all = np.concatenate([hist[:, 0].astype(np.int64), t_ns])
            v_all = np.concatenate([hist[:, 1:], values])
        else:
            t_all, v_all = t_ns, values
        pos = np.arange(h, h + n)
        stop = pos + 1 if self.include_current else pos
        if self.span_ns is not None:
            start = np.searchsorted(t_all, t_ns - self.span_ns, side="left")
            first = int(np.searchsorted(t_ns, self._t_first + self.span_ns, side="left"))
        else:
            start = np.maximum(stop - self.count, 0)
            need = self.count - 1 if self.include_current else self.count
            first = max(0, need - self._seen)
        first = min(first, n)
        # Prefix sums per axis (rows contiguous for fast gathers). Offsetting by one sample keeps
        # them small: gravity alone would grow them by ~10 m/s² per sample and cost digits.
        ref = v_all[0].copy()
        columns = v_all.T.copy()  # C order; never a view of the caller's array
        columns -= ref[:, None]
        prefix = np.empty((v_all.shape[1], t_all.size + 1))
        prefix[:, 0] = 0.0
        np.cumsum(columns, axis=1, out=prefix[:, 1:])
        lo, hi = start[first:], stop[first:]
        counts = hi - lo
        if counts.size and counts.min() == 0:
            empty = int(np.flatnonzero(counts == 0)[0])
            raise ValueError(_gap_message(int(t_ns[first + empty]), self.span_ns))
        # hi is consecutive (one output per row), so only lo needs a gather.
        upper = prefix[:, hi[0] : hi[-1] + 1] if hi.size else prefix[:, :0]
        means = ((upper - np.take(prefix, lo, axis=1)) / counts).T + ref
        self._seen += n
        self._carry(t_all, v_all)
        return first, means

    def _carry(self, t_all, v_all):
        """Leave in the buffer what ``push`` would have left after the last row."""
        if self.span_ns is not None:
            keep_from = int(np.searchsorted(t_all, t_all[-1] - self.span_ns, side="left"))
        else:
            keep_from = max(0, t_all.size - self.count)
        self._buf = deque(zip(t_all[keep_from:].tolist(), *v_all[keep_from:].T.tolist()))
        self._resum()


def causal_buffer_mean(t_ns, values, *, span_ns=None, count=None, include_current=False):
    """Batch form over a whole stream: ``CausalBufferMean(...).process(t_ns, values)``.

    Returns
    -------
    first : int
        Index of the first sample with an output.
    means : ndarray, shape (n - first, c)
    """
    return CausalBufferMean(span_ns=span_ns, count=count, include_current=include_current).process(t_ns, values)
