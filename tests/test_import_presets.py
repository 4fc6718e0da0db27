"""``stairsense import --preset``: Sensor Logger, GetSensorData and phyphox exports to canonical logs.

Each fixture is written in the app's documented format (file names, headers, column order, units,
sign convention, clock) from known signals: gravity turning slowly and pressure falling as on a
climb, both linear in time so that linear interpolation onto the accelerometer's times reproduces
them exactly, and the imported log must give the signals back. The GetSensorData preset is also
checked on a real log of ``../shared/data/ipin-hand-baro`` against ``load_ipin``, an independent
reader of the same file.
"""
import json

import numpy as np
import pytest

from stairsense.cli import main
from stairsense.stream import load_ipin, read_log
from stairsense.stream.io import IMPORT_PRESETS, parse_records

T0 = 1_700_000_000_000_000_000  # ns since the epoch, as Sensor Logger's `time`


def gravity(t_s):
    """Gravity in the device frame (Android sign: +z face up), tilting slowly towards y, linearly in time."""
    return np.c_[np.zeros_like(t_s), 0.0981 * t_s, np.full_like(t_s, 9.80665)]


def linacc(t_s):
    rng = np.random.default_rng(int(t_s.size))
    return rng.normal(0, 0.8, (t_s.size, 3))


def rate(t_s):
    return np.c_[0.3 + 0.01 * t_s, -0.2 * np.ones_like(t_s), 0.05 * t_s]  # rad/s, linear in time


def pressure(t_s):
    return 976.3 - 0.04 * t_s  # hPa: a climb at ~0.33 m/s


def csv_text(header, columns):
    rows = zip(*[c.tolist() for c in columns])
    return ",".join(header) + "\n" + "".join(",".join(repr(v) for v in r) + "\n" for r in rows)


def sensor_logger_folder(folder, sign=1.0, barometer=True, gyroscope=True):
    """An unzipped Sensor Logger export: one CSV per sensor, `time` (ns), `seconds_elapsed`, axes as z,y,x.

    ``sign=-1`` writes iOS's convention ("Standardise Units & Frames" off): acceleration and gravity negated.
    Accelerometer.csv is the acceleration without gravity; each sensor has its own clock and rate.
    """
    folder.mkdir()
    acc_t = np.arange(1000) * 0.01 + 0.004  # 100 Hz
    grav_t = np.arange(1000) * 0.01 + 0.001  # 100 Hz, its own timestamps
    gyro_t = np.arange(2100) * 0.005 - 0.2  # 200 Hz
    baro_t = np.arange(12) * 1.0 - 0.5  # 1 Hz, iPhone-like

    def write(name, t_s, xyz):
        cols = [T0 + np.rint(t_s * 1e9).astype(np.int64), t_s, xyz[:, 2], xyz[:, 1], xyz[:, 0]]
        (folder / name).write_text(csv_text(["time", "seconds_elapsed", "z", "y", "x"], cols))

    write("Accelerometer.csv", acc_t, sign * linacc(acc_t))
    write("Gravity.csv", grav_t, sign * gravity(grav_t))
    write("TotalAcceleration.csv", acc_t, np.full((acc_t.size, 3), 99.0))  # Android only; not read
    if gyroscope:
        write("Gyroscope.csv", gyro_t, rate(gyro_t))
    if barometer:
        (folder / "Barometer.csv").write_text(csv_text(
            ["time", "seconds_elapsed", "relativeAltitude", "pressure"],
            [T0 + np.rint(baro_t * 1e9).astype(np.int64), baro_t, 0.33 * (baro_t - baro_t[0]), pressure(baro_t)]))
    (folder / "Metadata.csv").write_text("version,device name,recording time,platform\n2,Pixel 7,2024-01-01,android\n")
    return acc_t


def seconds(log):
    return (log.t_ns - T0) / 1e9


@pytest.mark.parametrize("preset, sign", [("sensor-logger", 1.0), ("sensor-logger-ios", -1.0)])
def test_sensor_logger_folder_gives_acceleration_with_gravity_and_pressure(tmp_path, preset, sign):
    acc_t = sensor_logger_folder(tmp_path / "export", sign=sign)
    log, report = IMPORT_PRESETS[preset].import_log([tmp_path / "export"])
    t = seconds(log)
    # The gravity stream starts 3 ms before the accelerometer's first sample and ends 3 ms before its last.
    np.testing.assert_allclose(t, acc_t[:-1], atol=1e-9)
    np.testing.assert_allclose(log.acc, linacc(acc_t)[:-1] + gravity(t), atol=1e-9)
    np.testing.assert_allclose(log.linacc, linacc(acc_t)[:-1], atol=1e-12)
    np.testing.assert_allclose(log.gyro, rate(t), atol=1e-9)
    np.testing.assert_allclose(log.pressure, pressure(t), atol=1e-9)
    assert report.dropped_outside_overlap == 1 and log.meta["app"] == "Sensor Logger"
    assert any(m.startswith("acc from Gravity.csv") and m.endswith("added to the other sources' ax, ay, az")
               for m in report.merge)
    assert any(m.startswith("pressure from Barometer.csv (1.0 Hz") for m in report.merge)


