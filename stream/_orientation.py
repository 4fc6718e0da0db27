"""Rotations into the East-North-Up frame (spec §3.4).

* :func:`quat_to_matrix` — Android's rotation vector (x, y, z, w) to the device→ENU matrix, the
  formula of ``SensorManager.getRotationMatrixFromVector``.
* :func:`rotate_to_vertical` — the accelerometer-only frame: the smallest rotation taking the
  gravity estimate to +Z. Its vertical axis is exact; its heading is the device's own and turns
  with the phone, so the X/Y axes are *not* East/North.
* :func:`mizell_components` — Mizell (2003): vertical projection p and horizontal remainder h.
* :class:`MadgwickOrientation` — orientation from accelerometer + gyroscope with the ``ahrs``
  library's Madgwick filter, for logs without a rotation vector. Without a magnetometer its heading
  is the phone's heading at the start of the log, drifting with the gyro bias; "East" then means
  "the direction the device's x axis pointed, projected on the ground, at the first sample".

Each function works on one sample's floats (the streaming form) and on arrays (the batch form)
with the same arithmetic.
"""
from __future__ import annotations

import math

import numpy as np

__all__ = [
    "quat_to_matrix",
    "rotate_by_quaternion",
    "rotate_to_vertical",
    "mizell_components",
    "vertical_quaternion",
    "vertical_rotate_one",
    "MadgwickOrientation",
]


def quat_to_matrix(q):
    """Rotation matrices from unit quaternions (x, y, z, w), device → ENU.

    Parameters
    ----------
    q : array, shape (..., 4)
        Quaternions; they are normalised first (rotation-vector sensors drift off unit norm by
        rounding).

    Returns
    -------
    ndarray, shape (..., 3, 3)

    Examples
    --------
    >>> import numpy as np
    >>> half = np.sqrt(0.5)
    >>> np.round(quat_to_matrix([0, 0, half, half]), 12) + 0.0  # 90° about Up
    array([[ 0., -1.,  0.],
           [ 1.,  0.,  0.],
           [ 0.,  0.,  1.]])
    """
    q = np.asarray(q, dtype=np.float64)
    q = q / np.linalg.norm(q, axis=-1, keepdims=True)
    x, y, z, w = np.moveaxis(q, -1, 0)
    return np.stack(
        [
            np.stack([1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)], -1),
            np.stack([2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)], -1),
            np.stack([2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)], -1),
        ],
        -2,
    )


def _columns(a):
    return [np.ascontiguousarray(a[:, i]) for i in range(a.shape[1])]


def rotate_by_quaternion(q, v):
    """Rotate vectors ``v`` (n, 3) by quaternions ``q`` (n, 4) as (x, y, z, w): ``R(q) @ v`` rowwise.

    Uses v' = v + 2w(u×v) + 2u×(u×v) with u = (x, y, z) on normalised q, which equals
    ``quat_to_matrix(q) @ v`` (tested), written per column: no n 3×3 matrices, no np.cross
    (whose axis shuffling costs more than the arithmetic here).
    """
    q = np.asarray(q, dtype=np.float64)
    v = np.asarray(v, dtype=np.float64)
    x, y, z, w = _columns(q)
    scale = 1.0 / np.sqrt(x * x + y * y + z * z + w * w)
    x *= scale
    y *= scale
    z *= scale
    w *= scale
    vx, vy, vz = _columns(v)
    cx, cy, cz = y * vz - z * vy, z * vx - x * vz, x * vy - y * vx  # u × v
    dx, dy, dz = y * cz - z * cy, z * cx - x * cz, x * cy - y * cx  # u × (u × v)
    out = np.empty_like(v)
    out[:, 0] = vx + 2.0 * (w * cx + dx)
    out[:, 1] = vy + 2.0 * (w * cy + dy)
    out[:, 2] = vz + 2.0 * (w * cz + dz)
    return out


def vertical_quaternion(g):
    """Quaternion(s) (x, y, z, w) of the smallest rotation taking the direction of ``g`` to +Z.

    For ``g`` pointing straight down (an upside-down phone) the smallest rotation is not unique;
    a half turn about the device X axis is used.
    """
    g = np.asarray(g, dtype=np.float64)
    u = g / np.linalg.norm(g, axis=-1, keepdims=True)
    # q = (u × ẑ, 1 + u·ẑ), normalised: the half-angle construction of the rotation u → ẑ.
    q = np.stack([u[..., 1], -u[..., 0], np.zeros_like(u[..., 0]), 1.0 + u[..., 2]], -1)
    norm = np.linalg.norm(q, axis=-1, keepdims=True)
    flipped = norm[..., 0] < 1e-12
    q = np.where(flipped[..., None], np.array([1.0, 0.0, 0.0, 0.0]), q / np.where(norm == 0, 1, norm))
    return q


