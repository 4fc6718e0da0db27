"""Dataset loaders: the real recordings against their own files, and the repair path on a fake folder."""
import numpy as np
import pytest

from stairsense.stream._datasets import (
    load_oxford,
    load_uci_hapt,
    oxford_recordings,
    uci_hapt_experiments,
)
from stairsense.stream._log import Activity

realdata = pytest.mark.realdata


@pytest.fixture(scope="module")
def uci_raw(data_dir):
    return data_dir / "uci-hapt" / "RawData"


@pytest.fixture(scope="module")
def oxford_data(data_dir):
    return data_dir / "oxford-stepcounter" / "optimisation" / "data"


@realdata
def test_uci_lists_the_21_training_subjects(data_dir):
    pairs = uci_hapt_experiments(data_dir)
    assert sorted({u for _, u in pairs}) == [1, 3, 5, 6, 7, 8, 11, 14, 15, 16, 17, 19, 21, 22, 23, 25, 26, 27,
                                            28, 29, 30]
    assert len(pairs) == len({e for e, _ in pairs})


@realdata
def test_uci_experiment_against_its_files(uci_raw):
    (log,) = load_uci_hapt(uci_raw, exp=1)
    acc_g = np.loadtxt(uci_raw / "acc_exp01_user01.txt")
    np.testing.assert_array_equal(log.acc, acc_g * 9.80665)
    np.testing.assert_array_equal(log.gyro, np.loadtxt(uci_raw / "gyro_exp01_user01.txt"))
    assert log.t_ns[1] - log.t_ns[0] == 20_000_000 and log.rate_hz == 50
    # Oracle for labels: read labels.txt line by line and mark each inclusive range.
    expected = np.zeros(len(log), dtype=int)
    for row in (uci_raw / "labels.txt").read_text().split("\n"):
        if row.strip():
            e, u, a, first, last = map(int, row.split())
            if (e, u) == (1, 1):
                for i in range(first, last + 1):
                    expected[i] = a
    np.testing.assert_array_equal(log.label, expected)
    assert log.label[0] == Activity.UNLABELLED and Activity.WALKING_UPSTAIRS in log.label
    assert log.meta["subject"] == 1 and log.meta["experiment"] == 1 and log.meta["rate_hz"] == 50
    assert 9.0 < np.median(np.linalg.norm(log.acc, axis=1)) < 10.5


@realdata
def test_uci_filters(uci_raw):
    logs = load_uci_hapt(uci_raw, user=[3, 5])
    assert [(lg.meta["experiment"], lg.meta["subject"]) for lg in logs] == [(5, 3), (6, 3), (9, 5), (10, 5)]
    with pytest.raises(ValueError, match=r"no experiment matches exp=1, user=2; present"):
        load_uci_hapt(uci_raw, exp=1, user=2)
    with pytest.raises(FileNotFoundError, match="pass the RawData folder"):
        load_uci_hapt(uci_raw / "nope")


@realdata
def test_oxford_step_counts_match_stats_for_every_recording(oxford_data):
    with pytest.warns(UserWarning, match=r"skipping \['_Patient_1', '_Patient_2', '_Patient_4'\]"):
        folders = oxford_recordings(oxford_data)
    stats = {}
    for row in (oxford_data.parent / "stats.csv").read_text().splitlines()[1:]:
        cells = [c.strip() for c in row.split(",")]
        stats[cells[0]] = int(cells[-1])
    assert sorted(stats) == sorted(f.name for f in folders if not f.name.startswith("_"))
    for folder in folders:
        log = load_oxford(folder)
        if folder.name in stats:
            assert len(log.steps) == stats[folder.name] == log.meta["stats_steps"], folder.name
        assert np.all(log.steps.kind == Activity.WALKING)
        assert log.meta["timestamp_repairs"]["duplicates_dropped"] == 0
        assert 150 < log.meta["rate_hz"] < 450 or log.meta["device"] == "Samsung"  # Samsung_Jamie: 100 Hz


@realdata
def test_oxford_meta_and_patient_folders(oxford_data):
    log = load_oxford(oxford_data / "Pixel_Jamie_Hard_NeckPouch_2")
    assert {k: log.meta[k] for k in ("device", "subject", "surface", "placement", "take")} == {
        "device": "Pixel", "subject": "Jamie", "surface": "Hard", "placement": "NeckPouch", "take": 2}
    assert 380 < log.meta["rate_hz"] < 420
    with pytest.raises(FileNotFoundError, match="_Patient_1: no accelerometer.csv .*skip this folder"):
        load_oxford(oxford_data / "_Patient_1")
    assert load_oxford(oxford_data / "_Patient_3").meta["patient"] == "Patient_3"


def test_oxford_repairs_are_reported(tmp_path):
    folder = tmp_path / "data" / "Pixel_Ann_Hard_InHand_1"
    folder.mkdir(parents=True)
    acc = ["100,3,0,0,9.8", "300,3,1,0,9.8", "200,3,2,0,9.8", "300,3,3,0,9.8", "400,3,4,0,9.8",
           "400,3,5,0,9.8"]
    (folder / "accelerometer.csv").write_text("\n".join(acc) + "\n")
    # 0-based rows: foot 2 rises at 1 and 3, foot 1 at 2, both at 5: five steps (stats.js counting;
    # row 0 only sets the initial state).
    (folder / "stepcounter.csv").write_text("100,1,0\n150,0,1\n200,1,0\n250,0,1\n300,0,0\n350,1,1\n")
    (tmp_path / "stats.csv").write_text("#dir, user, phone, position, surface, duration(s), steps\n"
                                        "Pixel_Ann_Hard_InHand_1, Ann, Pixel, InHand, Hard, 0, 5\n")
    log = load_oxford(folder)
    assert log.t_ns.tolist() == [100, 200, 300, 400]
    assert log.acc[:, 0].tolist() == [0, 2, 1, 4]  # first line wins among repeated timestamps
    assert log.meta["timestamp_repairs"] == {"backwards": 1, "backwards_first_lines": [3],
                                             "duplicates_dropped": 2, "duplicates_first_lines": [4, 6]}
    assert log.steps.t_ns.tolist() == [150, 200, 250, 350, 350] and log.meta["stats_steps"] == 5


def test_oxford_timestamp_repair_matches_brute_force(tmp_path):
    folder = tmp_path / "Nexus_Bo_Carpet_Purse_2"
    folder.mkdir()
    rng = np.random.default_rng(4)
    t = rng.integers(0, 40, 200) * 1_000_000  # many repeats in random order
    (folder / "accelerometer.csv").write_text("".join(f"{ti},2,{i},0,9.8\n" for i, ti in enumerate(t)))
    (folder / "stepcounter.csv").write_text("0,0,0\n")
    log = load_oxford(folder)
    first = {}
    for i, ti in enumerate(t.tolist()):
        first.setdefault(ti, i)  # oracle: the first line of each timestamp, in time order
    assert log.t_ns.tolist() == sorted(first)
    assert log.acc[:, 0].tolist() == [first[k] for k in sorted(first)]
    assert log.meta["timestamp_repairs"]["duplicates_dropped"] == 200 - len(first)
    assert "stats_steps" not in log.meta and len(log.steps) == 0
