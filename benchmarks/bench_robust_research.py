"""Research for issue 9: can any recipe meet the HAPT and the Oxford targets at once?

Targets (issue 9): UCI HAPT leave-subjects-out F1 ≥ 0.93 with stairs-up recall ≥ 0.9, AND ≤ 5 % of
Oxford level-walking steps classified STAIR in every placement (held-out Oxford users).

Protocol, the same folds for every candidate (those of ``bench_robustness.py``): the 21 HAPT
subjects in 5 GroupKFold groups (shuffled, seed 0); fold i also holds out Oxford user i mod 3
(Jamie, Carmelo, Dario). Candidates "+ Oxford" train on the other two users' level walking as
NO_STAIR windows, never on the held-out user. Reported per candidate: HAPT P, R, F1 of the
fold-averaged P and R, stairs-up recall, the worst held-out subject's recall; the share of held-out
Oxford walking windows (≈ steps) classified STAIR per placement and its worst placement; the stair
recall and false-stair rate on the held-out simulated people (sim3–sim5, four placements with
stairs), which is the only check that a model did not simply learn "not a waist phone ⇒ not stairs".

Feature sets (windows are the front end's step windows at 30 Hz, ``orientation="vertical"``):

* ``T12.1`` — the 79 Table 12.1 features (what ships); ``inv`` — their 15 heading-invariant ones;
* ``+step`` — ``_research_features.NAMES``: step shape, horizontal magnitude, vertical excursion and
  causal context over the last 5 steps;
* ``+step10`` — the same with a 10-step context;
* ``norm`` — the 79 Table 12.1 features of the samples divided by the vertical spread of the last
  5 steps (amplitude removed), plus the amplitude-free step features.

Models: Nyström KOMD, 300 landmarks (the shipped family; Λ = 0.01, γ = 2⁻⁵, EasyMKL k = 49, at most
``--max-train`` stratified training windows), and histogram gradient boosting (HGB, 150 trees, a
diagnostic of what the features allow, not exportable by the package today). "thr nested" picks the
decision threshold inside the training fold: out-of-fold scores over 3 inner subject groups (with
inner leave-one-Oxford-user-out), the highest threshold whose inner stairs-up recall is ≥ 0.9. "amp aug": every
training window also at 0.7× and 1.4× amplitude. The random-forest peer of ``bench_robustness.py``
(fixed 2.56 s windows; acc + gyro on HAPT, acc only on Oxford) runs in the same script.

Writes ``benchmarks/results/robust_research.md``.
"""
from __future__ import annotations

import argparse
import time
import warnings
from collections import defaultdict
from pathlib import Path

import numpy as np
from _common import git_commit, load_average, markdown_table, write_results
from _research_features import NAMES as STEP_NAMES
from _research_features import stream_features
from _research_streams import oxford_streams, simulated_streams, uci_streams
from bench_robustness import OXFORD_USERS, SIM_TRAIN, _prf, _rate_rows, _subsample, _uci_rows, run_rf
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.model_selection import GroupKFold

from stairsense import PipelineConfig
from stairsense.features import FEATURE_NAMES, window_features
from stairsense.models import make_stairstep_pipeline
from stairsense.models.stairstep import heading_invariant_mask

ROOT = Path(__file__).resolve().parents[1]
MEASURES = ("stream/", ":!stream/io/", "features/", "models/mkl/", "models/stairstep/", "stairsense/pipeline.py",
            "benchmarks/_robust_data.py", "benchmarks/_research_streams.py", "benchmarks/_research_features.py",
            "benchmarks/bench_robustness.py")
CONFIG = PipelineConfig(rate_hz=30, orientation="vertical", step_context=0)  # adds its own research features
LAM, GAMMA = 0.01, 2.0**-5
AMPLITUDES = (0.7, 1.4)
# Step features that carry amplitude (m/s², m/s, m): left out of the amplitude-free "norm" set.
_AMPLITUDE_WORDS = ("z_std", "z_range", "z_max", "z_min", "h_mean", "h_std", "h_range", "dz_range", "dz_end",
                    "vz_range")
AMPLITUDE_FREE = np.array([not any(w in n for w in _AMPLITUDE_WORDS) or "norm" in n or "_cv_" in n
                           for n in STEP_NAMES])


# ------------------------------------------------------------------ window tables


