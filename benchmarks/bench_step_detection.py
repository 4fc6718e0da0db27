"""Step detection on real recordings: pattern windows vs a tuned plain counter (issue 2).

Data: the 48 Oxford step-counter recordings with an accelerometer (Salvi et al., EMBC 2018; three
users, three phones, eight carrying positions, level walking; ``_Patient_*`` folders left out as
they have no user to hold out). Ground truth: the foot-switch steps (every 0→1 transition, as
``stats.js`` counts them), checked against the ``stats.csv`` totals.

Our detector counts the **kept** windows of the spec §3.5 pattern segmentation run by the batch
front end with ``orientation="vertical"`` (the recordings have no gyroscope or rotation vector).
The peer, run side by side on the same recordings, is :mod:`_plain_counter` (low-pass +
``find_peaks`` on ‖acc‖). Both count over the whole recording, as a phone's step counter would.

Both sides are tuned the same way on a grid, with explicit configurations (nothing relies on
``PipelineConfig`` defaults):

* ours: smoothing {time 150/200/300 ms, none} × rate {native, 50 Hz, 30 Hz} × τ_peak × τ_valley × hysteresis,
  in two families: absolute thresholds (m/s², the thesis's) and adaptive ones (multiples of the
  recent amplitude, ``threshold_window_s`` × ``threshold_floor``); standardization runs once per
  (smoothing, rate) and only the cheap segmentation per threshold;
* plain: cut-off × minimum peak distance × prominence; filtering once per cut-off.

The error of a recording is ``|count − truth| / truth``. The criterion is the smallest **mean**
error among the configurations whose **median** meets the 2 % target (the smallest median if none
does): the median alone happily gives up whole carrying positions. To show how much of the in-sample figure is overfitting, both
are also tuned **leave-one-user-out**: choose on two users, score the third; the pooled held-out
errors of the three folds are reported beside the in-sample best.

The chosen configuration is then re-run through ``stairsense.front_end`` (checking that
its window count equals the grid's) to get per-recording precision and recall of window-to-step
matching (``stairsense.match_steps``: a kept window is a hit when it holds a true step).

Run: ``.venv/bin/python benchmarks/bench_step_detection.py`` (about 2–4 min on a shared 2-core
machine). Writes ``benchmarks/results/step_detection.md`` and ``step_detection.png``.
"""
from __future__ import annotations

import argparse
import itertools
import time
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from _common import data_dir, git_commit, load_average, write_results
from _plain_counter import PlainCounter, plain_grid
from stairsense import PipelineConfig
from stairsense import front_end, match_steps
from stairsense.stream import (ThresholdAmplitude, load_oxford, oxford_recordings, resample, segment_steps,
                               standardize)

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
# The code these figures measure: a change there makes them stale (tests/test_measured_figures.py).
# Not measured (`:!` excludes them): the log-file readers, the simulator and the barometer path,
# since this benchmark reads no log file, simulates nothing and its data carry no air pressure.
MEASURES = ("stream/", ":!stream/io/", ":!stream/simulate/", ":!stream/_height.py", "stairsense/pipeline.py", "benchmarks/_plain_counter.py")
RESULTS = HERE / "results" / "step_detection.md"
PLOT = HERE / "results" / "step_detection.png"

