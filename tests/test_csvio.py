"""Canonical log reader/writer: exact round trips, chunking, every error with its line, repairs."""
import gzip
import math
import threading
import warnings

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import stairsense.stream.io._csv_parse as csv_parse
import stairsense.stream.io._csv_write as csv_write
from stairsense.stream import (
    LogFormatError,
    LogRepairedWarning,
    iter_log_chunks,
    read_log,
    read_segments,
    steps_path,
    write_log,
)
from stairsense.stream._log import SensorLog, StepTruth

G = 9.80665  # standard gravity, written out: the oracle does not borrow the code's constant

HEADER = "t_ns,ax,ay,az"


@pytest.fixture(params=[1, 2], ids=["serial", "read-ahead"])
def arrow_threads(request):
    """Arrow's CPU pool at one thread (everything in the caller) and at two (parsing read ahead)."""
    before = pa.cpu_count()
    pa.set_cpu_count(request.param)
    yield request.param
    pa.set_cpu_count(before)


def make_log(n=50, seed=0, full=True, dt=20_000_000):
    rng = np.random.default_rng(seed)
    t = 1_700_000_000_000_000_000 + np.arange(n, dtype=np.int64) * dt
    acc = np.cumsum(rng.normal(0, 0.05, (n, 3)), axis=0) + [0.0, 0.0, 9.81]
    if not full:
        return SensorLog(t, acc)
    q = rng.normal(size=(n, 4))
    return SensorLog(
        t, acc, gyro=rng.normal(size=(n, 3)), rotvec=q / np.linalg.norm(q, axis=1, keepdims=True),
        linacc=rng.normal(size=(n, 3)), label=rng.integers(0, 13, n),
        steps=StepTruth(np.sort(rng.choice(t, min(5, n), replace=False)), np.full(min(5, n), 2)),
        meta={"device": "Pixel", "placement": "pocket", "rate_hz": 50.0, "units": "m/s2"},
    )


def assert_same(a: SensorLog, b: SensorLog):
    for name in ("t_ns", "acc", "gyro", "rotvec", "linacc", "label"):
        x, y = getattr(a, name), getattr(b, name)
        assert (x is None) == (y is None), name
        if x is not None:
            np.testing.assert_array_equal(x, y, err_msg=name)  # exact: shortest round-trip floats
    assert a.meta == b.meta
    assert (a.steps is None) == (b.steps is None)
    if a.steps is not None:
        np.testing.assert_array_equal(a.steps.t_ns, b.steps.t_ns)
        np.testing.assert_array_equal(a.steps.kind, b.steps.kind)


@pytest.mark.parametrize("suffix", [".csv", ".csv.gz"])
@pytest.mark.parametrize("full", [True, False])
def test_round_trip_is_exact(tmp_path, suffix, full):
    log = make_log(full=full)
    path = write_log(log, tmp_path / f"walk{suffix}")
    assert steps_path(path).exists() == full
    assert_same(read_log(path), log)


@settings(max_examples=25, deadline=None)
@given(values=st.lists(st.floats(-1000, 1000, width=64), min_size=3, max_size=30))
def test_round_trip_any_float(tmp_path_factory, values):
    """Every float an accelerometer can give (the readers refuse beyond ±1000 m/s²: test_impossible_values),
    subnormals and -0.0 included, survives; the units check sees gravity added below."""
    v = np.array(values)
    acc = np.column_stack([v, v[::-1], np.full(v.size, 9.81)])
    log = SensorLog(np.arange(v.size) * 10_000_000, acc)
    path = write_log(log, tmp_path_factory.mktemp("rt") / "x.csv")
    back = read_log(path)
    assert np.array_equal(back.acc, acc) and np.array_equal(np.signbit(back.acc), np.signbit(acc))


