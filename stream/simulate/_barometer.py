"""Barometer part of the synthetic sensor simulator.

A phone barometer reads, at its own sampling times ``t_j = (j − φ)/f_b``,

    p_j = quantise( P_std(z₀ + h(t_j)) + offset + weather(t_j) + building(t_j) + warming(t_j) + ε_j )

- ``P_std`` the standard-atmosphere pressure of an altitude (:func:`~stairsense.stream.altitude_pressure`,
  the one definition the height filter also uses), ``z₀`` the elevation of the site, ``h`` the
  person's altitude (``_vertical``);
- ``offset``: the device's calibration error, constant over a log;
- ``weather``: the synoptic pressure change, whose tendency (hPa/h) wanders slowly;
- ``building``: pressure steps where a door or the ventilation separates zones of a building,
  and short spikes (a door slammed, a gust on the façade);
- ``warming``: the temperature error of a sensor warmed by a hand or a pocket;
- ``ε_j`` white noise, then rounding to the device's resolution.

The log is on the accelerometer's times: each sample holds the latest reading (``t_j ≤ t``), as
a phone's sensor hub delivers the last value (the readers' merge takes what the file holds).
The first reading is at or before the log's start: the barometer was already on.

Sources of the numbers
----------------------
- Noise: Bosch BMP280 datasheet (BST-BMP280-DS001, rev. 1.19), Table 4, "RMS noise in pressure"
  1.3 Pa at the ultra-high-resolution setting up to 2.6 Pa at ultra-low power, without the IIR
  filter; ST LPS22HB datasheet (DocID027083), Table 3, 0.0075 hPa RMS with its low-pass filter.
  Phones run them in between: 0.01–0.05 hPa per reading; 0.02 hPa here.
- Resolution: phones report 0.01 hPa or finer (the BMP280's 20-bit output is 0.16 Pa; many HALs
  round further); 0.01 hPa here.
- Offset: both datasheets give an absolute accuracy of ±1 hPa (BMP280 Table 2, 950–1,050 hPa at
  0–40 °C; LPS22HB Table 3 "absolute pressure accuracy" after soldering ±1 hPa); a standard
  deviation of 0.5 hPa across devices.
- Temperature: BMP280 Table 2, temperature coefficient of offset ±1.5 Pa/K (compensated output).
  A phone taken from a desk (~21 °C) into a pocket or a hand (skin ~33 °C) warms by up to ~10 K
  with a time constant of minutes (a few-hundred-gram body in still air): up to ~0.15 hPa, a
  false ~1.3 m, appearing over the first minutes of a log.
- Weather: the WMO pressure-tendency classes (WMO-No. 306, code table 0200; the Met Office's
  "slowly / rising / quickly / very rapidly" = 0.1–1.5 / 1.6–3.5 / 3.6–6 / > 6 hPa in 3 h) put
  most 3-hour tendencies within ±1.5 hPa: a tendency with standard deviation 0.3 hPa/h that
  decorrelates over ~6 h (an Ornstein–Uhlenbeck process; weather systems pass in half a day to
  days). Over one minute that is ~0.005 hPa, over a 10-minute walk ~0.05 hPa (0.4 m).
- Building: mechanically ventilated buildings are kept a few pascals above or below outside
  (ASHRAE Handbook—HVAC Applications, ch. 9: +2.5 to +12.5 Pa), and the stack effect puts tens
  of pascals across doors of tall buildings in winter: steps of 0.05 hPa (5 Pa) standard
  deviation between zones, at the start and end of a stair, lift or escalator bout (the stairwell
  or lift door) half the time, plus ~6 an hour anywhere (doors, ventilation switching). Door
  slams and gusts: pulses of a few pascals lasting a fraction of a second.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._height import altitude_pressure
from .._log import Activity
from ._gait import GaitTimeline, RIDE_ACTIVITIES, require_fields
from ._vertical import VerticalTimeline

__all__ = ["Barometer", "BarometerTimeline"]

_NOISE_BLOCK = 4096
_RATE_RANGE_HZ = (0.1, 200.0)
# Bouts that start or end behind a door: stairwells, lifts and escalator halls.
_DOORED = (Activity.WALKING_UPSTAIRS, Activity.WALKING_DOWNSTAIRS) + RIDE_ACTIVITIES
# How much of the warming each placement sees: a phone in a bag stays near room temperature.
_WARMING_SHARE = {"bag": 0.3}
_DRIFT_KNOT_S = 60.0  # the weather tendency changes over hours: one knot a minute is plenty


@dataclass(frozen=True)
class Barometer:
    """A phone barometer model; :meth:`ideal` switches every error off.

    Parameters
    ----------
    rate_hz : float
        Readings per second (phones: 1–25 Hz; the log holds the latest reading at each sample).
    noise_hpa : float
        White noise standard deviation per reading, hPa (BMP280/LPS22HB class: 0.01–0.05).
    resolution_hpa : float
        Reported values are multiples of this, hPa; 0 keeps full precision.
    offset_sd_hpa : float
        Standard deviation of the device's constant calibration offset, hPa (datasheets: ±1 hPa).
    drift_hpa_per_h : float
        Standard deviation of the weather's pressure tendency, hPa/h.
    door_step_hpa : float
        Standard deviation of the pressure difference between two zones of a building, hPa.
    door_steps_per_h : float
        Rate of zone changes anywhere (doors, ventilation), besides those at stairwells and lifts.
    spike_hpa, spikes_per_h : float
        Standard deviation and rate of short pressure pulses (door slams, gusts), hPa and per hour.
    warming_hpa : float
        Largest offset a hand or pocket warms the sensor to (≈ 10 K × 1.5 Pa/K), hPa.

    Examples
    --------
    >>> Barometer(rate_hz=10).noise_hpa
    0.02
    >>> Barometer.ideal().drift_hpa_per_h
    0.0
    """

    rate_hz: float = 25.0
    noise_hpa: float = 0.02
    resolution_hpa: float = 0.01
    offset_sd_hpa: float = 0.5
    drift_hpa_per_h: float = 0.3
    door_step_hpa: float = 0.05
    door_steps_per_h: float = 6.0
    spike_hpa: float = 0.03
    spikes_per_h: float = 6.0
    warming_hpa: float = 0.15

    def __post_init__(self):
        require_fields(self, self.__dataclass_fields__, lambda v: np.isfinite(v) and v >= 0, "a finite number >= 0")
        require_fields(
            self, ("rate_hz",), lambda v: _RATE_RANGE_HZ[0] <= v <= _RATE_RANGE_HZ[1],
            f"in [{_RATE_RANGE_HZ[0]:g}, {_RATE_RANGE_HZ[1]:g}] Hz", hint="; phone barometers read at 1–25 Hz.",
        )

    @classmethod
    def ideal(cls, rate_hz: float = 25.0) -> "Barometer":
        """An exact barometer: the standard-atmosphere pressure of the true altitude, held at ``rate_hz``."""
        return cls(rate_hz=rate_hz, **{name: 0.0 for name in cls.__dataclass_fields__ if name != "rate_hz"})

    @classmethod
    def draw(cls, rng: np.random.Generator, rate_hz: float | None = None) -> "Barometer":
        """A random phone's barometer: noise 0.01–0.05 hPa, 0.01 hPa or finer resolution, 1–25 Hz."""
        return cls(
            rate_hz=float(rng.choice([1.0, 5.0, 10.0, 25.0])) if rate_hz is None else float(rate_hz),
            noise_hpa=float(rng.uniform(0.01, 0.05)),
            resolution_hpa=float(rng.choice([0.01, 0.001])),
        )