# (smoothing, smooth_ms): the thesis's 300 ms buffer, two shorter ones, and no smoothing at all.
SMOOTHINGS = (("time", 150.0), ("time", 200.0), ("time", 300.0), ("none", 300.0))
RATES = (None, 50.0, 30.0)
THRESHOLDS = (0.2, 0.3, 0.5, 0.75, 1.0, 1.5)
HYSTERESES = (0.1, 0.2, 0.3, 0.5, 0.75)
# Adaptive thresholds are multiples of the amplitude: a smaller grid, over the amplitude's window
# and floor (PipelineConfig.threshold_window_s, threshold_floor).
ADAPTIVE_THRESHOLDS = (0.2, 0.3, 0.5, 0.75, 1.0)
ADAPTIVE_HYSTERESES = (0.1, 0.2, 0.3, 0.5)
AMPLITUDE_WINDOWS_S = (1.0, 2.0, 4.0)
AMPLITUDE_FLOORS = (0.5, 1.0)
TARGET = 0.02  # median absolute count error
CUTOFFS_HZ = (1.5, 2.0, 2.5, 3.0, 4.0, 5.0)
DISTANCES_S = (0.2, 0.25, 0.3, 0.35, 0.4)
PROMINENCES = (0.25, 0.5, 1.0, 1.5, 2.0, 3.0)
# A reference point reported beside the tuned ones, spelled out so it never depends on defaults
# (the defaults get a row of their own: what `stairsense` counts with no tuning at all).
REFERENCES = {
    "τ=0.3, h=0.1, time 300 ms, native (first look)": dict(
        peak_threshold=0.3, valley_threshold=0.3, hysteresis=0.1, smoothing="time", smooth_ms=300.0, rate_hz=None),
}
# The fields of PipelineConfig the grid varies.
FRONT_END_FIELDS = ("smoothing", "smooth_ms", "rate_hz")
THRESHOLD_FIELDS = ("threshold_window_s", "threshold_floor", "peak_threshold", "valley_threshold", "hysteresis")
# Folder names spell two positions two ways.
POSITION_NAMES = {"ArmBand": "Armband", "Backpocket": "BackPocket"}


def default_root() -> Path:
    return data_dir("oxford-stepcounter", "optimisation")


def load_recordings(root: Path):
    """The non-patient recordings and their foot-switch step totals (checked against stats.csv)."""
    with warnings.catch_warnings():
        # The loader warns about the patient folders without an accelerometer; we skip patients.
        warnings.simplefilter("ignore", UserWarning)
        folders = [p for p in oxford_recordings(root) if not p.name.startswith("_")]
    logs = [load_oxford(p) for p in folders]
    truth = np.array([len(log.steps) for log in logs])
    stats = np.array([log.meta.get("stats_steps", -1) for log in logs])
    disagree = [log.meta["recording"] for log, a, b in zip(logs, truth, stats) if a != b]
    return logs, truth, disagree


def vertical_config(**params) -> PipelineConfig:
    return PipelineConfig(orientation="vertical", segmentation="pattern", step_context=0, **params)


def threshold_families():
    """(amplitude window, floor) and the (τ_peak, τ_valley, h) grid of each; window 0: absolute."""
    yield (0.0, 1.0), THRESHOLDS, HYSTERESES
    for amplitude in itertools.product(AMPLITUDE_WINDOWS_S, AMPLITUDE_FLOORS):
        yield amplitude, ADAPTIVE_THRESHOLDS, ADAPTIVE_HYSTERESES


def pattern_grid(logs) -> dict[PipelineConfig, np.ndarray]:
    """Kept-window counts of every log for every configuration of the grid.

    Adaptive thresholds segment z / A with the same τ and h as absolute ones (their definition,
    tested in tests/test_frontend.py), so A is computed once per front end and amplitude setting;
    ``matching`` re-runs the chosen configuration whole and checks its counts.
    """
    counts = {}
    for (smoothing, smooth_ms), rate in itertools.product(SMOOTHINGS, RATES):
        base = vertical_config(smoothing=smoothing, smooth_ms=smooth_ms, rate_hz=rate)
        streams = [standardize(log if rate is None else resample(log, rate), base) for log in logs]
        for (window_s, floor), taus, hystereses in threshold_families():
            amplitude = base.replace(threshold_window_s=window_s, threshold_floor=floor)
            signals = [(s.t_ns, s.vertical if window_s == 0 else s.vertical / ThresholdAmplitude(amplitude).process(
                s.t_ns, s.vertical)) for s in streams]
            for tau_peak, tau_valley, h in itertools.product(taus, taus, hystereses):
                if min(tau_peak, tau_valley) < h:  # the segmenter refuses τ < h (see stream/_segment.py)
                    continue
                thresholds = dict(peak_threshold=tau_peak, valley_threshold=tau_valley, hysteresis=h)
                absolute = base.replace(**thresholds)
                counts[amplitude.replace(**thresholds)] = np.array(
                    [int(segment_steps(t, z, absolute).kept.sum()) for t, z in signals])
    return counts


