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


@pytest.mark.parametrize("command", [[], ["simulate"], ["replay"]])
def test_help_everywhere(command, capsys):
    with pytest.raises(SystemExit) as exc:
        main(command + ["--help"])
    assert exc.value.code == 0 and "usage: stairsense" in capsys.readouterr().out
