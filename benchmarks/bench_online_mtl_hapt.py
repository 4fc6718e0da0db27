"""Personalising the stair-step classifier with the online multi-task learner on UCI HAPT.

Run: ``.venv/bin/python benchmarks/bench_online_mtl_hapt.py [--data DIR] [--alphas 0.25,0.5,0.75]``
(writes ``benchmarks/results/online_mtl_hapt.md``).  Spec: dinuzzo §3.9 (each phone user is a task).

Protocol (progressive validation per user):

* Windows: ``window_dataset`` on the UCI HAPT RawData logs (``PipelineConfig(rate_hz=30, step_context=0)``),
  79 features, label 1 = STAIR; cached under ``benchmarks/out/online_mtl/``.  Features are
  standardised with one ``StandardScaler`` fitted on all windows' features (unsupervised; no
  labels are used).  Targets ±1.
* Each subject in turn is the *new user*.  The server already holds every window of all other
  subjects (they are active users).  The new user's windows are shuffled (seeded); the first 50
  are the ones the user labels, one after the other, the rest are the user's test set.
* After k = 0, 5, 10, 20, 50 labelled windows, the F1 of STAIR on the test set, for
  - pooled: α = 1, one model for everybody (the user's labelled windows join it);
  - independent: α = 0, a model of the user's own labelled windows only (k = 0: no model; the
    decision 0 goes to STAIR, so it predicts STAIR everywhere);
  - online multi-task: 0 < α < 1 (each α of ``--alphas``).
* Learners: ``OnlineMultiTaskLearner`` in feature-map mode (shared part: 256 random Fourier
  features of the RBF kernel, γ = 1/79; personal part: exact RBF, γ = 1/79), λ = 1, fixed a priori
  (no tuning on these users).  The server with all subjects is built once per α; for each new
  user its windows are then *deleted* exactly (spec §3.7-2; the tests prove deletion equals never
  having added) from a copy made with ``snapshot``/``from_snapshot``, instead of rebuilding.
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
from sklearn.metrics import f1_score
from sklearn.preprocessing import StandardScaler
from tqdm.auto import tqdm

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import git_commit, source_key, load_average, markdown_table, write_results  # noqa: E402

from stairsense.models.multitask import OnlineMultiTaskLearner  # noqa: E402

# The code these figures measure: a change there makes them stale (tests/test_measured_figures.py).
# Not measured (`:!` excludes them): the log-file readers, the simulator and the barometer path,
# since this benchmark reads no log file, simulates nothing and its data carry no air pressure.
MEASURES = ("models/multitask/_online.py", "models/multitask/_online_compiled.py",
            "models/multitask/_feature_maps.py", "models/multitask/_online_estimators.py",
            "models/multitask/_tasks.py", "stream/", ":!stream/io/", ":!stream/simulate/", ":!stream/_height.py",
            "features/", ":!features/_height_features.py", "stairsense/pipeline.py")
RESULTS = Path(__file__).resolve().parent / "results" / "online_mtl_hapt.md"
CACHE = Path(__file__).resolve().parent / "out" / "online_mtl"
KS = (0, 5, 10, 20, 50)
N_COMPONENTS, LAM = 256, 1.0


def hapt_windows(data):
    """(X, y, subjects, provenance) of the UCI HAPT windows, cached per pipeline configuration."""
    from stairsense import PipelineConfig, window_dataset
    from stairsense.stream import load_uci_hapt

    config = PipelineConfig(rate_hz=30, step_context=0)
    cache = CACHE / f"hapt_windows_{source_key(config.to_json(), str(data))}.npz"
    if cache.exists():
        cached = np.load(cache, allow_pickle=False)
        return cached["X"], cached["y"], cached["groups"], config.to_json()
    dataset = window_dataset(load_uci_hapt(data), config, progress=True)
    CACHE.mkdir(parents=True, exist_ok=True)
    np.savez(cache.with_suffix(".tmp.npz"), X=dataset.X, y=dataset.y, groups=dataset.groups.astype(np.int64))
    cache.with_suffix(".tmp.npz").replace(cache)
    return dataset.X, dataset.y, dataset.groups.astype(np.int64), config.to_json()


def make(alpha, n_features):
    gamma = 1.0 / n_features
    return OnlineMultiTaskLearner(
        alpha, LAM, {"name": "rbf", "gamma": gamma},
        feature_map={"name": "rff", "n_features_in": n_features, "n_components": N_COMPONENTS, "gamma": gamma,
                     "seed": 0},
    )


def f1(y_true, score):
    return f1_score(y_true, score >= 0, zero_division=0.0)


def personalise(server, user, X_pool, t_pool, X_test, y_test):
    """F1 on the test windows after each k in KS of the user's labelled windows (pool order)."""
    out = []
    for k in range(KS[-1] + 1):
        if k in KS:
            out.append(f1(y_test, server.predict(user, X_test)))
        if k < KS[-1]:
            server.update(user, X_pool[k], float(t_pool[k]))
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=Path(__file__).resolve().parents[1] / ".." / "shared" / "data"
                        / "uci-hapt" / "RawData")
    parser.add_argument("--alphas", default="0.25,0.5,0.75", help="alphas of the multi-task learner")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    command = "python benchmarks/bench_online_mtl_hapt.py " + " ".join(sys.argv[1:] if argv is None else argv)
    X, y, subjects, config = hapt_windows(args.data)
    X = StandardScaler().fit_transform(X)
    targets = np.where(y == 1, 1.0, -1.0)
    users = np.unique(subjects)
    rng = np.random.default_rng(args.seed)
    splits = {}
    for u in users:
        rows = rng.permutation(np.flatnonzero(subjects == u))
        splits[u] = (rows[: KS[-1]], rows[KS[-1]:])
    learners = {"pooled (alpha = 1)": 1.0, "independent (alpha = 0)": 0.0}
    learners.update({f"multi-task (alpha = {a})": float(a) for a in args.alphas.split(",")})
    f1s = {name: np.zeros((len(users), len(KS))) for name in learners}
    timing = {}
    for name, alpha in learners.items():
        started = time.perf_counter()
        full = make(alpha, X.shape[1])
        if alpha > 0:  # alpha = 0: other users cannot matter; skip feeding them
            full.update_many(subjects.tolist(), X, targets)
        build = time.perf_counter() - started
        arrays, meta = full.snapshot()
        started = time.perf_counter()
        for i, u in enumerate(tqdm(users, desc=name, unit="user")):
            server = OnlineMultiTaskLearner.from_snapshot(arrays, meta)
            keys = server.entries(int(u))[0]
            for key in keys:  # the new user's windows were never sent: delete them exactly
                server.delete(int(u), int(key))
            pool, test = splits[u]
            f1s[name][i] = personalise(server, int(u), X[pool], targets[pool], X[test], y[test] == 1)
        timing[name] = (build, (time.perf_counter() - started) / len(users))
        print(name, f1s[name].mean(axis=0).round(3), file=sys.stderr)
    report(command, config, X, y, users, splits, f1s, timing)