@settings(max_examples=20, deadline=None)
@given(n=st.integers(1, 60), chunk_rows=st.integers(1, 25), block_bytes=st.sampled_from([512, 1 << 22]))
def test_chunks_concatenate_to_whole_log(tmp_path_factory, n, chunk_rows, block_bytes):
    log = make_log(n=n, seed=n)
    path = write_log(log, tmp_path_factory.mktemp("ch") / "x.csv.gz")
    with pytest.MonkeyPatch.context() as mp:  # small parser blocks: chunks made of several pieces
        mp.setattr(csv_parse, "_BLOCK_BYTES", block_bytes)
        assert_same(read_log(path), log)
        chunks = list(iter_log_chunks(path, chunk_rows=chunk_rows))
    assert [len(c) for c in chunks] == [min(chunk_rows, n - i) for i in range(0, n, chunk_rows)]
    for name in ("t_ns", "acc", "gyro", "rotvec", "linacc", "label"):
        np.testing.assert_array_equal(np.concatenate([getattr(c, name) for c in chunks]), getattr(log, name))


def log_text(log: SensorLog, newline: str, bom: bool, meta: bool, last_newline: bool) -> str:
    """The log as CSV text written here by hand (not by write_log), shortest round-trip floats."""
    names = ["t_ns", "ax", "ay", "az", "gx", "gy", "gz", "qx", "qy", "qz", "qw", "lx", "ly", "lz", "label"]
    columns = [log.t_ns, *log.acc.T, *log.gyro.T, *log.rotvec.T, *log.linacc.T, log.label]
    rows = [",".join(repr(v) for v in row) for row in zip(*[c.tolist() for c in columns])]
    lines = (['# meta: {"device": "Pixel"}'] if meta else []) + [",".join(names)] + rows
    return ("\ufeff" if bom else "") + newline.join(lines) + (newline if last_newline else "")


@settings(max_examples=40, deadline=None)
@given(n=st.integers(1, 300), chunk_rows=st.integers(1, 120), block_bytes=st.sampled_from([400, 1500, 1 << 20]),  # a row (<= ~360 B) fits a block
       newline=st.sampled_from(["\n", "\r\n", "\r"]), bom=st.booleans(), meta=st.booleans(),
       last_newline=st.booleans(), threads=st.sampled_from([1, 2]))
def test_plain_file_stretches_read_exactly(tmp_path_factory, n, chunk_rows, block_bytes, newline, bom, meta,
                                           last_newline, threads):
    """A plain file parsed in stretches cut at line ends (read ahead or not), whole or in chunks, gives
    back exactly the values written, whatever the line endings, BOM, meta line or last newline."""
    log = make_log(n=n, seed=n)
    path = tmp_path_factory.mktemp("st") / "x.csv"
    path.write_bytes(log_text(log, newline, bom, meta, last_newline).encode())
    before = pa.cpu_count()
    try:
        pa.set_cpu_count(threads)
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(csv_parse, "_BLOCK_BYTES", block_bytes)
            whole = read_log(path)
            chunks = list(iter_log_chunks(path, chunk_rows=chunk_rows))
    finally:
        pa.set_cpu_count(before)
    assert [len(c) for c in chunks] == [min(chunk_rows, n - i) for i in range(0, n, chunk_rows)]
    for name in ("t_ns", "acc", "gyro", "rotvec", "linacc", "label"):
        np.testing.assert_array_equal(getattr(whole, name), getattr(log, name), err_msg=name)
        np.testing.assert_array_equal(np.concatenate([getattr(c, name) for c in chunks]), getattr(log, name))


def test_read_ahead_parses_in_a_background_thread(tmp_path, monkeypatch, arrow_threads):
    """With two Arrow threads every stretch is parsed off the caller's thread; with one, on it."""
    path = write_log(make_log(n=2000, full=False), tmp_path / "x.csv")
    monkeypatch.setattr(csv_parse, "_BLOCK_BYTES", 1 << 10)
    parsed_on = []
    read_csv = csv_parse.pacsv.read_csv

    def spy(*args, **kwargs):
        parsed_on.append(threading.current_thread() is threading.main_thread())
        return read_csv(*args, **kwargs)

    monkeypatch.setattr(csv_parse.pacsv, "read_csv", spy)
    assert len(read_log(path)) == 2000
    assert len(parsed_on) > 3 and set(parsed_on) == {arrow_threads == 1}


