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
  in with the population kernel weights and its own SVM (spec B8);
* online MTL: OnlineMultiTaskLearner (models/multitask/ONLINE_API.md) in feature-map mode with the
  a-priori settings of bench_online_mtl_hapt.py (alpha = 0.5, lambda = 1, 256 random Fourier
  features and an exact RBF personal part, gamma = 1/79), fed the other users' windows once; for
  each draw a snapshot copy receives the new user's k windows by ``update`` (the server's way).

No hyper-parameter selection (fixed defaults stated in the results), features scaled to [-1, 1] on
the other users' windows. The page is rewritten after every new user, so a ``--budget-s`` (or an
interrupted run) leaves a table that states how many users it holds.
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
from stairsense.models.multitask import OnlineMultiTaskLearner

HERE = Path(__file__).resolve().parent
# The code these figures measure: a change there makes them stale (tests/test_measured_figures.py).
# Not measured (`:!` excludes them): the log-file readers, the simulator and the barometer path,
# since this benchmark reads no log file, simulates nothing and its data carry no air pressure.
MEASURES = ("models/mkl/_komd.py", "models/multitask/_admm_mtl.py", "models/multitask/_task_solvers.py",
            "models/multitask/_okl.py", "models/multitask/_mtonmkl.py", "models/multitask/_tasks.py",
            "models/multitask/_online.py", "models/multitask/_online_compiled.py",
            "models/multitask/_feature_maps.py", "stream/", ":!stream/io/", ":!stream/simulate/", ":!stream/_height.py",
            "features/", ":!features/_height_features.py", "stairsense/pipeline.py")
RESULTS = HERE / "results"
K_VALUES = (5, 10, 20, 50)
OKL_PARAMS = dict(alpha=3.0, rank=5, kernel="rbf", n_components=150, max_iter=20)
MTONMKL_PARAMS = dict(C=10.0, eta=32.0, beta=0.25, max_iter=20)
ADMM_PARAMS = dict(lambda1=2.0, lambda2=2.0, max_iter=30)
ONLINE_PARAMS = dict(alpha=0.5, lam=1.0, n_components=256)
METHODS = ("pooled KOMD", "independent KOMD", "ADMM MTL", "OKL", "MT-ONMKL", "online MTL")


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


def online_server(X, y, groups):
    """OnlineMultiTaskLearner fed every given window (targets +-1), settings of ONLINE_PARAMS."""
    gamma = 1.0 / X.shape[1]
    server = OnlineMultiTaskLearner(
        ONLINE_PARAMS["alpha"], ONLINE_PARAMS["lam"], {"name": "rbf", "gamma": gamma},
        feature_map={"name": "rff", "n_features_in": X.shape[1], "n_components": ONLINE_PARAMS["n_components"],
                     "gamma": gamma, "seed": 0})
    server.update_many(groups.tolist(), X, np.where(y == 1, 1.0, -1.0))
    return server


def predict_online(server, X_k, y_k, user, X_test):
    """A copy of the server (snapshot round trip) learns the user's k windows; decision >= 0 is STAIR."""
    learner = OnlineMultiTaskLearner.from_snapshot(*server.snapshot())
    learner.update_many([int(user)] * len(X_k), X_k, np.where(y_k == 1, 1.0, -1.0))
    return (learner.predict(int(user), X_test) >= 0).astype(int)


