"""Placement robustness and compaction of the stair-step classifier (issue 9), beside a random-forest peer.

One protocol for every variant, folds fixed by seed:

* **HAPT leave-subjects-out**: the 21 UCI HAPT subjects in ``--folds`` groups (GroupKFold); STAIR
  precision, recall, F1 of the fold-averaged P and R (spec §3.7), stairs-up recall and the worst
  held-out subject's recall.
* **Oxford leave-one-user-out**: fold i also holds out Oxford user i mod 3 (Jamie, Carmelo, Dario);
  variants "+ Oxford" train on the other two users' level walking as NO_STAIR windows. Reported:
  the share of held-out walking windows (≈ steps) classified STAIR, per placement.
* **Simulated placements**: six simulated people with stairs in four placements (trouser/jacket
  pocket, hand, bag); variants "+ sim" train on people 0–2, every variant is tested on people 3–5:
  false-stair rate on simulated NO_STAIR windows and stair recall per placement.

Every window table is cut at 30 Hz with ``orientation="vertical"`` (the default ``auto`` without a
rotation vector, see ``bench_orientation.py``); KOMD variants use Λ = 0.01, γ = 2⁻⁵ (the train
defaults) and subsample at most ``--max-train`` training windows per fold (stratified). Variants
read the 79 Table 12.1 features, except "+ step context": the same windows with the 36 step-context
features of the default ``PipelineConfig.step_context`` (issue 9), trained on the very subsample
its "(before)" twin (``step_context=0``, the default until then) drew in each fold. The
"exported" column is the int8 file's decision (``build_onnx_model``'s stored float64 model, which
the ONNX graph matches to ~1e-5; ``stairsense evaluate --model x.onnx`` runs the file itself).

The peer is the issue's: a random forest on fixed 2.56 s windows (50 % overlap) of the device-frame
accelerometer and gyroscope (mean, std, min, max, quartiles of each axis and magnitude); on Oxford,
which has no gyroscope, the same forest on accelerometer features only.

Writes ``benchmarks/results/robustness.md``.
"""
from __future__ import annotations

import argparse
import time
from collections import defaultdict
from pathlib import Path

import numpy as np
from _common import data_dir, git_commit, load_average, markdown_table, write_results
from _robust_data import oxford_logs, oxford_windows, simulated_windows, uci_windows
from sklearn.ensemble import RandomForestClassifier
from sklearn.model_selection import GroupKFold

from stairsense import PipelineConfig
from stairsense.features import FEATURE_NAMES
from stairsense.models import TRAIN_DEFAULTS, EasyMKLSelector, StairstepModel, make_stairstep_pipeline
from stairsense.models.stairstep import RestrictedSelector, heading_invariant_mask
from stairsense.features import feature_names_for

ROOT = Path(__file__).resolve().parents[1]
# Log-file readers (`:!` excludes them) are not measured: this benchmark reads no log file.
MEASURES = ("stream/", ":!stream/io/", "features/", "models/mkl/", "models/stairstep/", "export/", ":!export/energy/",
            "stairsense/pipeline.py", "benchmarks/_robust_data.py")
# the 79 Table 12.1 features, and the same windows with the default step context (issue 9)
CONFIG = PipelineConfig(rate_hz=30, orientation="vertical", step_context=0)
CONTEXT_CONFIG = CONFIG.replace(step_context=PipelineConfig().step_context)
OXFORD_USERS = ("jamie", "carmelo", "dario")
LAM, GAMMA = 0.01, 2.0**-5


def komd(invariant: bool, n_landmarks=None, k=49, gamma=GAMMA, support_quantile=None, support_scale=1.0):
    pipe = make_stairstep_pipeline(k=k, lam=LAM, gamma=gamma, n_landmarks=n_landmarks,
                                   support_quantile=support_quantile, support_scale=support_scale, random_state=0)
    if invariant:
        pipe.steps[1] = ("select", RestrictedSelector(EasyMKLSelector(k=k), heading_invariant_mask(FEATURE_NAMES)))
    return pipe


