"""Placement-dataset loaders against the published files (one or two recordings each), and the
timestamp repairs on small hand-made files."""
import gzip

import numpy as np
import pytest

from stairsense.stream import (
    Activity,
    geotec_recordings,
    ipin_recordings,
    load_geotec,
    load_ipin,
    load_mobifall,
    load_placement_recording,
    load_weda,
    mobifall_recordings,
    placement_recordings,
    weda_recordings,
)

realdata = pytest.mark.realdata


def _gravity(log, first=50):
    """Median |acc| over the first samples: the phone or watch is held still or nearly so there."""
    return float(np.median(np.linalg.norm(log.acc[:first], axis=1)))


def _mean_rate(log):
    return (len(log) - 1) / log.duration_s


def _rows(path, start):
    """Oracle: the numeric rows of a text file from line ``start`` on, read with plain Python."""
    with gzip.open(path, "rt") as fh:
        return [[float(c) for c in line.split(",")] for line in fh.read().splitlines()[start - 1:] if line.strip()]


@pytest.fixture(scope="module")
def mobifall(data_dir):
    return data_dir / "mobifall-pocket"


@realdata
def test_mobifall_lists_every_trial_of_the_five_subjects(mobifall):
    files = mobifall_recordings(mobifall)
    assert len(files) == 85
    assert sorted({f.parts[-4] for f in files}) == ["sub2", "sub3", "sub4", "sub5", "sub7"]
    assert mobifall_recordings(mobifall / "sub3" / "ADL" / "STU") == sorted((mobifall / "sub3/ADL/STU").glob("*_acc_*"))


@realdata
def test_mobifall_stairs_trial_against_its_files(mobifall):
    path = mobifall / "sub2" / "ADL" / "STU" / "STU_acc_2_1.txt.gz"
    log = load_mobifall(path)
    acc = np.array(_rows(path, 17))  # 16 header lines, '@DATA' the last
    gyro = np.array(_rows(path.with_name("STU_gyro_2_1.txt.gz"), 17))
    inside = (acc[:, 0] >= gyro[0, 0]) & (acc[:, 0] <= gyro[-1, 0])
    np.testing.assert_array_equal(log.t_ns, acc[inside, 0].astype(np.int64))
    np.testing.assert_array_equal(log.acc, acc[inside, 1:])
    np.testing.assert_allclose(log.gyro[:, 2], np.interp(log.t_ns, gyro[:, 0], gyro[:, 3]))
    assert log.meta["repairs"]["dropped_outside_overlap"] == int((~inside).sum())
    assert np.all(log.label == Activity.WALKING_UPSTAIRS) and log.meta["stairs"] == 10
    assert {k: log.meta[k] for k in ("subject", "trial", "placement", "activity_code", "dataset")} == {
        "subject": "mobifall-2", "trial": 1, "placement": "pocket", "activity_code": "STU", "dataset": "mobifall"}
    assert 70 < _mean_rate(log) < 100 and np.all(np.diff(log.t_ns) > 0)


@realdata
def test_mobifall_standing_reads_gravity_in_m_s2(mobifall):
    log = load_mobifall(mobifall / "sub5" / "ADL" / "STD" / "STD_acc_5_1.txt.gz")
    assert np.all(log.label == Activity.STANDING) and 9.6 < np.median(np.linalg.norm(log.acc, axis=1)) < 10.0


@realdata
@pytest.mark.parametrize("code, activity", [("STN", Activity.WALKING_DOWNSTAIRS), ("JOG", Activity.UNLABELLED)])
def test_mobifall_labels_per_file(mobifall, code, activity):
    log = load_mobifall(mobifall / "sub4" / "ADL" / code / f"{code}_acc_4_2.txt.gz")
    assert np.all(log.label == activity)
    assert ("unlabelled_reason" in log.meta) == (activity == Activity.UNLABELLED)
    assert ("stairs" in log.meta) == (code == "STN")


