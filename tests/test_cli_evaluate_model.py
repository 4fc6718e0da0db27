"""``stairsense evaluate --model``: the model runs with its own configuration, checked as replay
checks it, on recordings read as ``stairsense train`` reads them (virtual sensors included).

The data are simulated phones that record accelerometer and gyroscope only, as UCI HAPT's do, so
``--orientation rotvec`` needs the rotation vector ``train`` derives by sensor fusion.
"""
from __future__ import annotations

import dataclasses
import json

import pytest

from stairsense.cli import main
from stairsense.stream import Activity, simulate, write_log


@pytest.fixture(scope="module")
def gyro_only_logs(tmp_path_factory):
    folder = tmp_path_factory.mktemp("gyro-only")
    schedule = [(Activity.WALKING, 20.0), (Activity.WALKING_UPSTAIRS, 15.0), (Activity.STANDING, 5.0),
                (Activity.WALKING_DOWNSTAIRS, 15.0), (Activity.WALKING, 20.0)]
    paths = []
    for seed in range(3):
        log = simulate(schedule=schedule, rate_hz=50, seed=seed)
        log = dataclasses.replace(log, rotvec=None, linacc=None, steps=None, meta={"subject": seed})
        paths.append(str(write_log(log, folder / f"s{seed}.csv.gz")))
    return paths


@pytest.fixture(scope="module")
def rotvec_model(gyro_only_logs, tmp_path_factory):
    out = tmp_path_factory.mktemp("model") / "rotvec.model"
    assert main(["train", *gyro_only_logs[:2], "--rate", "30", "--orientation", "rotvec", "--landmarks", "40",
                 "--out", str(out), "--json"]) == 0
    return str(out)


def test_a_model_train_made_from_the_recordings_is_scored_on_them(gyro_only_logs, rotvec_model, capsys):
    capsys.readouterr()
    assert main(["evaluate", gyro_only_logs[2], "--model", rotvec_model, "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["config"]["orientation"] == "rotvec" and result["config"]["rate_hz"] == 30
    assert result["overall"]["windows"] > 20 and result["overall"]["stair_windows"] > 0


@pytest.mark.parametrize("flags, field", [(["--rate", "50"], "rate_hz: model 30"),
                                          (["--orientation", "ahrs"], "orientation: model 'rotvec'"),
                                          (["--orientation", "auto"], "orientation: model 'rotvec'")])
def test_flags_that_disagree_with_the_model_are_refused_as_replay_refuses_them(gyro_only_logs, rotvec_model, capsys,
                                                                               flags, field):
    capsys.readouterr()
    for command in (["evaluate", gyro_only_logs[2]], ["replay", gyro_only_logs[2]]):
        assert main([*command, "--model", rotvec_model, *flags]) == 2
        err = capsys.readouterr().err.strip()
        assert err.count("\n") == 0 and rotvec_model in err and field in err and "leave those settings out" in err


def test_flags_that_agree_with_the_model_are_accepted(gyro_only_logs, rotvec_model, capsys):
    assert main(["evaluate", gyro_only_logs[2], "--model", rotvec_model, "--rate", "30", "--orientation", "rotvec",
                 "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["config"]["rate_hz"] == 30


def test_a_missing_model_file_is_one_line_naming_it(gyro_only_logs, tmp_path, capsys):
    missing = tmp_path / "none.model"
    assert main(["evaluate", gyro_only_logs[2], "--model", str(missing)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and f"{missing}: no such model file" in err and "stairsense train --out" in err