def _normalised(stream, context=5):
    """Samples of each window divided by the mean vertical spread of its last ``context`` steps."""
    starts, stops = stream["start"], stream["stop"]
    sd = np.array([stream["samples"][a:b, 2].std() for a, b in zip(starts, stops)])
    scale = np.array([sd[max(0, i - context + 1): i + 1].mean() for i in range(sd.size)]) + 1e-6
    return [stream["samples"][a:b] / s for a, b, s in zip(starts, stops, scale)]


def _table(streams, amplitude=1.0):
    """Per labelled window: T12.1 (79) | step (STEP_NAMES) | norm T12.1 (79) | 10-step context, and its metadata."""
    rows, meta = [], defaultdict(list)
    for s in streams:
        if amplitude != 1.0:
            s = dict(s, samples=s["samples"] * amplitude)
        good = s["y"] >= 0
        if not good.any():
            continue
        lengths = s["stop"] - s["start"]
        offsets = np.concatenate([[0], np.cumsum(lengths)])
        flat = np.vstack([s["samples"][a:b] for a, b in zip(s["start"], s["stop"])]).astype(np.float64)
        t121 = window_features(flat, offsets)
        norm = window_features(np.vstack(_normalised(s)).astype(np.float64), offsets)
        step, step10 = stream_features(s), stream_features(s, context=10)
        rows.append(np.hstack([t121, step, norm, step10[:, NSHAPE:]])[good])
        for key in ("subject", "placement", "dataset"):
            meta[key] += [s[key]] * int(good.sum())
        meta["y"].append(s["y"][good])
        meta["direction"].append(s["direction"][good])
    X = np.vstack(rows)
    meta = {k: (np.concatenate(v) if isinstance(v[0], np.ndarray) else np.array(v)) for k, v in meta.items()}
    return X, meta["y"].astype(int), meta


N79, NSTEP = len(FEATURE_NAMES), len(STEP_NAMES)
NSHAPE = sum(not n.startswith("ctx_") for n in STEP_NAMES)
COLUMNS = {
    "T12.1": np.r_[0:N79],
    "T12.1+step": np.r_[0:N79 + NSTEP],
    "T12.1+step10": np.r_[0:N79 + NSHAPE, N79 + NSTEP + N79:N79 + NSTEP + N79 + NSTEP - NSHAPE],
    "inv+step": np.r_[np.flatnonzero(heading_invariant_mask(FEATURE_NAMES)), N79:N79 + NSTEP],
    "norm": np.r_[N79 + np.flatnonzero(AMPLITUDE_FREE), N79 + NSTEP:N79 + NSTEP + N79],
    "norm inv": np.r_[N79 + np.flatnonzero(AMPLITUDE_FREE),
                      N79 + NSTEP + np.flatnonzero(heading_invariant_mask(FEATURE_NAMES))],
}


# ------------------------------------------------------------------ candidates


def _komd():
    return make_stairstep_pipeline(k=49, lam=LAM, gamma=GAMMA, n_landmarks=300, random_state=0)


def _hgb():
    return HistGradientBoostingClassifier(max_iter=150, learning_rate=0.15, random_state=0)


# name → (features, model factory, train on Oxford negatives, train on sim0–2, amplitude aug, nested threshold
#         [, sample weight of each Oxford window, default 1])
CANDIDATES = {
    "A KOMD-Nys300, T12.1, UCI only (shipped default)": ("T12.1", _komd, False, False, False, False),
    "B KOMD-Nys300, T12.1+step, UCI only": ("T12.1+step", _komd, False, False, False, False),
    "C KOMD-Nys300, T12.1+step, UCI + Oxford": ("T12.1+step", _komd, True, False, False, False),
    "D KOMD-Nys300, inv+step, UCI + Oxford": ("inv+step", _komd, True, False, False, False),
    "E KOMD-Nys300, norm, UCI + Oxford": ("norm", _komd, True, False, False, False),
    "F HGB, T12.1, UCI only": ("T12.1", _hgb, False, False, False, False),
    "G HGB, T12.1+step, UCI only": ("T12.1+step", _hgb, False, False, False, False),
    "H HGB, T12.1+step, UCI + Oxford": ("T12.1+step", _hgb, True, False, False, False),
    "I HGB, T12.1+step, UCI + Oxford, thr nested": ("T12.1+step", _hgb, True, False, False, True),
    "J HGB, T12.1+step10, UCI + Oxford": ("T12.1+step10", _hgb, True, False, False, False),
    "K HGB, T12.1+step, UCI + Oxford ×3 weight": ("T12.1+step", _hgb, True, False, False, False, 3.0),
    "L HGB, norm, UCI + Oxford": ("norm", _hgb, True, False, False, False),
    "M HGB, norm inv, UCI + Oxford + amp aug": ("norm inv", _hgb, True, False, True, False),
}