# name → (pipeline factory, extra training sources: Oxford level walking, simulated placements, config)
VARIANTS = {
    "KOMD, all features, UCI only (before)": (lambda: komd(False), (), CONFIG),
    "KOMD, all features, UCI + Oxford + sim": (lambda: komd(False), ("oxford", "sim"), CONFIG),
    "KOMD, heading-invariant, UCI + Oxford": (lambda: komd(True), ("oxford",), CONFIG),
    "KOMD, heading-invariant, UCI + Oxford + sim": (lambda: komd(True), ("oxford", "sim"), CONFIG),
    "Nyström KOMD 300, heading-invariant, UCI + Oxford + sim": (lambda: komd(True, 300), ("oxford", "sim"), CONFIG),
    "Nyström KOMD 300, all features, UCI only (`stairsense train` default before step context)":
        (lambda: komd(False, 300), (), CONFIG),
    "Nyström KOMD 300, all features + step context, UCI only (`stairsense train` default)":
        (lambda: komd(False, 300, support_quantile=TRAIN_DEFAULTS.support_quantile,
                      support_scale=TRAIN_DEFAULTS.support_scale), (), CONTEXT_CONFIG),
    "Nyström KOMD 300, all features, UCI + Oxford + sim": (lambda: komd(False, 300), ("oxford", "sim"), CONFIG),
    "the `stairsense train` default without its support gate (`--support-quantile none`)":
        (lambda: komd(False, 300), (), CONTEXT_CONFIG),
}
# A variant named here trains on the subsample its twin drew in the same fold and draws none itself:
# a paired comparison, and every other variant sees the random draws it saw before the pair existed.
SAME_SUBSAMPLE_AS = {
    "Nyström KOMD 300, all features + step context, UCI only (`stairsense train` default)":
        "Nyström KOMD 300, all features, UCI only (`stairsense train` default before step context)",
    "the `stairsense train` default without its support gate (`--support-quantile none`)":
        "Nyström KOMD 300, all features, UCI only (`stairsense train` default before step context)",
}
SIM_TRAIN = ("sim0", "sim1", "sim2")  # simulated people used for training; sim3–sim5 are test only


def _subsample(index, y, cap, rng):
    if index.size <= cap:
        return index
    keep = []
    for label in (0, 1):
        part = index[y[index] == label]
        keep.append(rng.choice(part, size=int(round(cap * part.size / index.size)), replace=False))
    return np.sort(np.concatenate(keep))


def _exported_scores(pipe, X_test, config):
    from stairsense.export import build_onnx_model, support_budget

    model = StairstepModel(pipe, config, feature_names_for(config))
    budget = support_budget(model, 32 * 1024 - 2048, "int8")
    _, stored, head = build_onnx_model(model, "int8", max_support_vectors=budget)
    return stored(X_test), head.dual_coef.size


