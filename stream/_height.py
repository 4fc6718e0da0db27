"""Height and vertical speed from the barometer and the vertical acceleration.

The barometer knows the level but is noisy (0.01–0.05 hPa, about 0.1–0.4 m, per reading) and slow
(1–25 Hz); the accelerometer sees fast motion but its double integral drifts without bound. A
Kalman filter over ``x = [h, v]`` (height and vertical speed) fuses them: the vertical
acceleration drives the prediction, each barometer reading corrects it.

Why a Kalman filter and not a fixed-gain complementary filter: the rows come at irregular times,
the barometer at its own lower rate, readings can be missing, and the filter starts from nothing.
A complementary filter's gains would have to be re-derived for every time step and start-up; the
Kalman filter derives them from the two noise figures at each row (in the steady state it is
about the complementary filter with crossover ``ω₀ = (q·f_b/σ_h²)^¼`` for a barometer at f_b).
It costs three covariance numbers per row.

Model: the continuous white noise acceleration model of Bar-Shalom, Li & Kirubarajan, *Estimation
with Applications to Tracking and Navigation* (2001), §6.2.2, with the measured acceleration as a
known input and its error as the process noise:

    predict over dt:   h ← h + v·dt + a·dt²/2,      v ← v + a·dt
                       P ← F P Fᵀ + q·[[dt³/3, dt²/2], [dt²/2, dt]],   F = [[1, dt], [0, 1]]
    update with the row's altitude z (m):  K = P Hᵀ / (H P Hᵀ + R),  H = [1, 0],
                       R = σ_h² / min(1, f_b·dt)
                       x ← x + K (z − h),   P ← (I − K H) P

with ``a`` the row's vertical acceleration applied over the interval ending at the row (the front
end's value at t is its estimate of the acceleration since the previous row), ``q`` the density
of the acceleration error (``acceleration_noise²``), ``σ_h`` the noise of one barometer reading in
metres and ``f_b`` the barometer's rate. Every row with a pressure is a measurement worth the
``f_b·dt`` readings that arrive during its interval (at most one): the discretisation at the rows
of a continuous measurement with noise density ``σ_h²/f_b``, which is what averaging readings at
``f_b`` gives over any span longer than their period. So the filter is the same whatever the row
rate and however the log put the barometer on the rows (held, as a phone's sensor hub does, or
interpolated, as ``import_log`` and the dataset loaders do), without guessing which rows carry a
new reading from their values (a quantised barometer repeats itself).

Pressure to altitude is the U.S. Standard Atmosphere 1976 (NOAA-S/T 76-1562), eq. 33a for the
troposphere solved for height: ``h = (T₀/L)·(1 − (p/p₀)^(R*·L/(g₀·M₀)))`` with T₀ = 288.15 K,
L = 0.0065 K/m, R* = 8.31432 J/(mol·K), g₀ = 9.80665 m/s², M₀ = 0.0289644 kg/mol, p₀ = 1013.25 hPa:
``h = 44330.8·(1 − (p/1013.25)^0.190263)`` m (Bosch's BMP180/BMP280 datasheets and Android's
``SensorManager.getAltitude`` use the same formula rounded to 44330 and 1/5.255). Heights are
relative to the filter's first reading: the difference of two such altitudes, which stays right at
any elevation, while weather moves the absolute value by metres a day.

:class:`HeightFilter` has ``push`` (one row, pure Python floats: what the phone runs, mirrored
operation for operation by ``android_stub/core``'s ``HeightFilter``) and ``process`` (a block).
Both run the one per-row step below: a Kalman filter's gains depend on each row's time step and on
which rows carry a pressure, a sequential recursion, so ``process`` is the block interface with the
state carried over (as scipy's ``lfilter`` carries ``zi``), not a vectorised formula, and gives
``push``'s bits.
"""
from __future__ import annotations

import math

import numpy as np

from ._config import PipelineConfig
from ._log import PRESSURE_RANGE_HPA

__all__ = ["HeightFilter", "altitude_pressure", "pressure_altitude"]

# U.S. Standard Atmosphere 1976, troposphere: T₀/L in metres and R*·L/(g₀·M₀) (see the module docstring).
_SCALE_M = 44330.8
_EXPONENT = 0.190263
_SEA_LEVEL_HPA = 1013.25
# The speed is unknown at the first reading; 1 m/s covers walking on stairs (≈ 0.2–0.5 m/s) and
# most lifts, and the barometer pins it down within a few readings.
_INITIAL_SPEED_SD = 1.0