def _scores(model, X):
    return model.decision_function(X) if hasattr(model, "decision_function") else model.predict_proba(X)[:, 1] - 0.5


def _fit(factory, X, y, w, is_komd, cap, rng):
    if is_komd:  # KOMD takes no sample weights: a stratified subsample of at most `cap` windows
        pick = _subsample(np.arange(y.size), y, cap, rng)
        return factory().fit(X[pick], y[pick])
    return factory().fit(X, y, sample_weight=w)


def _training_set(idx_u, idx_o, idx_s, tables, cols, amp_aug, oxford_weight=1.0):
    """Rows, labels and sample weights of the training windows (plus amplitude-scaled copies when asked)."""
    (Xu, yu, _), (Xo, _, _), (Xs, ys, _), aug = tables
    X = [Xu[idx_u][:, cols], Xo[idx_o][:, cols], Xs[idx_s][:, cols]]
    y = [yu[idx_u], np.zeros(idx_o.size, int), ys[idx_s]]
    w = [np.ones(idx_u.size), np.full(idx_o.size, oxford_weight), np.ones(idx_s.size)]
    if amp_aug:
        for (Au, Ao) in aug:
            X += [Au[idx_u][:, cols], Ao[idx_o][:, cols]]
            y += [yu[idx_u], np.zeros(idx_o.size, int)]
            w += [np.ones(idx_u.size), np.full(idx_o.size, oxford_weight)]
    return np.vstack(X), np.concatenate(y), np.concatenate(w)


def _nested_threshold(factory, tables, cols, train_u, train_o, train_s, amp_aug, oxford_weight, is_komd, cap, rng):
    """Threshold from out-of-fold HAPT scores inside the training fold (3 subject groups)."""
    (Xu, yu, mu), _, _, _ = tables
    inner = list(GroupKFold(3, shuffle=True, random_state=1).split(train_u, groups=mu["subject"][train_u]))
    su = np.empty(train_u.size)
    for j, (a, b) in enumerate(inner):
        X, y, w = _training_set(train_u[a], train_o, train_s, tables, cols, amp_aug, oxford_weight)
        model = _fit(factory, X, y, w, is_komd, cap, rng)
        su[b] = _scores(model, Xu[train_u[b]][:, cols])
    truth, direction = yu[train_u], mu["direction"][train_u]
    # The highest threshold whose inner stairs-up recall stays ≥ 0.9: HAPT's 14 training subjects
    # estimate that well, while the inner Oxford rate (one training user) is pessimistic — an
    # Oxford-first rule (best inner F1 with every inner placement ≤ 5 %) chose thresholds of 8–13
    # log-odds and a HAPT F1 of 0.25 in an exploratory run (issue-9 research report).
    up = np.sort(su[(truth == 1) & (direction == 2)])
    return float(up[int(np.floor(0.1 * up.size))]) if up.size else 0.0