def test_sensor_logger_ios_files_read_with_the_android_preset_are_upside_down(tmp_path):
    """Why there are two presets: the sign convention cannot be told from the data, so it is named."""
    sensor_logger_folder(tmp_path / "export", sign=-1.0)
    log, _ = IMPORT_PRESETS["sensor-logger"].import_log([tmp_path / "export"])
    assert np.median(log.acc[:, 2]) < -9.0


def test_sensor_logger_without_barometer_or_gyroscope_leaves_them_out_and_says_so(tmp_path):
    sensor_logger_folder(tmp_path / "export", barometer=False, gyroscope=False)
    log, report = IMPORT_PRESETS["sensor-logger"].import_log([tmp_path / "export"])
    assert log.pressure is None and log.gyro is None and log.acc is not None
    assert sorted(x.split(":")[0] for x in report.left_out) == ["gyro", "pressure"]
    assert any("'Barometer.pressure'" in x for x in report.left_out)


def test_sensor_logger_files_can_be_named_instead_of_the_folder(tmp_path):
    sensor_logger_folder(tmp_path / "export")
    names = ["Accelerometer.csv", "Gravity.csv", "Barometer.csv"]
    log, report = IMPORT_PRESETS["sensor-logger"].import_log([tmp_path / "export" / n for n in names])
    assert log.gyro is None and log.pressure is not None and len(report.sources) == 3


def test_sensor_logger_folder_without_gravity_is_refused(tmp_path):
    sensor_logger_folder(tmp_path / "export")
    (tmp_path / "export" / "Gravity.csv").unlink()
    with pytest.raises(ValueError, match=r"no source has a column 'Gravity.x'"):
        IMPORT_PRESETS["sensor-logger"].import_log([tmp_path / "export"])


# GetSensorData: `%` header, then TYPE;AppTimestamp(s);SensorTimestamp(s);values...;Accuracy, sensors interleaved.
GSD_HEADER = """% LogFile created by the 'GetSensorData' App for Android.
% Model:                   \tSM-A520F
% Accelerometer data: \t'ACCE;AppTimestamp(s);SensorTimestamp(s);Acc_X(m/s^2);Acc_Y(m/s^2);Acc_Z(m/s^2);Accuracy(integer)'
% Pressure data:      \t'PRES;AppTimestamp(s);SensorTimestamp(s);Pres(mbar);Accuracy(integer)'
%
"""


def getsensordata_log(path, with_pressure=True, broken_line=None):
    """A GetSensorData log: ACCE at 50 Hz, GYRO at 100 Hz, PRES at ~6.2 Hz, plus lines the preset skips."""
    boot = 67164.1685  # SensorTimestamp: seconds since boot, 4 decimals as the app writes them
    lines = []
    user = linacc(np.zeros(500))
    for k in range(500):
        s = boot + 0.02 * k
        lines.append((s, f"ACCE;{0.0448 + 0.02 * k:.4f};{s:.4f};" + ";".join(
            f"{v:.5f}" for v in (user[k] + gravity(np.array([s - boot]))[0])) + ";3"))
        lines.append((s + 0.0001, f"AHRS;{0.0452 + 0.02 * k:.4f};{s:.4f};48.859100;6.101067;0.737865;0.41;0.05;0.02;3"))
    for k in range(1010):
        s = boot - 0.0411 + 0.01 * k
        lines.append((s, f"GYRO;{0.0434 + 0.01 * k:.4f};{s:.4f};" + ";".join(
            f"{v:.5f}" for v in rate(np.array([s - boot]))[0]) + ";3"))
    if with_pressure:
        for k in range(64):
            s = boot - 0.0773 + 0.161 * k
            lines.append((s, f"PRES;{0.0485 + 0.161 * k:.4f};{s:.4f};{pressure(np.array([s - boot]))[0]:.4f};3"))
    lines.append((boot + 1.0, "POSI;1.0;1;49.460888;11.110478;0;0"))
    lines.append((boot + 2.0, "MAGN;2.0;67166.1;4.56000;-7.08000;-24.12000;0"))
    lines.sort(key=lambda pair: pair[0])
    text = [line for _, line in lines]
    if broken_line is not None:
        text[broken_line] = "ACCE;0.1;67164.2;1.0;2.0;3"  # a field short
    path.write_text(GSD_HEADER + "\n".join(text) + "\n")
    return boot