def pressure_altitude(pressure_hpa):
    """Standard-atmosphere altitude (m above the 1013.25 hPa level) of a pressure in hPa.

    ``44330.8·(1 − (p/1013.25)^0.190263)``: U.S. Standard Atmosphere 1976, eq. 33a (troposphere)
    solved for height. Works on a float or an array.

    Examples
    --------
    >>> pressure_altitude(1013.25)
    0.0
    >>> round(pressure_altitude(1000.0), 1)   # about 8.3 m per hPa near sea level
    110.9
    """
    return _SCALE_M * (1.0 - (pressure_hpa / _SEA_LEVEL_HPA) ** _EXPONENT)


def altitude_pressure(altitude_m):
    """Standard-atmosphere pressure (hPa) at an altitude in metres: the inverse of :func:`pressure_altitude`.

    ``1013.25·(1 − h/44330.8)^(1/0.190263)``, the same U.S. Standard Atmosphere 1976 eq. 33a (the
    hypsometric formula with a constant lapse rate), so the simulator's barometer and the height
    filter share one definition of the pressure–altitude relation.

    Examples
    --------
    >>> altitude_pressure(0.0)
    1013.25
    >>> round(float(pressure_altitude(altitude_pressure(110.9))), 6)
    110.9
    """
    return _SEA_LEVEL_HPA * (1.0 - altitude_m / _SCALE_M) ** (1.0 / _EXPONENT)


def _metres_per_hpa(pressure_hpa: float) -> float:
    """``−dh/dp`` of :func:`pressure_altitude` at ``pressure_hpa``: converts the barometer's noise to metres."""
    return _SCALE_M * _EXPONENT / _SEA_LEVEL_HPA * (pressure_hpa / _SEA_LEVEL_HPA) ** (_EXPONENT - 1.0)


# The carried state (``HeightFilter.zi_``), a tuple so that a step either returns a whole new one or
# raises before anything changed:
#   t_ns       time of the previous row (None before the first row)
#   h, v       the estimate (NaN while no reading has set the level)
#   p11, p12, p22  its covariance
#   origin     altitude of the first reading (None before it), the zero of the heights
#   r          the variance of one barometer reading in m² (set at the first reading)
_NAN = float("nan")
_START = (None, _NAN, _NAN, _NAN, _NAN, _NAN, None, _NAN)


def _step(zi, t_ns, a, p, q, sd_hpa, rate_hz, max_gap_s):
    """One row: predict with the acceleration ``a``, then correct with the pressure ``p`` unless it
    is NaN. Returns ``(zf, h, v)``. The arguments are valid (the callers check them)."""
    t_prev, h, v, p11, p12, p22, origin, r = zi
    if t_prev is not None and not math.isnan(h):  # a level is known: predict it to this row
        dt = (t_ns - t_prev) / 1e9
        if dt > max_gap_s:
            # The acceleration over a gap is unknown, so is the speed: start again from the next reading.
            h = v = _NAN
        else:
            dt2 = dt * dt
            h = h + v * dt + 0.5 * a * dt2
            v = v + a * dt
            p11 = p11 + dt * (2.0 * p12 + dt * p22) + q * dt2 * dt / 3.0
            p12 = p12 + dt * p22 + q * dt2 / 2.0
            p22 = p22 + q * dt
    if not math.isnan(p):
        if origin is None:
            origin = pressure_altitude(p)
            md = sd_hpa * _metres_per_hpa(p)
            r = md * md
        z = pressure_altitude(p) - origin
        if math.isnan(h):
            h, v = z, 0.0
            p11, p12, p22 = r, 0.0, _INITIAL_SPEED_SD * _INITIAL_SPEED_SD
        else:
            share = dt * rate_hz  # readings in this row's interval
            s = p11 + (r / share if share < 1.0 else r)
            k1 = p11 / s
            k2 = p12 / s
            y = z - h
            h = h + k1 * y
            v = v + k2 * y
            p22 = p22 - k2 * p12
            p11 = p11 - k1 * p11
            p12 = p12 - k1 * p12
    return (t_ns, h, v, p11, p12, p22, origin, r), h, v


def _bad_time(t_ns, t_prev) -> str:
    return (f"t_ns must be strictly increasing; t_ns={t_ns} follows t_ns={t_prev}. Sort the rows, or reset() "
            "before a new recording.")