def run_candidates(tables, names, n_folds, cap, seed):
    (Xu, yu, mu), (Xo, _, mo), (Xs, ys, ms), _ = tables
    folds = list(GroupKFold(n_folds, shuffle=True, random_state=seed).split(Xu, yu, mu["subject"]))
    sim_train = np.flatnonzero(np.isin(ms["subject"], SIM_TRAIN))
    sim_test = np.flatnonzero(~np.isin(ms["subject"], SIM_TRAIN))
    none = np.zeros(0, int)
    results = defaultdict(lambda: defaultdict(list))
    for i, (train_u, test_u) in enumerate(folds):
        user = OXFORD_USERS[i % len(OXFORD_USERS)]
        train_o = np.flatnonzero(mo["subject"] != user)
        test_o = np.flatnonzero(mo["subject"] == user)
        for name in names:
            features, factory, oxford, sim, amp_aug, nested = CANDIDATES[name][:6]
            oxford_weight = CANDIDATES[name][6] if len(CANDIDATES[name]) > 6 else 1.0
            cols, is_komd = COLUMNS[features], factory is _komd
            rng = np.random.default_rng(seed)
            started = time.perf_counter()
            t_o, t_s = (train_o if oxford else none), (sim_train if sim else none)
            X, y, w = _training_set(train_u, t_o, t_s, tables, cols, amp_aug, oxford_weight)
            model = _fit(factory, X, y, w, is_komd, cap, rng)
            thr = (_nested_threshold(factory, tables, cols, train_u, t_o, t_s, amp_aug, oxford_weight, is_komd, cap,
                                     rng)
                   if nested else 0.0)
            r = results[name]
            r["fit_s"].append(time.perf_counter() - started)
            r["thr"].append(thr)
            su, so = _scores(model, Xu[test_u][:, cols]) - thr, _scores(model, Xo[test_o][:, cols]) - thr
            r["uci"].append((yu[test_u], su >= 0, mu["subject"][test_u], mu["direction"][test_u]))
            r["oxford"].append((mo["placement"][test_o], so >= 0))
            r["scores"].append((yu[test_u], su, mu["direction"][test_u], mo["placement"][test_o], so))
            r["sim"].append((ys[sim_test], _scores(model, Xs[sim_test][:, cols]) >= thr, ms["placement"][sim_test]))
            print(f"fold {i} {name}: {r['fit_s'][-1]:.0f} s", flush=True)
    return results


def run_placement_out(tables, name, cap, seed):
    """Oxford leave-one-placement-out for one candidate: share of the held-out placement's windows called STAIR.

    Each fold trains on every HAPT subject and on the Oxford walking of the other placements (all
    users: the same user's other placements stay in training, so this isolates an unseen placement,
    not an unseen person) and tests the held-out placement. Against the leave-one-user-out table, it
    shows how much of the Oxford gain is the model learning the placements it was shown.
    """
    (Xu, yu, _), (Xo, _, mo), _, _ = tables
    features, factory, oxford, sim, amp_aug, nested = CANDIDATES[name][:6]
    oxford_weight = CANDIDATES[name][6] if len(CANDIDATES[name]) > 6 else 1.0
    cols, is_komd = COLUMNS[features], factory is _komd
    rates = {}
    for pl in sorted(np.unique(mo["placement"])):
        rng = np.random.default_rng(seed)
        train_o, test_o = np.flatnonzero(mo["placement"] != pl), np.flatnonzero(mo["placement"] == pl)
        X, y, w = _training_set(np.arange(yu.size), train_o, np.zeros(0, int), tables, cols, amp_aug, oxford_weight)
        model = _fit(factory, X, y, w, is_komd, cap, rng)
        rates[pl] = float(np.mean(_scores(model, Xo[test_o][:, cols]) >= 0))
        print(f"placement out {pl}: {rates[pl]:.1%}", flush=True)
    return rates


# ------------------------------------------------------------------ report


def amplitude_rows(uci, ox):
    """Median per-step vertical spread (Std of z, m/s²) by HAPT activity and by Oxford user × placement."""
    def sd(stream, mask):
        return [stream["samples"][a:b, 2].std() for a, b in zip(stream["start"][mask], stream["stop"][mask])]

    rows = []
    for code, label in ((0, "walking etc. (NO_STAIR)"), (2, "stairs up"), (3, "stairs down")):
        v = [x for s in uci for x in sd(s, (s["y"] >= 0) & (s["direction"] == code))]
        rows.append(["UCI HAPT, waist", label, f"{np.median(v):.2f}", len(v)])
    for user in OXFORD_USERS:
        for pl in sorted({s["placement"] for s in ox if s["subject"] == user}):
            v = [x for s in ox if s["subject"] == user and s["placement"] == pl for x in sd(s, s["y"] >= 0)]
            devices = ", ".join(sorted({s["device"] for s in ox if s["subject"] == user and s["placement"] == pl}))
            rows.append([f"Oxford {user} ({devices})",
                         f"level walking, {pl}", f"{np.median(v):.2f}", len(v)])
    return rows