def test_getsensordata_preset_reads_acce_gyro_pres_and_skips_the_rest(tmp_path):
    boot = getsensordata_log(tmp_path / "walk.txt")
    log, report = IMPORT_PRESETS["getsensordata"].import_log([tmp_path / "walk.txt"])
    t = log.t_ns / 1e9 - boot
    np.testing.assert_allclose(t, 0.02 * np.arange(len(log)), atol=1e-6)
    assert len(log) == 500  # every ACCE sample lies inside the gyroscope's and the barometer's span
    # Values as written (5 and 4 decimals), then interpolated exactly (linear signals).
    np.testing.assert_allclose(log.acc, linacc(np.zeros(500)) + gravity(t), atol=1e-5)
    np.testing.assert_allclose(log.gyro, rate(t), atol=1e-5)
    np.testing.assert_allclose(log.pressure, pressure(t), atol=1e-4)
    assert [s["streams"] for s in report.sources] == [["acc"], ["gyro"], ["pressure"]]
    assert any("500 AHRS lines, 1 MAGN lines, 1 POSI lines (record types the layout does not read)" in x
               for x in report.left_out)


def test_getsensordata_without_pres_lines_has_no_pressure(tmp_path):
    getsensordata_log(tmp_path / "walk.txt", with_pressure=False)
    log, report = IMPORT_PRESETS["getsensordata"].import_log([tmp_path / "walk.txt"])
    assert log.pressure is None and log.gyro is not None
    assert any(x.startswith("pressure: no source has 'PRES.pressure'") for x in report.left_out)


def test_getsensordata_line_with_a_field_missing_is_named(tmp_path):
    getsensordata_log(tmp_path / "walk.txt", broken_line=40)
    with pytest.raises(ValueError, match=r"walk.txt:46: a ACCE line has 6 fields, the layout names 7 "
                                         r"\(type;app_s;sensor_s;x;y;z;accuracy\)"):
        IMPORT_PRESETS["getsensordata"].import_log([tmp_path / "walk.txt"])


@pytest.mark.parametrize("name", ["IPIN2023_T3_TrainingTrial02_repetition01.txt.gz",
                                  "IPIN2023_T3_TrainingTrial25_repetition03.txt.gz"])
def test_getsensordata_preset_on_a_real_log_equals_load_ipin(data_dir, name):
    """An independent oracle: the dataset loader parses the same file line by line in Python."""
    path = data_dir / "ipin-hand-baro" / name
    oracle = load_ipin(path)
    log, _ = IMPORT_PRESETS["getsensordata"].import_log([path])
    np.testing.assert_array_equal(log.t_ns, oracle.t_ns)
    np.testing.assert_allclose(log.pressure, oracle.pressure, rtol=0, atol=1e-9)
    assert 900 < log.pressure.min() and log.pressure.max() < 1000  # hPa, the building's ~976-981
    np.testing.assert_allclose(log.acc, oracle.acc, rtol=0, atol=1e-12)
    np.testing.assert_allclose(log.gyro, oracle.gyro, rtol=0, atol=1e-12)


def phyphox_csv(path, header, columns):
    """phyphox's CSV: quoted header names, values as 0.000000000E0 (Java's DecimalFormat)."""
    path.write_text(",".join(f'"{h}"' for h in header) + "\n" + "".join(
        ",".join(f"{v:.9E}".replace("E+0", "E").replace("E-0", "E-").replace("E+", "E") for v in row) + "\n"
        for row in zip(*[c.tolist() for c in columns])))


def phyphox_export(folder, barometer=True):
    """A custom experiment's export sets, each its own CSV with its own "Time (s)" (s since the start)."""
    folder.mkdir()
    (folder / "meta").mkdir()
    (folder / "meta" / "device.csv").write_text('"property","value"\n"model","Pixel 7"\n')
    t = np.arange(700) * 0.0025 + 0.0011  # 400 Hz
    acc = linacc(t) + gravity(t)
    phyphox_csv(folder / "Accelerometer.csv", ["Time (s)", *(f"Acceleration {a} (m/s^2)" for a in "xyz")],
                [t, acc[:, 0], acc[:, 1], acc[:, 2]])
    tg = np.arange(400) * 0.004
    g = rate(tg)
    phyphox_csv(folder / "Gyroscope.csv", ["Time (s)", *(f"Gyroscope {a} (rad/s)" for a in "xyz")],
                [tg, g[:, 0], g[:, 1], g[:, 2]])
    if barometer:
        tp = np.arange(40) * 0.04  # 25 Hz
        phyphox_csv(folder / "Pressure.csv", ["Time (s)", "Pressure (hPa)"], [tp, pressure(tp)])
    return t, acc