def evaluate_user(X, y, groups, user, args, rng):
    others = np.concatenate([rng.permutation(np.flatnonzero(groups == g))[: args.cap]
                             for g in np.unique(groups) if g != user])
    scaler = make_feature_scaler().fit(X[others])
    Xs = scaler.transform(X)
    base_okl = OutputKernelClassifier(**OKL_PARAMS, random_state=0).fit(Xs[others], y[others], groups[others])
    base_mt = MTONMKLClassifier(**MTONMKL_PARAMS).fit(Xs[others], y[others], groups[others])
    server = online_server(Xs[others], y[others], groups[others])
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
                "online MTL": predict_online(server, Xs[labelled], y[labelled], user, X_test),
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
    parser.add_argument("--budget-s", type=float, default=None,
                        help="start no new user after this many seconds; the page states the users completed")
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
    # Users in an interleaved order (every other one first), so a budget-cut run still spans the subjects.
    chosen = np.concatenate([chosen[::2], chosen[1::2]])
    heat_map = plot_output_kernel(X, y, groups, args.cap, RESULTS / "personalisation_output_kernel.png")
    command = "benchmarks/bench_personalisation.py" + " ".join(
        [""] + (["--quick"] if args.quick else []) + ([f"--users {args.users}"] if args.users else [])
        + ([f"--repeats {args.repeats}"] if args.repeats != (1 if args.quick else 3) else [])
        + ([f"--budget-s {args.budget_s:g}"] if args.budget_s else []))
    per_user = {}
    for user in tqdm(chosen, desc="new users", unit="user"):
        if args.budget_s and time.perf_counter() - started > args.budget_s:
            break
        per_user[user] = evaluate_user(X, y, groups, user, args, np.random.default_rng(int(user)))
        print(user, per_user[user], file=sys.stderr, flush=True)
        write_page(per_user, len(users), args, command, provenance, heat_map, time.perf_counter() - started)


def write_page(per_user, n_subjects, args, command, provenance, heat_map, seconds):
    """Write personalisation.md from the users evaluated so far."""
    done = sorted(per_user)
    mean_corr, min_corr, max_corr = heat_map
    f1 = {(name, k): np.array([per_user[u][(name, k)] for u in done]) for name in METHODS for k in K_VALUES}
    rows = [[name, *(f"{f1[name, k].mean():.3f} ± {f1[name, k].std():.3f}" for k in K_VALUES)] for name in METHODS]
    median_rows = [[name, *(f"{np.median(f1[name, k]):.3f}" for k in K_VALUES)] for name in METHODS]
    best_mean = {k: max(METHODS, key=lambda n: f1[n, k].mean()) for k in K_VALUES}
    best_median = {k: max(METHODS, key=lambda n: np.median(f1[n, k])) for k in K_VALUES}
    wins = {k: {name: int(np.sum(f1[name, k] >= np.max([f1[n, k] for n in METHODS], axis=0))) for name in METHODS}
            for k in K_VALUES}
    disagree = [k for k in K_VALUES if best_mean[k] != best_median[k]]
    lines = [
        "# Personalisation on UCI HAPT: STAIR F1 of a new user with k labelled windows",
        "",
        f"Command: `.venv/bin/python {command}` at commit `{git_commit(HERE)}`; load average {load_average()}; "
        f"{seconds:.0f} s.",
        "",
        f"Windows: {provenance}. New users: {len(done)} of {n_subjects} subjects ({', '.join(map(str, done))}); "
        f"{args.repeats} random draw(s) of the k labelled windows per user (both classes when possible); other "
        f"users contribute at most {args.cap} random windows each. Cells: mean ± std over new users of the "
        "per-user STAIR F1 on that user's remaining windows (each user's value averaged over draws).",
        "",
        f"Settings (fixed, no selection): OKL {OKL_PARAMS}; MT-ONMKL {MTONMKL_PARAMS} (consistent variant); "
        f"ADMM {ADMM_PARAMS}; online MTL {ONLINE_PARAMS} (feature-map mode, rbf gamma = 1/79, the a-priori "
        "settings of bench_online_mtl_hapt.py); KOMD defaults (lam = 0.1, rbf, gamma = 'scale').",
        "",
        *markdown_table(["method"] + [f"k = {k}" for k in K_VALUES], rows, align="lrrrr"),
        "",
        "Median per-user F1 (per-user F1 is skewed: a few users with few STAIR windows pull the mean down):",
        "",
        *markdown_table(["method"] + [f"k = {k}" for k in K_VALUES], median_rows, align="lrrrr"),
        "",
        "Best mean per k: " + "; ".join(f"k = {k}: {best_mean[k]}" for k in K_VALUES) + ". Best median per k: "
        + "; ".join(f"k = {k}: {best_median[k]}" for k in K_VALUES) + ". "
        + (f"Mean and median disagree at k = {', '.join(map(str, disagree))}." if disagree
           else "Mean and median agree on the best method at every k."),
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
    print("\n".join(lines), flush=True)


if __name__ == "__main__":
    main()