def oracle_frontier(score_parts):
    """Best HAPT F1 (and its stairs-up recall) over thresholds whose worst Oxford placement is ≤ 5 %.

    The threshold is chosen on the test folds themselves, so this is an upper bound on what the
    candidate's scores allow, not an achievable figure; ``None`` when no threshold reaches 5 %.
    Also the worst Oxford placement at the highest threshold that keeps stairs-up recall ≥ 0.9.
    """
    shifts = np.quantile(np.concatenate([s for _, s, _, _, _ in score_parts]), np.linspace(0.0, 1.0, 201))
    best, at_up = None, None
    for t in np.unique(shifts):
        pairs = [(truth, s >= t) for truth, s, _, _, _ in score_parts]
        f1 = _prf(pairs)[2]
        up = np.concatenate([(s >= t)[(truth == 1) & (d == 2)] for truth, s, d, _, _ in score_parts]).mean()
        place = np.concatenate([p for _, _, _, p, _ in score_parts])
        hits = np.concatenate([o >= t for _, _, _, _, o in score_parts])
        worst = max(hits[place == pl].mean() for pl in np.unique(place))
        if worst <= 0.05 and (best is None or f1 > best[0]):
            best = (f1, up)
        if up >= 0.9:
            at_up = worst
    return best, at_up


