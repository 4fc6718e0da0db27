"""Device part of the synthetic sensor simulator: where the phone sits, how it is turned, what it reads.

The phone's orientation (device → East-North-Up) is composed as

    R(t) = R_z(ψ(t)) · W(t) · P(t)

- ψ(t), the walking heading (the phone turns with the body);
- W(t), the wobble of the phone against the body with the leg swing (a rotation about body axes
  x = right, y = forward, z = up, one period per stride, zero at each foot strike);
- P(t), the placement: how the phone lies in the pocket or hand; constant except for occasional
  re-pocketing, a smooth rotation to a new attitude of the same placement over 0.5–1 s.

The sensors then read (Android conventions, DESIGN.md "Data model"): accelerometer
Rᵀ(a_ENU + g·ẑ), linear acceleration Rᵀ·a_ENU, rotation vector q(R) as (x, y, z, w) with w ≥ 0,
and gyroscope ω with dR/dt = R·[ω]×, i.e. the body angular rate in the device frame.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._orientation import rotate_by_quaternion
from ._gait import GaitTimeline, require_fields

__all__ = ["PLACEMENTS", "SensorModel", "DeviceTimeline"]




@dataclass(frozen=True)
class _PlacementKind:
    wobble_rad: tuple[float, float, float]  # swing amplitude about body right, forward, up
    acc_gain: float  # gait oscillation seen at the phone relative to the trunk
    # Typical attitude (device → body rotation vector) and the spread around it (rad per axis);
    # spread None: any attitude is as likely (a phone loose in a bag).
    typical_rotvec: tuple[float, float, float]
    attitude_spread: float | None
    # Whether the phone goes in either way up and either face out (pockets: yes; a hand: no).
    flips: bool
    # Distance (m) from the joint the phone swings about to the phone, for a swinging arm: the
    # swing's pitch (the first wobble axis) moves the phone on a pendulum of this length, whose
    # acceleration DeviceTimeline.acceleration adds. 0: the phone rides on the trunk or thigh, where
    # the swing's acceleration is part of the gait's, scaled by acc_gain.
    swing_lever_m: float = 0.0


# A trouser pocket rides on the thigh: it pitches with hip flexion (±15–20° in level walking) and
# sees larger accelerations than the trunk; the phone stands on its end (device y along the body's
# vertical), screen facing forward or back, either end up. A jacket pocket holds it the same way on
# the trunk, with little swing, and a belt clip or waist pouch on the hip (UCI HAPT's placement)
# with a little more. A hand holds it screen up, top edge raised ~35° for reading, the arm damping
# the impacts. In a bag it lies any way at all.
#
# On a swinging arm the phone is a pendulum hung from the shoulder. The arm swings ±15–25° at the
# shoulder in level walking (Collins et al. 2009; Meyns et al. 2013) and the forearm a little more
# (the elbow flexes), so a wrist 0.6 m from the shoulder swings about ±0.3 rad and an armband
# 0.2 m down the upper arm about ±0.25 rad; tests/test_simulate.py holds the wrist's acceleration to
# the real watches' of WEDA-FALL and GeoTecINIT. An armband holds the phone upright on the arm's outside,
# screen out (device x → body forward, y → up, z → right: 120° about (1, 1, 1)); a watch on the
# wrist has its 3 o'clock edge (device x) towards the fingers, pointing down the hanging arm, 12
# o'clock forward and the face out (a quarter turn about body y). The arm swings on stairs as the
# leg does (_WOBBLE_SCALE): a simplification, since people also hold the handrail.
_UPRIGHT = (np.pi / 2, 0.0, 0.0)  # about body x: device y → body up, screen normal → body back
_ARMBAND = tuple(2.0 * np.pi / 3.0 / np.sqrt(3.0) * np.ones(3))
PLACEMENTS = {
    "trouser_pocket": _PlacementKind((0.28, 0.06, 0.08), 1.3, _UPRIGHT, 0.25, True),
    "jacket_pocket": _PlacementKind((0.06, 0.04, 0.05), 1.0, _UPRIGHT, 0.3, True),
    "waist": _PlacementKind((0.08, 0.05, 0.06), 1.1, _UPRIGHT, 0.25, True),
    "hand": _PlacementKind((0.05, 0.05, 0.03), 0.8, (np.radians(35.0), 0.0, 0.0), 0.2, False),
    "armband": _PlacementKind((0.25, 0.05, 0.05), 0.9, _ARMBAND, 0.2, False, swing_lever_m=0.2),
    "wrist": _PlacementKind((0.3, 0.08, 0.08), 0.8, (0.0, np.pi / 2, 0.0), 0.2, False, swing_lever_m=0.6),
    "bag": _PlacementKind((0.08, 0.08, 0.06), 0.9, (0.0, 0.0, 0.0), None, False),
}

# Per-activity scale of the leg swing: hip flexion is larger climbing (~60°) than on the level
# (~30–35°) and smaller descending (Riener et al. 2002). Indexed by activity code.
_WOBBLE_SCALE = np.zeros(13)
_WOBBLE_SCALE[[1, 2, 3]] = (1.0, 1.4, 0.9)

@dataclass(frozen=True)
class SensorModel:
    """Imperfections of the phone's sensors; :meth:`ideal` switches all of them off.

    Parameters
    ----------
    acc_noise, linacc_noise : float
        White noise standard deviation per sample and axis, m/s². Phone MEMS accelerometers read
        about 0.01–0.05 m/s² of noise at 50 Hz.
    acc_bias, linacc_bias : float
        Standard deviation of a constant per-axis offset drawn once per log, m/s². The spec
        (§3.4, calibration evidence) measured mean offsets of 0.02–0.6 m/s² on a still phone.
    gyro_noise, gyro_bias : float
        The same for the gyroscope, rad/s.
    rotvec_noise : float
        Standard deviation of a random small rotation (rad, per axis) on the fused rotation vector.
    jitter : float
        Standard deviation of the timestamp jitter as a fraction of the sampling period (clipped to
        ±0.4 periods, so timestamps stay strictly increasing).
    drop_rate : float
        Probability that a sample is missing (Android delivers events, and drops some under load).

    Examples
    --------
    >>> SensorModel.ideal().drop_rate
    0.0
    """

    acc_noise: float = 0.03
    acc_bias: float = 0.05
    linacc_noise: float = 0.04
    linacc_bias: float = 0.05
    gyro_noise: float = 0.005
    gyro_bias: float = 0.005
    rotvec_noise: float = 0.005
    jitter: float = 0.05
    drop_rate: float = 0.002

    def __post_init__(self):
        require_fields(self, self.__dataclass_fields__, lambda v: np.isfinite(v) and v >= 0, "a finite number >= 0")
        require_fields(self, ("drop_rate",), lambda v: v < 0.5, "< 0.5 (a fraction of samples lost)")

    @classmethod
    def ideal(cls) -> "SensorModel":
        """Noise-free, unbiased, perfectly timed sensors: the streams are exact functions of the motion."""
        return cls(**{name: 0.0 for name in cls.__dataclass_fields__})


# Quaternion algebra on (n, 4) arrays, scalar last. scipy's Rotation does the same, but its
# composition costs ~1.5 µs per element (profiled: 70 % of a 1 h render), too slow for the 24 h
# target; the tests check these against scipy.


def quat_multiply(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Hamilton product p ⊗ q (apply q, then p), row-wise on (n, 4) arrays."""
    px, py, pz, pw = p.T
    qx, qy, qz, qw = q.T
    return np.stack(
        [
            pw * qx + px * qw + py * qz - pz * qy,
            pw * qy - px * qz + py * qw + pz * qx,
            pw * qz + px * qy - py * qx + pz * qw,
            pw * qw - px * qx - py * qy - pz * qz,
        ],
        axis=1,
    )


