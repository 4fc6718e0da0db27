"""Placement-independent step features for the issue-9 research benchmark (not package code yet).

Without a rotation vector the front end knows Up but not North, so only the vertical row z and the
horizontal magnitude h = sqrt(x² + y²) of the ENU dynamic acceleration are the same wherever the
phone's heading points (``models/stairstep/_invariant.py`` keeps the Table 12.1 features of z and
the norm). These features add what Table 12.1 lacks:

* **shape of the step** (``step_*``): duration, skewness and kurtosis of z, where in the step z
  peaks and bottoms, the share of the step with z > 0, and the same statistics after dividing z by
  its own standard deviation — a waist phone, a swinging hand and a neck pouch move with very
  different amplitudes over the same gait, so amplitude itself says more about the placement than
  about stairs;
* **horizontal magnitude** (``h_*``) and its ratio to the vertical spread;
* **vertical excursion** (``dz_*``): z integrated twice inside the step. The velocity at the step's
  start is unknown, so this is the trajectory *relative to constant-velocity motion*: its range (how
  far the phone bobs) and its end value with v(start) = 0. The height gained per step (≈ 0.17 m on
  stairs) is NOT observable this way: climbing at a steady pace is motion at constant mean vertical
  velocity, which has zero mean acceleration — only a barometer (absent here) measures it;
* **context** (``ctx_*``): the mean and spread of a few per-step statistics over this step and the
  ``context - 1`` kept steps before it (causal: a phone has them when the step closes), so a
  classifier sees the rhythm of a flight, not one step; steps further apart than ``max_gap_s`` start
  a new context.
"""
from __future__ import annotations

import numpy as np

_SHAPE = ("step_duration_s", "step_z_skew", "step_z_kurt", "step_z_argmax", "step_z_argmin", "step_z_pos_share",
          "step_z_std", "step_z_range", "step_z_max", "step_z_min", "h_mean", "h_std", "h_range",
          "h_over_z_std", "corr_z_h", "dz_range", "dz_end", "dz_range_norm", "vz_range")
_CONTEXT_OF = ("step_duration_s", "step_z_std", "step_z_range", "h_over_z_std", "dz_range", "step_z_skew",
               "dz_range_norm", "step_z_argmax")
NAMES = _SHAPE + tuple(f"ctx_mean_{n}" for n in _CONTEXT_OF) + tuple(f"ctx_cv_{n}" for n in _CONTEXT_OF) + (
    "ctx_n_steps",)


def _step_features(seg: np.ndarray, dt: float) -> list[float]:
    z = seg[:, 2].astype(np.float64)
    h = np.hypot(seg[:, 0], seg[:, 1]).astype(np.float64)
    n = z.size
    sd = z.std() + 1e-9
    zc = (z - z.mean()) / sd
    # Vertical velocity and position inside the step, v(start) = 0, trapezoid rule.
    v = np.concatenate([[0.0], np.cumsum((z[1:] + z[:-1]) / 2) * dt])
    d = np.concatenate([[0.0], np.cumsum((v[1:] + v[:-1]) / 2) * dt])
    t = np.arange(n) * dt
    trend = np.polyval(np.polyfit(t, d, 1), t) if n > 2 else d
    excursion = np.ptp(d - trend)
    hs = h.std() + 1e-9
    corr = float(np.mean((z - z.mean()) * (h - h.mean())) / (sd * hs))
    return [n * dt, float(np.mean(zc**3)), float(np.mean(zc**4)), np.argmax(z) / n, np.argmin(z) / n,
            float(np.mean(z > 0)), sd, float(np.ptp(z)), float(z.max()), float(z.min()), float(h.mean()), hs,
            float(np.ptp(h)), hs / sd, corr, excursion, float(d[-1]), excursion / (sd * (n * dt) ** 2 + 1e-9),
            float(np.ptp(v))]


def stream_features(stream: dict, *, context: int = 5, max_gap_s: float = 1.5) -> np.ndarray:
    """(windows, len(NAMES)) features of every kept window of one stream (labelled or not)."""
    dt = 1.0 / stream["rate_hz"]
    samples = stream["samples"]
    shape = np.array([_step_features(samples[a:b], dt) for a, b in zip(stream["start"], stream["stop"])])
    if shape.size == 0:
        return np.zeros((0, len(NAMES)))
    cols = [_SHAPE.index(n) for n in _CONTEXT_OF]
    # Context: kept steps back to the last gap longer than max_gap_s, at most `context` of them.
    gap = (stream["start"][1:] - stream["stop"][:-1]) * dt > max_gap_s
    run_start = np.zeros(len(shape), int)
    for i in range(1, len(shape)):
        run_start[i] = i if gap[i - 1] else run_start[i - 1]
    means, cvs, counts = [], [], []
    for i in range(len(shape)):
        block = shape[max(run_start[i], i - context + 1): i + 1][:, cols]
        m = block.mean(0)
        means.append(m)
        cvs.append(block.std(0) / (np.abs(m) + 1e-6))
        counts.append(len(block))
    return np.hstack([shape, np.array(means), np.array(cvs), np.array(counts)[:, None]])
