"""Energy simulator (issue 11): the §12.7.2 findings on the thesis's phone, the stage costs it is
built from, and the speed of pricing and of the budget optimiser.

Targets: energy of 300 configurations from cached workloads < 1 s; the optimiser warm < 10 s;
cold on the 21 HAPT subjects < 30 min on 2 cores (measured by the command printed in the table;
this script times the warm run and prices the cached records of the run given by ``--cache``).

Usage::

    .venv/bin/python benchmarks/bench_energy.py [--cache benchmarks/out/energy_cache] [--cold-log FILE]

Writes ``benchmarks/results/energy.md`` and ``benchmarks/results/energy_breakdown.png``.
"""
from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import json  # noqa: E402
import re  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
from _common import git_commit, load_average, markdown_table, median_time, write_results  # noqa: E402

from stairsense import PipelineConfig, window_dataset  # noqa: E402
from stairsense.export import build_onnx_model  # noqa: E402
from stairsense.export.energy import (  # noqa: E402
    DEFAULT_DAY,
    STAGES,
    estimate,
    load_profile,
    measure_workload,
    parse_day,
    plot_breakdown,
)
from stairsense._energy_optimise import price  # noqa: E402  (the optimiser's pricing step; not public API)
from stairsense.models import StairstepModel, make_stairstep_pipeline  # noqa: E402
from stairsense.stream import Activity, simulate  # noqa: E402

ROOT = Path(__file__).resolve().parent
# The code these figures measure: a change there makes them stale (tests/test_measured_figures.py).
# Log-file readers (`:!` excludes them) are not measured: this benchmark reads no log file.
MEASURES = ("export/", "stream/", ":!stream/_csv_*", ":!stream/_parquet.py", ":!stream/_convert.py",
            ":!stream/_import.py", "features/", "stairsense/_energy_optimise.py", "stairsense/pipeline.py")
RESULTS = ROOT / "results"
THESIS = PipelineConfig(rate_hz=30, orientation="rotvec", smoothing="time", segmentation="pattern")
VARIANTS = {
    "thesis: 30 Hz rotvec, smoothed, pattern": THESIS,
    "sliding 500 ms / 50 %": THESIS.replace(segmentation="sliding"),
    "no smoothing": THESIS.replace(smoothing="none"),
    "Mizell (acc only)": THESIS.replace(orientation="mizell"),
    "Linear (linacc + rotvec)": THESIS.replace(orientation="linear"),
}


def day_log():
    bouts = [(Activity.STANDING, 150), (Activity.WALKING, 150), (Activity.WALKING_UPSTAIRS, 40),
             (Activity.WALKING_DOWNSTAIRS, 40), (Activity.STANDING, 100), (Activity.WALKING, 100)]
    return simulate(rate_hz=30, seed=7, schedule=[(int(a), float(s)) for a, s in bouts])


def komd_graph():
    logs = [simulate(minutes=4, rate_hz=30, seed=100 + s) for s in range(3)]
    data = window_dataset(logs, THESIS)
    model = StairstepModel.train(make_stairstep_pipeline(), data.X, data.y, config=THESIS,
                                 feature_names=data.feature_names)
    proto, _, _ = build_onnx_model(model, "fp32")
    return proto, list(np.flatnonzero(model.pipeline[1].get_support())), list(model.feature_names)