def adaptive(config: PipelineConfig) -> bool:
    return config.threshold_window_s > 0


def count_errors(counts: np.ndarray, truth: np.ndarray) -> np.ndarray:
    return np.abs(counts - truth) / truth


def best_key(counts_by_key: dict, truth: np.ndarray, mask: np.ndarray):
    """The key with the smallest mean error over ``mask`` among those meeting the median target.

    Minimising the median alone picks configurations that give up whole carrying positions (a
    first run chose one with 4.8 % mean and 31 % worst error at 1.3 % median); the mean keeps the
    tail honest while the target still holds. Without any key meeting the target, the smallest
    median wins.
    """
    def score(key):
        err = count_errors(counts_by_key[key][mask], truth[mask])
        median = float(np.median(err))
        return (max(median, TARGET), float(np.mean(err)), median)

    return min(counts_by_key, key=score)


def smallest_median_key(counts_by_key: dict, truth: np.ndarray):
    """The key with the smallest median error over all logs, ties broken by the mean (for contrast)."""
    def score(key):
        err = count_errors(counts_by_key[key], truth)
        return (float(np.median(err)), float(np.mean(err)))

    return min(counts_by_key, key=score)


def leave_one_user_out(counts_by_key: dict, truth: np.ndarray, users: np.ndarray):
    """Per held-out user: the key chosen on the other users, and the held-out errors."""
    held_out = np.zeros(truth.size)
    folds = []
    for user in sorted(set(users)):
        test = users == user
        key = best_key(counts_by_key, truth, ~test)
        held_out[test] = count_errors(counts_by_key[key][test], truth[test])
        folds.append((user, int(test.sum()), key, held_out[test]))
    return held_out, folds


def matching(logs, config: PipelineConfig, expected_counts: np.ndarray):
    """Per log: matched windows, precision and recall, re-running the whole batch front end."""
    matched = np.zeros(len(logs), dtype=np.int64)
    for i, log in enumerate(logs):
        windows = front_end(log, config).windows
        kept = windows.kept
        if kept.sum() != expected_counts[i]:
            raise AssertionError(f"{log.meta['recording']}: front_end kept {kept.sum()} windows but the "
                                 f"grid's standardize + segment_steps counted {expected_counts[i]}")
        matched[i] = match_steps(log.steps.t_ns, windows.t_start_ns[kept], windows.t_end_ns[kept])
    return matched


# ------------------------------------------------------------------------------------------------
# report


def describe(config: PipelineConfig) -> str:
    return f"{describe_thresholds(config)}, smoothing={describe_front_end(config)}"


def describe_front_end(config: PipelineConfig, separator: str = ", ") -> str:
    rate = "native" if config.rate_hz is None else f"{config.rate_hz:g} Hz"
    smoothing = f"time {config.smooth_ms:g} ms" if config.smoothing == "time" else config.smoothing
    return f"{smoothing}{separator}{rate}"


def same_front_end(counts: dict, config: PipelineConfig) -> dict:
    """The grid's configurations with ``config``'s smoothing and rate."""
    return {k: v for k, v in counts.items() if all(getattr(k, n) == getattr(config, n) for n in FRONT_END_FIELDS)}


def describe_thresholds(config: PipelineConfig) -> str:
    text = f"τ_peak={config.peak_threshold:g}, τ_valley={config.valley_threshold:g}, h={config.hysteresis:g}"
    if adaptive(config):
        text += f" × amplitude ({config.threshold_window_s:g} s RMS, floor {config.threshold_floor:g} m/s²)"
    return text


