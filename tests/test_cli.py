"""The command line end to end on a small simulated log (the CLI is the user's first contact)."""
import json

import pytest

from stairsense.cli import main


@pytest.fixture(scope="module")
def sim_log(tmp_path_factory):
    path = tmp_path_factory.mktemp("cli") / "sim.csv.gz"
    assert main(["simulate", "--minutes", "2", "--seed", "3", "--out", str(path)]) == 0
    return path


def test_replay_json_reports_windows_and_ground_truth(sim_log, capsys):
    capsys.readouterr()
    assert main(["replay", str(sim_log), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["samples"] > 5000 and report["kept"] > 0
    assert report["truth_steps"] > 0
    # The default front end finds nearly every simulated step (a broken segmenter would not).
    assert report["count_error"] < 0.1 and report["recall"] > 0.85


def test_simulate_a_building_walk_with_a_barometer(tmp_path, capsys):
    from stairsense.stream import read_log

    out = tmp_path / "floors.parquet"
    capsys.readouterr()
    assert main(["simulate", "--scenario", "building", "--barometer", "5", "--seed", "2", "--out", str(out), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["scenario"] == "building" and summary["barometer_hz"] == 5.0
    log = read_log(out)
    assert log.pressure is not None and log.meta["barometer"]["rate_hz"] == 5.0
    assert main(["simulate", "--scenario", "building", "--minutes", "2", "--out", str(out)]) == 2
    assert "drop --minutes" in capsys.readouterr().err


def test_simulate_places_the_phone_where_asked(tmp_path, capsys):
    from stairsense._cli_simulate import SIMULATED_PLACEMENTS
    from stairsense.stream import read_log
    from stairsense.stream.simulate import PLACEMENTS

    assert sorted(SIMULATED_PLACEMENTS) == sorted(PLACEMENTS)
    out = tmp_path / "wrist.csv.gz"
    capsys.readouterr()
    assert main(["simulate", "--minutes", "0.5", "--placement", "wrist", "--out", str(out), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["placement"] == "wrist"
    assert read_log(out).meta["placement"] == "wrist"
    with pytest.raises(SystemExit):
        main(["simulate", "--minutes", "0.5", "--placement", "head", "--out", str(tmp_path / "x.csv")])
    assert "invalid choice: 'head'" in capsys.readouterr().err


def test_replay_plot_writes_png(sim_log, tmp_path):
    out = tmp_path / "r.png"
    assert main(["replay", str(sim_log), "--plot", str(out)]) == 0
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_bad_input_is_one_line_error_with_exit_2(tmp_path, capsys):
    empty = tmp_path / "empty.csv"
    empty.write_text("")
    assert main(["replay", str(empty)]) == 2
    err = capsys.readouterr().err
    assert "empty.csv" in err and err.count("\n") == 1


@pytest.mark.parametrize("command", [[], ["simulate"], ["replay"], ["train"], ["evaluate"], ["export"], ["demo"], ["import"]])
def test_help_everywhere(command, capsys):
    with pytest.raises(SystemExit) as exc:
        main(command + ["--help"])
    assert exc.value.code == 0 and "usage: stairsense" in capsys.readouterr().out


def test_train_replay_with_model_and_config_guard(sim_log, tmp_path, capsys):
    other = tmp_path / "other.csv.gz"
    assert main(["simulate", "--minutes", "3", "--seed", "4", "--out", str(other)]) == 0
    model = tmp_path / "m.model"
    assert main(["train", str(sim_log), str(other), "--out", str(model), "--json"]) == 0
    capsys.readouterr()
    assert main(["replay", str(sim_log), "--model", str(model), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["stair_steps"] is not None and 0 <= report["stair_steps"] <= report["kept"]
    # A replay configuration that changes the features is refused, naming the difference.
    assert main(["replay", str(sim_log), "--model", str(model), "--rate", "30"]) == 2
    assert "rate_hz" in capsys.readouterr().err
    # The vote is the model's: trained with --vote 1 it counts every window as the model decides it.
    alone = tmp_path / "alone.model"
    assert main(["train", str(sim_log), str(other), "--vote", "1", "--out", str(alone), "--json"]) == 0
    capsys.readouterr()
    assert main(["replay", str(sim_log), "--model", str(alone), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["stair_steps"] is not None
    assert main(["replay", str(sim_log), "--model", str(alone), "--vote", "3"]) == 2
    assert "vote_steps: model 1, given 3" in capsys.readouterr().err
    assert main(["replay", str(sim_log), "--vote", "2"]) == 2
    assert "vote_steps must be an odd integer" in capsys.readouterr().err


def test_evaluate_reports_both_f1_conventions(sim_log, tmp_path, capsys):
    others = [tmp_path / f"other{seed}.csv.gz" for seed in (5, 6)]
    for seed, path in zip((5, 6), others):
        assert main(["simulate", "--minutes", "3", "--seed", str(seed), "--out", str(path)]) == 0
    capsys.readouterr()
    assert main(["evaluate", str(sim_log), *map(str, others), "--classifier", "dt", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    # Each simulated log is its own subject: leave-subjects-out has one outer fold per log.
    assert result["n_folds"] == 3 and {"f1_mean", "f1_of_means"} <= set(result)


def test_demo_counts_stair_steps_against_truth(tmp_path, capsys):
    assert main(["demo", "--people", "2", "--minutes", "3", "--out", str(tmp_path), "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["truth_stair_steps"] > 0 and result["stair_steps"] is not None
    assert (tmp_path / "stairs.model").exists() and (tmp_path / "held_out.csv.gz").exists()


def test_export_inspect_and_replay_through_onnx_runtime_match_python(tmp_path, capsys):
    pytest.importorskip("onnxruntime")
    assert main(["demo", "--people", "2", "--minutes", "3", "--out", str(tmp_path), "--json"]) == 0
    capsys.readouterr()
    model, log, onnx = tmp_path / "stairs.model", tmp_path / "held_out.csv.gz", tmp_path / "stairs.onnx"
    # Full precision and support: the exact path, scores within 1e-4 of Python's.
    assert main(["export", str(model), "--out", str(onnx), "--precision", "fp32", "--max-kb", "0", "--json"]) == 0
    exported = json.loads(capsys.readouterr().out)
    assert exported["parity"]["max_abs_diff_vs_python"] < 1e-4
    # The default export fits the phone budget of 32 KB.
    small = tmp_path / "small.onnx"
    assert main(["export", str(model), "--out", str(small), "--json"]) == 0
    compact = json.loads(capsys.readouterr().out)
    assert compact["precision"] == "int8" and small.stat().st_size <= 32 * 1024
    assert main(["export", "--inspect", str(onnx), "--json"]) == 0
    assert "config" in json.dumps(json.loads(capsys.readouterr().out))
    counts = []
    for m in (model, onnx):
        assert main(["replay", str(log), "--model", str(m), "--json"]) == 0
        counts.append(json.loads(capsys.readouterr().out)["stair_steps"])
    assert counts[0] == counts[1]
    broken = tmp_path / "broken.onnx"
    broken.write_bytes(onnx.read_bytes()[:500])
    assert main(["replay", str(log), "--model", str(broken)]) == 2
    assert "broken.onnx" in capsys.readouterr().err
