"""Read throughput of the canonical log reader vs pandas and numpy, and its memory when chunked.

Writes a synthetic 24 h, 50 Hz random-walk log (4.32 M rows, ``t_ns,ax,ay,az``) once as ``.csv`` and
``.csv.gz`` to a temporary folder, then times, side by side in this process:

* ``read_log`` (Arrow's CSV parser + full validation: finiteness, order, gaps, units);
* the same Arrow parser alone (what validation and assembly cost on top);
* ``pandas.read_csv`` (C parser, no validation);
* ``numpy.loadtxt`` (no validation).

Each is repeated and the MEDIAN wall time is reported, because the machine is shared and timings are
noisy. Peak memory is the peak RSS growth of a fresh subprocess that only imports, then reads.

Run: ``.venv/bin/python benchmarks/bench_read.py [--repeats 3] [--hours 24]``; writes
``benchmarks/results/read.md``.
"""
from __future__ import annotations

import argparse
import os
import tempfile
from pathlib import Path

from _common import ONE_THREAD_VARIABLES, load_average, markdown_table, median_wall_cpu, python_stdout, write_results

# One thread everywhere (Arrow's CPU pool follows OMP_NUM_THREADS): every candidate parses in the
# calling thread, so they compare like with like (bench_log_formats.py measures the reader's threads).
# Set before pyarrow is imported; the memory-measuring child processes inherit it.
for _name in ONE_THREAD_VARIABLES:
    os.environ[_name] = "1"

import numpy as np  # noqa: E402
import pyarrow as pa  # noqa: E402
import pyarrow.csv as pacsv  # noqa: E402
from stairsense.stream import read_log, write_log  # noqa: E402
from stairsense.stream import SensorLog  # noqa: E402


# The code these figures measure: a change there makes them stale (tests/test_measured_figures.py).
MEASURES = ("stream/io/", "stream/_log.py")
RESULTS = Path(__file__).resolve().parent / "results" / "read.md"

# Two measures. Heap: numpy's allocations (tracemalloc sees them) plus the peak of Arrow's own memory
# pool. VmHWM growth (Linux): peak resident memory, which also counts the pages of a memory-mapped
# input the kernel may drop at will. VmHWM rather than ru_maxrss: the latter keeps the parent's peak
# across fork + exec.
CHILD = """
import sys, tracemalloc
import pyarrow as pa
from stairsense.stream import iter_log_chunks, read_log
def hwm_mb():
    line = next(l for l in open("/proc/self/status") if l.startswith("VmHWM:"))
    return int(line.split()[1]) / 1024
base = hwm_mb()
path, mode = sys.argv[1], sys.argv[2]
tracemalloc.start()
if mode == "chunks":
    n = sum(len(c) for c in iter_log_chunks(path, chunk_rows=200_000))
else:
    n = len(read_log(path))
heap = (tracemalloc.get_traced_memory()[1] + pa.default_memory_pool().max_memory()) / 2**20
print(n, heap, hwm_mb() - base)
"""


def synthetic_log(hours: float, seed: int = 0) -> SensorLog:
    n = int(hours * 3600 * 50)
    rng = np.random.default_rng(seed)
    t = 1_700_000_000_000_000_000 + np.arange(n, dtype=np.int64) * 20_000_000
    acc = np.cumsum(rng.normal(0, 0.02, (n, 3)), axis=0)
    acc = acc - acc.mean(axis=0) + [0.0, 0.0, 9.81]
    return SensorLog(t, acc, meta={"device": "synthetic", "rate_hz": 50.0})


def arrow_parse_only(path: Path) -> int:
    """The parser read_log uses, with the same block size and types, minus validation and assembly."""
    opts = pacsv.ReadOptions(column_names=["t_ns", "ax", "ay", "az"], skip_rows=2, block_size=1 << 20,
                             use_threads=False)
    types = {"t_ns": pa.int64(), "ax": pa.float64(), "ay": pa.float64(), "az": pa.float64()}
    source = (pa.input_stream(str(path), compression="gzip") if path.name.endswith(".gz")
              else pa.memory_map(str(path)))
    with pacsv.open_csv(source, read_options=opts, convert_options=pacsv.ConvertOptions(column_types=types),
                        parse_options=pacsv.ParseOptions(quote_char=False)) as reader:
        return sum(batch.num_rows for batch in reader)


