"""Which orientation should ``auto`` pick when a gyroscope is present: ``ahrs`` or ``vertical``?

Issue 9: on a real pocket recording of 10-stair trials, ``ahrs`` (Madgwick acc + gyro) found 6 steps
per trial where ``vertical`` (accelerometer only) found 10. The segmentation runs on the vertical
axis only, so the two methods differ only in how well they estimate Up. This script counts step
windows on stairs with both methods:

* UCI HAPT (real stairs, waist phone, 50 Hz native and 30 Hz): kept step windows whose middle lies
  in a WALKING_UPSTAIRS / DOWNSTAIRS / WALKING segment (no per-step truth in UCI: the ratio
  ahrs / vertical is the figure, and a fall below 1 is what the issue reported);
* the simulator (per-step truth) at 20, 30, 50 and 100 Hz in four placements: recall of true
  stair steps (a true step is found when a kept window contains it) and windows per true step.

Writes ``benchmarks/results/orientation.md``.

Usage: ``python benchmarks/bench_orientation.py [--people 4] [--minutes 6]``
"""
from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
from _common import data_dir, git_commit, load_average, markdown_table, write_results
from _robust_data import SIM_PLACEMENTS

from stairsense import PipelineConfig
from stairsense.stream import Activity, load_uci_hapt, resample, run_front_end, simulate

ROOT = Path(__file__).resolve().parents[1]
# Log-file readers (`:!` excludes them) are not measured: this benchmark reads no log file.
MEASURES = ("stream/", ":!stream/io/", "benchmarks/_robust_data.py")
METHODS = ("vertical", "ahrs")
SEGMENTS = {"upstairs": Activity.WALKING_UPSTAIRS, "downstairs": Activity.WALKING_DOWNSTAIRS,
            "walking": Activity.WALKING}


def _windows(log, method, rate):
    if rate is not None:
        log = resample(log, rate)
    result = run_front_end(log, PipelineConfig(rate_hz=rate, orientation=method))
    w = result.windows.select(result.windows.kept)
    return log, w.t_start_ns, w.t_end_ns


def uci_counts(rates):
    logs = load_uci_hapt(data_dir("uci-hapt", "RawData"))
    counts = {(rate, m, s): 0 for rate in rates for m in METHODS for s in SEGMENTS}
    for log in logs:
        for rate in rates:
            for method in METHODS:
                used, start, end = _windows(log, method, rate)
                middle = (start + end) // 2
                label = used.label[np.clip(np.searchsorted(used.t_ns, middle), 0, used.t_ns.size - 1)]
                for name, code in SEGMENTS.items():
                    counts[(rate, method, name)] += int(np.sum(label == int(code)))
    return counts


def simulated_recall(rates, people, minutes):
    stair_kinds = [int(Activity.WALKING_UPSTAIRS), int(Activity.WALKING_DOWNSTAIRS)]
    out = {}
    for rate in rates:
        for placement in SIM_PLACEMENTS:
            tally = {m: [0, 0, 0] for m in METHODS}  # found stair steps, true stair steps, windows on stairs
            for p in range(people):
                log = simulate(minutes=minutes, rate_hz=rate, seed=500 + 7 * p, placement=placement)
                stair = np.isin(log.steps.kind, stair_kinds)
                truth = log.steps.t_ns[stair]
                for method in METHODS:
                    _, start, end = _windows(log, method, None)
                    inside = np.searchsorted(truth, start, side="left") < np.searchsorted(truth, end, side="left")
                    first = np.searchsorted(start, truth, side="right") - 1
                    found = (first >= 0) & (truth < end[np.maximum(first, 0)])
                    tally[method][0] += int(found.sum())
                    tally[method][1] += int(truth.size)
                    tally[method][2] += int(inside.sum())
            out[(rate, placement)] = tally
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--people", type=int, default=4)
    parser.add_argument("--minutes", type=float, default=6.0)
    args = parser.parse_args(argv)
    started = time.perf_counter()
    uci_rates = (None, 30.0)
    uci = uci_counts(uci_rates)
    sim = simulated_recall((20.0, 30.0, 50.0, 100.0), args.people, args.minutes)

    lines = ["# Orientation default: `ahrs` versus `vertical` step counts on stairs", "",
             f"Command: `.venv/bin/python benchmarks/bench_orientation.py --people {args.people} --minutes "
             f"{args.minutes:g}` at commit `{git_commit(ROOT)}`; load average {load_average()}.", "",
             "Segmentation runs on the vertical axis only, so the methods differ only in how they estimate Up: "
             "`vertical` takes the 500 ms mean of the accelerometer as gravity, `ahrs` rotates by a Madgwick "
             "acc + gyro quaternion.", "",
             "## UCI HAPT (real stairs, waist phone): kept step windows by segment", ""]
    rows = []
    for rate in uci_rates:
        for name in SEGMENTS:
            v, a = uci[(rate, "vertical", name)], uci[(rate, "ahrs", name)]
            rows.append((f"{rate:g} Hz" if rate else "50 Hz (native)", name, v, a, f"{a / v:.3f}" if v else "–"))
    lines += markdown_table(["rate", "segment", "vertical", "ahrs", "ahrs / vertical"], rows, "llrrr")
    lines += ["", "## Simulator (per-step truth): stair steps found", "",
              f"{args.people} simulated people × {args.minutes:g} min per placement and rate (seeds 500 + 7p)."
              " Recall: true stair steps inside a kept window.", ""]
    rows = []
    for (rate, placement), tally in sim.items():
        (fv, tv, wv), (fa, ta, wa) = tally["vertical"], tally["ahrs"]
        rows.append((f"{rate:g}", placement, tv, f"{fv / tv:.3f}", f"{fa / ta:.3f}", wv, wa))
    lines += markdown_table(["rate (Hz)", "placement", "true stair steps", "recall vertical", "recall ahrs",
                             "windows on stairs vertical", "windows on stairs ahrs"], rows, "llrrrrr")
    lines += ["", f"Total wall time {time.perf_counter() - started:.0f} s.", ""]
    write_results(ROOT / "benchmarks" / "results" / "orientation.md", "\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
