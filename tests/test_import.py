"""Bring your own log (issue 10 item 8): ``import_log`` and ``stairsense import`` with a column mapping.

The oracle is a known canonical log written out the way other apps write theirs (other column
names, ms or s timestamps, g, iOS CoreMotion's sign and gravity + userAcceleration split, separate
sensor files at other rates); importing must give the known log back.
"""
import json

import numpy as np
import pytest

from stairsense.cli import main
from stairsense.stream import import_log, parse_mapping, read_log
from stairsense.stream.io import parse_records

G = 9.80665  # standard gravity, written out: the oracle does not borrow the code's constant


def known(n=400, seed=0):
    rng = np.random.default_rng(seed)
    t = 1_700_000_000_000_000_000 + np.arange(n, dtype=np.int64) * 20_000_000  # 50 Hz
    gravity = np.tile([0.0, 0.0, G], (n, 1))
    linacc = rng.normal(0, 0.5, (n, 3))
    return t, gravity, linacc


def write_csv(path, header, rows, sep=",", newline="\n", bom=False):
    text = sep.join(header) + newline + "".join(sep.join(repr(v) if isinstance(v, float) else str(v) for v in r)
                                                + newline for r in rows)
    path.write_bytes((b"\xef\xbb\xbf" if bom else b"") + text.encode())
    return path


def test_ios_coremotion_one_file_in_seconds_semicolons_bom_crlf(tmp_path):
    t, gravity, linacc = known()
    secs = (t - t[0]) / 1e9 + 1000.0  # CoreMotion's timestamp: seconds since boot
    # CoreMotion's sign: gravity reads -1 g on z lying face up, and acceleration is in g.
    g_ios, user_ios = -gravity / G, -linacc / G
    rows = [[s, *gi, *ui] for s, gi, ui in zip(secs.tolist(), g_ios.tolist(), user_ios.tolist())]
    path = write_csv(tmp_path / "motion.csv", ["timestamp", "gravityX", "gravityY", "gravityZ", "userAccelerationX",
                                               "userAccelerationY", "userAccelerationZ"], rows,
                     sep=";", newline="\r\n", bom=True)
    mapping = {"t": "timestamp:s", **{f"a{c}": f"gravity{c.upper()}+userAcceleration{c.upper()}:-g" for c in "xyz"},
               **{f"l{c}": f"userAcceleration{c.upper()}:-g" for c in "xyz"}}
    log, report = import_log([path], mapping)
    np.testing.assert_allclose(log.acc, gravity + linacc, atol=1e-9)
    np.testing.assert_allclose(log.linacc, linacc, atol=1e-9)
    # Seconds as float64 keep the 20 ms grid to well under a microsecond.
    assert np.abs(np.diff(log.t_ns) - 20_000_000).max() < 1_000
    assert any("× -9.80665 (-g)" in c for c in report.conversions)
    assert report.sources[0]["streams"] == ["acc", "linacc"]


