"""Standardization: smoothing, gravity removal and rotation to a fixed frame (spec §3.3–§3.4).

The chain for each orientation method (``PipelineConfig.orientation``):

=========  ===================  ===============  ==========================================
method     input stream         gravity removal  frame
=========  ===================  ===============  ==========================================
rotvec     accelerometer        500 ms mean      rotation vector → ENU (the thesis's method)
ahrs       accelerometer        500 ms mean      Madgwick(acc, gyro) → ENU, heading = start
vertical   accelerometer        500 ms mean      smallest rotation of gravity to +Z
linear     linear acceleration  (phone's own)    rotation vector → ENU (baseline "Linear")
mizell     accelerometer        500 ms mean      vertical p and horizontal h (6 columns)
=========  ===================  ===============  ==========================================

Smoothing (``PipelineConfig.smoothing``) is the causal 300 ms buffer mean applied first to the
input stream; the gravity buffer then runs on the smoothed stream ("Smoothed + Our" in Table 12.2).

:class:`Standardizer` is the per-sample form, :func:`standardize` the batch form; they give the
same samples (to rounding) and the same first output index.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ._config import ORIENTATION_METHODS, PipelineConfig

from ._buffer_mean import CausalBufferMean
from ._log import SensorLog
from ._orientation import (
    MadgwickOrientation,
    mizell_components,
    rotate_by_quaternion,
    rotate_one,
    rotate_to_vertical,
    vertical_rotate_one,
)

__all__ = ["Standardized", "Standardizer", "standardize", "resolve_orientation"]

# The streams each orientation method reads beside the accelerometer.
_STREAMS_NEEDED = {"rotvec": ("rotvec",), "ahrs": ("gyro",), "linear": ("linacc", "rotvec")}


def resolve_orientation(config: PipelineConfig, log: SensorLog) -> str:
    """The concrete orientation method for ``log``; ``auto`` is rotvec when recorded, else vertical.

    ``auto`` does not pick ``ahrs`` when a gyroscope is present, by measurement
    (``benchmarks/results/orientation.md``): on UCI HAPT's real stairs ``ahrs`` kept 1.0–1.3 % fewer
    upstairs step windows than ``vertical`` (never more), equal counts on the simulator at 20–100 Hz,
    and 6 of 10 steps per flight with it on a pocket recording. The segmentation reads
    only the vertical axis, which the accelerometer's 500 ms mean gives as well as the filter;
    and a model then sees the same standardisation on phones with and without a gyroscope (the
    Oxford phones have none). ``ahrs`` stays available explicitly.

    Raises ``ValueError`` naming the missing stream when an explicit method cannot run on the log.
    """
    method = config.orientation
    if method == "auto":
        return "rotvec" if log.rotvec is not None else "vertical"
    missing = [name for name in _STREAMS_NEEDED.get(method, ()) if getattr(log, name) is None]
    if missing:
        source = log.meta.get("path", log.meta.get("source", "the log"))
        raise ValueError(
            f"orientation={method!r} needs the {', '.join(missing)} stream, which {source} did not record; "
            "use orientation='auto' to pick what the log supports."
        )
    return method


def _smoothing_count(config: PipelineConfig, rate_hz: float | None) -> int:
    if rate_hz is None or not np.isfinite(rate_hz):
        raise ValueError("smoothing='count' needs the sampling rate (rate_hz) to size the buffer")
    return max(1, round(config.smooth_ms * 1e-3 * rate_hz))


def _ms(ms: float) -> int:
    return int(round(ms * 1e6))


@dataclass(frozen=True)
class Standardized:
    """Output of the standardization stage for one gap-free log.

    Attributes
    ----------
    t_ns : ndarray of int64, shape (m,)
        Timestamps of the standardized samples (those of the input samples they come from).
    samples : ndarray, shape (m, 3) or (m, 6)
        ENU dynamic acceleration (x East, y North, z Up), or Mizell's (p, h) in the device frame.
    vertical : ndarray, shape (m,)
        Vertical dynamic acceleration (positive up) that the segmentation runs on.
    first : int
        Index in the input log of the first standardized sample (the buffers' warm-up).
    method : str
        The orientation method used.
    """

    t_ns: np.ndarray
    samples: np.ndarray
    vertical: np.ndarray
    first: int
    method: str


def standardize(log: SensorLog, config: PipelineConfig) -> Standardized:
    """Batch form of the standardization chain (spec §3.3–§3.4) over a whole gap-free log."""
    method = resolve_orientation(config, log)
    std = Standardizer(config, method, rate_hz=log.rate_hz)
    return std.process(log.t_ns, log.acc, gyro=log.gyro, rotvec=log.rotvec, linacc=log.linacc)


class Standardizer:
    """Per-sample form of :func:`standardize` (what the phone runs).

    Parameters
    ----------
    config : PipelineConfig
    method : str
        A concrete orientation method (see :func:`resolve_orientation`).
    rate_hz : float, optional
        Needed only for ``smoothing='count'``.

    ``push(t_ns, acc, gyro=None, rotvec=None, linacc=None)`` returns ``(t_ns, sample, vertical)``
    with ``sample`` a tuple of 3 (or 6 for Mizell) floats, or ``None`` while the buffers fill.
    """

    def __init__(self, config: PipelineConfig, method: str, rate_hz: float | None = None):
        if method not in ORIENTATION_METHODS:
            raise ValueError(f"method must be one of {ORIENTATION_METHODS}, got {method!r} (resolve 'auto' first)")
        self.config = config
        self.method = method
        self.rate_hz = rate_hz
        # push checks these per sample: three flags, not the method's list of names
        needed = _STREAMS_NEEDED.get(method, ())
        self._needs_gyro, self._needs_rotvec, self._needs_linacc = (n in needed for n in ("gyro", "rotvec", "linacc"))
        self.reset()

    def reset(self):
        cfg = self.config
        self._smoother = None
        if cfg.smoothing == "time":
            self._smoother = CausalBufferMean(span_ns=_ms(cfg.smooth_ms))
        elif cfg.smoothing == "count":
            self._smoother = CausalBufferMean(count=_smoothing_count(cfg, cfg.rate_hz or self.rate_hz))
        self._gravity = CausalBufferMean(span_ns=_ms(cfg.gravity_ms), include_current=True)
        self._ahrs = MadgwickOrientation() if self.method == "ahrs" else None

    def _check_streams(self, gyro, rotvec, linacc) -> None:
        """One line naming the stream the method reads that the caller did not give (not a TypeError
        from deep inside the filter or the rotation)."""
        given = {"gyro": gyro, "rotvec": rotvec, "linacc": linacc}
        missing = [name for name in _STREAMS_NEEDED.get(self.method, ()) if given[name] is None]
        if missing:
            raise ValueError(f"orientation {self.method!r} reads the {' and '.join(missing)} stream beside the "
                             f"accelerometer, and none was given; pass {', '.join(f'{m}=' for m in missing)} or "
                             "standardize with a method the recording supports (resolve_orientation)")

    def process(self, t_ns, acc, gyro=None, rotvec=None, linacc=None) -> Standardized:
        """Consume a block of samples (arrays); state carries over exactly as with ``push``.

        ``first`` of the result is the index in this block of the first standardized sample.
        """
        method = self.method
        self._check_streams(gyro, rotvec, linacc)
        t = np.asarray(t_ns, dtype=np.int64)
        quats = rotvec
        if self._ahrs is not None:
            quats = self._ahrs.run(t, acc, gyro)
        x = linacc if method == "linear" else acc
        first = 0
        if self._smoother is not None:
            first, x = self._smoother.process(t, x)
        if method == "linear":
            samples = rotate_by_quaternion(quats[first:], x)
            return Standardized(t[first:], samples, samples[:, 2], first, method)
        skip, g = self._gravity.process(t[first:], x)
        first += skip
        d = x[skip:] - g
        if method == "mizell":
            p, h, vertical = mizell_components(g, d)
            return Standardized(t[first:], np.hstack([p, h]), vertical, first, method)
        if method == "vertical":
            samples = rotate_to_vertical(g, d)
        else:
            samples = rotate_by_quaternion(quats[first:], d)
        return Standardized(t[first:], samples, samples[:, 2], first, method)

    def push(self, t_ns, acc, gyro=None, rotvec=None, linacc=None):
        method = self.method
        if ((rotvec is None and self._needs_rotvec) or (gyro is None and self._needs_gyro)
                or (linacc is None and self._needs_linacc)):
            self._check_streams(gyro, rotvec, linacc)
        q = rotvec
        if self._ahrs is not None:
            q = self._ahrs.update(t_ns, acc, gyro)
        x, y, z = linacc if method == "linear" else acc
        if self._smoother is not None:
            m = self._smoother.push(t_ns, x, y, z)
            if m is None:
                return None
            x, y, z = m
        if method == "linear":
            out = rotate_one(q, x, y, z)
            return t_ns, out, out[2]
        g = self._gravity.push(t_ns, x, y, z)
        if g is None:
            return None
        dx, dy, dz = x - g[0], y - g[1], z - g[2]
        if method == "mizell":
            gg = g[0] * g[0] + g[1] * g[1] + g[2] * g[2]
            dg = dx * g[0] + dy * g[1] + dz * g[2]
            s = dg / gg
            p = (s * g[0], s * g[1], s * g[2])
            return t_ns, p + (dx - p[0], dy - p[1], dz - p[2]), dg / math.sqrt(gg)  # sqrt: see vertical_rotate_one
        out = vertical_rotate_one(g, dx, dy, dz) if method == "vertical" else rotate_one(q, dx, dy, dz)
        return t_ns, out, out[2]
