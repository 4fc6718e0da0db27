"""Ready column maps for the apps people record with (``stairsense import --preset NAME``).

Each preset is what a ``--map-file`` holds — a column mapping, the groups that may be absent, the
record layout of a typed-line file, provenance — and goes through the same machinery
(:func:`~stairsense.stream.import_log`); no app has a code path of its own. Every preset puts air
pressure in ``p`` (hPa) when the recording has a barometer, and leaves it out, reported, when not.

The formats, as the apps document them:

* **Sensor Logger** (Kelvin Choi; ``tszheichoi/awesome-sensor-logger``, ``UNITS.md``, ``COORDINATES.md``,
  ``CROSSPLATFORM.md``): the unzipped export is a folder of one CSV per sensor, ``time`` in ns since
  the epoch, ``seconds_elapsed`` in s, axes in the order ``z,y,x``. ``Accelerometer.csv`` is the
  acceleration *without* gravity (Android's linear acceleration, iOS's user acceleration; m/s²), and
  ``Gravity.csv`` the gravity vector (m/s²): the app's own advice for acceleration with gravity is
  their sum, which is what stairsense needs (``TotalAcceleration.csv`` holds it directly, but only
  on Android). ``Gyroscope.csv`` is rad/s; ``Barometer.csv`` is ``time,seconds_elapsed,
  relativeAltitude,pressure`` with ``pressure`` in mbar (= hPa). Android's axes are the canonical
  ones; iOS's acceleration and gravity have the opposite sign on every axis unless "Standardise
  Units & Frames" is on (Settings > Sensor Configuration), hence the ``sensor-logger-ios`` preset.
  The gyroscope has one convention on both.
* **GetSensorData** (LOPSI, CAR-CSIC; the ``%`` header of every log, ``../shared/data/README.md``):
  one text file, one line per sample, ``TYPE;AppTimestamp(s);SensorTimestamp(s);values...``:
  ``ACCE`` m/s², ``GYRO`` rad/s, ``PRES`` mbar (= hPa), each ending in an accuracy field. The
  ``SensorTimestamp`` is the sensor's own clock, common to ACCE, GYRO and PRES; every other line
  type (MAGN, AHRS, POSI, WIFI, ...) is skipped and counted.
* **phyphox** (RWTH Aachen; ``phyphox-android`` ``DataExport.java`` and the experiment files
  ``accelerometer.phyphox``, ``gyroscope.phyphox``, ``pressure.phyphox``): "CSV (Comma, decimal
  point)" exports a zip of one CSV per export set (``Raw Data.csv``, ...), quoted headers
  ``"Time (s)","Acceleration x (m/s^2)",...``, ``"Gyroscope x (rad/s)"``, ``"Pressure (hPa)"``,
  time in s since the experiment started. Acceleration is with gravity in m/s² and the Android sign
  on both platforms (phyphox for iOS multiplies CoreMotion's g by −9.81). Its "Linear Acceleration"
  experiment (without g) names its columns ``Linear Acceleration x (m/s^2)``, which this preset
  does not read.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Mapping

__all__ = ["ImportPreset", "IMPORT_PRESETS"]


@dataclass(frozen=True)
class ImportPreset:
    """A named, ready column map for :func:`~stairsense.stream.import_log` (the ``--map-file`` fields).

    Attributes
    ----------
    description : str
        One line: the app and what to pass (``stairsense import --help`` lists it).
    columns : mapping of str to str
        The column mapping (:func:`~stairsense.stream.parse_mapping`).
    optional : tuple of str
        Groups left out, and reported, when the recording lacks them.
    records : mapping or None
        The record layout of a typed-line file (:func:`~stairsense.stream.io.parse_records`).
    meta : mapping
        Provenance added to the log's meta.
    """

    description: str
    columns: Mapping[str, str]
    optional: tuple[str, ...] = ()
    records: Mapping | None = None
    meta: Mapping = field(default_factory=dict)

    def import_log(self, paths, *, repair=(), meta: dict | None = None):
        """:func:`~stairsense.stream.import_log` with this preset: ``(SensorLog, ImportReport)``."""
        from ._import import import_log

        return import_log(paths, dict(self.columns), repair=repair, meta={**self.meta, **(meta or {})},
                          records=None if self.records is None else dict(self.records), optional=self.optional)


def _axes(target: str, column: str, unit: str = "") -> dict[str, str]:
    """``{tx: column-of-x, ty: ..., tz: ...}``: ``column`` has ``{a}`` where the axis letter goes."""
    return {f"{target}{a}": column.format(a=a) + (f":{unit}" if unit else "") for a in "xyz"}


def _sensor_logger(sign: str) -> dict[str, str]:
    return {"t": "time:ns", **_axes("a", "Accelerometer.{a}+Gravity.{a}", f"{sign}m/s2"),
            **_axes("l", "Accelerometer.{a}", f"{sign}m/s2"), **_axes("g", "Gyroscope.{a}", "rad/s"),
            "p": "Barometer.pressure:hPa"}


#: The presets by name, in the order ``--help`` lists them.
IMPORT_PRESETS: Mapping[str, ImportPreset] = MappingProxyType({
    "sensor-logger": ImportPreset(
        "a Sensor Logger export folder (Accelerometer.csv, Gravity.csv; Gyroscope.csv, Barometer.csv if recorded) "
        "from Android, or from iOS with 'Standardise Units & Frames' on",
        _sensor_logger(""), ("gyro", "pressure"), meta={"app": "Sensor Logger"}),
    "sensor-logger-ios": ImportPreset(
        "the same from iOS with 'Standardise Units & Frames' off (the app's default): acceleration signs flipped",
        _sensor_logger("-"), ("gyro", "pressure"), meta={"app": "Sensor Logger", "platform": "iOS"}),
    "getsensordata": ImportPreset(
        "a GetSensorData log (TYPE;AppTimestamp;SensorTimestamp;... lines: ACCE, GYRO, PRES; others skipped)",
        {"t": "sensor_s:s", **_axes("a", "ACCE.{a}", "m/s2"), **_axes("g", "GYRO.{a}", "rad/s"),
         "p": "PRES.pressure:mbar"},
        ("gyro", "pressure"),
        records={"delimiter": ";", "comment": "%", "types": {
            "ACCE": "type,app_s,sensor_s,x,y,z,accuracy",
            "GYRO": "type,app_s,sensor_s,x,y,z,accuracy",
            "PRES": "type,app_s,sensor_s,pressure,accuracy"}},
        meta={"app": "GetSensorData"}),
    "phyphox": ImportPreset(
        "a phyphox CSV export, unzipped (its folder or files): \"Time (s)\", \"Acceleration x (m/s^2)\"... (with g), "
        "\"Gyroscope x (rad/s)\"..., \"Pressure (hPa)\"",
        {"t": "Time (s):s", **_axes("a", "Acceleration {a} (m/s^2)", "m/s2"),
         **_axes("g", "Gyroscope {a} (rad/s)", "rad/s"), "p": "Pressure (hPa):hPa"},
        ("gyro", "pressure"), meta={"app": "phyphox"}),
})
