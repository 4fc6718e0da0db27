"""Personalisation on UCI HAPT: which multi-task model should a new user pick, and at what k?

Run: ``.venv/bin/python benchmarks/bench_personalisation.py [--quick] [--users N] [--repeats R]`` (writes
``benchmarks/results/personalisation.md`` and ``personalisation_output_kernel.png``).

Users are tasks, STAIR vs. not on the pipeline's windows (``_hapt_users.py``). For each held-out
"new" user and k in {5, 10, 20, 50}: k labelled windows of that user (at least one of each class
when the user has both) join the other users' windows (at most ``--cap`` per user, drawn at random:
the server-side reservoir of spec B8); the new user's remaining windows are the test set. Every
method sees the same training windows and is scored by the new user's STAIR F1:

* pooled KOMD: one KOMDClassifier on all training windows, tasks ignored;
* independent: one KOMDClassifier on the new user's k windows only (one class: that class);
* ADMM MTL: ADMMMultiTaskClassifier (alpha = 0.5, lambda1 = 2, lambda2 = 2, 30 iterations);
* OKL: OutputKernelClassifier fitted on the other users, the new user folded in with the input
  factor frozen (spec A7: a p x p ridge on the k windows);
* MT-ONMKL: MTONMKLClassifier (consistent variant) fitted on the other users, the new user folded
  in with the population kernel weights and its own SVM (spec B8).

No hyper-parameter selection (fixed defaults stated in the results), features scaled to [-1, 1] on
the other users' windows. The online multi-task learner of the concurrent issue had not landed on
main when this ran, so it has no column.
"""
from __future__ import annotations

import argparse
import copy
import sys
import time
import warnings
from pathlib import Path

import numpy as np
from sklearn.metrics import f1_score
from tqdm.auto import tqdm

from _common import git_commit, load_average, markdown_table, write_results
from _hapt_users import hapt_user_windows
from stairsense.features import make_feature_scaler
from stairsense.models import ADMMMultiTaskClassifier, KOMDClassifier, MTONMKLClassifier, OutputKernelClassifier

HERE = Path(__file__).resolve().parent
# The code these figures measure: a change there makes them stale (tests/test_measured_figures.py).
# Log-file readers (`:!` excludes them) are not measured: this benchmark reads no log file.
MEASURES = ("models/", "stream/", ":!stream/_csv_*", ":!stream/_parquet.py", ":!stream/_convert.py",
            ":!stream/_import.py", "features/", "stairsense/pipeline.py")
RESULTS = HERE / "results"
K_VALUES = (5, 10, 20, 50)
OKL_PARAMS = dict(alpha=3.0, rank=5, kernel="rbf", n_components=150, max_iter=20)
MTONMKL_PARAMS = dict(C=10.0, eta=32.0, beta=0.25, max_iter=20)
ADMM_PARAMS = dict(lambda1=2.0, lambda2=2.0, max_iter=30)
METHODS = ("pooled KOMD", "independent KOMD", "ADMM MTL", "OKL", "MT-ONMKL")


def labelled_windows(rows, y, k, rng):
    """k rows of one user, with both classes when the user has both and k >= 2."""
    rows = rng.permutation(rows)
    if k >= 2 and len(np.unique(y[rows])) == 2:
        first = [rows[np.flatnonzero(y[rows] == c)[0]] for c in (0, 1)]
        rest = [r for r in rows if r not in first]
        return np.array(first + rest[: k - 2])
    return rows[:k]


def predict_independent(X_k, y_k, X_test):
    if len(np.unique(y_k)) == 1:
        return np.full(len(X_test), y_k[0])
    return KOMDClassifier().fit(X_k, y_k).predict(X_test)


def evaluate_user(X, y, groups, user, args, rng):
    others = np.concatenate([rng.permutation(np.flatnonzero(groups == g))[: args.cap]
                             for g in np.unique(groups) if g != user])
    scaler = make_feature_scaler().fit(X[others])
    Xs = scaler.transform(X)
    base_okl = OutputKernelClassifier(**OKL_PARAMS, random_state=0).fit(Xs[others], y[others], groups[others])
    base_mt = MTONMKLClassifier(**MTONMKL_PARAMS).fit(Xs[others], y[others], groups[others])
    own = np.flatnonzero(groups == user)
    scores = {}
    for k in K_VALUES:
        for _ in range(args.repeats):
            labelled = labelled_windows(own, y, k, rng)
            test = np.setdiff1d(own, labelled)
            train = np.concatenate([others, labelled])
            X_test, y_test, t_test = Xs[test], y[test], groups[test]
            predictions = {
                "pooled KOMD": KOMDClassifier().fit(Xs[train], y[train]).predict(X_test),
                "independent KOMD": predict_independent(Xs[labelled], y[labelled], X_test),
                "ADMM MTL": ADMMMultiTaskClassifier(**ADMM_PARAMS).fit(Xs[train], y[train], groups[train])
                .predict(X_test, t_test),
                "OKL": copy.deepcopy(base_okl).fold_in(Xs[labelled], y[labelled], groups[labelled])
                .predict(X_test, t_test),
                "MT-ONMKL": copy.deepcopy(base_mt).fold_in(Xs[labelled], y[labelled], groups[labelled])
                .predict(X_test, t_test),
            }
            for name, predicted in predictions.items():
                scores.setdefault((name, k), []).append(f1_score(y_test, predicted, pos_label=1, zero_division=0))
    return {key: float(np.mean(v)) for key, v in scores.items()}