def test_stopping_early_ends_the_read_ahead(tmp_path, monkeypatch, arrow_threads):
    """A caller that stops after one chunk, or fails in its own work, leaves no reader thread behind."""
    path = write_log(make_log(n=3000, full=False), tmp_path / "x.csv")
    monkeypatch.setattr(csv_parse, "_BLOCK_BYTES", 1 << 10)

    def readers():  # reader threads still alive once they had time to finish their piece
        alive = [t for t in threading.enumerate() if t.name.startswith("stairsense-read")]
        for t in alive:
            t.join(timeout=10)
        return [t for t in alive if t.is_alive()]

    chunks = iter_log_chunks(path, chunk_rows=100)
    assert len(next(chunks)) == 100
    assert len([t for t in threading.enumerate() if t.name.startswith("stairsense-read")]) == (arrow_threads > 1)
    chunks.close()
    assert readers() == []
    with pytest.raises(ZeroDivisionError):
        for _ in iter_log_chunks(path, chunk_rows=100):
            1 / 0
    assert readers() == []


def test_first_error_in_file_order_wins_across_stretches(tmp_path, monkeypatch, arrow_threads):
    """A time error in an early stretch is reported even when a later stretch, parsed ahead, is malformed."""
    rows = [f"{i * 10_000_000},0.1,0.2,9.8" for i in range(3000)]
    rows[100] = rows[99]
    rows[2900] = "bad"
    path = tmp_path / "two.csv"
    path.write_text(HEADER + "\n" + "\n".join(rows) + "\n")
    monkeypatch.setattr(csv_parse, "_BLOCK_BYTES", 1 << 10)
    with pytest.raises(LogFormatError, match="repeats") as err:
        list(iter_log_chunks(path, chunk_rows=50))
    assert err.value.line == 102


def test_meta_line_is_optional(tmp_path):
    path = tmp_path / "m.csv"
    path.write_text(f"{HEADER}\n0,0,0,9.8\n10000000,0,0,9.81\n")
    log = read_log(path)
    assert log.meta == {} and log.steps is None and log.t_ns.tolist() == [0, 10_000_000]


GOOD = ["0,0.1,0.2,9.8", "10000000,0.1,0.2,9.8", "20000000,0.1,0.2,9.8", "30000000,0.1,0.2,9.8"]


def with_line(i, text):
    """GOOD rows with data row ``i`` replaced; the header is line 1, so the row sits on line i + 2."""
    rows = list(GOOD)
    rows[i] = text
    return "\n".join([HEADER, *rows]) + "\n"


BAD_FILES = {
    "short line": (with_line(2, "20000000,0.1,0.2"), 4, "expected 4 values"),
    "long line": (with_line(1, "10000000,0.1,0.2,9.8,7"), 3, "expected 4 values"),
    "non-numeric": (with_line(3, "30000000,0.1,abc,9.8"), 5, "'ay' must be a number"),
    "empty value": (with_line(1, "10000000,,0.2,9.8"), 3, "column 'ax' is empty"),
    "float time": (with_line(1, "1.5e7,0.1,0.2,9.8"), 3, "'t_ns' must be an integer"),
    "underscore": (with_line(1, "10000000,0.1,1_0.2,9.8"), 3, "'ay' must be a number"),
    "int64 overflow": (with_line(2, "9223372036854775808,0.1,0.2,9.8"), 4, "within int64"),
    "blank line": (with_line(2, ""), 4, "blank line"),
    "nan": (with_line(2, "20000000,nan,0.2,9.8"), 4, "non-finite"),
    "inf": (with_line(3, "30000000,0.1,-inf,9.8"), 5, "non-finite"),
    "duplicate time": (with_line(2, "10000000,0.1,0.2,9.8"), 4, "repeats"),
    "backwards time": (with_line(3, "5000000,0.1,0.2,9.8"), 5, "goes back"),
    "gap": (with_line(3, "900000000,0.1,0.2,9.8"), 5, "exceeds max_gap_s=0.3"),
    "units are g": ("\n".join([HEADER, "0,0,0,1", "10000000,0,0.01,1"]) + "\n", 2, "looks like g"),
    "bad label": ("t_ns,ax,ay,az,label\n0,0,0,9.8,1\n10000000,0,0,9.8,99\n", 3, "not an Activity"),
    "empty file": ("", 1, "empty"),
    "unknown column": ("t_ns,ax,ay,az,foo\n0,0,0,9.8,1\n", 1, "unknown column(s) ['foo']"),
    "duplicated column": ("t_ns,ax,ay,az,ax\n0,0,0,9.8,1\n", 1, "repeats column(s) ['ax']"),
    "missing acc": ("t_ns,ax,ay\n0,0,0\n", 1, "lacks column(s) ['az']"),
    "missing time": ("ax,ay,az\n0,0,9.8\n", 1, "lacks column(s) ['t_ns']"),
    "partial group": ("t_ns,ax,ay,az,gx,gy\n0,0,0,9.8,1,1\n", 1, "['gz']: the gyro group"),
    "data as header": ("0,0.1,0.2,9.8\n", 1, "unknown column"),
    "bad meta": ("# meta: {oops\nt_ns,ax,ay,az\n0,0,0,9.8\n", 1, "not valid JSON"),
    "header only": (f"{HEADER}\n", None, "no samples"),
}


