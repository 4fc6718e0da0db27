"""The Parquet log format, its readers' checks, and ``stairsense convert`` (issue 10, item 6)."""
import dataclasses
import json

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from stairsense import PipelineConfig
from stairsense.cli import main
from stairsense.pipeline import replay
from stairsense.stream import LogFormatError, SensorLog, convert_log, iter_log_chunks, read_log, read_segments, write_log
from stairsense.stream.simulate import simulate


@pytest.fixture(scope="module")
def full_log():
    """Every stream the simulator records (17 columns with the label), with steps and nested meta."""
    return simulate(minutes=1.5, rate_hz=50, seed=3)


def assert_same_log(a, b):
    np.testing.assert_array_equal(a.t_ns, b.t_ns)
    for name in ("acc", "gyro", "rotvec", "linacc", "label"):
        left, right = getattr(a, name), getattr(b, name)
        assert (left is None) == (right is None), name
        if left is not None:
            np.testing.assert_array_equal(left, right)  # bit-exact, not approximately


def test_parquet_round_trip_is_exact_with_meta_and_steps(full_log, tmp_path):
    path = write_log(full_log, tmp_path / "walk.parquet")
    back = read_log(path)
    assert_same_log(back, full_log)
    assert back.meta == json.loads(json.dumps(full_log.meta))
    np.testing.assert_array_equal(back.steps.t_ns, full_log.steps.t_ns)
    assert (tmp_path / "walk.parquet.steps.csv").exists()
    assert sorted(pq.read_schema(path).names) == sorted(
        ["t_ns", "ax", "ay", "az", "gx", "gy", "gz", "qx", "qy", "qz", "qw", "lx", "ly", "lz", "label"])


@pytest.mark.parametrize("chunk_rows", [1, 777, 1 << 16])
def test_parquet_chunks_equal_csv_chunks(full_log, tmp_path, chunk_rows):
    csv, parquet = write_log(full_log, tmp_path / "w.csv"), write_log(full_log, tmp_path / "w.parquet")
    if chunk_rows == 1:  # one sample per chunk is slow; a short log shows the same
        csv = write_log(full_log.slice(0, 50), tmp_path / "s.csv")
        parquet = write_log(full_log.slice(0, 50), tmp_path / "s.parquet")
    a, b = list(iter_log_chunks(csv, chunk_rows)), list(iter_log_chunks(parquet, chunk_rows))
    assert [len(c) for c in a] == [len(c) for c in b]
    for x, y in zip(a, b):
        assert_same_log(x, y)


def test_replay_of_parquet_equals_replay_of_csv(full_log, tmp_path):
    config = PipelineConfig(orientation="rotvec")
    a = replay(write_log(full_log, tmp_path / "w.csv"), config)
    b = replay(write_log(full_log, tmp_path / "w.parquet"), config)
    assert a.windows > 50 and dataclasses.replace(a, source="", read=None) == dataclasses.replace(b, source="", read=None)


def _table(log, **changes):
    from stairsense.stream.io._csv_write import _columns_of

    columns = {**_columns_of(log), **changes}
    return pa.table({k: v for k, v in columns.items() if v is not None})


def test_parquet_logs_get_the_csv_checks_with_row_numbers(full_log, tmp_path):
    log = full_log.slice(0, 200)
    path = tmp_path / "bad.parquet"
    az = log.acc[:, 2].copy()
    az[41] = np.nan
    pq.write_table(_table(log, az=az), path)
    with pytest.raises(LogFormatError, match=r"bad.parquet:42: non-finite value"):
        read_log(path)
    kept, report = read_log(path, repair=("drop-nan",), report=True)
    assert len(kept) == 199 and report.actions[0].first_lines == [42]
    t = log.t_ns.copy()
    t[100] = t[98]
    pq.write_table(_table(log, t_ns=t), path)
    with pytest.raises(LogFormatError, match=r"bad.parquet:10[01]"):
        read_log(path)
    gap = log.t_ns.copy()
    gap[120:] += 5_000_000_000
    pq.write_table(_table(log, t_ns=gap), path)
    segments, report = read_segments(path, report=True)
    assert [len(s) for s in segments] == [120, 80] and report.segments == [(1, 120), (121, 200)]