def quat_conjugate(q: np.ndarray) -> np.ndarray:
    """The inverse rotation of a unit quaternion."""
    return q * np.array([-1.0, -1.0, -1.0, 1.0])


def quat_from_rotvec(r: np.ndarray) -> np.ndarray:
    """Unit quaternion of the rotation by |r| rad about r/|r|, row-wise on (n, 3) arrays."""
    angle = np.sqrt(np.einsum("ij,ij->i", r, r))
    # sin(θ/2)/θ, with its Taylor series where θ is tiny (it tends to ½, not 0/0).
    small = angle < 1e-6
    scale = np.where(small, 0.5 - angle**2 / 48.0, np.sin(0.5 * angle) / np.where(small, 1.0, angle))
    out = np.empty((r.shape[0], 4))
    out[:, :3] = scale[:, None] * r
    out[:, 3] = np.cos(0.5 * angle)
    return out


def quat_to_rotvec(q: np.ndarray) -> np.ndarray:
    """Rotation vector (axis × angle, angle in [0, π]) of unit quaternions, (n, 4) → (n, 3)."""
    q = np.where(q[:, 3:] < 0, -q, q)  # q and −q are the same rotation; pick angle ≤ π
    norm_v = np.sqrt(np.einsum("ij,ij->i", q[:, :3], q[:, :3]))
    angle = 2.0 * np.arctan2(norm_v, q[:, 3])
    small = norm_v < 1e-9
    scale = np.where(small, 2.0 / q[:, 3], angle / np.where(small, 1.0, norm_v))
    return scale[:, None] * q[:, :3]


