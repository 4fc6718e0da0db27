"""Linear hinge-loss coordinate descent (spec §1.5, Algorithm 2) against LIBLINEAR, side by side.

Problem: min_w ||w||^2/2 + C sum_i (1 - y_i w'x_i)_+ on a sparse, row-normalised design with
100,000 samples.  Mapping of the constants (exact, no rescaling): our objective is
F(c) = sum_i C (1 - y_i (Kc)_i)_+ + c'Kc/2 with K = XX' and w = X'c, which is the primal above
with the same C; ``sklearn.svm.LinearSVC(loss="hinge", dual=True, C=C, fit_intercept=False)``
solves the same primal (its dual variables are alpha_i = y_i c_i).  Both are scored by the
same primal objective, relative to a reference optimum from a tight (tol=1e-6) LIBLINEAR run.

Run: ``.venv/bin/python benchmarks/bench_kernel_machines.py`` (writes
``benchmarks/results/kernel_machines.md``).  Timings are medians over repeats on a shared,
noisy machine.
"""
from __future__ import annotations

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
REPEATS = 3
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
    X, y = make_problem()
    kernel = LinearKernel(X)
    reference = primal(X, y, run_liblinear(X, y, tol=1e-6, max_iter=10_000))
    solve_kernel_machine(kernel, y, "hinge", C=C, max_iter=1, tol=1e30, track_objective=False)  # numba warm-up

    rows = {"liblinear": [], "ours": []}
    for seed in range(REPEATS):
        t, w = timed(lambda: run_liblinear(X, y, LIBLINEAR_TOL))
        rows["liblinear"].append((t, primal(X, y, w), None))
        t, (w, sweeps) = timed(lambda: run_ours(kernel, y, seed))
        rows["ours"].append((t, primal(X, y, w), sweeps))
        print(f"repeat {seed}: liblinear {rows['liblinear'][-1][0]:.3f}s, ours {t:.3f}s ({sweeps} sweeps)", flush=True)

    med = {k: statistics.median(r[0] for r in v) for k, v in rows.items()}
    gap = {k: max(abs(r[1] - reference) / reference for r in v) for k, v in rows.items()}
    ratio = med["ours"] / med["liblinear"]
    ok = gap["ours"] <= TARGET_GAP and ratio <= TARGET_RATIO
    table = [
        "# Linear hinge-loss CD vs LIBLINEAR (`benchmarks/bench_kernel_machines.py`)",
        "",
        f"Sparse problem: {N_SAMPLES:,} samples, {N_FEATURES:,} features, ~{NNZ_PER_ROW} non-zeros per row "
        f"(nnz = {X.nnz:,}), unit rows, C = {C}, no intercept. Same primal objective for both "
        "(`||w||^2/2 + C sum hinge`); reference optimum F* from LIBLINEAR at tol=1e-6.",
        f"Median wall time over {REPEATS} repeats (shared 2-core machine, noisy). Python {platform.python_version()}.",
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
        f"F* = {reference:.6f}. Time ratio ours / LIBLINEAR (medians) = **{ratio:.2f}** "
        f"(target <= {TARGET_RATIO:g} at gap <= {TARGET_GAP:g}): **{'met' if ok else 'NOT met'}**.",
        "",
    ]
    write_results(RESULTS, "\n".join(table))
    print("\n".join(table))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