def test_separate_files_merge_onto_the_accelerometer_times(tmp_path):
    t, gravity, linacc = known()
    acc = gravity + linacc
    write_csv(tmp_path / "acc.csv", ["time_ms", "x", "y", "z"],
              [[int(ti // 1_000_000), *a] for ti, a in zip(t, (acc / G).tolist())])
    # The gyroscope at 100 Hz on the same clock, starting 1 s late, in deg/s: a signal linear in
    # time, which linear interpolation reproduces exactly.
    tg = t[0] + 1_000_000_000 + np.arange(500, dtype=np.int64) * 10_000_000
    rate = lambda tt: np.c_[(tt - t[0]) / 1e9, np.full(tt.size, 2.0), -(tt - t[0]) / 2e9]  # rad/s
    write_csv(tmp_path / "gyro.csv", ["time_ms", "x", "y", "z"],
              [[int(ti // 1_000_000), *r] for ti, r in zip(tg, np.degrees(rate(tg)).tolist())])
    spec = ("t=acc.time_ms:ms,ax=acc.x:g,ay=acc.y:g,az=acc.z:g,"
            "t=gyro.time_ms:ms,gx=gyro.x:deg/s,gy=gyro.y:deg/s,gz=gyro.z:deg/s")
    log, report = import_log([tmp_path / "acc.csv", tmp_path / "gyro.csv"], spec)
    inside = (t >= tg[0]) & (t <= tg[-1])
    assert log.t_ns.tolist() == t[inside].tolist()
    assert report.dropped_outside_overlap == int((~inside).sum()) == 150  # 1 s before, 2 s after
    np.testing.assert_allclose(log.acc, acc[inside], atol=1e-9)
    np.testing.assert_allclose(log.gyro, rate(t[inside]), atol=1e-9)
    assert len(report.merge) == 1 and "linear interpolation" in report.merge[0] and "100.0 Hz" in report.merge[0]


def test_quaternions_interpolate_across_a_sign_flip_and_stay_unit(tmp_path):
    t = np.arange(100, dtype=np.int64) * 20_000_000
    write_csv(tmp_path / "acc.csv", ["t", "x", "y", "z"], [[ti, 0.0, 0.0, G] for ti in t])
    # A slow turn about z, sampled at 25 Hz, every other quaternion stored as -q (the same rotation).
    tq = np.arange(50, dtype=np.int64) * 40_000_000
    half = 0.01 * np.arange(50)
    q = np.c_[np.zeros(50), np.zeros(50), np.sin(half), np.cos(half)] * np.where(np.arange(50) % 2, -1, 1)[:, None]
    write_csv(tmp_path / "rot.csv", ["t", "qx", "qy", "qz", "qw"], [[ti, *qi] for ti, qi in zip(tq, q.tolist())])
    log, _ = import_log([tmp_path / "acc.csv", tmp_path / "rot.csv"],
                        "t=acc.t,ax=x,ay=y,az=z,t=rot.t,qx=qx,qy=qy,qz=qz,qw=qw")
    np.testing.assert_allclose(np.linalg.norm(log.rotvec, axis=1), 1.0)
    angle = 2 * np.arctan2(np.abs(log.rotvec[:, 2]), np.abs(log.rotvec[:, 3]))
    np.testing.assert_allclose(angle, 2 * 0.01 * log.t_ns / 40_000_000, atol=1e-4)  # the half-angle grows linearly


@pytest.mark.parametrize("spec, message", [
    ("t=time:ms,ax=x,ay=y", "lacks ['az']"),
    ("ax=x,ay=y,az=z", "no time column"),
    ("t=time:minutes,ax=x,ay=y,az=z", "time unit"),
    ("t=time:ms,ax=x:furlongs,ay=y,az=z", "unit 'furlongs'"),
    ("t=time:ms,ax=x,ay=y,az=z,speed=v", "not a canonical column"),
    ("t=time:ms,ax=x,ax=y,az=z", "more than once"),
    ("t=time:ms,ax=x,ay=y,az=z,gx=p,gy=q", "all-or-nothing"),
    ("t=time:ms,ax,ay=y,az=z", "NAME=COLUMN"),
])
def test_bad_mappings_name_the_entry_and_the_fix(spec, message):
    with pytest.raises(ValueError, match=message.replace("[", r"\[").replace("]", r"\]")):
        parse_mapping(spec)


def test_repeated_timestamps_fail_with_advice_then_dedupe_reports(tmp_path):
    rows = [[i * 20, 0.0, 0.0, 1.0] for i in range(50)]
    rows.insert(10, list(rows[9]))  # exact duplicate
    rows.insert(20, [rows[19][0], 0.1, 0.0, 1.0])  # same time, other values
    path = write_csv(tmp_path / "phone.csv", ["ms", "x", "y", "z"], rows)
    with pytest.raises(ValueError, match=r"phone.csv:12: .*--repair dedupe"):
        import_log([path], "t=ms:ms,ax=x:g,ay=y:g,az=z:g")
    log, report = import_log([path], "t=ms:ms,ax=x:g,ay=y:g,az=z:g", repair=["dedupe"])
    assert len(log) == 50
    assert report.repairs == [f"{path}: dedupe: dropped 1 exact duplicates and 1 rows repeating a timestamp with "
                              "other values (kept the first)"]


def test_values_in_g_mapped_as_m_s2_are_refused(tmp_path):
    path = write_csv(tmp_path / "g.csv", ["ms", "x", "y", "z"], [[i * 20, 0.0, 0.0, 1.0] for i in range(50)])
    with pytest.raises(ValueError, match="looks like g; map the accelerometer with :g"):
        import_log([path], "t=ms:ms,ax=x,ay=y,az=z")


def test_cli_import_with_a_toml_mapping_then_replay(tmp_path, capsys):
    t, gravity, linacc = known(n=1500)
    rows = [[int(ti // 1_000_000), *a] for ti, a in zip(t, ((gravity + linacc) / G).tolist())]
    write_csv(tmp_path / "export.csv", ["timestamp", "accX", "accY", "accZ"], rows)
    (tmp_path / "app.toml").write_text('[columns]\nt = "timestamp:ms"\nax = "accX:g"\nay = "accY:g"\naz = "accZ:g"\n'
                                       '\n[meta]\ndevice = "Pixel 7"\nsubject = "ann"\n')
    out = tmp_path / "log.csv.gz"
    capsys.readouterr()
    assert main(["import", str(tmp_path / "export.csv"), "--map-file", str(tmp_path / "app.toml"),
                 "--out", str(out), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["samples"] == 1500 and report["sources"][0]["rate_hz"] == pytest.approx(50.0)
    log = read_log(out)
    assert log.meta["device"] == "Pixel 7" and log.meta["subject"] == "ann"
    np.testing.assert_allclose(log.acc, gravity + linacc, atol=1e-9)
    assert main(["replay", str(out), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["samples"] == 1500


# Air pressure, streams filled on some rows, record files: what the presets (test_import_presets.py) rely on.

def pressure(t_s):
    return 976.3 - 0.04 * t_s  # hPa, falling as on a climb: linear, so interpolation reproduces it exactly


def test_a_pressure_column_filled_on_some_rows_is_interpolated_onto_every_accelerometer_row(tmp_path):
    """One file, rows of both sensors: the accelerometer's rows before the first reading and after the
    last are dropped and counted; a row with empty accelerometer cells is a barometer-only row."""
    rows = ["t_ns,ax,ay,az,p"]
    for k in range(200):
        t_ns = k * 10_000_000
        p = repr(float(pressure(np.array([t_ns / 1e9]))[0])) if k % 20 == 5 else ""
        rows.append(f"{t_ns},0.1,0.2,9.8,{p}")
        if k % 50 == 7:
            rows.append(f"{t_ns + 1_000_000},,,,{float(pressure(np.array([t_ns / 1e9 + 1e-3]))[0])!r}")
    (tmp_path / "mixed.csv").write_text("\n".join(rows) + "\n")
    log, report = import_log([tmp_path / "mixed.csv"], "t=t_ns,ax=ax,ay=ay,az=az,p=p")
    t = log.t_ns / 1e9
    assert t[0] == 0.05 and t[-1] == 1.85 and len(log) == 181
    assert report.dropped_outside_overlap == 19  # 5 before the first reading, 14 after the last
    np.testing.assert_allclose(log.pressure, pressure(t), atol=1e-9)
    assert "the 14 of 204 rows with values" in report.merge[0]


@pytest.mark.parametrize("cells, message", [
    ("0.1,,9.8,", r"mixed.csv:3: the acc columns \['ax', 'ay', 'az'\] are filled except \['ay'\]"),
    ("0.1,0.2,9.8,101325", r"mixed.csv:3: air pressure after conversion: 101325 hPa .* looks like Pa.*p=p:Pa"),
    ("0.1,0.2,9.8,1.013", r"looks like bar \(1013 hPa\); map the column with its unit: p=p:bar"),
    ("0.1,0.2,9.8,-5", r"-5 hPa is outside 300–1100 hPa; map the column with its unit \(p=COLUMN:UNIT, UNIT one of "
                       r"hPa, mbar, Pa, kPa, bar\)"),
])
def test_bad_rows_are_named(tmp_path, cells, message):
    (tmp_path / "mixed.csv").write_text(f"t_ns,ax,ay,az,p\n0,0.1,0.2,9.8,1000\n10000000,{cells}\n"
                                        "20000000,0.1,0.2,9.8,1000\n")
    with pytest.raises(ValueError, match=message):
        import_log([tmp_path / "mixed.csv"], "t=t_ns,ax=ax,ay=ay,az=az,p=p")


def test_pressure_units_convert_to_hpa(tmp_path):
    (tmp_path / "baro.csv").write_text("ms,x,y,z,pa,kpa\n0,0,0,9.8,101325,101.325\n20,0,0,9.8,101300,101.3\n")
    a, _ = import_log([tmp_path / "baro.csv"], "t=ms:ms,ax=x,ay=y,az=z,p=pa:Pa")
    b, _ = import_log([tmp_path / "baro.csv"], "t=ms:ms,ax=x,ay=y,az=z,p=kpa:kPa")
    np.testing.assert_allclose(a.pressure, [1013.25, 1013.0])
    np.testing.assert_allclose(b.pressure, [1013.25, 1013.0])


@pytest.mark.parametrize("spec, message", [
    ({"types": {}}, "needs 'types'"),
    ({"types": {"ACCE": "type"}}, "at least two distinct"),
    ({"types": {"ACCE": "type,x,x"}}, "at least two distinct"),
    ({"types": {"ACCE": "type,x"}, "delimiter": ";;"}, "one character"),
    ({"types": {"AC;CE": "type,x"}}, "contains the delimiter"),
    ({"types": {"ACCE": "type,x"}, "header": 1}, r"unknown key\(s\) \['header'\]"),
])
def test_bad_record_layouts_name_the_problem(spec, message):
    with pytest.raises(ValueError, match=message):
        parse_records(spec)


def test_cli_bad_pressure_is_one_line_exit_2_and_nothing_written(tmp_path, capsys):
    (tmp_path / "baro.csv").write_text("ms,x,y,z,p\n0,0,0,9.8,101325\n20,0,0,9.8,101300\n")
    out = tmp_path / "log.csv"
    assert main(["import", str(tmp_path / "baro.csv"), "--map", "t=ms:ms,ax=x,ay=y,az=z,p=p", "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and f"{tmp_path / 'baro.csv'}:2: air pressure" in err and "p=p:Pa" in err
    assert not out.exists()


def test_a_repeated_timestamp_of_a_two_sensor_file_is_repaired_and_reported_once(tmp_path):
    rows = [f"{k * 20},0.1,0.2,9.8,0.01,0.02,0.03" for k in range(50)]
    rows.insert(10, rows[9])
    (tmp_path / "phone.csv").write_text("ms,x,y,z,gx,gy,gz\n" + "\n".join(rows) + "\n")
    log, report = import_log([tmp_path / "phone.csv"], "t=ms:ms,ax=x,ay=y,az=z,gx=gx,gy=gy,gz=gz", repair=["dedupe"])
    assert len(log) == 50 and report.merge == []  # one table: the gyroscope shares the accelerometer's rows
    assert report.repairs == [f"{tmp_path / 'phone.csv'}: dedupe: dropped 1 exact duplicates and 0 rows repeating "
                              "a timestamp with other values (kept the first)"]


def test_a_barometer_row_may_share_its_time_with_an_accelerometer_row(tmp_path):
    """Rows of different streams are not repeats of each other: each stream has its own clock."""
    rows = [f"{k * 20},0.1,0.2,9.8," for k in range(50)] + ["0,,,,1000.0", "980,,,,1000.5"]
    (tmp_path / "mixed.csv").write_text("ms,x,y,z,hpa\n" + "\n".join(rows) + "\n")
    log, report = import_log([tmp_path / "mixed.csv"], "t=ms:ms,ax=x,ay=y,az=z,p=hpa")
    assert len(log) == 50 and report.repairs == [] and report.dropped_outside_overlap == 0
    np.testing.assert_allclose(log.pressure, 1000.0 + 0.5 * np.arange(50) / 49)


def test_a_file_of_typed_lines_gives_one_source_per_type(tmp_path):
    """A record layout: each line's first field names its type, each type its own columns and clock."""
    lines = ["# written by a logger", "A|0|0.1|0.2|9.8", "B|5|1000.0", "A|10|0.1|0.2|9.8", "C|12|x",
             "A|20|0.1|0.2|9.7", "B|25|1000.5", ""]
    (tmp_path / "log.txt").write_text("\n".join(lines))
    layout = {"delimiter": "|", "comment": "#", "types": {"A": "kind,ms,x,y,z", "B": ["kind", "ms", "hpa"]}}
    log, report = import_log([tmp_path / "log.txt"], "t=ms:ms,ax=A.x,ay=A.y,az=A.z,p=B.hpa", records=layout)
    assert log.t_ns.tolist() == [10_000_000, 20_000_000] and report.dropped_outside_overlap == 1
    np.testing.assert_allclose(log.pressure, [1000.125, 1000.375])
    assert report.left_out == [f"{tmp_path / 'log.txt'}: 1 C lines (record types the layout does not read)"]
    assert [s["path"] for s in report.sources] == [f"{tmp_path / 'log.txt'} (A lines)", f"{tmp_path / 'log.txt'} (B lines)"]
