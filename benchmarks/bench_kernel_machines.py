"""Linear hinge-loss coordinate descent (spec §1.5, Algorithm 2) against LIBLINEAR, side by side.

Problem: min_w ||w||^2/2 + C sum_i (1 - y_i w'x_i)_+ on a sparse, row-normalised design with
100,000 samples.  Mapping of the constants (exact, no rescaling): our objective is
F(c) = sum_i C (1 - y_i (Kc)_i)_+ + c'Kc/2 with K = XX' and w = X'c, which is the primal above
with the same C; ``sklearn.svm.LinearSVC(loss="hinge", dual=True, C=C, fit_intercept=False)``
solves the same primal (its dual variables are alpha_i = y_i c_i).  Both are scored by the
same primal objective, relative to a reference optimum from a tight (tol=1e-6) LIBLINEAR run.

The target is on the time ratio ours / LIBLINEAR (≤ 3× at a relative gap ≤ 1e-4), never on
seconds: absolute times differ between machines of the same kind, and even the ratio moved between
invocations (1.84× in one, 2.15–2.24× in others). So the comparison runs ``--runs`` times; each
run alternates ``--repeats`` fits of both and takes the ratio of their median times, and the page
gives the median ratio over runs with its min–max. The target is on that median; the times are
information.

Run: ``.venv/bin/python benchmarks/bench_kernel_machines.py [--runs 5] [--repeats 3]`` (writes
``benchmarks/results/kernel_machines.md``).
"""
from __future__ import annotations

import argparse
import platform
import statistics
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from sklearn.exceptions import ConvergenceWarning
from sklearn.preprocessing import normalize
from sklearn.svm import LinearSVC

from _common import markdown_table, write_results
from stairsense.models import LinearKernel
from stairsense.models import solve_kernel_machine

N_SAMPLES, N_FEATURES, NNZ_PER_ROW = 100_000, 20_000, 20
C = 1.0
OUR_TOL = 1e-3
LIBLINEAR_TOL = 1e-4  # LinearSVC's default
TARGET_GAP, TARGET_RATIO = 1e-4, 3.0
# The code these figures measure: a change there makes them stale (tests/test_measured_figures.py).
MEASURES = ("models/kernel_machines/",)
RESULTS = Path(__file__).resolve().parent / "results" / "kernel_machines.md"


def make_problem(seed=0):
    """Text-like data: ~20 non-zeros per row, unit rows, labels from a sparse truth with 10% flips."""
    rng = np.random.default_rng(seed)
    # Built row by row: scipy.sparse.random draws indices without replacement from all
    # n*m cells, which allocates a 16 GB permutation at this size.
    cols = rng.integers(0, N_FEATURES, size=(N_SAMPLES, NNZ_PER_ROW))
    rows = np.repeat(np.arange(N_SAMPLES), NNZ_PER_ROW)
    X = sp.csr_matrix((rng.random(rows.size), (rows, cols.ravel())), shape=(N_SAMPLES, N_FEATURES))
    X = normalize(X, norm="l2", axis=1).tocsr()
    truth = rng.normal(size=N_FEATURES) * (rng.random(N_FEATURES) < 0.2)
    y = np.where(X @ truth >= 0, 1.0, -1.0)
    flip = rng.random(N_SAMPLES) < 0.1
    y[flip] = -y[flip]
    return X, y


def primal(X, y, w):
    return 0.5 * float(w @ w) + C * float(np.maximum(0.0, 1.0 - y * (X @ w)).sum())


def run_liblinear(X, y, tol, max_iter=1000):
    model = LinearSVC(loss="hinge", dual=True, C=C, fit_intercept=False, tol=tol, max_iter=max_iter)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        model.fit(X, y)
    return model.coef_.ravel()


def run_ours(kernel, y, seed):
    sol = solve_kernel_machine(
        kernel, y, "hinge", C=C, tol=OUR_TOL, max_iter=1000, track_objective=False, random_state=seed
    )
    return sol.weights, sol.n_iter