def peak_memory_mb(path: Path, mode: str) -> tuple[float, float]:
    """(heap peak, VmHWM growth) in MiB of a fresh process that reads ``path``."""
    out = python_stdout("-c", CHILD, str(path), mode).split()
    return float(out[1]), float(out[2])


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--hours", type=float, default=24.0)
    args = ap.parse_args(argv)
    import pandas as pd

    load_before = load_average()
    log = synthetic_log(args.hours)
    n = len(log)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for suffix in (".csv", ".csv.gz"):
            path = write_log(log, Path(tmp) / f"day{suffix}")
            mb = path.stat().st_size / 1e6
            candidates = {
                "stairsense read_log": lambda: read_log(path),
                "pyarrow open_csv (parse only)": lambda: arrow_parse_only(path),
                "pandas.read_csv (C, no checks)": lambda: pd.read_csv(path, comment="#", dtype={"t_ns": np.int64}),
            }
            if suffix == ".csv":  # loadtxt is an order of magnitude slower; once is enough to show it
                candidates["numpy.loadtxt (no checks)"] = lambda: np.loadtxt(path, delimiter=",", skiprows=2)
            timed = {}
            for name, fn in candidates.items():
                reps = 1 if name.startswith("numpy") else args.repeats
                wall, cpu = median_wall_cpu(fn, reps)
                timed[name] = (wall, cpu, reps)
                print(f"{suffix:8s} {name:32s} wall {wall:6.2f} s ({n / wall / 1e6:5.2f} M rows/s)  "
                      f"cpu {cpu:6.2f} s ({n / cpu / 1e6:5.2f} M rows/cpu-s)", flush=True)
            ours = timed["stairsense read_log"]
            for name, (wall, cpu, reps) in timed.items():
                rows.append((suffix, f"{mb:.0f}", name, reps, wall, n / wall / 1e6, cpu, n / cpu / 1e6,
                             wall / ours[0], cpu / ours[1]))
            assert np.array_equal(read_log(path).acc, log.acc)  # exact round trip on the benchmark data
        memory = [(suffix, mode, *peak_memory_mb(Path(tmp) / f"day{suffix}", mode))
                  for suffix in (".csv", ".csv.gz") for mode in ("chunks", "whole")]
        for suffix, mode, heap, hwm in memory:
            print(f"memory {suffix:8s} {mode:7s} heap peak {heap:6.0f} MiB, VmHWM growth {hwm:6.0f} MiB")

    lines = [
        "# Sensor-log read throughput",
        "",
        f"Synthetic {args.hours:g} h 50 Hz log, {n:,} rows of `t_ns,ax,ay,az`. Median wall time of the "
        f"repeats shown, on a shared 2-core machine (noisy: compare ratios within one run; CPU time is "
        "steadier than wall time under load); every thread pool, Arrow's included, at one thread. Command: "
        f"`.venv/bin/python benchmarks/bench_read.py`; load average {load_before} before, {load_average()} after.",
        "",
        *markdown_table(
            ["file", "MB", "reader", "repeats", "median wall s", "M rows/s", "median CPU s", "M rows/CPU-s",
             "wall / read_log", "CPU / read_log"],
            [(s, mb, name, r, *(f"{x:.2f}" for x in figures)) for s, mb, name, r, *figures in rows],
        ),
        "",
        "Memory of a fresh process (after imports) reading the whole file. Heap = numpy allocations "
        "(tracemalloc peak) + Arrow memory-pool peak; VmHWM = peak resident set growth, which for a plain "
        "`.csv` also counts the memory-mapped file pages the kernel can drop at will. The whole log "
        f"itself is {n * 32 / 2**20:.0f} MiB (t_ns + 3 float64 per row).",
        "",
        *markdown_table(
            ["file", "how", "heap peak MiB", "VmHWM growth MiB"],
            [(s, "iter_log_chunks(chunk_rows=200_000)" if m == "chunks" else "read_log", f"{h:.0f}", f"{w:.0f}")
             for s, m, h, w in memory],
        ),
        "",
    ]
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    write_results(RESULTS, "\n".join(lines))
    print(f"wrote {RESULTS}")


if __name__ == "__main__":
    main()
