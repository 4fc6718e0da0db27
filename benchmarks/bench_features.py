"""Throughput of the Table 12.1 window features, side by side with tsfresh.

Measures, in one process and on the same random windows (10–60 samples each):

* ``window_features`` (batch, vectorised over all windows, 79 features);
* tsfresh ``extract_features`` with ``n_jobs=0`` (single core) computing only the comparable
  statistics (mean, standard_deviation, variance, minimum, maximum) of the same five rows
  x, y, z, ‖v‖₂, (x + y)/2 — 25 values per window instead of our 79. tsfresh is slow, so it runs
  on a subset; its long-format DataFrame is built outside the timed region (in its favour);
* ``WindowFeatureAccumulator.push`` (the pure-Python per-sample form), as samples per second.

Every figure is the median over ``--repeats`` runs, both wall-clock and CPU time of this process
(everything here is single-threaded, so CPU time is the less contention-sensitive measure on a
shared machine). Writes ``benchmarks/results/features.md``.

Run: ``.venv/bin/python benchmarks/bench_features.py`` (targets: ≥ 100,000 windows/s and
≥ 50× tsfresh's windows/s on one core).
"""
from __future__ import annotations

import argparse
import os
import platform
import warnings
from pathlib import Path

import numpy as np

from _common import median_wall_cpu, write_results
from stairsense.features import WindowFeatureAccumulator
from stairsense.features import FEATURE_NAMES, window_features

# The code these figures measure: a change there makes them stale (tests/test_measured_figures.py).
MEASURES = ("features/",)
RESULTS = Path(__file__).resolve().parent / "results" / "features.md"
TSFRESH_STATS = {"mean": None, "standard_deviation": None, "variance": None, "minimum": None, "maximum": None}


def random_windows(n_windows: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    counts = rng.integers(10, 61, size=n_windows)
    offsets = np.concatenate([[0], np.cumsum(counts)])
    return rng.normal(0.0, 2.0, size=(offsets[-1], 3)), offsets


def tsfresh_frame(samples: np.ndarray, offsets: np.ndarray):
    """Long format (id, time, kind, value) of the five rows, as tsfresh expects."""
    import pandas as pd

    x, y, z = samples.T
    rows = {"x": x, "y": y, "z": z, "norm": np.sqrt(x * x + y * y + z * z), "horiz": (x + y) / 2}
    counts = np.diff(offsets)
    ids = np.repeat(np.arange(counts.size), counts)
    times = np.arange(samples.shape[0]) - np.repeat(offsets[:-1], counts)
    return pd.concat(
        [pd.DataFrame({"id": ids, "time": times, "kind": kind, "value": values}) for kind, values in rows.items()],
        ignore_index=True,
    )


def run_tsfresh(frame):
    from tsfresh import extract_features

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return extract_features(
            frame, column_id="id", column_sort="time", column_kind="kind", column_value="value",
            default_fc_parameters=TSFRESH_STATS, n_jobs=0, disable_progressbar=True,
        )


def check_tsfresh_agrees(result, ours: np.ndarray) -> None:
    """The compared statistics are the same numbers (tsfresh's std is also ddof = 0)."""
    for kind in ("x", "norm"):
        for stat, ours_name in (("mean", "mean"), ("standard_deviation", "std"), ("variance", "var")):
            np.testing.assert_allclose(
                result[f"{kind}__{stat}"].to_numpy(), ours[:, FEATURE_NAMES.index(f"{ours_name}_{kind}")], rtol=1e-9
            )


def push_rate(samples: np.ndarray, offsets: np.ndarray, repeats: int) -> tuple[float, float]:
    rows = samples.tolist()
    bounds = list(zip(offsets[:-1].tolist(), offsets[1:].tolist()))
    acc = WindowFeatureAccumulator()

    def replay():
        for a, b in bounds:
            acc.reset()
            for x, y, z in rows[a:b]:
                acc.push(x, y, z)

    return tuple(samples.shape[0] / t for t in median_wall_cpu(replay, repeats))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--windows", type=int, default=200_000)
    parser.add_argument("--tsfresh-windows", type=int, default=2_000)
    parser.add_argument("--push-windows", type=int, default=2_000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()

    samples, offsets = random_windows(args.windows)
    ours = median_wall_cpu(lambda: window_features(samples, offsets), args.repeats)

    sub_samples, sub_offsets = samples[: offsets[args.tsfresh_windows]], offsets[: args.tsfresh_windows + 1]
    frame = tsfresh_frame(sub_samples, sub_offsets)
    check_tsfresh_agrees(run_tsfresh(frame), window_features(sub_samples, sub_offsets))
    theirs = median_wall_cpu(lambda: run_tsfresh(frame), max(3, args.repeats // 2))
    ours_sub = median_wall_cpu(lambda: window_features(sub_samples, sub_offsets), args.repeats)

    push_samples = samples[: offsets[args.push_windows]]
    pushes = push_rate(push_samples, offsets[: args.push_windows + 1], max(3, args.repeats // 2))

    import tsfresh

    def row(what, n, n_features, seconds, ratio=""):
        wall, cpu = seconds
        return f"| {what} | {n:,} | {n_features} | {wall:.3f} / {cpu:.3f} | {n / wall:,.0f} / {n / cpu:,.0f} | {ratio} |"

    ratio_wall, ratio_cpu = (args.windows / o / (args.tsfresh_windows / t) for o, t in zip(ours, theirs))
    table = f"""# Window features (spec §3.6, Table 12.1): throughput

Command: `.venv/bin/python benchmarks/bench_features.py --windows {args.windows} --tsfresh-windows {args.tsfresh_windows} --repeats {args.repeats}`

Random windows of 10–60 samples (mean ≈ 35), float64, one thread. Medians over repeats, given
as wall-clock / CPU time; the machine has {os.cpu_count()} cores shared with other jobs (load
average {os.getloadavg()[0]:.1f} at the end), so wall-clock figures are inflated by contention
and CPU time is the fairer single-core figure. Python {platform.python_version()}, numpy
{np.__version__}, tsfresh {tsfresh.__version__}. tsfresh computes only 25 statistics (mean,
standard_deviation, variance, minimum, maximum of the five rows), we compute all 79; its input
DataFrame is built outside the timing, and its numbers were checked equal to ours (rtol 1e-9).

| what | windows | features/window | median s (wall / CPU) | windows/s (wall / CPU) | note |
|---|---:|---:|---:|---:|---|
{row("`window_features` (batch)", args.windows, 79, ours, "target ≥ 100,000 windows/s")}
{row("`window_features` on the tsfresh subset", args.tsfresh_windows, 79, ours_sub)}
{row("tsfresh `extract_features`, `n_jobs=0`", args.tsfresh_windows, 25, theirs, "")}

Ratio of windows/s, ours (full run) / tsfresh: **{ratio_wall:,.0f}× wall, {ratio_cpu:,.0f}× CPU** (target ≥ 50×).

Per-sample form: `WindowFeatureAccumulator.push` in pure Python: {pushes[0]:,.0f} / {pushes[1]:,.0f}
samples/s (wall / CPU), i.e. {1e6 / pushes[1]:.1f} µs of CPU per sample; a phone needs 30–50 samples/s.
"""
    args.out.parent.mkdir(parents=True, exist_ok=True)
    write_results(args.out, table)
    print(table)


if __name__ == "__main__":
    main()