def _summary(name, r, ox_placements, sim_placements):
    row = _uci_rows(name, r["uci"])
    f1, up = float(row[3].strip("*")), float(row[4])
    rates = _rate_rows(r["oxford"], ox_placements)
    worst = max(float(rates[p].rstrip("%")) for p in ox_placements)
    met = ("met" if f1 >= 0.93 and up >= 0.9 else "MISSED", "met" if worst <= 5 else "MISSED")
    sim_cells = []
    if r.get("sim"):
        for pl in sim_placements:
            neg = np.concatenate([pr[(w == pl) & (t == 0)] for t, pr, w in r["sim"]])
            pos = np.concatenate([pr[(w == pl) & (t == 1)] for t, pr, w in r["sim"]])
            sim_cells.append(f"{neg.mean():.1%} / {pos.mean():.2f}")
    return row, rates, worst, met, sim_cells


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--max-train", type=int, default=4000, help="KOMD training windows per fold (stratified)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--only", nargs="+", metavar="L", help="candidate letters to run (default: all)")
    parser.add_argument("--skip-peer", action="store_true")
    parser.add_argument("--lopo", nargs="+", metavar="L", default=[],
                        help="candidate letters to also run Oxford leave-one-placement-out (fixed threshold 0)")
    parser.add_argument("--out", default="robust_research.md")
    args = parser.parse_args(argv)
    warnings.filterwarnings("ignore", category=RuntimeWarning)
    names = [n for n in CANDIDATES if not args.only or n.split()[0] in args.only]
    started = time.perf_counter()
    uci, ox, sim = uci_streams(CONFIG), oxford_streams(CONFIG), simulated_streams(CONFIG)
    aug = [(_table(uci, a)[0], _table(ox, a)[0]) for a in AMPLITUDES] if any(
        CANDIDATES[n][4] for n in names) else []
    tables = (_table(uci), _table(ox), _table(sim), aug)
    print(f"tables built in {time.perf_counter() - started:.0f} s", flush=True)
    results = run_candidates(tables, names, args.folds, args.max_train, args.seed)
    peer = None if args.skip_peer else run_rf(args.folds, args.seed)
    lopo = {n: run_placement_out(tables, n, args.max_train, args.seed) for n in CANDIDATES
            if args.lopo and n.split()[0] in args.lopo}

    ox_placements = sorted(np.unique(tables[1][2]["placement"]))
    sim_placements = sorted(np.unique(tables[2][2]["placement"]))
    cmd = (f".venv/bin/python benchmarks/bench_robust_research.py --folds {args.folds} --max-train {args.max_train} "
           f"--seed {args.seed}" + (" --skip-peer" if args.skip_peer else "")
           + (f" --only {' '.join(args.only)}" if args.only else "")
           + (f" --lopo {' '.join(args.lopo)}" if args.lopo else "") + f" --out {args.out}")
    lines = ["# Research: one stair-step recipe for HAPT and Oxford at once (issue 9)", "",
             f"Command: `{cmd}` at commit `{git_commit(ROOT)}`; load average {load_average()}.", "",
             __doc__.split("\n\n", 1)[1].rsplit("\n\nWrites", 1)[0], "",
             "## Both targets side by side", ""]
    rows, ox_rows, sim_rows, oracle_rows = [], [], [], []
    for name, r in results.items():
        row, rates, worst, met, sim_cells = _summary(name, r, ox_placements, sim_placements)
        rows.append(row + [f"{worst:.1f}%", met[0], met[1]])
        best, at_up = oracle_frontier(r["scores"])
        oracle_rows.append([name, f"{best[0]:.3f} / {best[1]:.3f}" if best else "none ≤ 5 %",
                            "–" if at_up is None else f"{at_up:.1%}"])
        ox_rows.append([name] + [rates[p] for p in ox_placements])
        sim_rows.append([name] + sim_cells)
    if peer:
        up_rows = {True: "RF peer, 2.56 s windows, acc + gyro", False: "RF, 2.56 s windows, acc only"}
        for use_gyro, label in up_rows.items():
            row = _uci_rows(label, peer[use_gyro][0])
            f1, up = float(row[3].strip("*")), float(row[4])
            if use_gyro:
                rows.append(row + ["(no gyro on Oxford)", "met" if f1 >= 0.93 and up >= 0.9 else "MISSED", "–"])
            else:
                rates = _rate_rows(peer[False][1], ox_placements)
                worst = max(float(rates[p].rstrip("%")) for p in ox_placements)
                rows.append(row + [f"{worst:.1f}%", "met" if f1 >= 0.93 and up >= 0.9 else "MISSED",
                                   "met" if worst <= 5 else "MISSED"])
                ox_rows.append([label] + [rates[p] for p in ox_placements])
    lines += markdown_table(["candidate", "P", "R", "F1(P̄,R̄)", "stairs-up recall", "worst subject R",
                             "worst Oxford placement", "HAPT target", "Oxford target"], rows, "lrrrrrrll")
    lines += ["", "HAPT target: F1 ≥ 0.93 and stairs-up recall ≥ 0.9; Oxford target: ≤ 5 % in every placement.", "",
              "## Oxford level walking, held-out user: share of windows classified STAIR", ""]
    lines += markdown_table(["candidate"] + ox_placements, ox_rows, "l" + "r" * len(ox_placements))
    lines += ["", "## Upper bound: the threshold chosen on the test folds (not achievable; shows what the scores allow)",
              ""]
    lines += markdown_table(["candidate", "best F1 / stairs-up recall with every Oxford placement ≤ 5 %",
                             "worst Oxford placement with stairs-up recall ≥ 0.9"], oracle_rows, "lrr")
    lines += ["", "## Simulated placements with stairs, held-out people sim3–sim5: false-stair rate / stair recall", ""]
    lines += markdown_table(["candidate"] + sim_placements, sim_rows, "l" + "r" * len(sim_placements))
    if lopo:
        lines += ["", "## Oxford leave-one-placement-out (all HAPT subjects; every user of the held-out placement "
                  "left out of training): share of its windows classified STAIR", "",
                  run_placement_out.__doc__.split("\n\n")[1].replace("\n    ", " ").strip(), ""]
        lines += markdown_table(["candidate"] + ox_placements,
                                [[n] + [f"{r[p]:.1%}" for p in ox_placements] for n, r in lopo.items()],
                                "l" + "r" * len(ox_placements))
    lines += ["", "## Why amplitude does not transfer: median per-step vertical spread Std(z)", "",
              "On the waist, stairs differ from level walking mostly by how hard the body moves up and down; on",
              "other phones and people, level walking alone spans that whole range.", ""]
    lines += markdown_table(["recordings", "activity", "median Std(z), m/s²", "windows"], amplitude_rows(uci, ox),
                            "llrr")
    fit = ", ".join(f"{n.split()[0]} {np.median(r['fit_s']):.0f} s" for n, r in results.items())
    thr = ", ".join(f"{n.split()[0]} {np.round(r['thr'], 3).tolist()}" for n, r in results.items()
                    if CANDIDATES[n][5])
    lines += ["", f"Median fit seconds per fold: {fit}.", f"Nested thresholds per fold (HGB: probability − 0.5): {thr}.",
              f"Total wall time {time.perf_counter() - started:.0f} s.", ""]
    write_results(ROOT / "benchmarks" / "results" / args.out, "\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
