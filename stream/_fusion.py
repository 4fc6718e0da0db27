"""Virtual Android sensors from accelerometer + gyroscope, for logs that did not record them.

Android's rotation vector and linear-acceleration sensors are themselves fusion outputs. UCI HAPT
and most public recordings have only the accelerometer and gyroscope, so to compare the thesis's
methods on them (Table 12.2: "Our" needs a rotation vector, "Linear" a linear-acceleration
stream) we build both the way a phone would: an orientation filter (Madgwick, through the
``ahrs`` library) gives the rotation vector q, and linear acceleration is the accelerometer minus
gravity expressed in the device frame, a − R(q)ᵀ·(0, 0, g).
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from ._log import STANDARD_GRAVITY, SensorLog
from ._orientation import MadgwickOrientation, rotate_by_quaternion

__all__ = ["with_virtual_sensors"]


def with_virtual_sensors(log: SensorLog, *, gain: float = 0.033) -> SensorLog:
    """``log`` with ``rotvec`` and ``linacc`` computed from its accelerometer and gyroscope.

    Raises ``ValueError`` when the log has no gyroscope. Existing streams are kept as recorded.
    """
    if log.gyro is None:
        raise ValueError(
            f"{log.meta.get('path', 'the log')} has no gyroscope: virtual rotation-vector and "
            "linear-acceleration sensors need accelerometer + gyroscope"
        )
    q = log.rotvec if log.rotvec is not None else MadgwickOrientation(gain).run(log.t_ns, log.acc, log.gyro)
    linacc = log.linacc
    if linacc is None:
        # R(q)ᵀ·v is the rotation by the conjugate quaternion (−x, −y, −z, w).
        conjugate = q * np.array([-1.0, -1.0, -1.0, 1.0])
        linacc = log.acc - rotate_by_quaternion(conjugate, np.tile([0.0, 0.0, STANDARD_GRAVITY], (len(log), 1)))
    return replace(log, rotvec=q, linacc=linacc, meta={**log.meta, "virtual_sensors": "madgwick"})
