"""The plain step counter that ``bench_step_detection.py`` runs beside the pattern segmentation.

It is the textbook peer: low-pass filter the acceleration magnitude, then count peaks that are
far enough apart and prominent enough (the family of counters that Salvi et al., EMBC 2018,
optimise on the Oxford data). It needs no orientation at all, so it is a fair baseline for the
accelerometer-only ``orientation="vertical"`` front end. Its parameters are tuned on the same
recordings by :func:`plain_grid` so the comparison is against a tuned peer, not a strawman.

The filter is zero-phase (``sosfiltfilt``), which a phone cannot run causally: that favours the
baseline, never us.
"""
from __future__ import annotations

import itertools

import numpy as np
from scipy.signal import butter, find_peaks, sosfiltfilt

__all__ = ["PlainCounter", "magnitude_lowpass", "count_peaks", "plain_grid"]


def magnitude_lowpass(t_ns: np.ndarray, acc: np.ndarray, cutoff_hz: float, order: int = 4):
    """Zero-phase Butterworth low-pass of ``‖acc‖``; returns ``(filtered, rate_hz)``.

    The Oxford phones sample at ~200 or ~400 Hz with small jitter; the filter treats samples as
    uniform at the median rate, as a phone-side counter would.
    """
    rate_hz = 1e9 / float(np.median(np.diff(t_ns)))
    if not 0 < cutoff_hz < rate_hz / 2:
        raise ValueError(f"cutoff_hz must be in (0, {rate_hz / 2:.1f}) Hz for a {rate_hz:.1f} Hz log, "
                         f"got {cutoff_hz!r}")
    sos = butter(order, cutoff_hz, btype="low", fs=rate_hz, output="sos")
    return sosfiltfilt(sos, np.linalg.norm(acc, axis=1)), rate_hz


def count_peaks(filtered: np.ndarray, rate_hz: float, min_distance_s: float, prominence: float) -> np.ndarray:
    """Indices of peaks at least ``min_distance_s`` apart with at least ``prominence`` m/s²."""
    distance = max(1, int(round(min_distance_s * rate_hz)))
    peaks, _ = find_peaks(filtered, distance=distance, prominence=prominence)
    return peaks


class PlainCounter:
    """Low-pass + peak-detection step counter on the acceleration magnitude.

    Parameters
    ----------
    cutoff_hz : float
        Butterworth low-pass cut-off.
    min_distance_s : float
        Shortest time between two counted steps.
    prominence : float
        Minimum peak prominence, m/s².
    order : int
        Butterworth order.

    Examples
    --------
    >>> import numpy as np
    >>> t = np.arange(0, 10, 0.01)
    >>> acc = np.c_[np.zeros_like(t), np.zeros_like(t), 9.81 + 2 * np.sin(2 * np.pi * 2 * t)]
    >>> len(PlainCounter(3.0, 0.3, 1.0).step_indices((t * 1e9).astype(np.int64), acc))
    20
    """

    def __init__(self, cutoff_hz: float = 3.0, min_distance_s: float = 0.3, prominence: float = 1.0, order: int = 4):
        self.cutoff_hz = cutoff_hz
        self.min_distance_s = min_distance_s
        self.prominence = prominence
        self.order = order

    def step_indices(self, t_ns: np.ndarray, acc: np.ndarray) -> np.ndarray:
        filtered, rate_hz = magnitude_lowpass(t_ns, acc, self.cutoff_hz, self.order)
        return count_peaks(filtered, rate_hz, self.min_distance_s, self.prominence)


def plain_grid(logs, cutoffs, distances, prominences) -> dict[tuple[float, float, float], np.ndarray]:
    """Step counts of every log for every parameter triple ``(cutoff, distance, prominence)``.

    Filters each log once per cut-off and reuses it for every peak-picking setting.
    """
    counts = {}
    for i, log in enumerate(logs):
        for cutoff in cutoffs:
            filtered, rate_hz = magnitude_lowpass(log.t_ns, log.acc, cutoff)
            for distance, prominence in itertools.product(distances, prominences):
                key = (cutoff, distance, prominence)
                counts.setdefault(key, np.zeros(len(logs), dtype=np.int64))[i] = count_peaks(
                    filtered, rate_hz, distance, prominence).size
    return counts