def defaults_key() -> PipelineConfig:
    """The grid's key for ``PipelineConfig()``'s front end and thresholds."""
    default = PipelineConfig()
    return vertical_config(**{name: getattr(default, name) for name in FRONT_END_FIELDS + THRESHOLD_FIELDS})


def describe_plain(key) -> str:
    return f"cut-off {key[0]:g} Hz, distance {key[1]:g} s, prominence {key[2]:g} m/s²"


def stats_row(err: np.ndarray) -> str:
    return (f"{np.median(err):.2%} | {np.mean(err):.2%} | {np.percentile(err, 90):.2%} | {np.max(err):.2%} | "
            f"{np.mean(err <= 0.02):.0%}")


def plot(names, ours_err, plain_err, positions) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    order = np.lexsort((names, positions))
    x = np.arange(len(order))
    fig, ax = plt.subplots(figsize=(12, 4.5))
    ax.bar(x - 0.2, 100 * ours_err[order], 0.4, label="pattern windows (tuned)")
    ax.bar(x + 0.2, 100 * plain_err[order], 0.4, label="plain counter (tuned)")
    ax.axhline(2, color="k", lw=0.8, ls="--", label="2 % target (median)")
    ax.set_xticks(x, [n for n in np.asarray(names)[order]], rotation=90, fontsize=6)
    ax.set_ylabel("|count − truth| / truth (%)")
    ax.set_title("Oxford step counter, 48 recordings: absolute count error, in-sample tuned")
    ax.legend()
    fig.tight_layout()
    fig.savefig(PLOT, dpi=110)
    plt.close(fig)


@dataclass
class Findings:
    """Everything the report prints: per-recording facts, both detectors' grids and their choices."""

    names: np.ndarray
    positions: np.ndarray
    users: np.ndarray
    truth: np.ndarray
    disagree: list
    ours_counts: dict
    plain_counts: dict
    ours_best: PipelineConfig
    plain_best: tuple
    ours_err: np.ndarray
    plain_err: np.ndarray
    ours_louo: np.ndarray
    plain_louo: np.ndarray
    ours_folds: list
    plain_folds: list
    matched: np.ndarray
    kept: np.ndarray


def evaluate_detectors(logs, truth, disagree) -> Findings:
    """Tune both detectors on every recording, score them in-sample and leave-one-user-out."""
    users = np.array([log.meta["subject"] for log in logs])
    everyone = np.ones(len(logs), dtype=bool)
    ours_counts = pattern_grid(logs)
    plain_counts = plain_grid(logs, CUTOFFS_HZ, DISTANCES_S, PROMINENCES)
    ours_best = best_key(ours_counts, truth, everyone)
    plain_best = best_key(plain_counts, truth, everyone)
    ours_louo, ours_folds = leave_one_user_out(ours_counts, truth, users)
    plain_louo, plain_folds = leave_one_user_out(plain_counts, truth, users)
    # The counter class must count what the grid counted for its chosen parameters.
    check = PlainCounter(*plain_best).step_indices(logs[0].t_ns, logs[0].acc).size
    assert check == plain_counts[plain_best][0], (check, plain_counts[plain_best][0])
    return Findings(
        names=np.array([log.meta["recording"] for log in logs]),
        positions=np.array([POSITION_NAMES.get(log.meta["placement"], log.meta["placement"]) for log in logs]),
        users=users, truth=truth, disagree=disagree, ours_counts=ours_counts, plain_counts=plain_counts,
        ours_best=ours_best, plain_best=plain_best,
        ours_err=count_errors(ours_counts[ours_best], truth), plain_err=count_errors(plain_counts[plain_best], truth),
        ours_louo=ours_louo, plain_louo=plain_louo, ours_folds=ours_folds, plain_folds=plain_folds,
        matched=matching(logs, ours_best, ours_counts[ours_best]), kept=ours_counts[ours_best],
    )