@realdata
def test_weda_walking_and_stairs_files(data_dir):
    root = data_dir / "weda-wrist"
    files = weda_recordings(root)
    assert {f.parent.name for f in files} == {"D01", "D03"} and len(files) == 60
    assert sorted({f.name[:3] for f in files if f.parent.name == "D03"}) == [
        "U01", "U02", "U03", "U04", "U05", "U06", "U07", "U23", "U24", "U26"]
    walk = load_weda(root / "D01" / "U03_R01_accel.csv.gz")
    stairs = load_weda(root / "D03" / "U03_R01_accel.csv.gz")
    assert np.all(walk.label == Activity.WALKING) and np.all(stairs.label == Activity.STAIRS)
    assert Activity.STAIRS in __import__("stairsense.stream", fromlist=["x"]).STAIR_ACTIVITIES
    rows = np.array(_rows(root / "D03" / "U03_R01_accel.csv.gz", 2))
    np.testing.assert_array_equal(stairs.acc, rows[: len(stairs), 1:])
    assert stairs.t_ns[1] - stairs.t_ns[0] == 20_000_000 and stairs.rate_hz == 50
    assert stairs.meta["repairs"]["acc"]["recorded_span_s"] == rows[-1, 0] - rows[0, 0]
    assert stairs.meta["subject"] == "weda-U03" and stairs.meta["placement"] == "wrist" and stairs.gyro is not None
    assert 9.0 < _gravity(walk) < 10.6


@realdata
def test_weda_backward_clock_steps_are_counted(data_dir):
    path = data_dir / "weda-wrist" / "D01" / "U04_R01_accel.csv.gz"
    log = load_weda(path)
    rows = np.array(_rows(path, 2))
    back = [i + 2 for i in range(1, len(rows)) if rows[i, 0] < rows[i - 1, 0]]  # file lines, header line 1
    assert back and log.meta["repairs"]["acc"]["backwards"] == len(back)
    assert log.meta["repairs"]["acc"]["backwards_lines"] == back[:5]
    n_gyro = len(_rows(path.with_name("U04_R01_gyro.csv.gz"), 2))
    assert len(log) == min(len(rows), n_gyro)
    assert log.meta["repairs"]["dropped_outside_overlap"] == len(rows) - len(log)


@realdata
def test_geotec_phone_and_watch_with_per_sample_labels(data_dir):
    root = data_dir / "geotec-pocket-wrist"
    files = geotec_recordings(root)
    assert len(files) == 290 and sorted({f.parent.name for f in files}) == [f"s{i:02d}" for i in range(1, 16)]
    assert geotec_recordings(root / "DATA" / "s02", devices=["sw"]) == sorted((root / "DATA/s02").glob("*_sw.csv.gz"))
    path = root / "DATA" / "s01" / "s01_01_sp.csv.gz"
    phone, watch = load_geotec(path), load_geotec(path.with_name("s01_01_sw.csv.gz"))
    assert (phone.meta["placement"], watch.meta["placement"]) == ("pocket", "wrist")
    assert phone.meta["subject"] == watch.meta["subject"] == "geotec-s01"
    assert phone.meta["phone_orientation"] == "back_inv"
    with gzip.open(path, "rt") as fh:
        rows = [line.split(",") for line in fh.read().splitlines()[1:]]
    names = {"SEATED": 4, "STANDING_UP": 8, "WALKING": 1, "TURNING": 1, "SITTING_DOWN": 7}
    np.testing.assert_array_equal(phone.label, [names[r[7]] for r in rows])
    np.testing.assert_array_equal(phone.acc, [[float(c) for c in r[:3]] for r in rows])
    np.testing.assert_array_equal(phone.gyro, [[float(c) for c in r[3:6]] for r in rows])
    stamps = [int(r[6]) for r in rows]
    repeats = sum(a == b for a, b in zip(stamps, stamps[1:]))
    assert repeats > 0 and phone.meta["repairs"]["acc"]["repeated_spread"] == repeats
    assert np.all(np.diff(phone.t_ns) > 0) and phone.t_ns[0] == stamps[0] * 1_000_000
    later = [next((u for u in stamps[i:] if u > t), t + 20) for i, t in enumerate(stamps)]
    assert np.all(phone.t_ns >= np.array(stamps) * 1_000_000) and np.all(phone.t_ns < np.array(later) * 1_000_000)
    turning = [i for i, r in enumerate(rows) if r[7] == "TURNING"]
    assert phone.meta["turning_ns"][0][0] == phone.t_ns[turning[0]] and len(phone.meta["turning_ns"]) == 2
    for log in (phone, watch):
        assert 95 < _mean_rate(log) < 110 and 9.0 < _gravity(log) < 10.6