def rotate_to_vertical(g, d):
    """Rotate ``d`` by the smallest rotation taking ``g`` to +Z, rowwise (batch form).

    Rodrigues' formula for the rotation u = ĝ → ẑ with axis k = u × ẑ = (u_y, −u_x, 0) and
    cos = u_z, written per column:  R·d = u_z·d + k × d + k (k·d) / (1 + u_z).  The Z component is
    exactly d·ĝ, all the segmentation needs. An upside-down phone (u_z = −1) takes the half turn
    about X, as :func:`vertical_quaternion` does.
    """
    g = np.asarray(g, dtype=np.float64)
    gx, gy, gz = _columns(g)
    inv = 1.0 / np.sqrt(gx * gx + gy * gy + gz * gz)
    ux, uy, c = gx * inv, gy * inv, gz * inv
    dx, dy, dz = _columns(np.asarray(d, dtype=np.float64))
    flipped = 1.0 + c < 1e-24
    kd = (uy * dx - ux * dy) / np.where(flipped, 1.0, 1.0 + c)
    out = np.empty((dx.size, 3))
    out[:, 0] = np.where(flipped, dx, c * dx - ux * dz + uy * kd)
    out[:, 1] = np.where(flipped, -dy, c * dy - uy * dz - ux * kd)
    out[:, 2] = np.where(flipped, -dz, c * dz + ux * dx + uy * dy)
    return out


def mizell_components(g, d):
    """Mizell's two vectors: vertical p = ((d·g)/(g·g)) g and horizontal h = d − p (spec §3.4).

    Returns
    -------
    p, h : ndarray, shape (n, 3)
        Both in the device frame.
    vertical : ndarray, shape (n,)
        Signed vertical acceleration d·ĝ (positive up), used for segmentation.
    """
    g = np.asarray(g, dtype=np.float64)
    d = np.asarray(d, dtype=np.float64)
    gg = np.einsum("ni,ni->n", g, g)
    dg = np.einsum("ni,ni->n", d, g)
    p = (dg / gg)[:, None] * g
    return p, d - p, dg / np.sqrt(gg)


def vertical_rotate_one(g, x, y, z):
    """Streaming form of :func:`rotate_to_vertical` for one sample (pure floats)."""
    gx, gy, gz = g
    # math.sqrt, not ** 0.5: sqrt is correctly rounded (IEEE 754) on every platform, libm's pow is
    # not, so the Java port (android_stub/core) can reproduce this bit for bit.
    inv = 1.0 / math.sqrt(gx * gx + gy * gy + gz * gz)
    ux, uy, c = gx * inv, gy * inv, gz * inv
    if 1.0 + c < 1e-24:
        return (x, -y, -z)
    kd = (uy * x - ux * y) / (1.0 + c)
    return (c * x - ux * z + uy * kd, c * y - uy * z - ux * kd, c * z + ux * x + uy * y)


def rotate_one(q, x, y, z):
    """Streaming form of :func:`rotate_by_quaternion` for one sample (pure floats)."""
    qx, qy, qz, qw = q
    n = math.sqrt(qx * qx + qy * qy + qz * qz + qw * qw)
    qx, qy, qz, qw = qx / n, qy / n, qz / n, qw / n
    return (
        (1 - 2 * (qy * qy + qz * qz)) * x + 2 * (qx * qy - qz * qw) * y + 2 * (qx * qz + qy * qw) * z,
        2 * (qx * qy + qz * qw) * x + (1 - 2 * (qx * qx + qz * qz)) * y + 2 * (qy * qz - qx * qw) * z,
        2 * (qx * qz - qy * qw) * x + 2 * (qy * qz + qx * qw) * y + (1 - 2 * (qx * qx + qy * qy)) * z,
    )


class MadgwickOrientation:
    """Device → ENU orientation from accelerometer and gyroscope (``ahrs`` Madgwick filter).

    ``update(t_ns, acc, gyro)`` consumes one raw sample and returns the quaternion (x, y, z, w).
    The batch form, :meth:`run`, calls the same update for every sample, so both forms agree
    exactly. The filter starts from the accelerometer's tilt (zero heading).

    Parameters
    ----------
    gain : float
        Madgwick's β; ahrs's default for IMU-only fusion is 0.033.
    """

    def __init__(self, gain: float = 0.033):
        # Imported here: only logs without a rotation vector need the filter.
        from ahrs.filters import Madgwick

        self.gain = gain
        self._filter = Madgwick(gain=gain)
        self._q = None
        self._t = None

    def update(self, t_ns, acc, gyro):
        acc = np.asarray(acc, dtype=np.float64)
        if self._q is None:
            x, y, z, w = vertical_quaternion(acc)
            self._q = np.array([w, x, y, z])
        else:
            dt = (t_ns - self._t) * 1e-9
            self._q = self._filter.updateIMU(self._q, gyr=np.asarray(gyro, dtype=np.float64), acc=acc, dt=dt)
        self._t = t_ns
        w, x, y, z = self._q
        return (x, y, z, w)

    def run(self, t_ns, acc, gyro):
        """Quaternions (n, 4) as (x, y, z, w) for a whole stream."""
        out = np.empty((len(t_ns), 4))
        for i in range(len(t_ns)):
            out[i] = self.update(int(t_ns[i]), acc[i], gyro[i])
        return out