@pytest.mark.parametrize("block_bytes", [1 << 22, 40])  # 40 bytes: parser blocks of ~1 line (stretches of ~8)
@pytest.mark.parametrize("suffix", [".csv", ".csv.gz"])
@pytest.mark.parametrize("case", sorted(BAD_FILES))
def test_errors_name_file_line_and_fix(tmp_path, monkeypatch, case, suffix, block_bytes, arrow_threads):
    monkeypatch.setattr(csv_parse, "_BLOCK_BYTES", block_bytes)
    text, line, reason = BAD_FILES[case]
    path = tmp_path / f"bad{suffix}"
    path.write_bytes(gzip.compress(text.encode()) if suffix.endswith(".gz") else text.encode())
    with pytest.raises(LogFormatError) as err:
        read_log(path)
    assert err.value.line == line
    assert reason in str(err.value)
    assert str(err.value).startswith(f"{path}:{line}:" if line else f"{path}:")


@pytest.mark.parametrize("offset", [0, -1])
def test_backwards_time_across_parser_blocks_is_caught(tmp_path, monkeypatch, offset):
    """The first row of the parser's second block goes back before the last row of the first."""
    rows = [f"{1_000_000_000 + i * 10_000_000},0.1,0.2,9.8" for i in range(20_000)]
    path = tmp_path / "b.csv"
    path.write_text(HEADER + "\n" + "\n".join(rows) + "\n")
    header = csv_parse._read_header(path)
    monkeypatch.setattr(csv_parse, "_BLOCK_BYTES", 1 << 13)  # stretches of 8 blocks: several in the file
    second_block_line = [line for line, _ in csv_parse._iter_batches(header, csv_parse._BLOCK_BYTES)][1]
    i = second_block_line - 2 + offset
    rows[i] = f"{1_000_000_000 + (i - 2) * 10_000_000},0.1,0.2,9.8"  # same width: same block cuts
    path.write_text(HEADER + "\n" + "\n".join(rows) + "\n")
    with pytest.raises(LogFormatError, match="goes back") as err:
        list(iter_log_chunks(path, chunk_rows=1000))
    assert err.value.line == i + 2


def test_error_in_a_late_block_names_its_line(tmp_path):
    """The slow re-scan starts where the parsed blocks ended and still finds the exact line."""
    n = 300_000
    rows = [f"{i * 10_000_000},0.1,0.2,9.8" for i in range(n)]
    rows[n - 7] = "bad"
    path = tmp_path / "late.csv"
    path.write_text(HEADER + "\n" + "\n".join(rows) + "\n")
    with pytest.raises(LogFormatError, match="expected 4 values") as err:
        read_log(path)
    assert err.value.line == n - 7 + 2


def test_missing_file_and_gzip_mismatch(tmp_path):
    with pytest.raises(LogFormatError, match="no such file"):
        read_log(tmp_path / "nope.csv")
    fake = tmp_path / "plain.csv.gz"
    fake.write_text(with_line(0, GOOD[0]))
    with pytest.raises(LogFormatError, match="gzip"):
        read_log(fake)