@pytest.mark.parametrize("make, match", [
    (lambda log, p: p.write_text("t_ns,ax,ay,az\n0,0,0,9.8\n"), "cannot be read as Parquet"),
    (lambda log, p: pq.write_table(_table(log, gx=None), p), r"lacks column\(s\) \['gx'\]"),
    (lambda log, p: pq.write_table(_table(log, ax=np.array(["a"] * len(log))), p), "column 'ax' has type string"),
    (lambda log, p: pq.write_table(_table(log, ay=pa.array([None] + [0.0] * (len(log) - 1))), p),
     r"x.parquet:1: column 'ay' has a missing value"),
    (lambda log, p: pq.write_table(_table(log, label=np.full(len(log), 99)), p), "label 99 is not an Activity"),
])
def test_malformed_parquet_logs_are_refused_naming_the_file(full_log, tmp_path, make, match):
    path = tmp_path / "x.parquet"
    make(full_log.slice(0, 30), path)
    with pytest.raises(LogFormatError, match=match):
        read_log(path)


def test_units_in_g_are_converted_from_parquet_meta(tmp_path):
    acc = np.random.default_rng(0).normal([0, 0, 1.0], 0.01, (20, 3))
    path = write_log(SensorLog(np.arange(20) * 20_000_000, acc, meta={"units": "g"}), tmp_path / "g.parquet")
    np.testing.assert_allclose(read_log(path).acc, acc * 9.80665)


def test_convert_round_trips_exactly_both_ways(full_log, tmp_path):
    gz = write_log(full_log, tmp_path / "a.csv.gz")
    assert convert_log(gz, tmp_path / "b.parquet") == len(full_log)
    assert convert_log(tmp_path / "b.parquet", tmp_path / "c.csv") == len(full_log)
    back = read_log(tmp_path / "c.csv")
    assert_same_log(back, full_log)
    np.testing.assert_array_equal(read_log(tmp_path / "b.parquet").steps.kind, full_log.steps.kind)
    assert back.meta == read_log(gz).meta


def test_cli_simulate_writes_parquet_and_convert_checks_names(tmp_path, capsys):
    out = tmp_path / "sim.parquet"
    assert main(["simulate", "--minutes", "0.5", "--out", str(out), "--json"]) == 0
    samples = json.loads(capsys.readouterr().out)["samples"]
    assert len(read_log(out)) == samples > 1000
    assert main(["convert", str(out), str(tmp_path / "sim.csv"), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["samples"] == samples
    assert main(["replay", str(out), "--json"]) == 0
    capsys.readouterr()
    assert main(["convert", str(out), str(tmp_path / "sim.txt")]) == 2
    assert "must end in .csv, .csv.gz or .parquet" in capsys.readouterr().err
    assert main(["convert", str(out), str(out)]) == 2
    assert f"OUT {out} would overwrite LOG {out}" in capsys.readouterr().err


def test_reading_holds_one_row_group_whatever_the_length(tmp_path):
    """Arrow's pre-buffering kept every row group read until the file closed: memory grew with the log."""
    n = 40 * (1 << 16)  # 40 row groups
    acc = np.random.default_rng(0).normal([0, 0, 9.8], 0.5, (n, 3))
    path = write_log(SensorLog(np.arange(n, dtype=np.int64) * 10_000_000, acc), tmp_path / "long.parquet")
    del acc
    held = []
    for chunk in iter_log_chunks(path, chunk_rows=1 << 16):
        held.append(pa.total_allocated_bytes())
    group_bytes = (1 << 16) * 4 * 8
    assert max(held) < 6 * group_bytes, [round(h / group_bytes, 1) for h in held[::8]]