class BarometerTimeline:
    """Everything one simulated barometer draws once per log, and its readings at any times.

    Parameters
    ----------
    model : Barometer
    vertical : VerticalTimeline
        The person's altitude.
    gait : GaitTimeline
        Its bouts place the doors of stairwells and lifts.
    placement : str
        Where the phone is carried (how much it warms).
    seed_key : numpy.random.SeedSequence
        The barometer's own seed: it draws nothing from the other streams' generators, so turning
        the barometer on changes no other sample of the log.
    """

    def __init__(self, model: Barometer, vertical: VerticalTimeline, gait: GaitTimeline, placement: str,
                 seed_key: np.random.SeedSequence):
        self.model, self.vertical = model, vertical
        timeline_key, self._noise_key = seed_key.spawn(2)
        rng = np.random.default_rng(timeline_key)
        duration = gait.duration_s
        self.phase = float(rng.random())  # reading 0 is φ/f_b before the log's start
        self.site_elevation_m = float(rng.uniform(0.0, 500.0))
        self.offset_hpa = float(model.offset_sd_hpa * rng.standard_normal())
        self._warming_hpa = model.warming_hpa * _WARMING_SHARE.get(placement, 1.0) * float(rng.uniform(0.3, 1.0))
        self._warming_s = float(rng.uniform(120.0, 600.0))
        self._build_weather(rng, duration)
        self._build_doors(rng, gait)
        self._build_spikes(rng, duration)

    def _build_weather(self, rng: np.random.Generator, duration: float) -> None:
        # The tendency is an Ornstein–Uhlenbeck process sampled exactly at the knots (stationary
        # start), the drift its integral by the trapezoid rule; linear between knots.
        knots = np.arange(int(np.ceil(duration / _DRIFT_KNOT_S)) + 2) * _DRIFT_KNOT_S
        decay = np.exp(-_DRIFT_KNOT_S / (6 * 3600.0))
        sd = self.model.drift_hpa_per_h / 3600.0  # hPa/s
        shocks = rng.standard_normal(knots.size)
        tendency = np.empty(knots.size)
        tendency[0] = sd * shocks[0]
        for i in range(1, knots.size):
            tendency[i] = decay * tendency[i - 1] + sd * np.sqrt(1.0 - decay**2) * shocks[i]
        self._weather_t = knots
        self._weather = np.concatenate([[0.0], np.cumsum(0.5 * (tendency[1:] + tendency[:-1]) * _DRIFT_KNOT_S)])

    def _build_doors(self, rng: np.random.Generator, gait: GaitTimeline) -> None:
        # Doors at the ends of stairwell and lift bouts (each with probability ½), and anywhere.
        doored = np.isin(gait.bout_activity, _DOORED)
        bout_end = np.append(gait.bout_start[1:], gait.duration_s)
        at_bouts = np.concatenate([gait.bout_start[doored], bout_end[doored]])
        at_bouts = at_bouts[rng.random(at_bouts.size) < 0.5]
        n_any = int(rng.poisson(self.model.door_steps_per_h * gait.duration_s / 3600.0))
        times = np.sort(np.concatenate([at_bouts, rng.uniform(0.0, gait.duration_s, n_any)]))
        # Each zone has its own pressure: a step goes to the new zone's level, which is a fresh draw,
        # not a random walk (walking back through a door returns to the building's range).
        level = self.model.door_step_hpa * rng.standard_normal(times.size)
        duration = rng.uniform(0.5, 2.0, times.size)  # the air through an opened door equalises in ~1 s
        # One change at a time: a change starting before the previous one ended is dropped, so a
        # time is inside at most one change and the value is a per-sample formula (chunk-proof).
        keep = np.ones(times.size, dtype=bool)
        busy_until = -np.inf
        for i in range(times.size):
            keep[i] = times[i] >= busy_until
            busy_until = times[i] + duration[i] if keep[i] else busy_until
        self._door_t, self._door_d = times[keep], duration[keep]
        self._door_level = level[keep]
        self._door_before = np.concatenate([[0.0], self._door_level[:-1]])

    def _build_spikes(self, rng: np.random.Generator, duration: float) -> None:
        n = int(rng.poisson(self.model.spikes_per_h * duration / 3600.0))
        self._spike_t = np.sort(rng.uniform(0.0, duration, n))
        self._spike_w = rng.uniform(0.1, 0.3, n)  # Gaussian sd, s
        self._spike_a = self.model.spike_hpa * rng.standard_normal(n)

    def true_pressure(self, t: np.ndarray) -> np.ndarray:
        """Air pressure at the phone, hPa, before the sensor's own errors (offset, warming, noise, rounding)."""
        t = np.asarray(t, dtype=float)
        return altitude_pressure(self.site_elevation_m + self.vertical.altitude(t)) + self.weather(t) + self.building(t)

    def weather(self, t: np.ndarray) -> np.ndarray:
        """The weather's pressure change since the log's start, hPa."""
        return np.interp(t, self._weather_t, self._weather)

    def building(self, t: np.ndarray) -> np.ndarray:
        """Door and ventilation steps plus spikes, hPa."""
        out = np.zeros(np.shape(t))
        if self._door_t.size:
            k = np.searchsorted(self._door_t, t, side="right") - 1
            kc = np.clip(k, 0, None)
            s = np.clip((t - self._door_t[kc]) / self._door_d[kc], 0.0, 1.0)
            blend = s * s * (3.0 - 2.0 * s)
            step = self._door_before[kc] + (self._door_level[kc] - self._door_before[kc]) * blend
            out += np.where(k >= 0, step, 0.0)
        if self._spike_t.size:
            # The nearest spike before and after each time; spikes further away are < 1e-9 of theirs
            # unless two fall within a second, which a Poisson process at a few an hour rarely does.
            i, n = np.searchsorted(self._spike_t, t), self._spike_t.size
            for j, valid in ((i - 1, i >= 1), (i, i < n)):
                jc = np.clip(j, 0, n - 1)
                z = (t - self._spike_t[jc]) / self._spike_w[jc]
                out += np.where(valid & (np.abs(z) < 12.0), self._spike_a[jc] * np.exp(-0.5 * z * z), 0.0)
        return out

    def warming(self, t: np.ndarray) -> np.ndarray:
        """Offset of a sensor warming in a hand or pocket from the log's start, hPa (exponential approach)."""
        return self._warming_hpa * -np.expm1(-np.maximum(t, 0.0) / self._warming_s)

    def reading_times(self, j: np.ndarray) -> np.ndarray:
        """Time (s from the log's start) of barometer readings ``j``."""
        return (j - self.phase) / self.model.rate_hz

    def readings(self, j: np.ndarray) -> np.ndarray:
        """Values of readings ``j`` (non-negative ints), hPa: a function of ``j`` alone."""
        t = self.reading_times(j)
        p = self.true_pressure(t) + self.offset_hpa + self.warming(t) + self.model.noise_hpa * self._noise(j)
        if self.model.resolution_hpa > 0:
            p = np.round(p / self.model.resolution_hpa) * self.model.resolution_hpa
        return p

    def _noise(self, j: np.ndarray) -> np.ndarray:
        # Standard normals keyed by fixed blocks of readings, as the motion sensors' noise is keyed by
        # blocks of sample slots: the same reading gets the same draw whatever the chunking.
        out = np.empty(j.shape)
        blocks = j // _NOISE_BLOCK
        for b in np.unique(blocks):
            rng = np.random.default_rng(np.random.SeedSequence(self._noise_key.entropy,
                                                               spawn_key=(*self._noise_key.spawn_key, int(b))))
            draw = rng.standard_normal(_NOISE_BLOCK)
            here = blocks == b
            out[here] = draw[j[here] - b * _NOISE_BLOCK]
        return out

    def at(self, t: np.ndarray) -> np.ndarray:
        """Pressure held at each accelerometer time ``t`` (s): the latest reading at or before it."""
        j = np.floor(np.asarray(t, dtype=float) * self.model.rate_hz + self.phase).astype(np.int64)
        unique, inverse = np.unique(j, return_inverse=True)
        return self.readings(unique)[inverse]
