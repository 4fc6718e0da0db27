"""Memory stays flat in the length of the log (issue 25: writing a 24 h 100 Hz log with ``simulate``
peaked at 2.9 GB; replaying it from Parquet grew too, see test_parquet_log).

``stairsense simulate`` writes :func:`simulate_chunks`'s chunks through :func:`write_log_chunks`, one
chunk in memory at a time; the file is the one :func:`write_log` writes for the whole log."""
import gzip
import json
import subprocess
import sys

import pyarrow.parquet as pq
import pytest

from stairsense.stream import read_log, read_steps, simulate, simulate_chunks
from stairsense.stream.io import write_log, write_log_chunks


@pytest.mark.parametrize("suffix", [".parquet", ".csv.gz", ".csv"])
def test_chunks_make_the_file_the_whole_log_makes(tmp_path, suffix):
    minutes = 25 if suffix == ".parquet" else 3  # Parquet: more than one row group of 2^16 samples
    whole = write_log(simulate(minutes=minutes, seed=5), tmp_path / f"whole{suffix}")
    parts = write_log_chunks(simulate_chunks(minutes=minutes, seed=5, chunk_s=25), tmp_path / f"parts{suffix}")
    content = (lambda p: gzip.open(p).read()) if suffix == ".csv.gz" else (lambda p: p.read_bytes())
    assert content(whole) == content(parts)  # gzip's framing may differ; the text may not
    assert read_steps(whole) is not None and read_steps(whole).t_ns.tolist() == read_steps(parts).t_ns.tolist()
    if suffix == ".parquet":  # whole row groups whatever the chunks (1,250 samples each): replay reads one at a time
        assert [pq.ParquetFile(parts).metadata.row_group(i).num_rows for i in range(2)] == [1 << 16, len(read_log(whole)) - (1 << 16)]


def test_chunks_must_record_the_same_streams(tmp_path):
    from dataclasses import replace

    first, second = list(simulate_chunks(minutes=1, seed=0, chunk_s=30))[:2]
    for suffix in (".csv", ".parquet"):
        with pytest.raises(ValueError, match="every chunk of a log must record the same streams"):
            write_log_chunks([first, replace(second, gyro=None)], tmp_path / f"x{suffix}")
        assert not (tmp_path / f"x{suffix}").exists()


def _simulate_peak_mb(tmp_path, minutes):
    """Peak resident memory of ``stairsense simulate --minutes minutes --rate 100`` in its own process."""
    code = ("import resource, sys\nfrom stairsense.cli import main\n"
            "assert main(['simulate', '--minutes', sys.argv[1], '--rate', '100', '--out', sys.argv[2], '--json']) == 0\n"
            "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)")
    done = subprocess.run([sys.executable, "-c", code, str(minutes), str(tmp_path / f"s{minutes}.parquet")],
                          capture_output=True, text=True, timeout=600, check=True)
    lines = done.stdout.strip().splitlines()
    assert json.loads("\n".join(lines[:-1]))["samples"] > minutes * 60 * 99
    return float(lines[-1])


@pytest.mark.skipif(sys.platform != "linux", reason="ru_maxrss is in KiB on Linux")
def test_simulate_memory_does_not_grow_with_the_length(tmp_path):
    short, long = _simulate_peak_mb(tmp_path, 20), _simulate_peak_mb(tmp_path, 200)
    # Ten times the samples (1.2 M at 100 Hz, 160 MB of columns): the whole-log writer took +380 MB.
    assert long < short + 60, (short, long)
    assert len(read_log(tmp_path / "s200.parquet")) > 1_190_000
