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

Part 3 (skipped when the UCI HAPT recordings are absent, or with ``--users 0``) applies
linear RLS2 to the 79 window features of real UCI HAPT windows (STAIR vs NO_STAIR, built by
``stairsense.window_dataset`` with the default ``PipelineConfig``) as a second feature
selector beside ``EasyMKLSelector``. Both rank the features on the [-1, 1]-scaled training
windows of each leave-subjects-out fold (5-fold ``GroupKFold`` by subject): EasyMKL by its
``ranking_``; RLS2 by the order in which features enter its regularization path (30 lambda in
[1e-6, 1e6], ``RLS2Classifier`` with warm starts), ties by the final weight. It reports the
overlap of the two top-k sets, the Spearman correlation of the full rankings, and the test
F1 (STAIR positive) of the stair-step KOMD (RBF, gamma="scale", Lambda=0.1) trained on each
top-k. Medians over the folds.

Run: ``.venv/bin/python benchmarks/bench_rls2.py`` (``--users N`` for the first N subjects).
"""
from __future__ import annotations

import argparse
import time
import warnings
from pathlib import Path

import numpy as np
import scipy.optimize
from sklearn.exceptions import ConvergenceWarning
import scipy.stats
from sklearn.base import clone
from sklearn.linear_model import Ridge, lasso_path
from sklearn.metrics import f1_score
from sklearn.model_selection import GroupKFold
from threadpoolctl import threadpool_limits

from _common import data_dir, markdown_table, median_time, write_results
from stairsense.models import RLS2Classifier, rls2_path


# The code these figures measure: a change there makes them stale (tests/test_measured_figures.py).
# Log-file readers (`:!` excludes them) are not measured: this benchmark reads no log file.
MEASURES = ("models/kernel_machines/", "models/mkl/", "features/", "stream/", ":!stream/io/")
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


def rls2_path_ranking(X, y):
    """Features in the order they enter linear RLS2's path (largest lambda first)."""
    model = RLS2Classifier(warm_start=True)
    entry = np.full(X.shape[1], ALPHAS.size)
    for index, alpha in enumerate(ALPHAS):
        weights = model.set_params(alpha=alpha).fit(X, y).kernel_weights_[0]
        entry = np.where((weights > 0) & (entry == ALPHAS.size), index, entry)
    return np.lexsort((-weights, entry)), model


def selection_comparison(users, ks):
    """Part 3: RLS2 vs EasyMKL rankings of the 79 window features on UCI HAPT, and KOMD F1."""
    from stairsense import PipelineConfig
    from stairsense.features import make_feature_scaler
    from stairsense.models import EasyMKLSelector
    from stairsense.models import KOMDClassifier
    from stairsense import window_dataset
    from stairsense.stream import load_uci_hapt, uci_hapt_experiments

    uci = data_dir("uci-hapt")
    subjects = sorted({user for _, user in uci_hapt_experiments(uci)})[:users]
    data = window_dataset(load_uci_hapt(uci, user=subjects), PipelineConfig(step_context=0))
    rows = {k: [] for k in ks}
    correlations, path_times, easymkl_times = [], [], []
    komd = KOMDClassifier(lam=0.1, kernel="rbf", gamma="scale")
    for train, test in GroupKFold(n_splits=min(5, len(subjects))).split(data.X, data.y, data.groups.astype(str)):
        scaler = make_feature_scaler().fit(data.X[train])
        X_train, X_test = scaler.transform(data.X[train]), scaler.transform(data.X[test])
        begin = time.perf_counter()
        easymkl = EasyMKLSelector(k="all").fit(X_train, data.y[train]).ranking_
        easymkl_times.append(time.perf_counter() - begin)
        begin = time.perf_counter()
        rls2, _ = rls2_path_ranking(X_train, data.y[train])
        path_times.append(time.perf_counter() - begin)
        positions = [np.argsort(ranking) for ranking in (easymkl, rls2)]
        correlations.append(scipy.stats.spearmanr(*positions).statistic)
        for k in ks:
            f1 = [f1_score(data.y[test], clone(komd).fit(X_train[:, r[:k]], data.y[train]).predict(X_test[:, r[:k]]))
                  for r in (easymkl, rls2)]
            rows[k].append((len(set(easymkl[:k]) & set(rls2[:k])), *f1))
    names = data.feature_names
    lines = ["", f"## Feature selection on UCI HAPT windows ({len(subjects)} subjects, {len(data.y)} windows, "
             f"{int(data.y.sum())} STAIR; {min(5, len(subjects))}-fold leave-subjects-out)", "",
             f"Spearman correlation of the two full rankings: median {np.median(correlations):.2f}. "
             f"Ranking time per fold: EasyMKLSelector {np.median(easymkl_times):.2f} s, "
             f"RLS2 30-lambda path {np.median(path_times):.2f} s (medians).", "",
             "| k | top-k overlap | KOMD F1, EasyMKL top-k | KOMD F1, RLS2 top-k |", "|---|---|---|---|"]
    for k in ks:
        overlap, f1_easymkl, f1_rls2 = np.median(np.array(rows[k]), axis=0)
        lines.append(f"| {k} | {overlap:.0f} | {f1_easymkl:.3f} | {f1_rls2:.3f} |")
    scaler = make_feature_scaler().fit(data.X)
    X_all = scaler.transform(data.X)
    easymkl = EasyMKLSelector(k="all").fit(X_all, data.y).ranking_
    rls2, _ = rls2_path_ranking(X_all, data.y)
    lines += ["", "Top 10 on all windows:", "", "| rank | EasyMKL | RLS2 (path entry) |", "|---|---|---|"]
    lines += [f"| {i + 1} | {names[e]} | {names[r]} |" for i, (e, r) in enumerate(zip(easymkl[:10], rls2[:10]))]
    return lines


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--users", type=int, default=10, help="UCI HAPT subjects for part 3; 0 skips it")
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
        rls2_time, _ = median_time(lambda: rls2_path(X, y, alphas=ALPHAS), args.repeats)
        lasso_time, _ = median_time(
            lambda: lasso_path(X, y, alphas=ALPHAS / (2 * len(y)), max_iter=100_000), args.repeats)
        oracle_time, _ = median_time(lambda: squared_l1_path(X, y, path.scaling), max(1, args.repeats // 2))
    lines += ["", "## Path cost (150 x 100 binary strings, 30 lambda in [1e-6, 1e6], warm starts)", "",
              f"RLS2 alternations per lambda: mean {path.n_iter.mean():.2f}, max {path.n_iter.max()} "
              "(thesis: 1-3 on average).", "",
              *markdown_table(["solver", "median s per path", "ratio to RLS2"], [
                  (name, f"{seconds:.4f}", f"{seconds / rls2_time:.2f}") for name, seconds in [
                      ("RLS2 (Alg. 3 + pairwise simplex)", rls2_time),
                      ("sklearn lasso_path (coordinate descent, same grid)", lasso_time),
                      ("scipy L-BFGS-B on (4.9), warm-started", oracle_time),
                  ]])]
    with threadpool_limits(limits=1, user_api="blas"):
        if args.users:
            lines += selection_comparison(args.users, ks=(5, 10, 20, 49))
        else:
            lines += ["", "(Feature-selection comparison skipped: --users 0.)"]
    write_results(RESULTS, "\n".join(lines) + "\n")
    print("\n".join(lines[-30:]))
    print(f"wrote {RESULTS}")


if __name__ == "__main__":
    main()