def summary_section(f: Findings, run_s: float, load_before) -> list[str]:
    truth = f.truth
    out = [
        "# Step detection on the Oxford step-counter recordings",
        "",
        f"`benchmarks/bench_step_detection.py` (commit {git_commit(REPO)}); {len(truth)} recordings "
        f"(3 users, 3 phones, {len(set(f.positions))} positions), {truth.sum():,} foot-switch steps. "
        + ("Foot-switch totals equal stats.csv for every recording." if not f.disagree
           else f"Foot-switch totals differ from stats.csv for {f.disagree}."),
        f"Grid: ours {len(f.ours_counts)} configurations (orientation=vertical, pattern segmentation, "
        f"min/max step 0.3/2.0 s), plain counter {len(f.plain_counts)}. Error = |count − truth| / truth per "
        f"recording; the criterion is the smallest mean among configurations whose median meets the 2 % target "
        f"(the smallest median if none does). "
        f"Run time {run_s:.0f} s, load average before {load_before}.",
        "",
        "## Summary",
        "",
        "| detector | configuration | median | mean | p90 | max | recordings ≤ 2 % |",
        "|---|---|---:|---:|---:|---:|---:|",
        f"| **pattern windows, in-sample best** | {describe(f.ours_best)} | {stats_row(f.ours_err)} |",
        f"| pattern windows, leave-one-user-out | chosen on 2 users, scored on the 3rd | {stats_row(f.ours_louo)} |",
        f"| plain counter, in-sample best | {describe_plain(f.plain_best)} | {stats_row(f.plain_err)} |",
        f"| plain counter, leave-one-user-out | chosen on 2 users, scored on the 3rd | {stats_row(f.plain_louo)} |",
    ]
    for name, counts, fmt in (("pattern windows", f.ours_counts, describe),
                              ("plain counter", f.plain_counts, describe_plain)):
        key = smallest_median_key(counts, truth)
        out.append(f"| {name}, smallest median (in-sample) | {fmt(key)} | {stats_row(count_errors(counts[key], truth))} |")
    default = defaults_key()
    subsets = (("absolute thresholds only", {k: v for k, v in f.ours_counts.items() if not adaptive(k)}),
               ("adaptive thresholds only", {k: v for k, v in f.ours_counts.items() if adaptive(k)}),
               (f"default front end ({describe_front_end(default)}), thresholds tuned",
                same_front_end(f.ours_counts, default)))
    for label, subset in subsets:
        best = best_key(subset, truth, np.ones(truth.size, dtype=bool))
        held_out, _ = leave_one_user_out(subset, truth, f.users)
        out += [f"| pattern windows, {label}, in-sample best | {describe(best)} | {stats_row(count_errors(subset[best], truth))} |",
                f"| pattern windows, {label}, leave-one-user-out | chosen on 2 users, scored on the 3rd | "
                f"{stats_row(held_out)} |"]
    if default not in f.ours_counts:
        raise AssertionError(f"PipelineConfig()'s thresholds ({describe(default)}) are not in the grid: extend it")
    out.append(f"| **pattern windows, `PipelineConfig()` defaults (no tuning)** | {describe(default)} | "
               f"{stats_row(count_errors(f.ours_counts[default], truth))} |")
    for label, params in REFERENCES.items():
        config = vertical_config(**params)
        out.append(f"| pattern windows, reference | {label} | {stats_row(count_errors(f.ours_counts[config], truth))} |")
    precision, recall = f.matched / np.maximum(f.kept, 1), f.matched / truth
    out += [
        "",
        f"Window-to-step matching of the in-sample best (`match_steps`: a kept window is a hit when it "
        f"holds a true step): pooled precision {f.matched.sum() / f.kept.sum():.1%}, recall "
        f"{f.matched.sum() / truth.sum():.1%}; per recording median precision {np.median(precision):.1%}, "
        f"median recall {np.median(recall):.1%}. Kept {f.kept.sum():,} windows for {truth.sum():,} steps.",
    ]
    return out