def timed(fn):
    start = time.perf_counter()
    out = fn()
    return time.perf_counter() - start, out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="timed comparisons, each giving one time ratio")
    parser.add_argument("--repeats", type=int, default=3, help="fits of each solver per run (median)")
    args = parser.parse_args()
    X, y = make_problem()
    kernel = LinearKernel(X)
    reference = primal(X, y, run_liblinear(X, y, tol=1e-6, max_iter=10_000))
    solve_kernel_machine(kernel, y, "hinge", C=C, max_iter=1, tol=1e30, track_objective=False)  # numba warm-up

    rows = {"liblinear": [], "ours": []}  # (seconds, primal objective) of every fit
    run_medians = []  # (LIBLINEAR, ours) median seconds per run
    for run in range(args.runs):
        times = {"liblinear": [], "ours": []}
        for seed in range(args.repeats):  # the same seeds in every run, so runs differ by the machine only
            t, w = timed(lambda: run_liblinear(X, y, LIBLINEAR_TOL))
            rows["liblinear"].append((t, primal(X, y, w)))
            times["liblinear"].append(t)
            t, (w, sweeps) = timed(lambda: run_ours(kernel, y, seed))
            rows["ours"].append((t, primal(X, y, w)))
            times["ours"].append(t)
            print(f"run {run + 1}, repeat {seed}: liblinear {times['liblinear'][-1]:.3f}s, ours {t:.3f}s "
                  f"({sweeps} sweeps)", flush=True)
        run_medians.append((statistics.median(times["liblinear"]), statistics.median(times["ours"])))

    med = {k: statistics.median(r[i] for r in run_medians) for i, k in enumerate(("liblinear", "ours"))}
    gap = {k: max(abs(r[1] - reference) / reference for r in v) for k, v in rows.items()}
    ratios = [ours / liblinear for liblinear, ours in run_medians]
    ratio = statistics.median(ratios)
    ok = gap["ours"] <= TARGET_GAP and ratio <= TARGET_RATIO
    table = [
        "# Linear hinge-loss CD vs LIBLINEAR (`benchmarks/bench_kernel_machines.py`)",
        "",
        f"Sparse problem: {N_SAMPLES:,} samples, {N_FEATURES:,} features, ~{NNZ_PER_ROW} non-zeros per row "
        f"(nnz = {X.nnz:,}), unit rows, C = {C}, no intercept. Same primal objective for both "
        "(`||w||^2/2 + C sum hinge`); reference optimum F* from LIBLINEAR at tol=1e-6.",
        f"{args.runs} runs of {args.repeats} alternating fits of each solver; median time: the median over runs of "
        f"each run's median wall time (shared 2-core machine, noisy: the times are information, the target is on "
        f"the ratio). Python {platform.python_version()}.",
        "",
        *markdown_table(
            ["solver", "settings", "median time (s)", "times (s)", "worst relative gap to F*"],
            [
                (name, f"tol={tol:g}", f"{med[key]:.3f}", ", ".join(f"{r[0]:.3f}" for r in rows[key]), f"{gap[key]:.2e}")
                for key, name, tol in [
                    ("liblinear", "LIBLINEAR (`LinearSVC`, dual CD, shrinking)", LIBLINEAR_TOL),
                    ("ours", "stairsense CD (numba CSR sweeps, random order, shrinking)", OUR_TOL),
                ]
            ],
        ),
        "",
        "Per run (medians over its fits):",
        "",
        *markdown_table(["run", "LIBLINEAR (s)", "ours (s)", "ours / LIBLINEAR"],
                        [(i + 1, f"{liblinear:.3f}", f"{ours:.3f}", f"{ours / liblinear:.2f}")
                         for i, (liblinear, ours) in enumerate(run_medians)], align="lrrr"),
        "",
        f"F* = {reference:.6f}. Time ratio ours / LIBLINEAR (median over runs of each run's ratio of medians) = "
        f"**{ratio:.2f}**, min–max {min(ratios):.2f}–{max(ratios):.2f} over {args.runs} runs "
        f"(target <= {TARGET_RATIO:g} at gap <= {TARGET_GAP:g}): **{'met' if ok else 'MISSED'}**.",
        "",
    ]
    write_results(RESULTS, "\n".join(table))
    print("\n".join(table))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