def _bad_acceleration(t_ns, a) -> str:
    return f"vertical acceleration at t_ns={t_ns} is {a}; it must be finite (m/s²)."


def _bad_pressure(t_ns, p) -> str:
    lo, hi = PRESSURE_RANGE_HPA
    return (f"pressure at t_ns={t_ns} is {p} hPa; a barometer reads {lo:g}–{hi:g} hPa (convert Pa by dividing "
            "by 100), or NaN for a row without a reading.")


class HeightFilter:
    """Causal height and vertical speed from barometric altitude and the vertical acceleration.

    A 2-state Kalman filter (module docstring): the barometer sets the level, the accelerometer
    carries the motion between and faster than its readings.

    Parameters
    ----------
    acceleration_noise : float, default 0.3
        Density of the vertical acceleration's error, (m/s²)/√Hz: integrating the acceleration
        alone for T seconds leaves a speed error of ``acceleration_noise·√T`` m/s. A phone
        accelerometer's own noise is about 0.002 (BMI160-class datasheets: 180 µg/√Hz), which
        would let the filter trust it for seconds (90 % of a height step after 5.8 s at 10 Hz,
        against 0.46 s with the default). But the front end's
        ``Standardized.vertical`` is the acceleration minus its 500 ms mean, so motion slower than
        about 1 Hz is not in it: a climb that starts or stops changes the vertical speed by about
        0.3 m/s (a 3 m floor in 10 s) within about a second, unseen, and the filter must take it
        from the barometer: 0.3 m/s over √(1 s) gives 0.3. Pass the datasheet figure for an input
        that keeps its slow part.
    pressure_noise_hpa : float, default 0.03
        Standard deviation of one barometer reading, hPa: the middle of the 0.01–0.05 hPa of
        phone barometers (Bosch BMP280/BMP380, ST LPS22HB class), about 0.25 m. It is
        converted to metres at the first reading (8.3 m/hPa at sea level, 9.2 at 900 hPa).
    pressure_rate_hz : float, default 10.0
        The barometer's reading rate, Hz: a row of duration dt carries ``min(1, pressure_rate_hz·dt)``
        readings' worth of pressure (module docstring). Phones read at 1–25 Hz (the
        IPIN 2023 logs at 6 and 10 Hz). A rate off by a factor k moves the filter's crossover by
        only k^¼ (19 % for a factor 2).
    max_gap_s : float, default ``PipelineConfig.max_gap_s`` (0.3)
        A time step longer than this forgets the estimate: heights restart from the next reading
        (still relative to the first reading), the speed from 0, as the front end restarts there.

    Attributes
    ----------
    zi_ : tuple
        The carried state after the last row (created by the first ``push``/``process``): the
        previous row's time, the estimate, its covariance, the altitude of the first reading and
        the variance of one reading in m².

    Notes
    -----
    **Held, interpolated and missing pressure.** Rows come at 30–100 Hz, a barometer reads at
    1–25 Hz; pass its value on every row, held or interpolated between readings. Every row with a
    pressure corrects the estimate by its share of a reading (above), so the barometer weighs as
    much per second at 30 Hz rows as at 100 Hz, and a quantised barometer repeating a value on a
    still phone keeps correcting the accelerometer's drift. Deciding instead which rows carry a
    *new* reading from a change of value would miss repeated values and take every row of an
    interpolated log for a reading, weighing the barometer up to 100 times too much. NaN means no
    pressure at this row (before the first reading, a dropout): the row only predicts. Until the
    first reading the outputs are NaN (no level yet).

    **Lag and noise.** A height change the accelerometer does not see (a pressure step) is
    followed with the filter's crossover: with the defaults and a 10 Hz barometer the estimate
    covers 90 % of a step in under 0.5 s, and a still phone's height wanders by about 0.1 m
    (standard deviation) against the readings' 0.25 m, at 30 or 100 Hz rows, held or interpolated
    (all tested). A motion the accelerometer sees is followed without that lag.

    Examples
    --------
    A still phone: the first reading is the zero of the heights.

    >>> f = HeightFilter()
    >>> f.push(0, 0.0, 1000.0)
    (0.0, 0.0)
    >>> h, v = f.process([10_000_000, 20_000_000], [0.0, 0.0], [1000.0, 1000.0])
    >>> h.tolist(), v.tolist()
    ([0.0, 0.0], [0.0, 0.0])
    >>> f.push(30_000_000, 0.0, float("nan"))   # no pressure at this row: predict only
    (0.0, 0.0)
    """

    def __init__(self, acceleration_noise=0.3, pressure_noise_hpa=0.03, pressure_rate_hz=10.0,
                 max_gap_s=PipelineConfig.max_gap_s):
        for name, value in (("acceleration_noise", acceleration_noise), ("pressure_noise_hpa", pressure_noise_hpa),
                            ("pressure_rate_hz", pressure_rate_hz), ("max_gap_s", max_gap_s)):
            if not (isinstance(value, (int, float, np.integer, np.floating)) and math.isfinite(value) and value > 0):
                raise ValueError(f"{name} must be a finite number > 0, got {value!r}")
        self.acceleration_noise = acceleration_noise
        self.pressure_noise_hpa = pressure_noise_hpa
        self.pressure_rate_hz = pressure_rate_hz
        self.max_gap_s = max_gap_s

    def _parameters(self):
        noise = float(self.acceleration_noise)
        q = noise * noise  # not ** 2: libm pow is not always x·x rounded, and the Java port multiplies
        return q, float(self.pressure_noise_hpa), float(self.pressure_rate_hz), float(self.max_gap_s)

    def reset(self):
        """Forget everything, the height's zero included (a new recording)."""
        self.__dict__.pop("zi_", None)

    def push(self, t_ns, vertical_acc, pressure_hpa):
        """Consume one row; return ``(height_m, speed_m_s)``, NaN before the first reading.

        Parameters
        ----------
        t_ns : int
            Time of the row, ns, after the previous row's.
        vertical_acc : float
            Vertical dynamic acceleration, m/s², positive up (``Standardized.vertical``).
        pressure_hpa : float
            Air pressure, hPa, held or interpolated between readings; NaN for none (class Notes).
        """
        zi = getattr(self, "zi_", _START)
        t_ns = int(t_ns)
        a = float(vertical_acc)
        p = float(pressure_hpa)
        if zi[0] is not None and t_ns <= zi[0]:
            raise ValueError(_bad_time(t_ns, zi[0]))
        if not math.isfinite(a):
            raise ValueError(_bad_acceleration(t_ns, a))
        if not math.isnan(p) and not PRESSURE_RANGE_HPA[0] <= p <= PRESSURE_RANGE_HPA[1]:
            raise ValueError(_bad_pressure(t_ns, p))
        self.zi_, h, v = _step(zi, t_ns, a, p, *self._parameters())
        return h, v

    def process(self, t_ns, vertical, pressure):
        """Consume a block of rows; return ``(height, speed)`` arrays, as ``push`` row by row.

        The state carries over between calls, so any split of a stream into blocks gives the
        same values as one call or as ``push`` on every row (bit for bit). A block with an
        invalid row raises before any row is consumed.
        """
        t = np.asarray(t_ns, dtype=np.int64)
        a = np.asarray(vertical, dtype=np.float64)
        p = np.asarray(pressure, dtype=np.float64)
        if t.ndim != 1 or a.shape != t.shape or p.shape != t.shape:
            raise ValueError(f"t_ns, vertical and pressure must be 1-D of one length; got shapes {t.shape}, "
                             f"{a.shape} and {p.shape}")
        zi = getattr(self, "zi_", _START)
        if t.size:
            previous = np.concatenate([[t[0] - 1 if zi[0] is None else zi[0]], t[:-1]])
            bad = np.flatnonzero(t <= previous)
            if bad.size:
                raise ValueError(_bad_time(int(t[bad[0]]), int(previous[bad[0]])))
            bad = np.flatnonzero(~np.isfinite(a))
            if bad.size:
                raise ValueError(_bad_acceleration(int(t[bad[0]]), a[bad[0]]))
            bad = np.flatnonzero(~np.isnan(p) & ~((p >= PRESSURE_RANGE_HPA[0]) & (p <= PRESSURE_RANGE_HPA[1])))
            if bad.size:
                raise ValueError(_bad_pressure(int(t[bad[0]]), p[bad[0]]))
        parameters = self._parameters()
        height, speed = [], []
        for row in zip(t.tolist(), a.tolist(), p.tolist()):
            zi, h, v = _step(zi, *row, *parameters)
            height.append(h)
            speed.append(v)
        self.zi_ = zi
        return np.array(height, dtype=np.float64), np.array(speed, dtype=np.float64)