def quat_rotate_inverse(q: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Rᵀ(q)·v row-wise: a world (ENU) vector seen in the device frame.

    The front end's own rotation applied with the conjugate, so simulator and pipeline share one
    implementation of the rotation formula (and it avoids ``np.cross``, which is slower here).
    """
    return rotate_by_quaternion(quat_conjugate(q), v)


def random_attitude(rng: np.random.Generator, n: int, placement: str) -> np.ndarray:
    """``n`` device → body quaternions (x, y, z, w) drawn from ``placement``'s attitude distribution.

    Uniform on the rotation group (normalised 4-D Gaussians) when the placement has no typical
    attitude; otherwise the typical attitude, optionally flipped end over end and/or face about
    (each with probability ½), then tilted by a random small rotation.
    """
    kind = PLACEMENTS[placement]
    if kind.attitude_spread is None:
        q = rng.standard_normal((n, 4))
        return q / np.linalg.norm(q, axis=1, keepdims=True)
    attitude = quat_from_rotvec(np.tile(kind.typical_rotvec, (n, 1)))
    if kind.flips:
        # Turning the phone about its own long axis (device y) swaps the face it shows; about its
        # screen normal (device z) puts it upside down. Both are applied in the device frame.
        flips = rng.integers(0, 2, size=(n, 2)) * np.pi
        about_long_axis, about_normal = np.zeros((n, 3)), np.zeros((n, 3))
        about_long_axis[:, 1], about_normal[:, 2] = flips[:, 0], flips[:, 1]
        flip = quat_multiply(quat_from_rotvec(about_long_axis), quat_from_rotvec(about_normal))
        attitude = quat_multiply(attitude, flip)
    tilt = quat_from_rotvec(kind.attitude_spread * rng.standard_normal((n, 3)))
    return quat_multiply(tilt, attitude)


def _smoothstep(s: np.ndarray) -> np.ndarray:
    """3s² − 2s³: a hand turning the phone starts and stops at rest (zero angular rate at both ends)."""
    return s * s * (3.0 - 2.0 * s)


def _smoothstep_rate(s: np.ndarray) -> np.ndarray:
    """d/ds of :func:`_smoothstep`."""
    return 6.0 * s * (1.0 - s)


class DeviceTimeline:
    """Placement, re-pocketing events and the resulting orientation of one simulated phone.

    Parameters
    ----------
    gait : GaitTimeline
    placement : str
        One of :data:`PLACEMENTS`.
    reorient_per_hour : float
        Mean rate of re-pocketing events (a Poisson process).
    rng : numpy.random.Generator

    Attributes
    ----------
    change_start, change_duration : ndarray, shape (m,)
        Start (s) and length (s) of each re-pocketing.
    attitudes : ndarray, shape (m + 1, 4)
        Device → body quaternion (x, y, z, w) before the first and after each re-pocketing.
    """

    def __init__(self, gait: GaitTimeline, placement: str, reorient_per_hour: float, rng: np.random.Generator):
        self.gait = gait
        self.placement = placement
        self._kind = PLACEMENTS[placement]
        n_events = int(rng.poisson(reorient_per_hour * gait.duration_s / 3600.0))
        start = np.sort(rng.uniform(1.0, max(gait.duration_s - 1.0, 1.0), size=n_events))
        duration = rng.uniform(0.5, 1.0, size=n_events)
        # One pair of hands: a re-pocketing that would begin before the previous one ended is dropped.
        keep = np.ones(n_events, dtype=bool)
        busy_until = -np.inf
        for i in range(n_events):
            keep[i] = start[i] >= busy_until
            busy_until = start[i] + duration[i] if keep[i] else busy_until
        self.change_start, self.change_duration = start[keep], duration[keep]
        self.attitudes = random_attitude(rng, self.change_start.size + 1, placement)
        self._change_rotvec = quat_to_rotvec(quat_multiply(quat_conjugate(self.attitudes[:-1]), self.attitudes[1:]))
        # Taking the phone out and putting it back lifts it by 5–20 cm and returns it.
        self._lift_m = rng.uniform(0.05, 0.20, size=self.change_start.size)

    def _change_progress(self, t: np.ndarray):
        """Index j of the latest re-pocketing started by t (−1 if none) and its progress s ∈ [0, 1]."""
        j = np.searchsorted(self.change_start, t, side="right") - 1
        jc = np.clip(j, 0, None)
        if self.change_start.size == 0:
            return j, np.zeros(t.shape)
        s = np.clip((t - self.change_start[jc]) / self.change_duration[jc], 0.0, 1.0)
        return j, np.where(j >= 0, s, 0.0)

    def pose(self, t: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Orientation and angular rate of the phone at each time.

        Returns
        -------
        quat : ndarray, shape (n, 4)
            R(t) = R_z(ψ) · W · P as (x, y, z, w), device → ENU.
        omega : ndarray, shape (n, 3)
            Body angular rate in the device frame (rad/s), the ω of dR/dt = R·[ω]×. Differentiating
            the product, ω = (W·P)ᵀ·ψ̇ẑ + Pᵀ·ṙ + σ̇·δ: each factor turns about a fixed axis at a
            time (ẑ for the heading; the swing vector r = wave(t)·a keeps its direction a within a
            step; a re-pocketing turns by σ(s)·δ about its fixed axis δ), so each factor's own body
            rate is just its angle's derivative times its axis.
        """
        t = np.asarray(t, dtype=float)
        j, s = self._change_progress(t)
        # Before the first re-pocketing (j = −1) the first attitude, after re-pocketing j the next one;
        # during one (rarely: a few seconds per hour, so only those samples pay for it), the slerp.
        placement = self.attitudes[np.where(j < 0, 0, j + (s >= 1.0))]
        placement_rate = np.zeros((t.size, 3))
        inside = (j >= 0) & (s < 1.0)
        if np.any(inside):
            ji, si = j[inside], s[inside]
            turn = quat_from_rotvec(_smoothstep(si)[:, None] * self._change_rotvec[ji])
            placement[inside] = quat_multiply(self.attitudes[ji], turn)
            turn_rate = _smoothstep_rate(si) / self.change_duration[ji]
            placement_rate[inside] = turn_rate[:, None] * self._change_rotvec[ji]
        wave, wave_rate, _, kind = self.gait.stride_wave(t)
        amplitude = _WOBBLE_SCALE[kind][:, None] * np.asarray(self._kind.wobble_rad)[None]
        swing_then_placement = quat_multiply(quat_from_rotvec(wave[:, None] * amplitude), placement)
        half_heading = 0.5 * self.gait.heading(t)
        heading = np.zeros((t.size, 4))
        heading[:, 2], heading[:, 3] = np.sin(half_heading), np.cos(half_heading)
        yaw_rate = np.zeros((t.size, 3))
        yaw_rate[:, 2] = self.gait.heading_rate(t)
        omega = (
            quat_rotate_inverse(swing_then_placement, yaw_rate)
            + quat_rotate_inverse(placement, wave_rate[:, None] * amplitude)
            + placement_rate
        )
        return quat_multiply(heading, swing_then_placement), omega

    def acceleration(self, t: np.ndarray) -> np.ndarray:
        """Phone acceleration in ENU without gravity, m/s²: the body's gait, a swinging arm's
        pendulum and re-pocketing lifts."""
        t = np.asarray(t, dtype=float)
        acc = self.gait.body_acceleration(t, oscillation_gain=self._kind.acc_gain)
        if self._kind.swing_lever_m > 0.0:
            acc += self._swing_acceleration(t)
        j, s = self._change_progress(t)
        inside = (j >= 0) & (s > 0.0) & (s < 1.0)
        if np.any(inside):
            jc = np.clip(j, 0, None)
            # Vertical lift z(s) = H·[(1 − cos 2πs)/2 − (1 − cos 4πs)/8], s = τ/d: its acceleration
            # (2π²H/d²)(cos 2πs − cos 4πs) is zero at both ends (the hand starts and stops gently),
            # velocity and displacement return to zero (the phone ends where it was), z(½) = H.
            amp = 2.0 * np.pi**2 * self._lift_m[jc] / self.change_duration[jc] ** 2
            acc[:, 2] += np.where(inside, amp * (np.cos(2 * np.pi * s) - np.cos(4 * np.pi * s)), 0.0)
        return acc

    def _swing_acceleration(self, t: np.ndarray) -> np.ndarray:
        """ENU acceleration of a phone on a pendulum of length L hung from the walking body.

        In body axes (right, forward, up) the phone sits at p = L·(0, sin θ, −cos θ) from the
        pivot, θ = the swing's pitch. The body turns by ψ about the vertical, so the ENU position is
        R_z(ψ)·p and its second derivative is R_z(ψ)·(p̈ + 2ψ̇ ẑ×ṗ + ψ̈ ẑ×p + ψ̇² ẑ×(ẑ×p)); the
        pivot's own motion is the gait's (:meth:`GaitTimeline.body_acceleration`).
        """
        wave, wave_rate, wave_acc, kind = self.gait.stride_wave(t)
        amplitude = _WOBBLE_SCALE[kind] * self._kind.wobble_rad[0]
        theta, theta_rate, theta_acc = amplitude * wave, amplitude * wave_rate, amplitude * wave_acc
        lever = self._kind.swing_lever_m
        sin_t, cos_t = np.sin(theta), np.cos(theta)
        p_forward = lever * sin_t
        v_forward = lever * theta_rate * cos_t
        a_forward = lever * (theta_acc * cos_t - theta_rate**2 * sin_t)
        a_up = lever * (theta_acc * sin_t + theta_rate**2 * cos_t)
        psi_rate, psi_acc = self.gait.heading_rate(t), self.gait.heading_acceleration(t)
        # ẑ×(x, y, 0) = (−y, x, 0): with p and ṗ along forward, the turn's terms are a Coriolis and
        # an Euler term along −right and the centripetal term along −forward.
        right = -2.0 * psi_rate * v_forward - psi_acc * p_forward
        forward = a_forward - psi_rate**2 * p_forward
        psi = self.gait.heading(t)
        sin_psi, cos_psi = np.sin(psi), np.cos(psi)
        return np.stack([-sin_psi * forward + cos_psi * right, cos_psi * forward + sin_psi * right, a_up], axis=1)