@realdata
def test_ipin_walk_calibration_and_pressure(data_dir):
    files = ipin_recordings(data_dir / "ipin-hand-baro")
    assert len(files) == 40
    path = data_dir / "ipin-hand-baro" / "IPIN2023_T3_TrainingTrial02_repetition01.txt.gz"
    log = load_ipin(path)
    with gzip.open(path, "rt") as fh:
        lines = [line.split(";") for line in fh.read().splitlines() if line[:4] in ("ACCE", "PRES", "POSI")]
    acce = np.array([[float(c) for c in row[1:6]] for row in lines if row[0] == "ACCE"])
    pres = np.array([[float(c) for c in row[2:4]] for row in lines if row[0] == "PRES"])
    posi = [float(row[1]) for row in lines if row[0] == "POSI"]
    by_time = {round(t * 1e4): xyz for t, xyz in zip(acce[:, 1], acce[:, 2:])}
    np.testing.assert_array_equal(log.acc, [by_time[round(t / 1e5)] for t in log.t_ns])
    np.testing.assert_allclose(log.pressure, np.interp(log.t_ns / 1e9, pres[:, 0], pres[:, 1]), atol=1e-9)
    assert 950 < log.pressure.min() and log.pressure.max() < 1050 and log.gyro is not None
    offset = np.median(acce[:, 0] - acce[:, 1])
    walking = (log.t_ns / 1e9 >= posi[0] - offset - 1e-6) & (log.t_ns / 1e9 <= posi[-1] - offset + 1e-6)
    opening = log.t_ns / 1e9 < posi[0] - offset - 1e-6
    np.testing.assert_array_equal(log.label, np.select([opening, walking], [Activity.HANDLING, Activity.WALKING],
                                                       Activity.UNLABELLED))
    calibration = log.meta["calibration_ns"]
    assert 50 < (calibration[1] - calibration[0]) / 1e9 < 70 and calibration[1] == log.meta["walk_ns"][0]
    assert log.meta["floors"] == [0] and log.meta["waypoints"] == 12 and log.meta["placement"] == "hand"
    assert 48 < _mean_rate(log) < 51 and 9.0 < np.median(np.linalg.norm(log.acc[walking], axis=1)) < 10.6
    # the opening trains as not stairs: its windows are labelled, not left out as ambiguous
    from stairsense.features import NO_STAIR, window_dataset
    from stairsense.stream import PipelineConfig

    ds = window_dataset([log], PipelineConfig())
    handled = ds.activity == Activity.HANDLING
    assert handled.sum() > 20 and (ds.y[handled] == NO_STAIR).all() and (ds.t_start_ns[handled] < calibration[1]).all()


@realdata
def test_any_layout_by_folder_or_file(data_dir):
    assert placement_recordings(data_dir / "uci-hapt") is None
    one = data_dir / "weda-wrist" / "D01" / "U01_R01_accel.csv.gz"
    assert placement_recordings(one) == [one] and load_placement_recording(one).meta["dataset"] == "weda"
    assert len(placement_recordings(data_dir / "ipin-hand-baro")) == 40
    with pytest.raises(ValueError, match="not a MobiFall, WEDA-FALL, GeoTecINIT or IPIN"):
        load_placement_recording(data_dir / "weda-wrist" / "README.md")


def test_geotec_repeated_and_backward_times_are_repaired_and_counted(tmp_path):
    path = tmp_path / "s01_01_sp.csv"
    header = "x_acc,y_acc,z_acc,x_gyro,y_gyro,z_gyro,timestamp,label\n"
    stamps = [1000, 1010, 1010, 1010, 1040, 1030, 1050]  # a run of three, then one sample out of order
    path.write_text(header + "".join(f"{i},0,9.8,0,0,0,{t},WALKING\n" for i, t in enumerate(stamps)))
    log = load_geotec(path)
    assert (log.t_ns // 1000).tolist() == [1_000_000, 1_010_000, 1_016_666, 1_023_333, 1_030_000, 1_040_000,
                                           1_050_000]
    assert log.acc[:, 0].tolist() == [0, 1, 2, 3, 5, 4, 6]  # nothing dropped, file order within a run
    assert log.meta["repairs"]["acc"] == {"out_of_order": 1, "out_of_order_lines": [7], "repeated_spread": 2,
                                          "repeated_lines": [4, 5]}


def test_geotec_unknown_label_names_the_line(tmp_path):
    path = tmp_path / "s01_01_sw.csv"
    path.write_text("x_acc,y_acc,z_acc,x_gyro,y_gyro,z_gyro,timestamp,label\n"
                    "0,0,9.8,0,0,0,1000,WALKING\n0,0,9.8,0,0,0,1010,CLIMBING\n")
    with pytest.raises(ValueError, match=r"s01_01_sw.csv:3: label 'CLIMBING' is not one of"):
        load_geotec(path)