def folds_section(f: Findings) -> list[str]:
    out = [
        "",
        "## Leave-one-user-out folds",
        "",
        "| held-out user | recordings | ours: chosen on the others | ours held-out median / mean | "
        "plain: chosen on the others | plain held-out median / mean |",
        "|---|---:|---|---:|---|---:|",
    ]
    for (user, n, key, err), (_, _, pkey, perr) in zip(f.ours_folds, f.plain_folds):
        out.append(f"| {user} | {n} | {describe(key)} | {np.median(err):.2%} / {np.mean(err):.2%} | "
                   f"{describe_plain(pkey)} | {np.median(perr):.2%} / {np.mean(perr):.2%} |")
    return out


def positions_section(f: Findings) -> list[str]:
    out = [
        "",
        "## Per carrying position (in-sample best of each detector)",
        "",
        "| position | recordings | ours median | ours mean | plain median | plain mean |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for pos in sorted(set(f.positions)):
        m = f.positions == pos
        out.append(f"| {pos} | {m.sum()} | {np.median(f.ours_err[m]):.2%} | {np.mean(f.ours_err[m]):.2%} | "
                   f"{np.median(f.plain_err[m]):.2%} | {np.mean(f.plain_err[m]):.2%} |")
    return out


def variants_section(f: Findings) -> list[str]:
    out = [
        "",
        "## Front-end variants (best thresholds for each smoothing × rate)",
        "",
        "| smoothing | rate | best thresholds | median | mean | p90 | max | recordings ≤ 2 % |",
        "|---|---|---|---:|---:|---:|---:|---:|",
    ]
    everyone = np.ones(len(f.truth), dtype=bool)
    for (smoothing, smooth_ms), rate in itertools.product(SMOOTHINGS, RATES):
        subset = same_front_end(f.ours_counts, vertical_config(smoothing=smoothing, smooth_ms=smooth_ms, rate_hz=rate))
        key = best_key(subset, f.truth, everyone)
        out.append(f"| {describe_front_end(key, ' | ')} | {describe_thresholds(key)} | "
                   f"{stats_row(count_errors(subset[key], f.truth))} |")
    return out


def recordings_section(f: Findings) -> list[str]:
    out = [
        "",
        "## Per recording (in-sample best of each detector)",
        "",
        "| recording | true steps | ours kept | ours error | precision | recall | plain count | plain error |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    precision, recall = f.matched / np.maximum(f.kept, 1), f.matched / f.truth
    for i in np.argsort(f.names):
        out.append(f"| {f.names[i]} | {f.truth[i]} | {f.kept[i]} | {f.ours_err[i]:.2%} | {precision[i]:.1%} | "
                   f"{recall[i]:.1%} | {f.plain_counts[f.plain_best][i]} | {f.plain_err[i]:.2%} |")
    return out


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--root", type=Path, default=None,
                        help="the Oxford 'optimisation' folder (default: $STAIRSENSE_DATA/oxford-stepcounter/optimisation "
                             "or ../shared/data/...)")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    load_before = load_average()

    logs, truth, disagree = load_recordings(args.root or default_root())
    print(f"{len(logs)} recordings, {truth.sum()} true steps; tuning ...", flush=True)
    findings = evaluate_detectors(logs, truth, disagree)
    out = (summary_section(findings, time.perf_counter() - started, load_before) + folds_section(findings)
           + positions_section(findings) + variants_section(findings) + recordings_section(findings))
    plot(findings.names, findings.ours_err, findings.plain_err, findings.positions)
    out += ["", f"![per-recording errors]({PLOT.name})"]
    text = "\n".join(out) + "\n"
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    write_results(RESULTS, text)
    print(text)


if __name__ == "__main__":
    main()
