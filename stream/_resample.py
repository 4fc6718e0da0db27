"""Zero-order-hold resampling of a :class:`SensorLog` to a fixed rate (DESIGN.md, "Data model").

Used to get the thesis's 20 and 30 Hz from 50 Hz recordings (spec donini-easymkl-komd-climbtheworld-admm
§3.2) and by :attr:`PipelineConfig.rate_hz`.
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from ._log import SensorLog

__all__ = ["resample", "Resampler", "values_at"]

_STREAMS = ("acc", "gyro", "rotvec", "linacc", "label", "pressure")


def resample(log: SensorLog, rate_hz: float) -> SensorLog:
    """Resample every stream of ``log`` to ``rate_hz`` by zero-order hold.

    Output sample ``k`` sits at ``t_ns[0] + round(k * 1e9 / rate_hz)`` (rounded per sample, so
    non-integer periods such as 30 Hz's 33 333 333.3 ns never drift) and carries the values and
    label of the latest input sample at or before that time, as a phone's sensor hub would hold
    them. Output times run up to the last input time.

    Parameters
    ----------
    log : SensorLog
        The recording; any rate, regular or not.
    rate_hz : float
        Target rate, > 0.

    Returns
    -------
    SensorLog
        The resampled log; ground-truth steps are unchanged (they are times, not samples);
        ``meta["rate_hz"]`` is the new rate and ``meta["resampled_from_hz"]`` the old median rate.

    Notes
    -----
    Holding across a long gap repeats the last sample; split logs at gaps first
    (:func:`read_segments`) when that matters.

    Examples
    --------
    >>> import numpy as np
    >>> t = np.arange(6) * 20_000_000                      # 50 Hz
    >>> acc = np.column_stack([np.arange(6.0), np.zeros(6), np.full(6, 9.8)])
    >>> out = resample(SensorLog(t, acc), 30)
    >>> out.t_ns.tolist()
    [0, 33333333, 66666667, 100000000]
    >>> out.acc[:, 0].tolist()
    [0.0, 1.0, 3.0, 5.0]
    """
    return Resampler(rate_hz).process(log)


class Resampler:
    """:func:`resample` over a log that arrives in chunks; the grid and the held sample carry over.

    The output grid starts at the first sample of the first chunk and continues across chunks,
    and a grid point that falls between two chunks holds the last sample of the earlier one, so
    ``Resampler(r).process`` over any chunking equals ``resample`` of the whole log (the same
    carried-state contract as scipy's ``lfilter`` with ``zi``; tested with hypothesis).

    Parameters
    ----------
    rate_hz : float
        Target rate, > 0.
    """

    def __init__(self, rate_hz: float):
        if not (isinstance(rate_hz, (int, float, np.integer, np.floating)) and np.isfinite(rate_hz) and rate_hz > 0):
            raise ValueError(f"rate_hz must be a finite number > 0, got {rate_hz!r}")
        self.rate_hz = float(rate_hz)
        self.reset()

    def reset(self) -> None:
        """Forget the grid and the held sample (a new recording or a segment after a gap)."""
        self.t0_ = None      # time of grid point 0
        self.next_k_ = 0     # index of the first grid point not yet emitted
        self.held_ = None    # the previous chunk's last sample: time and one row per stream

    def process(self, log: SensorLog) -> SensorLog:
        """Resample one chunk; grid points up to its last time, holding across the chunk boundary."""
        if not isinstance(log, SensorLog):
            raise TypeError(f"resample needs a SensorLog, got {type(log).__name__}")
        if len(log) == 0:
            raise ValueError("cannot resample an empty log; it has no samples to hold")
        period_ns = 1e9 / self.rate_hz
        if self.t0_ is None:
            self.t0_ = int(log.t_ns[0])
        t_in = log.t_ns
        if self.held_ is not None:
            t_in = np.concatenate([[self.held_[0]], t_in])
        # One extra grid point: rounding to the nearest ns can pull point floor(span / period) + 1
        # back inside the span; the filter drops it when it is not.
        last_k = int(np.floor((int(t_in[-1]) - self.t0_) / period_ns)) + 2
        k = np.arange(self.next_k_, max(last_k, self.next_k_), dtype=np.int64)
        t_out = self.t0_ + np.rint(k * period_ns).astype(np.int64)
        t_out = t_out[t_out <= t_in[-1]]
        src = np.searchsorted(t_in, t_out, side="right") - 1
        self.next_k_ += t_out.size

        def held(name):
            arr = getattr(log, name)
            if arr is None:
                return None
            if self.held_ is not None:
                arr = np.concatenate([self.held_[1][name][None], arr])
            return arr[src]

        out = {name: held(name) for name in _STREAMS}
        self.held_ = (int(log.t_ns[-1]), {name: getattr(log, name)[-1].copy() for name in _STREAMS
                                          if getattr(log, name) is not None})
        meta = {**log.meta, "rate_hz": self.rate_hz, "resampled_from_hz": log.rate_hz}
        return replace(log, t_ns=t_out, meta=meta, **out)


def values_at(t_base: np.ndarray, t: np.ndarray, values: np.ndarray, kind: str = "linear") -> np.ndarray:
    """One stream's ``values`` (k, w), sampled at ``t``, at the times ``t_base`` inside its span.

    ``kind``: ``"linear"`` interpolates each column; ``"quaternion"`` does so after flipping each
    quaternion into its predecessor's hemisphere (q and −q are one rotation) and renormalises;
    ``"hold"`` takes the latest value at or before each time (labels). Never extrapolates: the
    caller keeps ``t_base`` within ``[t[0], t[-1]]``.

    >>> values_at(np.array([5, 10]), np.array([0, 10]), np.array([[0.0], [2.0]]))
    array([[1.],
           [2.]])
    """
    if kind == "hold":
        return values[np.searchsorted(t, t_base, side="right") - 1]
    if kind == "quaternion":
        flip = np.concatenate([[1.0], np.sign(np.einsum("ij,ij->i", values[1:], values[:-1]))])
        flip[flip == 0] = 1.0
        values = values * np.cumprod(flip)[:, None]
    elif kind != "linear":
        raise ValueError(f"kind must be 'linear', 'quaternion' or 'hold', got {kind!r}")
    out = np.column_stack([np.interp(t_base, t, values[:, j]) for j in range(values.shape[1])])
    if kind == "quaternion":
        out /= np.linalg.norm(out, axis=1, keepdims=True)
    return out
