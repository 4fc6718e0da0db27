"""Zero-order-hold resampling of a :class:`SensorLog` to a fixed rate (DESIGN.md, "Data model").

Used to get the thesis's 20 and 30 Hz from 50 Hz recordings (spec donini-easymkl-komd-climbtheworld-admm
§3.2) and by :attr:`PipelineConfig.rate_hz`.
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from ._log import SensorLog

__all__ = ["resample"]


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
    if not isinstance(log, SensorLog):
        raise TypeError(f"resample needs a SensorLog, got {type(log).__name__}")
    if not (isinstance(rate_hz, (int, float, np.integer, np.floating)) and np.isfinite(rate_hz) and rate_hz > 0):
        raise ValueError(f"rate_hz must be a finite number > 0, got {rate_hz!r}")
    if len(log) == 0:
        raise ValueError("cannot resample an empty log; it has no samples to hold")
    period_ns = 1e9 / float(rate_hz)
    span = int(log.t_ns[-1] - log.t_ns[0])
    # One extra grid point: rounding to the nearest ns can pull point floor(span / period) + 1
    # back inside the span; the filter drops it when it is not.
    k = np.arange(int(np.floor(span / period_ns)) + 2, dtype=np.int64)
    t_out = log.t_ns[0] + np.rint(k * period_ns).astype(np.int64)
    t_out = t_out[t_out <= log.t_ns[-1]]
    src = np.searchsorted(log.t_ns, t_out, side="right") - 1

    def held(arr):
        return None if arr is None else arr[src]

    meta = {**log.meta, "rate_hz": float(rate_hz), "resampled_from_hz": log.rate_hz}
    return replace(log, t_ns=t_out, acc=held(log.acc), gyro=held(log.gyro), rotvec=held(log.rotvec),
                   linacc=held(log.linacc), label=held(log.label), meta=meta)
