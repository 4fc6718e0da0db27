"""Repairs for what real phones do to logs (issue 10): repeated timestamps, reordering, start-up rate
bursts and pauses, gaps under one rule shared by reader and front end; BOM, CRLF and the umask.

Every repair is checked against a brute-force oracle written here, and is reported, never silent.
"""
import os
import stat

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import stairsense.stream.io._csv_parse as csv_parse
from stairsense import PipelineConfig
from stairsense.pipeline import replay
from stairsense.stream import (
    LogFormatError,
    SensorLog,
    iter_log_chunks,
    read_log,
    read_segments,
    run_front_end,
    write_log,
)

HEADER = "t_ns,ax,ay,az"


def walk(t_ns, seed=0):
    """Accelerometer rows of a walking-like vertical bounce at the given times."""
    rng = np.random.default_rng(seed)
    z = 9.8 + 2.0 * np.sin(2 * np.pi * 1.8 * np.asarray(t_ns) / 1e9)
    return np.column_stack([rng.normal(0, 0.05, len(t_ns)), rng.normal(0, 0.05, len(t_ns)), z])


def write_rows(path, t_ns, acc):
    path.write_text(HEADER + "\n" + "".join(f"{t},{a!r},{b!r},{c!r}\n" for t, (a, b, c) in zip(t_ns, acc.tolist())))
    return path


# --- dedupe ----------------------------------------------------------------------------------------


def dedupe_oracle(t, acc):
    """Walk the rows: drop a row whose time equals the previous row's; it is an exact duplicate when
    its values equal those of the row kept for that time, else a repeat with other values."""
    keep, exact, other = [], [], []
    for i in range(len(t)):
        if i and t[i] == t[i - 1]:
            (exact if np.array_equal(acc[i], acc[keep[-1]]) else other).append(i + 2)  # file line
        else:
            keep.append(i)
    return keep, exact, other


@settings(max_examples=12, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 30), st.integers(0, 2), st.booleans()), min_size=2, max_size=60),
       st.sampled_from([1 << 22, 40]))
def test_dedupe_matches_brute_force_at_any_block_size(tmp_path_factory, steps, block_bytes):
    # Each step: an interval in ms (or 0 = a repeat), a value, and whether a repeat copies the values.
    t, acc, now = [], [], 0
    for dt_ms, value, copy in steps:
        repeat = acc and dt_ms % 4 == 0
        if repeat:
            t.append(now)
            acc.append(acc[-1] if copy else [float(value), 0.5, 9.8 + value])
        else:
            now += dt_ms * 1_000_000
            t.append(now)
            acc.append([float(value), 0.0, 9.8])
    t, acc = np.array(t), np.array(acc)
    path = write_rows(tmp_path_factory.mktemp("d") / "d.csv", t, acc)
    keep, exact, other = dedupe_oracle(t, acc)
    csv_parse_block = csv_parse._BLOCK_BYTES
    csv_parse._BLOCK_BYTES = block_bytes
    try:
        log, rep = read_log(path, repair="dedupe", report=True, max_gap_s=1)
        chunks = list(iter_log_chunks(path, chunk_rows=7, repair="dedupe", max_gap_s=1))
    finally:
        csv_parse._BLOCK_BYTES = csv_parse_block
    assert log.t_ns.tolist() == t[keep].tolist()
    np.testing.assert_array_equal(log.acc, acc[keep])
    np.testing.assert_array_equal(np.concatenate([c.t_ns for c in chunks]), t[keep])
    counts = {a.what.split(" (")[0]: (a.count, a.first_lines) for a in rep.actions}
    assert counts == {k: (len(v), v[:5]) for k, v in
                      (("dropped exact duplicates", exact),
                       ("dropped samples repeating the previous timestamp with other values", other)) if v}


def test_repeat_without_dedupe_names_the_repair(tmp_path):
    t = np.array([0, 20, 20, 40]) * 1_000_000
    with pytest.raises(LogFormatError, match="repair 'dedupe'") as err:
        read_log(write_rows(tmp_path / "r.csv", t, walk(t)))
    assert err.value.line == 4


def test_sort_streams_in_replay_and_matches_read_log(tmp_path):
    t = np.arange(300) * 20_000_000
    order = np.arange(300)
    order[[50, 51]] = order[[51, 50]]  # one swapped pair, as a batching phone delivers them
    path = write_rows(tmp_path / "s.csv", t[order], walk(t)[order])
    with pytest.raises(LogFormatError, match="repair 'sort'"):
        read_log(path)
    log, rep = read_log(path, repair="sort", report=True)
    assert log.t_ns.tolist() == t.tolist()
    chunks = list(iter_log_chunks(path, chunk_rows=64, repair="sort"))
    np.testing.assert_array_equal(np.concatenate([c.acc for c in chunks]), log.acc)
    report = replay(path, PipelineConfig(), repair=("sort",))
    assert report.read["actions"] == [{"repair": "sort", "what": "moved samples that were out of time order",
                                       "count": 1, "first_lines": [53]}]


