"""RLS2 (spec §2.8 Exp. 1, BINARY STRINGS) beside Lasso and ridge, plus path timings.

Part 1 reproduces the BINARY STRINGS experiment: 250 strings of 100 Bernoulli(0.5) bits,
y = x1 + x2 + x3 + N(0, 0.01^2), 150 train / 100 test; for each training size the lower
envelope over lambda of the test RMSE (as the paper reports) of linear RLS2 (scaling 4.12,
uncentred), scikit-learn's Lasso and ridge, and the kernel weights d that RLS2 recovers at
its best lambda (paper: d ~ (1/3, 1/3, 1/3, 0, ...) after ~12 examples). Medians over seeds.

Part 2 times one regularization path (30 lambda log-spaced in [1e-6, 1e6], warm starts) of
linear RLS2 on the 150 training strings, beside scikit-learn's ``lasso_path`` on the same
30-point grid and beside solving the equivalent problem (4.9) with scipy L-BFGS-B at every
lambda. Medians over ``--repeats`` runs, one BLAS thread (the machine is shared; timings are
noisy). Writes ``benchmarks/results/rls2.md``.

Run: ``.venv/bin/python benchmarks/bench_rls2.py``
"""
from __future__ import annotations

import argparse
import statistics
import time
import warnings
from pathlib import Path

import numpy as np
import scipy.optimize
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import Ridge, lasso_path
from threadpoolctl import threadpool_limits

from stairsense.models._rls2 import rls2_path

RESULTS = Path(__file__).resolve().parent / "results" / "rls2.md"
ALPHAS = np.geomspace(1e6, 1e-6, 30)


def binary_strings(seed):
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 2, size=(250, 100)).astype(float)
    y = X[:, :3].sum(axis=1) + 0.01 * rng.normal(size=250)
    return X[:150], y[:150], X[150:], y[150:]


def rmse(prediction, target):
    return float(np.sqrt(np.mean((prediction - target) ** 2)))


def learning_curve_point(n_train, seed):
    X, y, X_test, y_test = binary_strings(seed)
    X, y = X[:n_train], y[:n_train]
    path = rls2_path(X, y, alphas=ALPHAS)
    coefs = path.kernel_weights * path.scaling * (path.dual_coefs @ X)
    errors = [rmse(X_test @ w, y_test) for w in coefs]
    best = int(np.argmin(errors))
    d = path.kernel_weights[best]
    # Lasso objective ||y - Xw||^2 / (2 n) + a ||w||_1: its own grid of 100 alphas.
    top = np.abs(X.T @ y).max() / n_train  # smallest alpha with an all-zero Lasso solution
    _, lasso_coefs, _ = lasso_path(X, y, alphas=np.geomspace(top, top * 1e-5, 100), max_iter=100_000)
    lasso = min(rmse(X_test @ w, y_test) for w in lasso_coefs.T)
    ridge = min(rmse(Ridge(alpha=a, fit_intercept=False).fit(X, y).predict(X_test), y_test) for a in ALPHAS)
    return errors[best], lasso, ridge, d[:3], d[3:].sum(), int(np.count_nonzero(d))


def squared_l1_path(X, y, scale):
    """Oracle solver: (4.9) by L-BFGS-B on w = p - q at every lambda, warm-started."""
    weights = 1 / np.sqrt(scale)
    n = X.shape[1]
    start = np.zeros(2 * n)
    for alpha in ALPHAS:
        def objective(pq):
            residual = y - X @ (pq[:n] - pq[n:])
            penalty = weights @ (pq[:n] + pq[n:])
            grad = -X.T @ residual / alpha
            return residual @ residual / (2 * alpha) + penalty**2 / 2, np.concatenate(
                [grad + penalty * weights, -grad + penalty * weights])
        start = scipy.optimize.minimize(objective, start, jac=True, method="L-BFGS-B",
                                        bounds=[(0, None)] * (2 * n)).x


def median_seconds(run, repeats):
    times = []
    for _ in range(repeats):
        begin = time.perf_counter()
        run()
        times.append(time.perf_counter() - begin)
    return statistics.median(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    warnings.simplefilter("ignore", ConvergenceWarning)
    lines = ["# RLS2 benchmarks", "", "Command: `.venv/bin/python benchmarks/bench_rls2.py`"
             f" (seeds={args.seeds}, repeats={args.repeats}, one BLAS thread).", "",
             "## BINARY STRINGS (spec §2.8 Exp. 1)", "",
             f"Lower envelope over lambda of test RMSE (100 test strings); medians over {args.seeds} seeds. "
             "d1..d3 and 'rest' are RLS2's kernel weights at its best lambda.", "",
             "| n train | RLS2 RMSE | Lasso RMSE | ridge RMSE | d1 | d2 | d3 | rest (sum d4..d100) | #selected |",
             "|---|---|---|---|---|---|---|---|---|"]
    with threadpool_limits(limits=1, user_api="blas"):
        for n_train in (2, 4, 6, 8, 10, 12, 15, 20, 30, 50, 100, 150):
            rows = [learning_curve_point(n_train, seed) for seed in range(args.seeds)]
            med = lambda values: float(np.median(values))  # noqa: E731
            d = np.median([r[3] for r in rows], axis=0)
            lines.append(
                f"| {n_train} | {med([r[0] for r in rows]):.4f} | {med([r[1] for r in rows]):.4f} | "
                f"{med([r[2] for r in rows]):.4f} | {d[0]:.3f} | {d[1]:.3f} | {d[2]:.3f} | "
                f"{med([r[4] for r in rows]):.3f} | {med([r[5] for r in rows]):.0f} |"
            )
            print(lines[-1], flush=True)

        X, y, _, _ = binary_strings(0)
        path = rls2_path(X, y, alphas=ALPHAS)
        rls2_time = median_seconds(lambda: rls2_path(X, y, alphas=ALPHAS), args.repeats)
        lasso_time = median_seconds(
            lambda: lasso_path(X, y, alphas=ALPHAS / (2 * len(y)), max_iter=100_000), args.repeats)
        oracle_time = median_seconds(lambda: squared_l1_path(X, y, path.scaling), max(1, args.repeats // 2))
    lines += ["", "## Path cost (150 x 100 binary strings, 30 lambda in [1e-6, 1e6], warm starts)", "",
              f"RLS2 alternations per lambda: mean {path.n_iter.mean():.2f}, max {path.n_iter.max()} "
              "(thesis: 1-3 on average).", "",
              "| solver | median s per path | ratio to RLS2 |", "|---|---|---|",
              f"| RLS2 (Alg. 3 + pairwise simplex) | {rls2_time:.4f} | 1.00 |",
              f"| sklearn lasso_path (coordinate descent, same grid) | {lasso_time:.4f} | {lasso_time / rls2_time:.2f} |",
              f"| scipy L-BFGS-B on (4.9), warm-started | {oracle_time:.4f} | {oracle_time / rls2_time:.2f} |"]
    RESULTS.write_text("\n".join(lines) + "\n")
    print("\n".join(lines[-8:]))
    print(f"wrote {RESULTS}")


if __name__ == "__main__":
    main()