def run_folds(tables_of, n_folds, max_train, seed):
    """``tables_of`` maps each variant's config to its (UCI, Oxford, sim) tables: the same windows in
    the same order, with or without the step-context columns, so one set of row indices serves all."""
    reference = next(iter(tables_of.values()))
    (Xu, yu, mu), (Xo, _, mo), (Xs, ys, ms) = reference
    for tables in tables_of.values():
        assert all(np.array_equal(t[1], r[1]) and np.array_equal(t[2]["log"], r[2]["log"])
                   for t, r in zip(tables, reference)), "the step context changed the windows"
    subjects = np.unique(mu["subject"])
    folds = list(GroupKFold(n_folds, shuffle=True, random_state=seed).split(Xu, yu, mu["subject"]))
    rng = np.random.default_rng(seed)
    sim_train = np.isin(ms["subject"], SIM_TRAIN)
    sim_test = ~sim_train
    results = defaultdict(lambda: defaultdict(list))
    for i, (train_u, test_u) in enumerate(folds):
        user = OXFORD_USERS[i % len(OXFORD_USERS)]
        train_o = np.flatnonzero(mo["subject"] != user)
        test_o = np.flatnonzero(mo["subject"] == user)
        picks = {}
        for name, (factory, extra, config) in VARIANTS.items():
            (Xu, _, _), (Xo, _, _), (Xs, _, _) = tables_of[config]
            parts = [(Xu[train_u], yu[train_u])]
            if "oxford" in extra:
                parts.append((Xo[train_o], np.zeros(train_o.size, int)))
            if "sim" in extra:
                parts.append((Xs[sim_train], ys[sim_train]))
            X = np.vstack([p[0] for p in parts])
            y = np.concatenate([p[1] for p in parts])
            twin = SAME_SUBSAMPLE_AS.get(name)
            pick = picks[twin] if twin in picks else _subsample(np.arange(y.size), y, max_train, rng)
            picks[name] = pick
            started = time.perf_counter()
            pipe = factory().fit(X[pick], y[pick])
            fit_s = time.perf_counter() - started
            r = results[name]
            r["fit_s"].append(fit_s)
            r["uci"].append((yu[test_u], pipe.decision_function(Xu[test_u]) >= 0, mu["subject"][test_u],
                             mu["direction"][test_u]))
            r["oxford"].append((mo["placement"][test_o], pipe.decision_function(Xo[test_o]) >= 0))
            r["sim"].append((ys[sim_test], pipe.decision_function(Xs[sim_test]) >= 0, ms["placement"][sim_test]))
            komd_step = pipe.steps[-1][1]
            r["support"].append(int(komd_step.dual_coef_.size))
            r["features"].append(int(pipe.steps[1][1].get_support().sum()))
            exported, n_sv = _exported_scores(pipe, Xu[test_u], config)
            r["exported"].append((yu[test_u], exported >= 0, pipe.decision_function(Xu[test_u]) >= 0))
            r["exported_sv"].append(n_sv)
            print(f"fold {i} {name}: fit {fit_s:.0f} s", flush=True)
    return results, subjects


def _prf(pairs):
    """Fold-averaged P, R and F1(P̄, R̄) over (truth, prediction) pairs."""
    p, r = [], []
    for truth, pred in pairs:
        tp = np.sum(pred & (truth == 1))
        p.append(tp / max(np.sum(pred), 1))
        r.append(tp / max(np.sum(truth == 1), 1))
    pm, rm = float(np.mean(p)), float(np.mean(r))
    return pm, rm, 2 * pm * rm / (pm + rm) if pm + rm else 0.0


# ------------------------------------------------------------------ random-forest peer on fixed windows


