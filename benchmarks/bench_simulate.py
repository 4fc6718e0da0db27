"""Generation speed and memory of the synthetic sensor simulator (target: a 24 h, 50 Hz log well under a minute).

Side by side in this process, each timed over ``--repeats`` runs and reported as the MEDIAN (the
machine is shared, timings are noisy):

* ``simulate_chunks`` streaming the whole log in 10 min blocks (the way to write a day to disk);
* the noise floor: drawing the same number of standard normals the simulator draws per sample slot
  (14), i.e. the cost of the randomness alone, a lower bound no simulator with per-sample noise beats.

Peak memory is the tracemalloc peak (numpy reports its buffers to it) of a fresh subprocess:
streaming 1 h vs streaming ``--hours`` (bounded memory means the two are about equal) and
``simulate`` holding 1 h whole.

Run: ``.venv/bin/python benchmarks/bench_simulate.py [--hours 24] [--repeats 3]``; writes
``benchmarks/results/simulate.md``.
"""
from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from _common import markdown_table, median_time, python_stdout, write_results
from stairsense.stream import simulate_chunks

# The code these figures measure: a change there makes them stale (tests/test_measured_figures.py).
MEASURES = ("stream/simulate/", "stream/io/_csv_write.py", "stream/io/_atomic.py")
RESULTS = Path(__file__).resolve().parent / "results" / "simulate.md"
RATE_HZ = 50.0

CHILD = """
import sys, tracemalloc
from stairsense.stream import simulate, simulate_chunks
hours, mode = float(sys.argv[1]), sys.argv[2]
tracemalloc.start()
if mode == "chunks":
    n = sum(len(c) for c in simulate_chunks(minutes=60 * hours, rate_hz=50, seed=0, chunk_s=600))
else:
    n = len(simulate(minutes=60 * hours, rate_hz=50, seed=0))
print(n, tracemalloc.get_traced_memory()[1] / 2**20)
"""


def stream_day(hours: float) -> int:
    return sum(len(block) for block in simulate_chunks(minutes=60 * hours, rate_hz=RATE_HZ, seed=0, chunk_s=600))


def noise_floor(hours: float) -> int:
    rng = np.random.default_rng(0)
    n = int(hours * 3600 * RATE_HZ)
    for start in range(0, n, 30_000):
        rng.standard_normal((min(30_000, n - start), 14))
    return n


def peak_memory_mb(hours: float, mode: str) -> tuple[int, float]:
    out = python_stdout("-c", CHILD, str(hours), mode).split()
    return int(out[0]), float(out[1])


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--hours", type=float, default=24.0)
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args(argv)

    sim_s, n = median_time(lambda: stream_day(args.hours), args.repeats)
    print(f"simulate_chunks {args.hours:g} h: {sim_s:.1f} s, {n:,} samples", flush=True)
    floor_s, _ = median_time(lambda: noise_floor(args.hours), args.repeats)
    print(f"noise floor: {floor_s:.2f} s", flush=True)
    memory = {
        "simulate_chunks, 1 h": peak_memory_mb(1.0, "chunks"),
        f"simulate_chunks, {args.hours:g} h": peak_memory_mb(args.hours, "chunks"),
        "simulate (whole log), 1 h": peak_memory_mb(1.0, "whole"),
    }
    for name, (samples, mb) in memory.items():
        print(f"peak traced memory {name}: {mb:.0f} MB ({samples:,} samples)")

    simulated_s = args.hours * 3600
    lines = [
        "# Synthetic sensor simulator: generation speed and memory",
        "",
        f"A {args.hours:g} h log at {RATE_HZ:g} Hz (acc, gyro, rotation vector, linear acceleration, labels, "
        f"steps; default noise, jitter, drops): {n:,} samples. Median wall time of {args.repeats} repeats on a "
        "shared 2-core machine (noisy; compare the ratio within one run). Command: "
        f"`.venv/bin/python benchmarks/bench_simulate.py --hours {args.hours:g} --repeats {args.repeats}`.",
        "",
        *markdown_table(
            ["what", "median s", "M samples/s", "× real time", "time / noise floor"],
            [
                ("`simulate_chunks` (10 min blocks)", f"{sim_s:.1f}", f"{n / sim_s / 1e6:.2f}",
                 f"{simulated_s / sim_s:,.0f}", f"{sim_s / floor_s:.1f}"),
                ("noise floor: 14 standard normals per slot", f"{floor_s:.2f}", f"{n / floor_s / 1e6:.2f}",
                 f"{simulated_s / floor_s:,.0f}", "1.0"),
            ],
        ),
        "",
        "Peak traced memory (tracemalloc, includes numpy buffers) of a fresh process, after imports:",
        "",
        *markdown_table(["run", "samples", "MB"],
                        [(name, f"{samples:,}", f"{mb:.0f}") for name, (samples, mb) in memory.items()]),
        "",
        "Streaming memory does not grow with the samples; what grows with the log's length is the motion "
        "timeline drawn up front (foot strikes and per-step parameters, heading knots: about 0.5 MB per "
        "simulated hour).",
        "",
    ]
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    write_results(RESULTS, "\n".join(lines))
    print(f"wrote {RESULTS}")


if __name__ == "__main__":
    main()