def report(command, config, X, y, users, splits, f1s, timing):
    rows = []
    for name, scores in f1s.items():
        rows.append((name, *(f"{scores[:, j].mean():.3f} ± {scores[:, j].std():.3f}" for j in range(len(KS)))))
    best_mtl = max((n for n in f1s if n.startswith("multi")), key=lambda n: f1s[n][:, 1:].mean())
    wins = {
        other: [int(np.sum(f1s[best_mtl][:, j] > f1s[other][:, j])) for j in range(len(KS))]
        for other in ("pooled (alpha = 1)", "independent (alpha = 0)")
    }
    n_test = [len(splits[u][1]) for u in users]
    lines = [
        "# Personalising the stair-step classifier: online multi-task learner on UCI HAPT",
        "",
        f"Command: `{command}` at commit `{git_commit(Path(__file__).parent)}`; load average {load_average()}.",
        "",
        f"Data: {len(y)} windows ({int(np.sum(y == 1))} STAIR) of the {len(users)} UCI HAPT subjects in "
        "`../shared/data/uci-hapt/RawData`, 79 window features "
        f"from `window_dataset` with `{config}`, standardised. Each subject in turn is the new user: the server holds "
        "every window of the other subjects; the new user labels 50 of their windows (random order, seeded) one by "
        f"one; F1 of STAIR on the user's other windows ({min(n_test)}-{max(n_test)} per user). Learners: "
        f"`OnlineMultiTaskLearner`, feature-map mode ({N_COMPONENTS} random Fourier features of RBF gamma = 1/79 for "
        f"the shared part, exact RBF gamma = 1/79 personal part), lambda = {LAM}, targets +-1, decision >= 0 = STAIR; "
        "no hyper-parameter tuning. The new user's windows are removed from the full server by exact deletion.",
        "",
        "## Mean ± sd over users of the per-user F1 after k labelled windows of that user",
        "",
        *markdown_table(["learner", *(f"k = {k}" for k in KS)], rows, align="l" + "r" * len(KS)),
        "",
        f"Multi-task learner with the best mean F1 over k >= 5: {best_mtl} (picked after the fact on these same "
        f"users; every alpha is in the table above). Users (of {len(users)}) where it has the higher F1:",
        "",
        *markdown_table(["vs", *(f"k = {k}" for k in KS)], [(o, *w) for o, w in wins.items()],
                        align="l" + "r" * len(KS)),
        "",
        "k = 0: the multi-task and pooled learners predict with the shared part only (the user is new); the "
        "independent learner has no model and predicts STAIR everywhere (F1 = 2p/(1+p) for a STAIR share p).",
        "",
        "Time: building the full server (all windows; alpha = 0 needs none) and, per user, copy + delete + 50 updates "
        "+ 5 evaluations:",
        "",
        *markdown_table(["learner", "build s", "per user s"],
                        [(n, f"{b:.1f}", f"{p:.2f}") for n, (b, p) in timing.items()], align="lrr"),
    ]
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    write_results(RESULTS, "\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