def test_phyphox_export_folder_gives_each_set_its_own_clock(tmp_path):
    t, acc = phyphox_export(tmp_path / "export")
    log, report = IMPORT_PRESETS["phyphox"].import_log([tmp_path / "export"])
    inside = t <= 1.56  # the barometer's last reading
    np.testing.assert_allclose(log.t_ns / 1e9, t[inside], atol=1e-9)
    np.testing.assert_allclose(log.acc, acc[inside], rtol=1e-9)  # 10 significant digits written
    np.testing.assert_allclose(log.gyro, rate(t[inside]), atol=1e-8)
    np.testing.assert_allclose(log.pressure, pressure(t[inside]), atol=1e-6)  # 976.3 to 10 digits
    assert report.dropped_outside_overlap == int((~inside).sum()) == 76
    assert sorted(s["path"].split("/")[-1] for s in report.sources) == ["Accelerometer.csv", "Gyroscope.csv",
                                                                        "Pressure.csv"]


def test_phyphox_single_file_without_pressure(tmp_path):
    phyphox_export(tmp_path / "export", barometer=False)
    log, report = IMPORT_PRESETS["phyphox"].import_log([tmp_path / "export" / "Accelerometer.csv"])
    assert log.pressure is None and log.gyro is None
    assert sorted(x.split(":")[0] for x in report.left_out) == ["gyro", "pressure"]


@pytest.mark.parametrize("name", sorted(IMPORT_PRESETS))
def test_every_preset_is_a_valid_plain_mapping_with_optional_pressure(name):
    preset = IMPORT_PRESETS[name]
    from stairsense.stream import parse_mapping

    targets = {e.target for e in parse_mapping(dict(preset.columns))}
    assert {"t", "ax", "ay", "az", "p"} <= targets and "pressure" in preset.optional
    parse_records(None if preset.records is None else dict(preset.records))


# The command line.

def test_help_lists_every_preset(capsys):
    with pytest.raises(SystemExit):
        main(["import", "--help"])
    out = capsys.readouterr().out
    assert all(f"\n  {name} " in out for name in IMPORT_PRESETS)


@pytest.mark.parametrize("preset", ["sensor-logger", "getsensordata", "phyphox"])
def test_cli_preset_writes_a_log_with_p_that_replays(tmp_path, capsys, preset):
    if preset == "sensor-logger":
        sensor_logger_folder(tmp_path / "export")
        src = tmp_path / "export"
    elif preset == "getsensordata":
        getsensordata_log(tmp_path / "walk.txt")
        src = tmp_path / "walk.txt"
    else:
        phyphox_export(tmp_path / "export")
        src = tmp_path / "export"
    out = tmp_path / "log.csv.gz"
    capsys.readouterr()
    assert main(["import", str(src), "--preset", preset, "--out", str(out), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    log = read_log(out)
    assert log.pressure is not None and report["samples"] == len(log)
    assert log.meta["import_preset"] == preset
    assert "p <- " in " ".join(log.meta["mapping"])
    assert main(["replay", str(out), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["samples"] == len(log)


def test_cli_needs_exactly_one_mapping(tmp_path, capsys):
    getsensordata_log(tmp_path / "walk.txt")
    argv = ["import", str(tmp_path / "walk.txt"), "--out", str(tmp_path / "log.csv")]
    assert main([*argv, "--preset", "getsensordata", "--map", "t=x"]) == 2
    assert "got --preset and --map" in capsys.readouterr().err
    assert main(argv) == 2
    assert not (tmp_path / "log.csv").exists()


def test_cli_map_file_with_records_and_optional_groups(tmp_path, capsys):
    """A preset is what a mapping file can say: the getsensordata preset written out as TOML."""
    getsensordata_log(tmp_path / "walk.txt")
    (tmp_path / "gsd.toml").write_text(
        'optional = ["gyro", "pressure"]\n\n[columns]\nt = "sensor_s:s"\nax = "ACCE.x"\nay = "ACCE.y"\naz = "ACCE.z"\n'
        'p = "PRES.pressure:mbar"\n\n[records]\ndelimiter = ";"\ncomment = "%"\n\n[records.types]\n'
        'ACCE = "type,app_s,sensor_s,x,y,z,accuracy"\nPRES = "type,app_s,sensor_s,pressure,accuracy"\n')
    out = tmp_path / "log.parquet"
    assert main(["import", str(tmp_path / "walk.txt"), "--map-file", str(tmp_path / "gsd.toml"), "--out", str(out)]) == 0
    via_file = read_log(out)
    via_preset, _ = IMPORT_PRESETS["getsensordata"].import_log([tmp_path / "walk.txt"])
    np.testing.assert_array_equal(via_file.pressure, via_preset.pressure)
    assert "GYRO lines" in capsys.readouterr().out  # skipped: the file's layout does not read them