# --- trim-startup ------------------------------------------------------------------------------------


# Start-ups real phones produce, as (sample times, index of the first sample to keep). The oracle:
# the log starts at the first sample whose following intervals are all the steady 20 ms.
STARTS = {
    "slow": (np.concatenate([np.arange(5) * 200, 1000 + np.arange(500) * 20]), 5),  # 1 s at 5 Hz
    "pause": (np.concatenate([[0, 20], 920 + np.arange(500) * 20]), 2),  # two samples, then a 0.9 s pause
    "burst": (np.concatenate([np.arange(10) * 2, 38 + np.arange(500) * 20]), 9),  # 10 samples 2 ms apart
}


@pytest.mark.parametrize("start", sorted(STARTS))
def test_trim_startup_drops_exactly_the_start_up_samples(tmp_path, start):
    t_ms, first_kept = STARTS[start]
    t = t_ms.astype(np.int64) * 1_000_000
    path = write_rows(tmp_path / "t.csv", t, walk(t))
    log, rep = read_log(path, repair="trim-startup", report=True, max_gap_s=1)
    assert log.t_ns.tolist() == t[first_kept:].tolist()
    (action,) = rep.actions
    assert action.repair == "trim-startup" and action.count == first_kept
    assert action.first_lines == list(range(2, 2 + min(first_kept, 5)))


def test_trim_startup_leaves_a_steady_log_alone(tmp_path):
    t = np.arange(300) * 20_000_000
    path = write_rows(tmp_path / "t.csv", t, walk(t))
    log, rep = read_log(path, repair="trim-startup", report=True)
    assert len(log) == 300 and rep.actions == []


# --- one gap rule ------------------------------------------------------------------------------------

CONFIGS = {
    "default": PipelineConfig(),
    "smooth200": PipelineConfig(smooth_ms=200),
    "smooth200_resampled": PipelineConfig(smooth_ms=200, rate_hz=25),
    "count_smoothing": PipelineConfig(smoothing="count", rate_hz=50),
}


@pytest.mark.parametrize("name", sorted(CONFIGS))
@pytest.mark.parametrize("gap_s", [0.15, 0.2, 0.201, 0.22, 0.3, 0.301, 0.8])
def test_reader_and_front_end_follow_one_gap_rule(tmp_path, name, gap_s):
    """Whatever the reader lets through the front end runs on; where it stops, split-gaps splits."""
    config = CONFIGS[name]
    t = np.concatenate([np.arange(200), 200 + np.arange(200)]) * 20_000_000
    t[200:] += int(round(gap_s * 1e9)) - 20_000_000
    path = write_rows(tmp_path / "g.csv", t, walk(t))
    limit = config.read_gap_s()
    try:
        report = replay(path, config)
    except LogFormatError as exc:
        assert gap_s > limit and "repair 'split-gaps'" in str(exc)
    else:
        assert gap_s <= limit and report.segments == 1
    report = replay(path, config, repair=("split-gaps",))
    assert report.segments == (2 if gap_s > limit else 1)
    assert report.read["segments"] == ([[2, 201], [202, 401]] if gap_s > limit else [[2, 401]])


@pytest.mark.parametrize("gap_s", [0.15, 0.2, 0.201, 0.8])
def test_a_log_in_memory_follows_the_gap_rule_of_a_file(tmp_path, gap_s):
    """Replaying a SensorLog splits where replaying its file with split-gaps does, and refuses the
    same gaps without it; the oracle is the file's replay."""
    config = PipelineConfig(smooth_ms=200)
    t = np.concatenate([np.arange(200), 200 + np.arange(200)]) * 20_000_000
    t[200:] += int(round(gap_s * 1e9)) - 20_000_000
    log = SensorLog(t, walk(t))
    from_file = replay(write_rows(tmp_path / "g.csv", t, walk(t)), config, repair=("split-gaps",))
    in_memory = replay(log, config, repair=("split-gaps",))
    for field in ("segments", "samples", "windows", "kept", "rejected"):
        assert getattr(in_memory, field) == getattr(from_file, field), field
    if gap_s > config.read_gap_s():
        with pytest.raises(ValueError, match=r"gap before sample 200 .*split-gaps"):
            replay(log, config)
    else:
        assert replay(log, config).kept == in_memory.kept
    with pytest.raises(ValueError, match="only 'split-gaps'"):
        replay(log, config, repair=("sort",))


