"""Leave-one-placement-out where labels allow it (issue 9): simulated placements with stairs.

Only the simulator has stairs in more than one placement (UCI HAPT is all waist, Oxford has no
stairs). Each fold trains the budgeted classifier (Nyström KOMD, 300 landmarks, Λ = 0.01, γ = 2⁻⁵)
on UCI HAPT, the Oxford level walking and the simulated people of every placement but one, and
tests on the held-out placement's simulated windows: STAIR recall, false-stair rate, F1. Features:
all 79 (EasyMKL keeps 49) or the 15 heading-invariant ones.

Writes ``benchmarks/results/placement_lopo.md``.
Usage: ``python benchmarks/bench_placement_lopo.py [--max-train 3000]``
"""
from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
from _common import git_commit, load_average, markdown_table, write_results
from _robust_data import SIM_PLACEMENTS, oxford_windows, simulated_windows, uci_windows

from stairsense import PipelineConfig
from stairsense.features import FEATURE_NAMES
from stairsense.models import make_stairstep_pipeline
from stairsense.models.stairstep import heading_invariant_mask

ROOT = Path(__file__).resolve().parents[1]
# Log-file readers (`:!` excludes them) are not measured: this benchmark reads no log file.
MEASURES = ("stream/", ":!stream/io/", "features/", "models/mkl/", "models/stairstep/", "stairsense/pipeline.py",
            "benchmarks/_robust_data.py")
CONFIG = PipelineConfig(rate_hz=30, orientation="vertical", step_context=0)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--max-train", type=int, default=3000)
    args = parser.parse_args(argv)
    started = time.perf_counter()
    (Xu, yu, _), (Xo, _, _), (Xs, ys, ms) = uci_windows(CONFIG), oxford_windows(CONFIG), simulated_windows(CONFIG)
    rng = np.random.default_rng(0)
    rows = []
    for features in ("all", "heading-invariant"):
        allowed = heading_invariant_mask(FEATURE_NAMES) if features != "all" else None
        for placement in SIM_PLACEMENTS:
            held = ms["placement"] == "sim_" + placement
            X = np.vstack([Xu, Xo, Xs[~held]])
            y = np.concatenate([yu, np.zeros(len(Xo), int), ys[~held]])
            pick = rng.choice(y.size, size=min(args.max_train, y.size), replace=False)
            pipe = make_stairstep_pipeline(k=49, lam=0.01, gamma=2.0**-5, n_landmarks=300, random_state=0,
                                           allowed=allowed).fit(X[pick], y[pick])
            pred = pipe.predict(Xs[held]) == 1
            truth = ys[held] == 1
            tp = np.sum(pred & truth)
            f1 = 2 * tp / (pred.sum() + truth.sum())
            rows.append((features, placement, int(truth.sum()), f"{pred[truth].mean():.2f}",
                         f"{pred[~truth].mean():.1%}", f"{f1:.3f}"))
            print(rows[-1], flush=True)
    lines = ["# Leave-one-placement-out on simulated placements (issue 9)", "",
             f"Command: `.venv/bin/python benchmarks/bench_placement_lopo.py --max-train {args.max_train}` at commit "
             f"`{git_commit(ROOT)}`; load average {load_average()}.", "",
             __doc__.split("\n\n", 1)[1].rsplit("\n\nWrites", 1)[0], "",
             f"Training windows: a uniform subsample of {args.max_train} per fold.", ""]
    lines += markdown_table(["features", "held-out placement", "STAIR windows", "stair recall", "false-stair rate",
                             "F1"], rows, "llrrrr")
    lines += ["", "Target (issue 9): simulated pocket placements ≤ 5 % false-stair rate, like Oxford.",
              f"Total wall time {time.perf_counter() - started:.0f} s.", ""]
    write_results(ROOT / "benchmarks" / "results" / "placement_lopo.md", "\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