def test_weda_retimes_to_50_hz_and_drops_samples_past_the_gyroscope(tmp_path):
    folder = tmp_path / "D03"
    folder.mkdir()
    times = [0.0, 0.002, 0.004, 0.103, 0.101, 0.105]  # batched arrival stamps, one step back
    (folder / "U02_R03_accel.csv").write_text("accel_time_list,accel_x_list,accel_y_list,accel_z_list\n" + "".join(
        f"{t},{i},0,9.8\n" for i, t in enumerate(times)))
    (folder / "U02_R03_gyro.csv").write_text("gyro_time_list,gyro_x_list,gyro_y_list,gyro_z_list\n" + "".join(
        f"{t},{i / 10},0,0\n" for i, t in enumerate(times[:4])))
    log = load_weda(folder / "U02_R03_accel.csv")
    assert log.t_ns.tolist() == [0, 20_000_000, 40_000_000, 60_000_000]
    assert log.acc[:, 0].tolist() == [0, 1, 2, 3] and log.gyro[:, 0].tolist() == [0, 0.1, 0.2, 0.3]
    assert log.meta["repairs"]["dropped_outside_overlap"] == 2
    assert log.meta["repairs"]["acc"] == {"retimed_to_hz": 50, "recorded_span_s": 0.105, "repeated": 0,
                                          "backwards": 1, "backwards_lines": [6]}
    assert np.all(log.label == Activity.STAIRS) and log.meta["activity_code"] == "D03"


@realdata
def test_train_and_evaluate_read_the_folders_and_replay_reads_one_file(data_dir, capsys):
    import json

    from stairsense._recordings import load_labelled_logs
    from stairsense.cli import main

    stairs = data_dir / "mobifall-pocket" / "sub3" / "ADL" / "STN"
    wrist = data_dir / "weda-wrist" / "D01" / "U05_R02_accel.csv.gz"
    logs = load_labelled_logs([stairs, wrist])
    assert [lg.meta["path"] for lg in logs] == [str(p) for p in mobifall_recordings(stairs)] + [str(wrist)]
    assert [int(lg.label[0]) for lg in logs] == [Activity.WALKING_DOWNSTAIRS] * 6 + [Activity.WALKING]
    assert main(["replay", str(stairs / "STN_acc_3_1.txt.gz"), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["samples"] == len(logs[0]) and report["windows"] > 5


def test_a_recording_is_split_where_a_shorter_smoothing_would_stop(mobifall):
    """MobiFall's files hold gaps of about 0.21 s, which no repair option can reach in a published
    dataset: with 200 ms smoothing the front end stops at them unless the loader splits there."""
    from stairsense import PipelineConfig, recording_windows
    from stairsense._recordings import load_labelled_logs
    from stairsense.stream import run_front_end

    path = mobifall / "sub4" / "ADL" / "STU" / "STU_acc_4_6.txt.gz"
    config = PipelineConfig(smooth_ms=200.0)
    (whole,) = load_labelled_logs([path])
    assert np.diff(whole.t_ns).max() > config.read_gap_s() * 1e9  # the gap this test is about
    with pytest.raises(ValueError, match="gap"):
        run_front_end(whole, config)
    parts = load_labelled_logs([path], max_gap_s=config.read_gap_s())
    assert len(parts) >= 2
    for name in ("t_ns", "acc", "label"):
        assert np.array_equal(np.concatenate([getattr(p, name) for p in parts]), getattr(whole, name))
    assert all(np.diff(p.t_ns).max() <= config.read_gap_s() * 1e9 for p in parts if len(p) > 1)
    assert [p.meta["segment"] for p in parts] == list(range(len(parts)))
    assert {(p.meta["path"], p.meta["subject"]) for p in parts} == {(whole.meta["path"], whole.meta["subject"])}
    assert len(recording_windows([path], config).dataset) > 0


def test_replay_splits_a_recording_where_train_does(mobifall, tmp_path, capsys):
    """`stairsense replay` of the same file with 200 ms smoothing runs, one segment per part."""
    import json

    from stairsense._recordings import load_labelled_logs
    from stairsense.cli import main

    path = mobifall / "sub4" / "ADL" / "STU" / "STU_acc_4_6.txt.gz"
    config = tmp_path / "c.json"
    config.write_text('{"smooth_ms": 200}')
    assert main(["replay", str(path), "--config", str(config), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    parts = load_labelled_logs([path], max_gap_s=0.2)
    assert report["segments"] == len(parts) >= 2 and report["samples"] == sum(map(len, parts))
