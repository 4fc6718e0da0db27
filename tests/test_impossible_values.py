"""Values no phone sensor can measure are refused with file, line and fix, or dropped by the named repair
``drop-impossible`` and reported (issue 25: one line of 1e17 m/s² silently took the rest of its 65,536-row
chunk out of step detection, 105 → 16 windows; 100 lines of 1e308 printed NumPy overflow warnings, exit 0)."""
import json
import warnings

import numpy as np
import pytest

from stairsense.cli import main
from stairsense.stream import LogFormatError, import_log, read_log, simulate, write_log


@pytest.fixture(scope="module")
def sim():
    return simulate(minutes=1, seed=2)


def with_values(sim, path, stream, rows, column, value):
    """``sim`` written at ``path`` with ``stream[rows, column] = value``."""
    array = getattr(sim, stream).copy()
    array[rows, column] = value
    from dataclasses import replace

    return write_log(replace(sim, **{stream: array}), path)


@pytest.mark.parametrize("suffix", [".csv", ".csv.gz", ".parquet"])
@pytest.mark.parametrize("stream, column, value", [
    ("acc", 2, 1e17), ("acc", 0, -1e308), ("gyro", 1, 1e3), ("rotvec", 3, 3.0), ("linacc", 0, 5e3)])
def test_an_impossible_value_is_refused_with_file_line_and_fix(sim, tmp_path, suffix, stream, column, value):
    path = with_values(sim, tmp_path / f"w{suffix}", stream, [100], column, value)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # and no NumPy warning on the way
        with pytest.raises(LogFormatError, match=r"beyond any phone sensor .*repair 'drop-impossible'") as caught:
            read_log(path)
    assert caught.value.line == (103 if suffix != ".parquet" else 101)  # after the meta and header lines; rows
    assert caught.value.path == str(path)


def test_values_up_to_the_limits_are_accepted(sim, tmp_path):
    """A phone at full scale (±16 g, ±2000 °/s) is far inside the limits."""
    path = with_values(sim, tmp_path / "w.csv", "acc", slice(100, 103), 0, 16 * 9.80665)
    assert read_log(path).acc[100, 0] == 16 * 9.80665
    path = with_values(sim, tmp_path / "g.csv", "gyro", slice(100, 103), 2, -2000 * np.pi / 180)
    assert len(read_log(path)) == len(sim)


def test_drop_impossible_drops_and_reports(sim, tmp_path):
    path = with_values(sim, tmp_path / "w.csv.gz", "acc", [100, 400, 401], 1, 1e308)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        log, report = read_log(path, repair=["drop-impossible"], report=True)
    assert len(log) == len(sim) - 3 and np.abs(log.acc).max() < 1000
    assert [(a.repair, a.count, a.first_lines) for a in report.actions] == [("drop-impossible", 3, [103, 403, 404])]


def test_the_command_line_refuses_or_repairs_a_log_of_huge_values(sim, tmp_path, capsys):
    """The issue's second case: 100 lines of 1e308."""
    path = with_values(sim, tmp_path / "w.csv", "acc", slice(100, 200), 2, 1e308)
    capsys.readouterr()
    assert main(["replay", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "w.csv:103: az = 1e+308" in err and "--repair drop-impossible" in err
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert main(["replay", str(path), "--repair", "drop-impossible", "split-gaps", "--json"]) == 0
    out, err = capsys.readouterr()
    assert err == ""
    action = json.loads(out)["read"]["actions"][0]
    assert (action["repair"], action["count"]) == ("drop-impossible", 100)


def test_import_refuses_an_impossible_value_with_file_and_line(tmp_path):
    rows = [f"{i * 20},0.01,0.02,{1 + 0.2 * np.sin(i / 5):.4f}" for i in range(300)]
    rows[10] = "200,0.01,1e17,1"
    source = tmp_path / "export.txt"
    source.write_text("timestamp,accX,accY,accZ\n" + "\n".join(rows) + "\n")
    with pytest.raises(ValueError, match=r"export.txt:12: ay = 9\.80665e\+17 m/s² once converted, beyond any phone"):
        import_log([source], "t=timestamp:ms,ax=accX:g,ay=accY:g,az=accZ:g")
    rows[10] = "200,0.01,1e308,1"  # times 9.8 is beyond float range
    source.write_text("timestamp,accX,accY,accZ\n" + "\n".join(rows) + "\n")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ValueError, match=r"export.txt:12: nan or inf"):
            import_log([source], "t=timestamp:ms,ax=accX:g,ay=accY:g,az=accZ:g")


@pytest.mark.parametrize("suffix", [".parquet", ".csv"])
def test_convert_reports_what_its_repairs_changed(sim, tmp_path, capsys, suffix):
    """A repair is never silent: convert --repair said nothing of what it dropped."""
    path = with_values(sim, tmp_path / "w.csv.gz", "acc", [100, 400], 1, 1e17)
    capsys.readouterr()
    assert main(["convert", str(path), str(tmp_path / f"out{suffix}"), "--repair", "drop-impossible"]) == 0
    out = capsys.readouterr().out
    assert f"wrote {tmp_path}/out{suffix}: {len(sim) - 2} samples" in out
    assert "repaired" in out and "drop-impossible" in out and "2 rows (first lines [103, 403])" in out
    assert len(read_log(tmp_path / f"out{suffix}")) == len(sim) - 2