def findings(lines):
    day = parse_day(DEFAULT_DAY)
    log = day_log()
    proto, selected, names = komd_graph()
    workloads = {label: measure_workload(log, cfg, proto, selected=selected, input_names=names)
                 for label, cfg in VARIANTS.items()}
    for name in ("nexus-2012", "pixel2-2017"):
        profile = load_profile(name)
        reports = {label: estimate(profile, w, day) for label, w in workloads.items()}
        if name == "nexus-2012":
            plot_breakdown(reports, RESULTS / "energy_breakdown.png")
        lines += [f"### {name}, day '{DEFAULT_DAY}'", ""]
        rows = [(label, *(f"{r.stage_mah[s]:.3f}" for s in STAGES), f"{r.total_mah:.2f}", f"{r.percent_per_day:.3f}")
                for label, r in reports.items()]
        lines += markdown_table(["configuration", *STAGES, "mAh/day", "% battery/day"], rows, "l" + "r" * 10)
        ours, sliding = reports["thesis: 30 Hz rotvec, smoothed, pattern"], reports["sliding 500 ms / 50 %"]
        raw = reports["no smoothing"]
        processing = [sum(r.stage_mah[s] for s in ("segmentation", "features", "inference")) for r in (ours, sliding)]
        lines += ["",
                  f"- Finding 1 (data-driven vs sliding windows, thesis: > 15 % saved): whole pipeline "
                  f"{100 * (1 - ours.total_mah / sliding.total_mah):.2f} % saved; segmentation + features + inference "
                  f"alone {100 * (1 - processing[0] / processing[1]):.1f} % saved.",
                  f"- Finding 2 (smoothing, thesis: about +0.26 %): +{100 * ours.stage_mah['smoothing'] / raw.total_mah:.4f} %.",
                  f"- Finding 3 (thesis: Mizell < ours < Linear): Mizell {reports['Mizell (acc only)'].total_mah:.2f}, ours "
                  f"{ours.total_mah:.2f}, Linear {reports['Linear (linacc + rotvec)'].total_mah:.2f} mAh/day.", ""]
        if name == "nexus-2012":
            delta_windows = sum((sliding.workload["counts"][a]["classified"] / sliding.workload["counts"][a]["seconds"]
                                 - ours.workload["counts"][a]["classified"] / ours.workload["counts"][a]["seconds"]) * s
                                for a, s in day.items())
            needed_s = 0.15 * sliding.total_mah * 3600 / (delta_windows * profile["cpu.active_ma"])
            lines += [f"Break-even: sliding windows classify {delta_windows:,.0f} more windows over the day; a 15 % saving "
                      f"would need {1e3 * needed_s:.1f} ms of phone CPU per classified window (the exported graph takes "
                      f"{ours.workload['inference']['features_us'] + ours.workload['inference']['classifier_us']:.0f} µs "
                      f"here × {profile['cpu.speed_ratio']:g} = "
                      f"{(ours.workload['inference']['features_us'] + ours.workload['inference']['classifier_us']) * profile['cpu.speed_ratio'] / 1e3:.2f} ms on the phone).", ""]
    stage_rows = [(label, f"{w.stages.smoothing_ns:.1f}", f"{w.stages.gravity_rotation_ns:.1f}",
                   f"{w.stages.segmentation_ns:.1f}", f"{w.inference.features_us:.1f}", f"{w.inference.classifier_us:.1f}",
                   w.inference.window_samples, w.inference.macs, w.inference.elementwise)
                  for label, w in workloads.items()]
    lines += ["### Desktop stage costs (medians; × the profile's `cpu.speed_ratio` on the phone)", ""]
    lines += markdown_table(["configuration", "smoothing ns/sample", "gravity+rotation ns/sample",
                             "segmentation ns/sample", "features µs/window (ORT)", "classifier µs/window (ORT)",
                             "window samples", "MACs", "element ops"], stage_rows, "l" + "r" * 8)
    lines.append("")


def paller(lines):
    """Finding 4: continuous accelerometer sampling with a wake lock on a Nexus One."""
    from stairsense.export.energy import ActivityCounts, StageCosts, Workload

    profile = load_profile("nexus-one-2010")
    reference = profile.reference_measurements[0]
    rows = []
    for rate in (5.0, 16.7, 50.0, 100.0):
        config = PipelineConfig(rate_hz=rate, orientation="mizell").to_dict()
        workload = Workload(config, {"idle": ActivityCounts(3600.0, int(3600 * rate))}, StageCosts(0.0, 0.0, 0.0), None)
        rows.append((f"{rate:g}", f"{estimate(profile, workload, {'idle': 3600.0}).percent_per_day:.2f}"))
    lines += ["### Finding 4: accelerometer sampling with a partial wake lock, Nexus One", "",
              f"Published: {reference['low']:g}–{reference['high']:g} % battery per hour ({reference['source']}).", "",
              *markdown_table(["rate Hz", "model % battery per hour"], rows, "rr"), "",
              "Inside the published range (±20 % band in the test), but the model's rate dependence is flat: the wake "
              "lock (43 mA) dominates and per-event delivery adds little, so the published spread over sampling speeds "
              "is not reproduced.", ""]