def _fixed_window_features(acc, gyro, rate, seconds=2.56):
    n = int(round(seconds * rate))
    starts = np.arange(0, acc.shape[0] - n + 1, n // 2)
    channels = [acc, np.linalg.norm(acc, axis=1, keepdims=True)]
    if gyro is not None:
        channels += [gyro, np.linalg.norm(gyro, axis=1, keepdims=True)]
    signal = np.hstack(channels)
    idx = starts[:, None] + np.arange(n)[None, :]
    w = signal[idx]  # (windows, n, channels)
    feats = [w.mean(1), w.std(1), w.min(1), w.max(1), np.percentile(w, 25, axis=1), np.percentile(w, 75, axis=1)]
    return np.hstack(feats), idx


def rf_tables(use_gyro):
    from stairsense.stream import STAIR_ACTIVITIES, load_uci_hapt, resample

    stair_codes = [int(a) for a in STAIR_ACTIVITIES]
    X, y, subj, up = [], [], [], []
    for log in load_uci_hapt(data_dir("uci-hapt", "RawData")):
        f, idx = _fixed_window_features(log.acc, log.gyro if use_gyro else None, 50.0)
        lab = log.label[idx]
        stair = np.isin(lab, stair_codes).all(1)
        clean = stair | (~np.isin(lab, stair_codes) & (lab > 0)).all(1)
        X.append(f[clean]); y.append(stair[clean].astype(int))
        subj.append(np.full(clean.sum(), f"uci{log.meta['subject']}")); up.append(lab[clean, 0])
    uci = (np.vstack(X), np.concatenate(y), np.concatenate(subj), np.concatenate(up))
    X, placement, user = [], [], []
    for log in oxford_logs():
        log = resample(log, 50.0)
        f, _ = _fixed_window_features(log.acc, None, 50.0)
        X.append(f); placement += [log.meta["placement"].lower()] * len(f); user += [log.meta["subject"].lower()] * len(f)
    return uci, (np.vstack(X), np.array(placement), np.array(user))


def run_rf(n_folds, seed):
    out = {}
    for use_gyro in (True, False):
        (Xu, yu, su, lab), (Xo, po, uo) = rf_tables(use_gyro)
        folds = list(GroupKFold(n_folds, shuffle=True, random_state=seed).split(Xu, yu, su))
        uci, oxford = [], []
        for i, (tr, te) in enumerate(folds):
            rf = RandomForestClassifier(200, n_jobs=1, random_state=0).fit(Xu[tr], yu[tr])
            uci.append((yu[te], rf.predict(Xu[te]) == 1, su[te], lab[te]))
            if not use_gyro:
                test = uo == OXFORD_USERS[i % len(OXFORD_USERS)]
                oxford.append((po[test], rf.predict(Xo[test]) == 1))
        out[use_gyro] = (uci, oxford)
    return out


# ------------------------------------------------------------------ report


def _uci_rows(name, uci_parts):
    p, r, f = _prf([(t, pr) for t, pr, _, _ in uci_parts])
    up = np.concatenate([(pr & (t == 1))[d == 2] for t, pr, _, d in uci_parts]).mean()
    worst = min(float(np.mean(pr[(s == subj) & (t == 1)])) for t, pr, s, _ in uci_parts
                for subj in np.unique(s[t == 1]))
    return [name, f"{p:.3f}", f"{r:.3f}", f"**{f:.3f}**", f"{up:.3f}", f"{worst:.2f}"]


def _rate_rows(parts, placements):
    rates = {}
    for pl in placements:
        hits = np.concatenate([pred[where == pl] for where, pred in parts])
        rates[pl] = f"{hits.mean():.1%}" if hits.size else "–"
    return rates


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--max-train", type=int, default=4000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--only", type=int, nargs="+", metavar="I", help="run only these variants (0-based)")
    parser.add_argument("--skip-peer", action="store_true", help="leave out the random-forest peer")
    parser.add_argument("--out", default="robustness.md", help="results file name in benchmarks/results")
    args = parser.parse_args(argv)
    if args.only:
        for name in [n for i, n in enumerate(VARIANTS) if i not in args.only]:
            del VARIANTS[name]
    started = time.perf_counter()
    tables_of = {config: (uci_windows(config), oxford_windows(config), simulated_windows(config))
                 for config in {v[2]: None for v in VARIANTS.values()}}
    tables = next(iter(tables_of.values()))  # the placements are those of every table
    results, _ = run_folds(tables_of, args.folds, args.max_train, args.seed)
    rf = None if args.skip_peer else run_rf(args.folds, args.seed)

    ox_placements = sorted(np.unique(tables[1][2]["placement"]))
    sim_placements = sorted(np.unique(tables[2][2]["placement"]))
    cmd = (f".venv/bin/python benchmarks/bench_robustness.py --folds {args.folds} --max-train {args.max_train} "
           f"--seed {args.seed}" + (" --skip-peer" if args.skip_peer else "") + (f" --only {' '.join(map(str, args.only))} --out {args.out}" if args.only else ""))
    lines = ["# Placement robustness and compaction of the stair-step classifier (issue 9)", "",
             f"Command: `{cmd}` at commit `{git_commit(ROOT)}`; load average {load_average()}.", "",
             __doc__.split("\n\n", 1)[1].rsplit("\n\nWrites", 1)[0], "",
             "## UCI HAPT, leave-subjects-out (held-out subjects)", ""]
    rows = [_uci_rows(name, r["uci"]) + [f"{np.median(r['features']):.0f}", f"{np.median(r['support']):.0f}"]
            for name, r in results.items()]
    for use_gyro, label in ((True, "Random forest, 2.56 s windows, acc + gyro (peer)"),
                            (False, "Random forest, 2.56 s windows, acc only")) if rf else ():
        rows.append(_uci_rows(label, rf[use_gyro][0]) + ["48" if use_gyro else "24", "–"])
    lines += markdown_table(["variant", "P", "R", "F1(P̄,R̄)", "stairs-up recall", "worst subject R",
                             "features", "support vectors"], rows, "lrrrrrrr")
    lines += ["", "Targets: F1 ≥ 0.93 with stairs-up recall ≥ 0.9. RF rows: per fixed window, not per step.", "",
              "## Exported int8 file (≤ 32 KB) against the Python model, same held-out subjects", ""]
    rows = []
    for name, r in results.items():
        f = _prf([(t, pr) for t, _, pr in r["exported"]])[2]
        fe = _prf([(t, pr) for t, pr, _ in r["exported"]])[2]
        agree = np.mean(np.concatenate([a == b for _, a, b in r["exported"]]))
        rows.append([name, f"{np.median(r['exported_sv']):.0f} / {np.median(r['support']):.0f}", f"{f:.3f}",
                     f"{fe:.3f}", f"{fe - f:+.3f}", f"{agree:.2%}"])
    lines += markdown_table(["variant", "exported / trained support vectors", "F1 Python", "F1 exported",
                             "ΔF1", "same decision"], rows, "lrrrrr")
    lines += ["", "Target: ΔF1 ≥ −0.01 and ≥ 99.5 % agreement (else `stairsense export` refuses).", "",
              "## Oxford level walking, leave-one-user-out: share of windows classified STAIR", ""]
    rows = []
    for name, r in results.items():
        rates = _rate_rows(r["oxford"], ox_placements)
        rows.append([name] + [rates[p] for p in ox_placements])
    if rf:
        rates = _rate_rows(rf[False][1], ox_placements)
        rows.append(["Random forest, acc only (Oxford has no gyroscope)"] + [rates[p] for p in ox_placements])
    lines += markdown_table(["variant"] + ox_placements, rows, "l" + "r" * len(ox_placements))
    lines += ["", "Target: ≤ 5 % in every placement.", "",
              "## Simulated placements, held-out simulated people (sim3–sim5): false-stair rate on NO_STAIR windows / "
              "stair recall", ""]
    rows = []
    for name, r in results.items():
        cells = []
        for pl in sim_placements:
            neg = np.concatenate([pr[(where == pl) & (t == 0)] for t, pr, where in r["sim"]])
            pos = np.concatenate([pr[(where == pl) & (t == 1)] for t, pr, where in r["sim"]])
            cells.append(f"{neg.mean():.1%} / {pos.mean():.2f}")
        rows.append([name] + cells)
    lines += markdown_table(["variant"] + sim_placements, rows, "l" + "r" * len(sim_placements))
    fit = {name: np.median(r["fit_s"]) for name, r in results.items()}
    lines += ["", "Median fit seconds per fold: " + ", ".join(f"{k}: {v:.0f}" for k, v in fit.items()) + ".",
              f"Total wall time {time.perf_counter() - started:.0f} s.", ""]
    write_results(ROOT / "benchmarks" / "results" / args.out, "\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
