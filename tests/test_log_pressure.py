"""Air pressure ``p`` (hPa) in the canonical CSV(.gz) and Parquet logs: exact round trips, chunked reads,
conversion both ways, and every refusal as one line naming file, line (or row) and the fix.

The canonical log holds ``p`` on every line, the pressure at that accelerometer sample's time (the
barometer's own 1–25 Hz readings are merged onto those times when the log is made, by
``stairsense import``); an empty cell is refused, never filled or dropped.
"""
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from stairsense.cli import main
from stairsense.stream import LogFormatError, SensorLog, convert_log, iter_log_chunks, read_log, write_log

SUFFIXES = [".csv", ".csv.gz", ".parquet"]


def make_log(n=60, seed=0, streams=("gyro", "label")):
    """A log whose pressure drifts like a slow climb: 976 hPa falling 0.04 hPa/s, with sensor noise."""
    rng = np.random.default_rng(seed)
    t = 1_700_000_000_000_000_000 + np.arange(n, dtype=np.int64) * 20_000_000
    acc = rng.normal([0.0, 0.0, 9.81], 0.1, (n, 3))
    pressure = 976.0 - 0.04 * (t - t[0]) / 1e9 + rng.normal(0, 0.02, n)
    extra = {"gyro": rng.normal(size=(n, 3)), "label": rng.integers(0, 4, n)}
    return SensorLog(t, acc, pressure=pressure, meta={"device": "Pixel 7"}, **{k: extra[k] for k in streams})


@pytest.mark.parametrize("suffix", SUFFIXES)
@pytest.mark.parametrize("streams", [(), ("gyro", "label")], ids=["acc+p", "acc+gyro+p+label"])
def test_pressure_round_trips_exactly(tmp_path, suffix, streams):
    log = make_log(streams=streams)
    back = read_log(write_log(log, tmp_path / f"walk{suffix}"))
    np.testing.assert_array_equal(back.pressure, log.pressure)  # exact: shortest round-trip floats / float64 bits
    assert back.pressure.dtype == np.float64 and back.pressure.shape == (len(log),)
    for name in ("t_ns", "acc", "gyro", "label"):
        a, b = getattr(log, name), getattr(back, name)
        assert (a is None) == (b is None)
        if a is not None:
            np.testing.assert_array_equal(a, b)


def test_header_names_p_after_linear_acceleration_and_before_label(tmp_path):
    path = write_log(make_log(), tmp_path / "walk.csv")
    assert path.read_text().splitlines()[1] == "t_ns,ax,ay,az,gx,gy,gz,p,label"


def test_a_log_without_a_barometer_has_no_p_column_and_no_pressure(tmp_path):
    log = make_log()
    bare = SensorLog(log.t_ns, log.acc)
    path = write_log(bare, tmp_path / "walk.csv")
    assert "p" not in path.read_text().splitlines()[0].split(",")
    assert read_log(path).pressure is None


def test_columns_in_any_order(tmp_path):
    path = tmp_path / "walk.csv"
    path.write_text("p,az,t_ns,ay,ax\n1000.25,9.8,0,0.1,0.2\n1000.5,9.7,20000000,0.1,0.2\n")
    log = read_log(path)
    assert log.pressure.tolist() == [1000.25, 1000.5] and log.acc[:, 2].tolist() == [9.8, 9.7]


@pytest.mark.parametrize("chunk_rows", [1, 7, 1000])
def test_chunks_carry_their_slice_of_pressure(tmp_path, chunk_rows):
    log = make_log()
    path = write_log(log, tmp_path / "walk.csv.gz")
    chunks = list(iter_log_chunks(path, chunk_rows=chunk_rows))
    np.testing.assert_array_equal(np.concatenate([c.pressure for c in chunks]), log.pressure)


@pytest.mark.parametrize("first, second", [(".csv", ".parquet"), (".parquet", ".csv.gz"), (".csv.gz", ".csv")])
def test_convert_keeps_pressure_exactly_both_ways(tmp_path, first, second):
    log = make_log()
    src = write_log(log, tmp_path / f"a{first}")
    convert_log(src, tmp_path / f"b{second}")
    convert_log(tmp_path / f"b{second}", tmp_path / f"c{first}")
    np.testing.assert_array_equal(read_log(tmp_path / f"c{first}").pressure, log.pressure)


def test_range_ends_are_accepted(tmp_path):
    path = tmp_path / "walk.csv"
    path.write_text("t_ns,ax,ay,az,p\n0,0,0,9.8,300\n20000000,0,0,9.8,1100\n")
    assert read_log(path).pressure.tolist() == [300.0, 1100.0]


GOOD = "1000.5"
# case -> (bad p cell on the 3rd data line, what the one-line message must say)
BAD_PRESSURE = {
    "empty cell": ("", r"column 'p' is empty.*stairsense import .*p=p"),
    "nan": ("nan", r"non-finite value \(nan or inf\) in column 'p'.*drop-nan"),
    "inf": ("-inf", r"non-finite value \(nan or inf\) in column 'p'"),
    "Pa": ("101325", r"101325 hPa is outside 300–1100 hPa; it looks like Pa \(1013.25 hPa\).*hPa"),
    "kPa": ("101.3", r"it looks like kPa \(1013 hPa\)"),
    "bar": ("1.01325", r"it looks like bar \(1013.25 hPa\)"),
    "too low": ("250", r"250 hPa is outside 300–1100 hPa; p must be in hPa"),
    "too high": ("1100.01", r"1100.01 hPa is outside 300–1100 hPa"),
    "decimal comma": ("1013,2", r"expected 5 values"),
}