def test_split_at_gaps_cuts_at_every_longer_step_and_nowhere_else():
    """Brute force: the parts concatenate back to the log, and a part ends exactly where the next
    time step is longer than the limit."""
    rng = np.random.default_rng(3)
    t = np.cumsum(rng.choice([10, 20, 250, 400], size=300, p=[0.45, 0.45, 0.05, 0.05])) * 1_000_000
    log = SensorLog(t, walk(t), meta={"subject": "s"})
    parts = log.split_at_gaps(0.3)
    assert np.array_equal(np.concatenate([p.t_ns for p in parts]), t)
    ends = np.cumsum([len(p) for p in parts])[:-1]
    assert ends.tolist() == [i + 1 for i in range(len(t) - 1) if t[i + 1] - t[i] > 300_000_000]
    assert [p.meta for p in parts] == [{"subject": "s", "segment": i} for i in range(len(parts))]
    assert log.split_at_gaps(None) == [log] and log.split_at_gaps(1.0) == [log]


def test_read_gap_follows_the_smoothing_buffer():
    assert PipelineConfig().read_gap_s() == 0.3
    assert PipelineConfig(smooth_ms=200).read_gap_s() == 0.2
    assert PipelineConfig(smooth_ms=200, rate_hz=30).read_gap_s() == 0.3  # the resampled grid is regular
    assert PipelineConfig(smoothing="count", smooth_ms=100).read_gap_s() == 0.3


def test_what_the_reader_accepts_the_batch_front_end_runs(tmp_path):
    """The oracle for the rule: the batch front end itself, on a 0.2 s step with 200 ms smoothing."""
    t = np.concatenate([np.arange(100), 100 + np.arange(100)]) * 20_000_000
    t[100:] += 180_000_000  # a 0.2 s step
    config = PipelineConfig(smooth_ms=200)
    log = read_log(write_rows(tmp_path / "g.csv", t, walk(t)), max_gap_s=config.read_gap_s())
    run_front_end(log, config)
    t[100:] += 1_000_000  # 0.201 s: the smoothing buffer empties, so the reader must refuse
    with pytest.raises(ValueError, match="no sample within the 200 ms buffer"):
        run_front_end(SensorLog(t, walk(t)), config)
    with pytest.raises(LogFormatError, match="split-gaps"):
        read_log(write_rows(tmp_path / "g.csv", t, walk(t)), max_gap_s=config.read_gap_s())
    segments, _ = read_segments(tmp_path / "g.csv", max_gap_s=config.read_gap_s(), report=True)
    assert [len(s) for s in segments] == [100, 100]


# --- BOM, CRLF, umask ----------------------------------------------------------------------------------


@pytest.mark.parametrize("suffix", [".csv", ".csv.gz"])
@pytest.mark.parametrize("bom", [False, True])
@pytest.mark.parametrize("crlf", [False, True])
def test_bom_and_crlf_read_like_the_plain_file(tmp_path, suffix, bom, crlf):
    import gzip

    t = np.arange(50) * 20_000_000
    log = SensorLog(t, walk(t), meta={"device": "Pixel"})
    plain = write_log(log, tmp_path / f"plain{suffix}")
    raw = gzip.decompress(plain.read_bytes()) if suffix.endswith(".gz") else plain.read_bytes()
    assert raw.startswith(b"# meta:")
    if crlf:
        raw = raw.replace(b"\n", b"\r\n")
    if bom:
        raw = b"\xef\xbb\xbf" + raw
    other = tmp_path / f"other{suffix}"
    other.write_bytes(gzip.compress(raw) if suffix.endswith(".gz") else raw)
    back = read_log(other)
    np.testing.assert_array_equal(back.t_ns, log.t_ns)
    np.testing.assert_array_equal(back.acc, log.acc)
    assert back.meta == log.meta


def test_bom_before_the_header_without_meta(tmp_path):
    path = tmp_path / "b.csv"
    path.write_bytes(b"\xef\xbb\xbft_ns,ax,ay,az\r\n0,0,0,9.8\r\n20000000,0,0,9.8\r\n")
    assert read_log(path).t_ns.tolist() == [0, 20_000_000]


@pytest.mark.parametrize("mask", [0o022, 0o077, 0o002])
def test_written_files_follow_the_umask(tmp_path, mask):
    from stairsense.models import StairstepModel, make_stairstep_pipeline, save_model

    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 3))
    model = StairstepModel.train(make_stairstep_pipeline(k=2, gamma=1.0), X, (X[:, 0] > 0).astype(int),
                                 config=PipelineConfig(), feature_names=["a", "b", "c"])
    old = os.umask(mask)
    try:
        t = np.arange(10) * 20_000_000
        paths = [write_log(SensorLog(t, walk(t)), tmp_path / "w.csv.gz"), save_model(model, tmp_path / "m.model")]
    finally:
        os.umask(old)
    for path in paths:
        assert stat.S_IMODE(path.stat().st_mode) == 0o666 & ~mask, path
