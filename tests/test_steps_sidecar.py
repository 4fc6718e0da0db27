"""Each log's ground truth travels with that log only (issue 25): the steps sidecar is named after the
whole log name (``walk.csv.gz.steps.csv``), so logs of one stem in different formats never share,
overwrite or delete each other's truth; a sidecar of the older stem-only name (``walk.steps.csv``) is
read only where it can belong to one log, and a writer gives it that log's own name first."""
import json

import numpy as np
import pytest

from stairsense.cli import main
from stairsense.stream import convert_log, read_log, read_steps, simulate, steps_path, write_log


@pytest.fixture(scope="module")
def two_logs():
    """Two simulated logs with different truth."""
    return simulate(minutes=0.5, seed=1), simulate(minutes=0.4, seed=9)


def same_steps(a, b):
    return a is not None and b is not None and np.array_equal(a.t_ns, b.t_ns) and np.array_equal(a.kind, b.kind)


def test_the_sidecar_carries_the_whole_log_name():
    assert steps_path("d/walk.csv.gz").name == "walk.csv.gz.steps.csv"
    assert steps_path("d/walk.csv").name == "walk.csv.steps.csv"
    assert steps_path("d/walk.parquet").name == "walk.parquet.steps.csv"
    with pytest.raises(ValueError, match="must end in .csv, .csv.gz or .parquet"):
        steps_path("walk.txt")


def test_logs_of_one_stem_keep_their_own_truth(tmp_path, capsys):
    """The issue's repro: the second simulate overwrote walk.steps.csv, and replay walk.csv.gz scored
    against the other log's truth (precision 0.07, exit 0)."""
    first, second = tmp_path / "walk.csv.gz", tmp_path / "walk.parquet"
    assert main(["simulate", "--minutes", "1", "--out", str(first)]) == 0
    assert main(["simulate", "--minutes", "0.5", "--seed", "9", "--out", str(second)]) == 0
    assert same_steps(read_steps(first), simulate(minutes=1, seed=0).steps)
    assert same_steps(read_steps(second), simulate(minutes=0.5, seed=9).steps)
    capsys.readouterr()
    assert main(["replay", str(first), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["truth_steps"] == len(simulate(minutes=1, seed=0).steps.t_ns) and report["precision"] > 0.8


def test_a_log_without_steps_leaves_another_logs_truth(tmp_path, two_logs):
    """``import ... --out walk.csv`` of a log without steps deleted walk.parquet's sidecar."""
    with_steps, _ = two_logs
    write_log(with_steps, tmp_path / "walk.parquet")
    foreign = tmp_path / "export.txt"
    foreign.write_text("timestamp,accX,accY,accZ\n" + "".join(f"{i * 20},0.01,0.02,{1 + 0.2 * np.sin(i / 5):.4f}\n"
                                                              for i in range(300)))
    assert main(["import", str(foreign), "--out", str(tmp_path / "walk.csv"),
                 "--map", "t=timestamp:ms,ax=accX:g,ay=accY:g,az=accZ:g"]) == 0
    assert same_steps(read_steps(tmp_path / "walk.parquet"), with_steps.steps)
    assert read_steps(tmp_path / "walk.csv") is None


def _with_old_sidecar(log, path):
    """``log`` written at ``path`` with its sidecar under the stem-only name of earlier versions."""
    write_log(log, path)
    old = path.with_name(path.name.split(".")[0] + ".steps.csv")
    steps_path(path).rename(old)
    return old


def test_an_old_sidecar_is_read_while_it_can_belong_to_one_log(tmp_path, two_logs):
    first, second = two_logs
    old = _with_old_sidecar(first, tmp_path / "walk.csv.gz")
    assert steps_path(tmp_path / "walk.csv.gz", existing=True) == old
    assert same_steps(read_log(tmp_path / "walk.csv.gz").steps, first.steps)
    # A second log of the stem: the writer first gives the old sidecar its log's own name.
    write_log(second, tmp_path / "walk.parquet")
    assert not old.exists()
    assert same_steps(read_steps(tmp_path / "walk.csv.gz"), first.steps)
    assert same_steps(read_steps(tmp_path / "walk.parquet"), second.steps)


def test_an_old_sidecar_two_logs_could_own_is_read_by_neither(tmp_path, two_logs):
    first, second = two_logs
    write_log(first, tmp_path / "walk.csv")
    write_log(second, tmp_path / "walk.parquet")
    steps_path(tmp_path / "walk.csv").unlink()
    steps_path(tmp_path / "walk.parquet").rename(tmp_path / "walk.steps.csv")
    assert read_steps(tmp_path / "walk.csv") is None and read_steps(tmp_path / "walk.parquet") is None
    write_log(first, tmp_path / "walk.csv")  # and no writer moves or deletes it
    assert (tmp_path / "walk.steps.csv").exists()


@pytest.mark.parametrize("dst", ["walk.parquet", "walk.csv"])
def test_convert_copies_the_truth_of_its_source_only(tmp_path, two_logs, dst):
    first, _ = two_logs
    _with_old_sidecar(first, tmp_path / "walk.csv.gz")
    convert_log(tmp_path / "walk.csv.gz", tmp_path / dst)
    assert same_steps(read_steps(tmp_path / "walk.csv.gz"), first.steps)
    assert same_steps(read_steps(tmp_path / dst), first.steps)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        ["walk.csv.gz", "walk.csv.gz.steps.csv", dst, f"{dst}.steps.csv"])


@pytest.mark.parametrize("name", ["walk.csv", "walk.parquet"])
def test_a_folder_where_the_sidecar_goes_is_refused_before_the_log_is_written(tmp_path, two_logs, name):
    """Found after the log was written, it left the log without its truth and said only 'Is a directory'."""
    steps_path(tmp_path / name).mkdir()
    with pytest.raises(ValueError, match=f"{name}.steps.csv: is a folder, where the steps sidecar of {name} goes"):
        write_log(two_logs[0], tmp_path / name)
    assert sorted(p.name for p in tmp_path.iterdir()) == [f"{name}.steps.csv"]