def plot_output_kernel(X, y, groups, cap, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rng = np.random.default_rng(0)
    rows = np.concatenate([rng.permutation(np.flatnonzero(groups == g))[:cap] for g in np.unique(groups)])
    Xs = make_feature_scaler().fit(X[rows]).transform(X[rows])
    model = OutputKernelClassifier(**OKL_PARAMS, random_state=0).fit(Xs, y[rows], groups[rows])
    L = model.output_kernel_
    scale = np.sqrt(np.maximum(np.diag(L), 1e-300))
    correlation = L / np.outer(scale, scale)
    fig, ax = plt.subplots(figsize=(6, 5))
    image = ax.imshow(correlation, cmap="RdBu_r", vmin=-1, vmax=1)
    ax.set_xticks(range(len(model.tasks_)), model.tasks_, fontsize=6, rotation=90)
    ax.set_yticks(range(len(model.tasks_)), model.tasks_, fontsize=6)
    ax.set(title="OKL output kernel L = BB' (as correlation), UCI HAPT users", xlabel="subject", ylabel="subject")
    fig.colorbar(image)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    off = correlation[~np.eye(len(L), dtype=bool)]
    return float(np.mean(off)), float(np.min(off)), float(np.max(off))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="3 new users, 1 repeat")
    parser.add_argument("--users", type=int, default=None, help="new users evaluated (default all 21, quick 3)")
    parser.add_argument("--repeats", type=int, default=None, help="draws of the k windows (default 3, quick 1)")
    parser.add_argument("--cap", type=int, default=100, help="windows kept per other user")
    parser.add_argument("--data", type=Path, default=None, help="UCI HAPT RawData folder")
    args = parser.parse_args(argv)
    args.repeats = args.repeats or (1 if args.quick else 3)
    warnings.simplefilter("ignore")
    started = time.perf_counter()
    X, y, groups, provenance = hapt_user_windows(*([args.data] if args.data else []))
    y = (y == 1).astype(int)
    users = np.unique(groups)
    n_users = args.users or (3 if args.quick else len(users))
    chosen = users[np.linspace(0, len(users) - 1, n_users).round().astype(int)]
    per_user = {}
    for user in tqdm(chosen, desc="new users", unit="user"):
        per_user[user] = evaluate_user(X, y, groups, user, args, np.random.default_rng(int(user)))
        print(user, per_user[user], file=sys.stderr, flush=True)
    mean_corr, min_corr, max_corr = plot_output_kernel(X, y, groups, args.cap,
                                                       RESULTS / "personalisation_output_kernel.png")
    rows, best_at = [], {}
    for name in METHODS:
        cells = []
        for k in K_VALUES:
            values = [per_user[u][(name, k)] for u in chosen]
            cells.append(f"{np.mean(values):.3f} ± {np.std(values):.3f}")
        rows.append([name, *cells])
    for k in K_VALUES:
        means = {name: np.mean([per_user[u][(name, k)] for u in chosen]) for name in METHODS}
        best_at[k] = max(means, key=means.get)
    wins = {k: {name: sum(per_user[u][(name, k)] >= max(per_user[u][(n, k)] for n in METHODS) for u in chosen)
                for name in METHODS} for k in K_VALUES}
    command = "benchmarks/bench_personalisation.py" + " ".join(
        [""] + (["--quick"] if args.quick else []) + ([f"--users {args.users}"] if args.users else [])
        + ([f"--repeats {args.repeats}"] if args.repeats != (1 if args.quick else 3) else []))
    lines = [
        "# Personalisation on UCI HAPT: STAIR F1 of a new user with k labelled windows",
        "",
        f"Command: `.venv/bin/python {command}` at commit `{git_commit(HERE)}`; load average {load_average()}; "
        f"{time.perf_counter() - started:.0f} s.",
        "",
        f"Windows: {provenance}. New users: {n_users} of {len(users)} subjects ({', '.join(map(str, chosen))}); "
        f"{args.repeats} random draw(s) of the k labelled windows per user (both classes when possible); other "
        f"users contribute at most {args.cap} random windows each. Cells: mean ± std over new users of the "
        "per-user STAIR F1 on that user's remaining windows (each user's value averaged over draws).",
        "",
        f"Settings (fixed, no selection): OKL {OKL_PARAMS}; MT-ONMKL {MTONMKL_PARAMS} (consistent variant); "
        f"ADMM {ADMM_PARAMS}; KOMD defaults (lam = 0.1, rbf, gamma = 'scale'). The online multi-task learner "
        "(concurrent issue) had not landed on main: no column.",
        "",
        *markdown_table(["method"] + [f"k = {k}" for k in K_VALUES], rows, align="lrrrr"),
        "",
        "Best mean per k: " + "; ".join(f"k = {k}: {best_at[k]}" for k in K_VALUES) + ".",
        "",
        "Users for whom each method is best (ties count for all): "
        + "; ".join(f"k = {k}: " + ", ".join(f"{n} {c}" for n, c in wins[k].items()) for k in K_VALUES) + ".",
        "",
        "Learned task relations: OKL fitted on all 21 users (same cap), output kernel as a correlation "
        f"heat map in `personalisation_output_kernel.png`; off-diagonal correlation mean {mean_corr:.2f}, "
        f"range [{min_corr:.2f}, {max_corr:.2f}].",
        "",
        "![OKL output kernel](personalisation_output_kernel.png)",
        "",
    ]
    RESULTS.mkdir(parents=True, exist_ok=True)
    write_results(RESULTS / "personalisation.md", "\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