def test_units_g_converts_and_refuses_m_s2(tmp_path):
    path = tmp_path / "g.csv"
    path.write_text(f"{HEADER}\n0,0.1,0,1\n10000000,0,0.2,0.98\n")
    log = read_log(path, units="g")
    np.testing.assert_array_equal(log.acc, np.array([[0.1, 0, 1], [0, 0.2, 0.98]]) * G)
    assert log.meta["converted_from_units"] == "g"
    with pytest.raises(LogFormatError, match="looks like m/s"):
        read_log(write_log(make_log(full=False), tmp_path / "ms2.csv"), units="g")


def test_meta_units_g_is_honoured(tmp_path):
    path = tmp_path / "g.csv"
    path.write_text('# meta: {"units": "g"}\n' + f"{HEADER}\n0,0,0,1\n10000000,0,0,1\n")
    assert read_log(path).acc[0, 2] == G


def test_unknown_meta_units_are_refused(tmp_path):
    path = tmp_path / "mg.csv"
    path.write_text('# meta: {"units": "mg"}\n' + f"{HEADER}\n0,0,0,1000\n")
    with pytest.raises(ValueError, match="units must be one of .* got 'mg'"):
        read_log(path)
    assert read_log(path, units="m/s2", max_gap_s=1).acc[0, 2] == 1000


def test_drop_nan_reports_counts_and_lines(tmp_path):
    rows = list(GOOD) + ["40000000,0.1,0.2,9.8", "50000000,nan,0.2,9.8"]
    rows[1] = "10000000,0.1,inf,9.8"
    path = tmp_path / "n.csv"
    path.write_text("\n".join([HEADER, *rows]) + "\n")
    log, rep = read_log(path, repair=("drop-nan",), report=True)
    assert log.t_ns.tolist() == [0, 20_000_000, 30_000_000, 40_000_000]
    (action,) = rep.actions
    assert (action.repair, action.count, action.first_lines) == ("drop-nan", 2, [3, 7])
    assert (rep.rows_read, rep.rows_kept) == (6, 4)


def test_sort_matches_brute_force(tmp_path):
    rng = np.random.default_rng(3)
    t = rng.integers(0, 60, 40) * 5_000_000  # many repeats, random order
    acc = rng.normal([0, 0, 9.8], 0.1, (40, 3))
    path = tmp_path / "s.csv"
    path.write_text(HEADER + "\n" + "".join(f"{a},{b!r},{c!r},{d!r}\n" for a, (b, c, d) in zip(t, acc.tolist())))
    log, rep = read_log(path, repair="sort", report=True)
    # Oracle: walk the file, keep the first line of each timestamp, then order by time.
    first = {}
    for i, ti in enumerate(t):
        first.setdefault(int(ti), i)
    keep = sorted(first.items())
    assert log.t_ns.tolist() == [k for k, _ in keep]
    np.testing.assert_array_equal(log.acc, acc[[i for _, i in keep]])
    dropped = next(a for a in rep.actions if a.what.startswith("dropped"))
    assert dropped.count == 40 - len(first)
    late = [i + 2 for i in range(40) if t[i] < t[: i + 1].max()]
    moved = next(a for a in rep.actions if a.what.startswith("moved"))
    assert (moved.count, moved.first_lines) == (len(late), late[:5])


def test_repairs_without_report_warn(tmp_path):
    path = tmp_path / "w.csv"
    path.write_text(with_line(2, "20000000,nan,0.2,9.8"))
    with pytest.warns(LogRepairedWarning, match="drop-nan: dropped .* 1 rows"):
        read_log(path, repair=["drop-nan"])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        read_log(write_log(make_log(), tmp_path / "ok.csv"), repair=["drop-nan", "sort"])


@settings(max_examples=20, deadline=None)
@given(steps=st.lists(st.integers(1, 40), min_size=2, max_size=40), chunk_rows=st.integers(1, 9),
       block_bytes=st.sampled_from([128, 256, 1 << 22]))  # Arrow needs blocks longer than a line