def pricing_speed(lines, cache: Path):
    records = [json.loads(p.read_text()) for p in sorted(cache.glob("front-end-*.json"))]
    if not records:
        lines += [f"No cached optimiser records in {cache}: run the optimiser first (see below).", ""]
        return
    profile, day = load_profile("nexus-2012"), parse_day(DEFAULT_DAY)
    seconds, candidates = median_time(lambda: price(records, profile, day), 7)
    per_300 = seconds / len(candidates) * 300
    fresh_s, _ = median_time(lambda: measure_workload(day_log(), THESIS), 3)
    lines += ["### Pricing from cached workloads", "",
              *markdown_table(["what", "median s", "target", "met"], [
                  (f"price {len(candidates)} configurations ({len(records)} cached front ends)", f"{seconds:.3f}", "", ""),
                  ("… scaled to 300 configurations", f"{per_300:.3f}", "< 1 s", "yes" if per_300 < 1 else "MISSED"),
                  ("peer: measure one workload from scratch (replay + stage timings, no model)", f"{fresh_s:.3f}", "", ""),
              ], "lrll"),
              "", f"Pricing one configuration from the cache is {fresh_s / (seconds / len(candidates)):,.0f}× faster than "
                  "measuring its workload.", ""]


#: The full run (21 subjects, 1,008 configurations) was started once in this session and stopped:
#: a record of how far it got, kept beside the measured rows (rerun to replace it).
FULL_RUN_NOTE = (
    "Full run, 21 subjects, 1,008 configurations, `--n-jobs 2`, cold: `stairsense energy optimise --budget 1%/day "
    "--data ../shared/data/uci-hapt/RawData --profile pixel2-2017 --n-jobs 2 --cache benchmarks/out/energy_cache_full`. "
    "Started at load average ~16 on the 2 shared cores: 4.5 min to prepare the 42 recordings (virtual sensors), then "
    "5 of 48 front ends in 10.6 min, and stopped there to free the machine. At that pace the whole run takes about "
    "100 min, so the < 30 min target is MISSED (not measured to the end). The --quick row is the measured cold run."
)


def optimiser_speed(lines, cache: Path, cold_log: Path | None):
    rows = []
    if cold_log and cold_log.is_file():
        text = cold_log.read_text()
        wall = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (\S+)", text)
        if wall:
            parts = [float(x) for x in wall.group(1).split(":")]
            secs = sum(p * 60 ** i for i, p in enumerate(reversed(parts)))
            rows.append(("cold, --quick (6 subjects, 576 configurations), --n-jobs 2, load average ~15", f"{secs:.0f}",
                         "< 30 min for 21 subjects", "not the target's run (6 subjects); see the note"))
    cmd = [sys.executable, "-m", "stairsense.cli", "energy", "optimise", "--budget", "1%/day", "--data",
           str(ROOT.parent.parent / "shared" / "data" / "uci-hapt" / "RawData"), "--profile", "pixel2-2017",
           "--quick", "--cache", str(cache), "--out", str(ROOT / "out" / "best_warm.json"), "--json"]
    if any(cache.glob("front-end-*.json")):
        started = time.perf_counter()
        done = subprocess.run(cmd, capture_output=True, text=True)
        warm = time.perf_counter() - started
        if done.returncode == 0:
            stats = json.loads(done.stdout)["cache"]
            rows.append((f"warm, --quick ({stats['cached']} of {stats['front_ends']} front ends cached)", f"{warm:.1f}",
                         "< 10 s", "yes" if warm < 10 and stats["computed"] == 0 else "MISSED"))
    lines += ["### Optimiser", "", *markdown_table(["run", "wall s", "target", "met"], rows, "lrll"), "",
              FULL_RUN_NOTE, ""]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache", type=Path, default=ROOT / "out" / "energy_cache")
    parser.add_argument("--cold-log", type=Path, default=ROOT / "out" / "optimise_quick.log",
                        help="output of `/usr/bin/time -v stairsense energy optimise ...` (cold run)")
    args = parser.parse_args(argv)
    lines = ["# Energy simulator (issue 11)", "",
             f"Command: `.venv/bin/python benchmarks/bench_energy.py`; commit {git_commit(ROOT)}; load average "
             f"{load_average()} (2 shared cores).", "",
             "Simulated day sample (standing, walking, stairs; 10 min at 30 Hz, seed 7), KOMD trained on three simulated "
             "people, exported fp32; every stage priced on the profile (sources in `export/energy/profiles/*.json`).", ""]
    findings(lines)
    paller(lines)
    pricing_speed(lines, args.cache)
    optimiser_speed(lines, args.cache, args.cold_log)
    write_results(RESULTS / "energy.md", "\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