def bad_csv(path, cell):
    lines = ["t_ns,ax,ay,az,p"] + [f"{i * 20_000_000},0.1,0.2,9.8,{GOOD}" for i in range(5)]
    lines[3] = f"{2 * 20_000_000},0.1,0.2,9.8,{cell}"
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.parametrize("case", sorted(BAD_PRESSURE))
def test_bad_pressure_in_csv_is_one_line_naming_file_line_and_fix(tmp_path, case):
    cell, message = BAD_PRESSURE[case]
    path = bad_csv(tmp_path / "walk.csv", cell)
    with pytest.raises(LogFormatError, match=message) as err:
        read_log(path)
    assert str(err.value).startswith(f"{path}:4: ") and "\n" not in str(err.value)
    assert err.value.line == 4


@pytest.mark.parametrize("case", ["nan", "Pa", "kPa", "bar", "too low", "too high"])
def test_bad_pressure_in_parquet_names_the_row(tmp_path, case):
    cell, message = BAD_PRESSURE[case]
    p = np.full(5, float(GOOD))
    p[2] = float(cell)
    table = pa.table({"t_ns": np.arange(5, dtype=np.int64) * 20_000_000, "ax": np.full(5, 0.1), "ay": np.full(5, 0.2),
                      "az": np.full(5, 9.8), "p": p})
    path = tmp_path / "walk.parquet"
    pq.write_table(table, path)
    with pytest.raises(LogFormatError, match=message) as err:
        read_log(path)
    assert str(err.value).startswith(f"{path}:3: ")  # 1-based row


def test_drop_nan_drops_a_sample_whose_pressure_is_nan_and_reports_it(tmp_path):
    path = bad_csv(tmp_path / "walk.csv", "nan")
    log, report = read_log(path, repair="drop-nan", report=True)
    assert len(log) == 4 and np.all(log.pressure == float(GOOD))
    assert [(a.repair, a.count, a.first_lines) for a in report.actions] == [("drop-nan", 1, [4])]


def test_write_refuses_pressure_the_readers_would_refuse(tmp_path):
    log = make_log()
    in_pa = SensorLog(log.t_ns, log.acc, pressure=log.pressure * 100)
    with pytest.raises(ValueError, match=r"walk.csv: pressure of sample 0: .* it looks like Pa"):
        write_log(in_pa, tmp_path / "walk.csv")
    assert not (tmp_path / "walk.csv").exists()


@pytest.mark.parametrize("case", ["empty cell", "Pa", "nan"])
@pytest.mark.parametrize("command", ["convert", "replay"])
def test_cli_refuses_bad_pressure_with_one_line_and_exit_2_writing_nothing(tmp_path, capsys, case, command):
    path = bad_csv(tmp_path / "walk.csv", BAD_PRESSURE[case][0])
    out = tmp_path / "walk.parquet"
    argv = ["convert", str(path), str(out)] if command == "convert" else ["replay", str(path), "--json"]
    assert main(argv) == 2
    captured = capsys.readouterr()
    err = captured.err.strip()
    assert captured.out == "" and len(err.splitlines()) == 1
    assert err.startswith(f"stairsense {command}: error: {path}:4: ")
    assert not out.exists() and sorted(p.name for p in tmp_path.iterdir()) == ["walk.csv"]


def test_the_advice_for_empty_cells_works_as_given(tmp_path, capsys):
    """A barometer written only on the lines where it read: the reader refuses, and the import it
    advises gives a log with p on every line, interpolated, the meta line kept."""
    path = tmp_path / "walk.csv"
    path.write_text('# meta: {"device": "Pixel 7"}\nt_ns,ax,ay,az,p\n0,0,0,9.8,1000.0\n20000000,0,0,9.8,\n'
                    "40000000,0,0,9.8,\n60000000,0,0,9.8,1000.3\n80000000,0,0,9.8,\n")
    with pytest.raises(LogFormatError) as err:
        read_log(path)
    advised = str(err.value).split("`")[1].split()  # stairsense import LOG --map "..." --out NEW
    assert advised[:3] == ["stairsense", "import", "LOG"] and advised[-2:] == ["--out", "NEW"]
    mapping = " ".join(advised[4:-2]).strip('"')
    out = tmp_path / "merged.csv"
    assert main(["import", str(path), "--map", mapping, "--out", str(out)]) == 0
    log = read_log(out)
    np.testing.assert_allclose(log.pressure, [1000.0, 1000.1, 1000.2, 1000.3])
    assert log.meta["device"] == "Pixel 7" and len(log) == 4  # the last line, after the last reading, dropped
    assert "dropped 1 accelerometer samples" in capsys.readouterr().out