def test_split_gaps_matches_brute_force(tmp_path_factory, steps, chunk_rows, block_bytes):
    dt = np.array(steps) * 10_000_000  # 10–400 ms steps, limit 300 ms
    t = np.concatenate([[0], np.cumsum(dt)])
    acc = np.tile([0.0, 0.0, 9.8], (t.size, 1)) + np.arange(t.size)[:, None] * 1e-3
    log = SensorLog(t, acc, steps=StepTruth(t[::3], np.ones(t[::3].size)))
    path = write_log(log, tmp_path_factory.mktemp("g") / "g.csv")
    with pytest.MonkeyPatch.context() as mp:  # small parser blocks put gaps on block boundaries too
        mp.setattr(csv_parse, "_BLOCK_BYTES", block_bytes)
        segs, rep = read_segments(path, report=True)
    cuts = [0] + [i + 1 for i in range(dt.size) if dt[i] > 300_000_000] + [t.size]
    assert [s.t_ns.tolist() for s in segs] == [t[a:b].tolist() for a, b in zip(cuts[:-1], cuts[1:])]
    assert rep.segments == [(a + 2, b + 1) for a, b in zip(cuts[:-1], cuts[1:])]
    assert [s.meta["segment"] for s in segs] == list(range(len(segs)))
    for s in segs:
        assert np.all((s.steps.t_ns >= s.t_ns[0]) & (s.steps.t_ns <= s.t_ns[-1]))
    assert sum(len(s.steps) for s in segs) == len(log.steps)
    chunks = list(iter_log_chunks(path, chunk_rows=chunk_rows, repair="split-gaps"))
    assert max(len(c) for c in chunks) <= chunk_rows
    np.testing.assert_array_equal(np.concatenate([c.t_ns for c in chunks]), t)


def test_api_refusals(tmp_path):
    path = write_log(make_log(), tmp_path / "x.csv")
    with pytest.raises(ValueError, match="read_segments"):
        read_log(path, repair="split-gaps")
    with pytest.raises(ValueError, match="unknown repair"):
        read_log(path, repair="fix-everything")
    with pytest.raises(ValueError, match="must end in .csv"):
        write_log(make_log(), tmp_path / "x.txt")
    assert len(read_log(path, max_gap_s=math.inf)) == 50


def test_write_is_atomic(tmp_path):
    path = write_log(make_log(), tmp_path / "x.csv.gz")
    before = path.read_bytes()
    bad = make_log()
    object.__setattr__(bad, "meta", {"when": object()})  # not JSON: fails before any rename
    with pytest.raises(ValueError, match="cannot write log.meta"):
        write_log(bad, path)
    assert path.read_bytes() == before

    class Boom(Exception):
        pass

    def explode(*args, **kwargs):
        raise Boom

    orig = csv_write.pacsv.write_csv
    csv_write.pacsv.write_csv = explode  # fail mid-write, after the header went out
    try:
        with pytest.raises(Boom):
            write_log(make_log(seed=9), path)
    finally:
        csv_write.pacsv.write_csv = orig
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["x.csv.gz", "x.csv.gz.steps.csv"]


def test_stale_steps_sidecar_is_removed(tmp_path):
    path = write_log(make_log(), tmp_path / "x.csv")
    write_log(make_log(full=False), path)
    assert not steps_path(path).exists() and read_log(path).steps is None


def test_block_line_bookkeeping():
    """Rows keep their file lines through slicing, selection and joining."""
    block = csv_parse._Block(np.arange(10), {"acc": np.zeros((10, 3))}, line0=7)
    head, tail = block.take(slice(0, 4)), block.take(slice(4, None))
    assert tail.line(0) == 11 and tail.explicit is None
    picked = block.take(np.array([1, 5]))
    assert picked.lines().tolist() == [8, 12]
    assert csv_parse._join([head, tail]).explicit is None  # back to back: lines stay implicit
    assert csv_parse._join([tail, head]).lines().tolist() == [*range(11, 17), *range(7, 11)]
    assert csv_parse._join([head, picked]).lines().tolist() == [7, 8, 9, 10, 8, 12]
