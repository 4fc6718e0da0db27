"""Start-up of the ``stairsense`` command, and replay of a two-hour log, as whole processes beside ``pip``.

Issue 26 item 5 targets: ``stairsense --help``, ``stairsense replay --help`` and ``python -c "import
stairsense"`` within 0.35 s of wall time and 1.5× ``python -m pip --version`` (a command line every
Python user starts; the peer), the two ``--help`` within 80 MiB of peak RSS; and a replay of a 2 h
50 Hz all-sensor log (``stairsense simulate --minutes 120 --rate 50 --seed 1``) at ≥ 300 k
samples/s end to end: the whole process, start-up included (360,000 samples in ≤ 1.2 s).

The log is simulated once into a temporary folder and converted to Parquet (``stairsense convert``).
Every command then runs as a fresh process, once untimed (which also writes the bytecode caches an
installed package has: this machine sets ``PYTHONDONTWRITEBYTECODE``, which the children do not
inherit), then ``--repeats`` rounds, each round every command once in turn, so a change in the
machine's load hits all of them alike. Wall time is ``time.perf_counter`` around start and
``os.wait4``; CPU time and peak RSS are that child's own ``ru_utime + ru_stime`` and ``ru_maxrss``
from ``os.wait4`` (``RUSAGE_CHILDREN`` would keep the largest child's peak). Medians, with min and max beside them.

Run: ``.venv/bin/python benchmarks/bench_startup.py [--repeats 7]``; writes
``benchmarks/results/startup.md``.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import git_commit, load_average, markdown_table, write_results

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results" / "startup.md"
# The code these figures measure: whatever the command imports on the way to --help or a replay
# (tests/test_measured_figures.py); the server and the learners' internals are never imported.
MEASURES = ("stairsense/", ":!stairsense/serve/", "stream/", "features/", "models/__init__.py",
            "export/__init__.py", "export/energy/", "pyproject.toml")
STAIRSENSE = Path(sys.executable).with_name("stairsense")
WALL_TARGET_S, RATIO_TARGET, RSS_TARGET_MIB, RATE_TARGET = 0.35, 1.5, 80, 300_000


def run_once(argv: list[str], env: dict[str, str]) -> tuple[float, float, float]:
    """(wall seconds, CPU seconds, peak RSS MiB) of one process running ``argv``; raises with its stderr if it
    fails."""
    with tempfile.TemporaryFile() as err:
        started = time.perf_counter()
        child = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=err, env=env)
        _, status, usage = os.wait4(child.pid, 0)
        wall = time.perf_counter() - started
        child.returncode = os.waitstatus_to_exitcode(status)
        if child.returncode:
            err.seek(0)
            raise SystemExit(f"{' '.join(argv)} exited with {child.returncode}: {err.read().decode()[-2000:]}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024  # Linux: KiB


def verdict(ok: bool) -> str:
    return "met" if ok else "**MISSED**"


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=7, help="timed rounds (default 7)")
    ap.add_argument("--minutes", type=float, default=120.0, help="length of the simulated log (default 120)")
    ap.add_argument("--out", type=Path, default=RESULTS, help=f"results page (default {RESULTS.relative_to(ROOT)})")
    args = ap.parse_args(argv)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    load_before = load_average()

    with tempfile.TemporaryDirectory() as tmp:
        csv, parquet = Path(tmp) / "long.csv.gz", Path(tmp) / "long.parquet"
        subprocess.run([str(STAIRSENSE), "simulate", "--minutes", f"{args.minutes:g}", "--rate", "50", "--seed", "1",
                        "--out", str(csv)], check=True, capture_output=True, env=env)
        subprocess.run([str(STAIRSENSE), "convert", str(csv), str(parquet)], check=True, capture_output=True, env=env)
        commands = {
            "`python -m pip --version` (the peer)": [sys.executable, "-m", "pip", "--version"],
            '`python -c "import stairsense"`': [sys.executable, "-c", "import stairsense"],
            "`stairsense --help`": [str(STAIRSENSE), "--help"],
            "`stairsense replay --help`": [str(STAIRSENSE), "replay", "--help"],
            "`stairsense replay long.csv.gz`": [str(STAIRSENSE), "replay", str(csv)],
            "`stairsense replay long.parquet`": [str(STAIRSENSE), "replay", str(parquet)],
        }
        samples = {}
        for name, command in commands.items():
            run_once(command, env)  # untimed: bytecode caches, page cache
            if "replay" in command and "--help" not in command:
                report = subprocess.run([*command, "--json"], check=True, capture_output=True, text=True, env=env)
                samples[name] = json.loads(report.stdout)["samples"]
        walls = {name: [] for name in commands}
        cpus = {name: [] for name in commands}
        peaks = {name: [] for name in commands}
        for round_ in range(args.repeats):
            for name, command in commands.items():
                wall, cpu, peak = run_once(command, env)
                walls[name].append(wall)
                cpus[name].append(cpu)
                peaks[name].append(peak)
            print(f"round {round_ + 1}/{args.repeats}: " + ", ".join(f"{w[-1]:.2f}" for w in walls.values()), flush=True)

    median = {name: statistics.median(w) for name, w in walls.items()}
    peer = median["`python -m pip --version` (the peer)"]
    rows = []
    for name in commands:
        wall, cpu, rss = median[name], statistics.median(cpus[name]), statistics.median(peaks[name])
        if name in samples:
            rate = samples[name] / wall
            target = f"≥ {RATE_TARGET / 1000:.0f} k samples/s end to end: {verdict(rate >= RATE_TARGET)}"
            rate_cell = f"{rate / 1000:,.0f} k ({samples[name] / cpu / 1000:,.0f} k per CPU-s)"
        elif "pip" in name:
            target, rate_cell = "", ""
        else:
            checks = [wall <= WALL_TARGET_S, wall / peer <= RATIO_TARGET]
            target = f"≤ {WALL_TARGET_S} s and ≤ {RATIO_TARGET}× pip"
            if "--help" in name:
                checks.append(rss <= RSS_TARGET_MIB)
                target += f", ≤ {RSS_TARGET_MIB} MiB"
            target += f": {verdict(all(checks))}"
            rate_cell = ""
        rows.append((name, f"{wall:.3f}", f"{min(walls[name]):.3f}–{max(walls[name]):.3f}", f"{wall / peer:.2f}×",
                     f"{cpu:.3f}", f"{rss:.0f}", f"{max(peaks[name]):.0f}", rate_cell, target))
        print(f"{name:40s} median {wall:.3f} s ({wall / peer:.2f}× pip), CPU {cpu:.3f} s, peak RSS {rss:.0f} MiB "
              f"{rate_cell}")

    n = next(iter(samples.values()))
    lines = [
        "# Start-up and end-to-end replay, whole processes",
        "",
        f"Each command a fresh process, {args.repeats} rounds after one untimed run, the commands in turn within a "
        f"round; median wall time (perf_counter around start and `os.wait4`) with min–max, the child's CPU time "
        f"(user + system, all its threads) and its own peak RSS from `os.wait4`. Under load, wall time measures the "
        f"share of the cores a process got; CPU time is the work it did. The log: `stairsense simulate --minutes {args.minutes:g} --rate 50 --seed 1` "
        f"({n:,} samples, every stream the simulator records, `.csv.gz`), and `stairsense convert` of it to "
        f"`.parquet`; a replay's rate is its samples over the whole process's wall time, start-up included. "
        f"Command: `.venv/bin/python benchmarks/bench_startup.py --repeats {args.repeats}`; commit "
        f"{git_commit(ROOT)}; CPython {platform.python_version()}, {os.cpu_count()} cores shared with other jobs; "
        f"load average {load_before} before, {load_average()} after. Bytecode caches written (the untimed run), as "
        "in an installed package; thread pools at their defaults.",
        "",
        *markdown_table(["command", "median wall s", "min–max s", "median / pip", "median CPU s",
                         "peak RSS MiB (median)", "peak RSS MiB (max)", "samples/s (wall)", "target"], rows,
                        align="lrrrrrrrl"),
    ]
    write_results(args.out, "\n".join(lines) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
