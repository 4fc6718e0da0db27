"""The shipped stair-step model on real recordings in every placement (issue 23), beside a random-forest peer.

What is measured is **today's** ``stairsense train``: its shipped recipe,
``stairsense.models.TRAIN_DEFAULTS`` (``PipelineConfig()`` — native rate, ``orientation="auto"``,
which is ``vertical`` on every one of these recordings, step context 5 — and 300-landmark Nyström
KOMD with Λ = 0.01, γ = 2⁻⁵ on EasyMKL's top 49 of the 115 features), trained on the windows
``stairsense train`` cuts (``stairsense.recording_windows``) and fitted with ``TrainRecipe.fit`` as
``train`` does.
Training "across placements" is the union of every set's training subjects, UCI HAPT included.

Protocols, folds fixed by ``--seed``:

* **leave-subjects-out** (the issue's targets): within each set, ``GroupKFold`` over its subjects
  (as many folds as it has subjects, up to ``--folds``); fold *i* of the run holds out fold *i* of
  every set at once and trains on everything else. A set with one subject (IPIN: its logs do not
  name their walkers, so the loader calls them all ``ipin-2023-t3``) is held out whole in fold 0
  and is in training in the other folds.
* **leave-one-set-out**: train on every other set plus UCI HAPT, test on the held-out set
  (MobiFall, WEDA-FALL, GeoTecINIT with its phone and watch, IPIN, Oxford).

Figures per set and placement, pooled over the held-out windows of all folds (each window is
tested once per protocol, by a model that never saw its subject):

* **stair-step recall**: share of STAIR step windows (kept steps) decided STAIR — MobiFall's
  stairs trials, WEDA's stairs files (labelled per file, so this is the stair share of steps on
  ``D03`` files; the level steps between flights count as stairs), UCI HAPT's stairs segments.
* **level walking called stairs**: share of kept step windows whose every sample is labelled
  WALKING (``WindowDataset.activity``) that are decided STAIR — MobiFall ``WAL``, WEDA ``D01``,
  GeoTecINIT walking and turning (phone and watch), IPIN's walk from the first to the last way-point, every Oxford recording
  (per placement), UCI HAPT walking.
* **F1** of STAIR over all labelled windows of a set where it has both classes.
* **MobiFall stairs trials** (10 stairs each): share of trials whose stair steps (kept windows
  decided STAIR) are within ±2 of 10; and, for the step counter, all kept windows within ±2 of 10
  beside the plain counter (``_plain_counter.PlainCounter()`` at its constructor defaults).
* **IPIN calibration opening** (the phone waved, then held still, before the first way-point; its
  own case, no target): share of kept windows there decided STAIR. The loader labels the opening
  HANDLING, not stairs, so it is data like any other: a model trains on it when IPIN is in its
  training folds, as ``stairsense train`` does, and IPIN is tested only by models that never saw it.

The peer is the issue's: a random forest (200 trees, ``bench_robustness``'s) on fixed 2.56 s windows
(50 % overlap, every log resampled to 50 Hz), features by ``bench_robustness._fixed_window_features``
(mean, std, min, max, quartiles of each axis and the magnitude), labelled by the same rule as
the step windows (``stairsense.features.window_labels``). "acc" reads the accelerometer only (every
set, as our model does); "acc + gyro" adds the gyroscope and so trains and tests without Oxford
(no gyroscope there). Its rates are per fixed window, not per step. Its MobiFall stair steps are
the plain counter's steps whose nearest fixed window (by centre) the forest decides STAIR.

A second peer reads our rows: gradient-boosted trees (scikit-learn's histogram boosting, 300
rounds, as ``bench_barometer.py``'s peer) fitted on the very windows ours is fitted on in each fold
and voted as ours is: what a flexible model makes of the same features and the same training data,
to tell what the features and the data allow from what KOMD makes of them. Not exported.

Both models train on at most ``--max-train`` windows per fold, drawn without replacement in
proportion to each (set, class) stratum, so every set keeps its share of the union.

Our decisions are those ``replay`` counts: each log's, in time order, voted over the recipe's
``vote_steps`` consecutive windows of a run (``stairsense.models.StepVote``). The vote runs over
the windows scored here, so a window straddling a stair boundary (ambiguous, left out) is left out
of it too, where the phone would count its vote. ``--variant vote_steps=1`` measures the model
deciding every step alone.

Writes ``benchmarks/results/placements.md`` (``--quick`` or ``--variant``: a page in
``benchmarks/out/``).
"""
from __future__ import annotations

import os

from _common import ONE_THREAD_VARIABLES

# Other benchmarks time things on this 2-core machine: one thread per pool, so this run takes one core.
for _name in ONE_THREAD_VARIABLES:
    os.environ.setdefault(_name, "1")

import argparse  # noqa: E402
import dataclasses  # noqa: E402
import json  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402
from dataclasses import dataclass, field  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
from _common import data_dir, git_commit, load_average, markdown_table, vote_per_log, write_results  # noqa: E402
from _plain_counter import PlainCounter  # noqa: E402
from bench_robustness import _fixed_window_features  # noqa: E402
from sklearn.ensemble import HistGradientBoostingClassifier, RandomForestClassifier  # noqa: E402
from sklearn.model_selection import GroupKFold  # noqa: E402

from stairsense import recording_windows  # noqa: E402
from stairsense.features import AMBIGUOUS, STAIR, window_labels  # noqa: E402
from stairsense.models import TRAIN_DEFAULTS, TrainRecipe, stair_rates  # noqa: E402
from stairsense.stream import MOBIFALL_STAIRS_PER_TRIAL, Activity, resample  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
# The loaders are measured (they make the windows and their labels), the path from recordings to
# windows, the recipe and the model, and the peer's code in bench_robustness.
MEASURES = ("stream/", "features/", "models/mkl/", "models/stairstep/", "stairsense/_recordings.py",
            "benchmarks/bench_robustness.py", "benchmarks/_plain_counter.py")

# (set, folder under the data root); UCI HAPT is always trained on and never held out as a set.
SETS = (("mobifall", ("mobifall-pocket",)), ("weda", ("weda-wrist",)), ("geotec", ("geotec-pocket-wrist", "DATA")),
        ("ipin", ("ipin-hand-baro",)), ("oxford", ("oxford-stepcounter", "optimisation")),
        ("uci", ("uci-hapt", "RawData")))
HELD_OUT_SETS = ("mobifall", "weda", "geotec", "ipin", "oxford")
SET_NAMES = {"mobifall": "MobiFall", "weda": "WEDA-FALL", "geotec": "GeoTecINIT", "ipin": "IPIN 2023 T3",
             "oxford": "Oxford", "uci": "UCI HAPT"}
RF_RATE_HZ = 50.0
RF_TREES = 200  # bench_robustness.run_rf's forest
TRIAL_TOLERANCE = 2
# Issue 23's targets (leave-subjects-out).
WALK_TARGET, RECALL_TARGET, TRIAL_TARGET, STEP_TARGET = 0.05, 0.85, 0.90, 0.95
UCI_F1_TARGET, UCI_UP_TARGET = 0.93, 0.9
RECALL_TARGET_SETS = ("mobifall", "weda")
PEERS = ("RF acc", "RF acc + gyro")
ROWS_PEER = "trees on our rows"


# ------------------------------------------------------------------ windows of every set


@dataclass
class Table:
    """One row per window (step windows for ours, fixed windows for the peer) and what the figures need."""

    X: np.ndarray
    y: np.ndarray  # 1 STAIR, 0 NO_STAIR
    direction: np.ndarray  # 2 up, 3 down (UCI, MobiFall), 13 unknown (WEDA), 0 not stairs
    set: np.ndarray
    placement: np.ndarray
    subject: np.ndarray
    log: np.ndarray  # global log id
    walking: np.ndarray  # every sample labelled WALKING
    calibration: np.ndarray  # IPIN's calibration opening (HANDLING), scored apart
    X_gyro: np.ndarray | None = None  # the peer's acc + gyro features (NaN rows where no gyroscope)
    centre_ns: np.ndarray | None = None  # the peer's window centres (to place plain-counter steps)
    t_start_ns: np.ndarray | None = None  # our step windows' times (for the vote)
    t_end_ns: np.ndarray | None = None

    @classmethod
    def concatenate(cls, parts: list[Table]) -> Table:
        names = [f for f in cls.__dataclass_fields__ if getattr(parts[0], f) is not None]
        return cls(**{f: np.concatenate([getattr(p, f) for p in parts]) for f in names})


@dataclass
class Recording:
    """One loaded log: what the per-trial figures and the peer need."""

    set: str
    subject: str
    placement: str
    log: object
    code: str = ""  # MobiFall's activity code (STU, STN, WAL, STD, JOG)


def _subject(set_name: str, meta: dict, path_name: str) -> str:
    subject = meta.get("subject")
    subject = str(subject if subject is not None else path_name).lower()
    return subject if subject.startswith(set_name) else f"{set_name}-{subject}"


def load_sets(train: TrainRecipe, progress: bool) -> tuple[Table, list[Recording], list[str], dict]:
    """Step windows of every set as ``stairsense train`` cuts them (``recording_windows``), and the logs."""
    parts, recordings, info = [], [], {}
    for set_name, folder in SETS:
        started = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)  # Oxford's patient folders without accelerometer.csv
            found = recording_windows([str(data_dir(*folder))], train.config, progress=progress)
        ds, logs, methods = found.dataset, found.logs, found.orientation_methods
        offset = len(recordings)
        for log in logs:
            meta = log.meta
            recordings.append(Recording(set_name, _subject(set_name, meta, Path(meta.get("path", "?")).name),
                                        str(meta.get("placement", "unknown")).lower(), log,
                                        str(meta.get("activity_code", ""))))
        li = ds.log_index
        rec = [recordings[offset + i] for i in li]
        parts.append(Table(ds.X, ds.y.astype(int), ds.direction, np.full(li.size, set_name, object),
                           np.array([r.placement for r in rec], object), np.array([r.subject for r in rec], object),
                           li + offset, ds.activity == int(Activity.WALKING), ds.activity == int(Activity.HANDLING),
                           t_start_ns=ds.t_start_ns, t_end_ns=ds.t_end_ns))
        info[set_name] = {"logs": len(logs), "windows": int(np.sum(ds.y != AMBIGUOUS)),
                          "stair": int(np.sum(ds.y == STAIR)), "ambiguous": ds.n_ambiguous,
                          "rejected": ds.n_rejected, "orientation": methods,
                          "subjects": len({r.subject for r in recordings[offset:]}),
                          "seconds": time.perf_counter() - started}
        print(f"{set_name}: {len(logs)} logs, {info[set_name]['windows']} windows ({info[set_name]['stair']} STAIR), "
              f"orientation {methods}", flush=True)
    return Table.concatenate(parts), recordings, list(ds.feature_names), info


def peer_windows(recordings: list[Recording]) -> Table:
    """Fixed 2.56 s windows of every recording at 50 Hz, with acc and acc + gyro features."""
    parts = []
    for g, r in enumerate(recordings):
        log = resample(r.log, RF_RATE_HZ)
        acc, idx = _fixed_window_features(log.acc, None, RF_RATE_HZ)
        if idx.shape[0] == 0:
            continue
        if log.gyro is not None:
            gyro, _ = _fixed_window_features(log.acc, log.gyro, RF_RATE_HZ)
        else:
            gyro = np.full((acc.shape[0], 2 * acc.shape[1]), np.nan)
        n = idx.shape[1]
        y, direction = window_labels(log.label, idx.ravel(), np.arange(0, idx.size + 1, n))
        t_first, t_last = log.t_ns[idx[:, 0]], log.t_ns[idx[:, -1]]
        good = y != AMBIGUOUS
        walking = (log.label[idx] == int(Activity.WALKING)).all(1)
        calibration = (log.label[idx] == int(Activity.HANDLING)).all(1)
        m = int(good.sum())
        parts.append(Table(acc[good], (y[good] == STAIR).astype(int), direction[good], np.full(m, r.set, object),
                           np.full(m, r.placement, object), np.full(m, r.subject, object), np.full(m, g),
                           walking[good], calibration[good], gyro[good], ((t_first + t_last) // 2)[good]))
    return Table.concatenate(parts)


# ------------------------------------------------------------------ folds and fits


def subject_folds(table: Table, n_folds: int, seed: int) -> dict[str, int]:
    """Each subject's leave-subjects-out fold: GroupKFold within each set, fold i of every set together."""
    fold_of = {}
    for set_name, _ in SETS:
        rows = table.set == set_name
        subjects = table.subject[rows]
        unique = np.unique(subjects)
        if unique.size == 1:
            fold_of[unique[0]] = 0
            continue
        splitter = GroupKFold(min(n_folds, unique.size), shuffle=True, random_state=seed)
        for i, (_, test) in enumerate(splitter.split(np.zeros((subjects.size, 1)), groups=subjects)):
            fold_of.update({s: i for s in np.unique(subjects[test])})
    return fold_of


def capped(index: np.ndarray, strata: np.ndarray, cap: int, rng) -> np.ndarray:
    """At most ``cap`` of ``index``, drawn in proportion to each stratum (at least one of each)."""
    if index.size <= cap:
        return index
    keep = []
    for stratum in np.unique(strata[index]):
        part = index[strata[index] == stratum]
        keep.append(rng.choice(part, size=max(1, int(round(cap * part.size / index.size))), replace=False))
    return np.sort(np.concatenate(keep))


@dataclass
class Run:
    """Held-out decisions of one protocol: ours and the trees on our rows per step window, the
    forests per fixed window."""

    ours: np.ndarray
    peers: dict[str, np.ndarray]
    trees: np.ndarray
    fit_s: list = field(default_factory=list)
    trained: list = field(default_factory=list)


def run_protocol(name, folds, ours: Table, peer: Table, train: TrainRecipe, feature_names, max_train, seed,
                 trees) -> Run:
    """``folds``: (label, test mask of ours, test mask of the peer's windows) per fold."""
    rng = np.random.default_rng(seed)
    run = Run(np.full(ours.y.size, -1), {p: np.full(peer.y.size, -1) for p in PEERS}, np.full(ours.y.size, -1))
    strata = np.char.add(ours.set.astype(str), ours.y.astype(str))
    peer_strata = np.char.add(peer.set.astype(str), peer.y.astype(str))
    has_gyro = ~np.isnan(peer.X_gyro).any(1)
    for label, test, peer_test in folds:
        if not test.any():
            continue
        pick = capped(np.flatnonzero(~test), strata, max_train, rng)
        cpu = time.process_time()
        model = train.fit(ours.X[pick], ours.y[pick], feature_names, groups=ours.subject[pick])
        run.fit_s.append(time.process_time() - cpu)
        run.trained.append(pick.size)
        run.ours[test] = model.predict(ours.X[test])
        boosted = HistGradientBoostingClassifier(max_iter=300, random_state=0).fit(ours.X[pick], ours.y[pick])
        run.trees[test] = boosted.predict(ours.X[test])
        for peer_name, X, usable in (("RF acc", peer.X, np.ones(peer.y.size, bool)),
                                     ("RF acc + gyro", peer.X_gyro, has_gyro)):
            pick = capped(np.flatnonzero(~peer_test & usable), peer_strata, max_train, rng)
            rf = RandomForestClassifier(trees, n_jobs=1, random_state=0).fit(X[pick], peer.y[pick])
            where = peer_test & usable
            if where.any():
                run.peers[peer_name][where] = rf.predict(X[where])
        print(f"{name} {label}: ours fit {run.fit_s[-1]:.0f} CPU-s on {run.trained[-1]} windows; "
              f"held out {int(test.sum())} step windows", flush=True)
    return run


# ------------------------------------------------------------------ figures


def rates(y, pred, walking, direction, rows) -> dict:
    """``stair_rates`` (recall, walking called stairs, F1) over ``rows``, and stairs-up recall."""
    tested = np.where(rows, pred, -1)
    figures = stair_rates(tested, y, np.where(walking, int(Activity.WALKING), int(Activity.UNLABELLED)))
    up = (tested >= 0) & (y == 1) & (direction == int(Activity.WALKING_UPSTAIRS))
    return {"n_stair": figures["stair_windows"], "n_walk": figures["walking_windows"],
            "recall": figures["stair_recall"], "walk": figures["walking_called_stairs"], "f1": figures["f1"],
            "up": float(np.mean(pred[up] == 1)) if up.any() else None}


def fmt_rate(x) -> str:
    return "–" if x is None else f"{100 * x:.1f} %"


def fmt_score(x) -> str:
    return "–" if x is None else f"{x:.3f}"


def row_keys(ours: Table) -> list[tuple[str, str]]:
    keys = []
    for set_name, placements in (("mobifall", ("pocket",)), ("geotec", ("pocket", "wrist")), ("weda", ("wrist",)),
                                 ("ipin", ("hand",)), ("oxford", None), ("uci", ("waist",))):
        found = sorted(np.unique(ours.placement[ours.set == set_name]))
        keys += [(set_name, p) for p in (placements or [p for p in found if p != "unknown"] + ["unknown"])
                 if p in found]
    return keys


def verdicts(set_name, placement, r) -> list[str]:
    """MET/MISSED of our figures against issue 23's targets, with the gap."""
    out = []
    if r["walk"] is not None and set_name != "uci" and placement != "unknown":
        gap = 100 * (r["walk"] - WALK_TARGET)
        out.append(f"walking ≤ 5 %: **MISSED** by {gap:.1f} pts" if gap > 0 else "walking ≤ 5 %: MET")
    if set_name in RECALL_TARGET_SETS and r["recall"] is not None:
        gap = RECALL_TARGET - r["recall"]
        out.append(f"recall ≥ 0.85: **MISSED** by {gap:.3f}" if gap > 0 else "recall ≥ 0.85: MET")
    if set_name == "uci":
        f1_gap, up_gap = UCI_F1_TARGET - r["f1"], UCI_UP_TARGET - r["up"]
        out.append(f"F1 ≥ 0.93: **MISSED** by {f1_gap:.3f}" if f1_gap > 0 else "F1 ≥ 0.93: MET")
        out.append(f"up recall ≥ 0.9: **MISSED** by {up_gap:.3f}" if up_gap > 0 else "up recall ≥ 0.9: MET")
    return out


def placement_label(set_name, placement) -> str:
    extra = {("geotec", "pocket"): " (phone)", ("geotec", "wrist"): " (watch)",
             ("oxford", "unknown"): " (patient 3, no placement)"}.get((set_name, placement), "")
    return f"{SET_NAMES[set_name]} · {placement}{extra}"


def protocol_table(run: Run, ours: Table, peer: Table, keys) -> tuple[list[str], dict]:
    peers = f"ours / RF acc / RF acc+gyro / {ROWS_PEER}"
    header = ["set · placement", "stair windows", f"stair-step recall: {peers}", "walking windows",
              f"level walking called stairs: {peers}", f"F1: {peers}", "stairs-up recall: ours / RF acc",
              "ours against the targets"]
    rows, figures = [], {}
    for set_name, placement in keys:
        rows_here = (ours.set == set_name) & (ours.placement == placement) & ~ours.calibration
        mine = rates(ours.y, run.ours, ours.walking, ours.direction, rows_here)
        if mine["n_stair"] + mine["n_walk"] == 0:
            continue
        theirs = [rates(peer.y, run.peers[p], peer.walking, peer.direction,
                        (peer.set == set_name) & (peer.placement == placement) & ~peer.calibration) for p in PEERS]
        trees = rates(ours.y, run.trees, ours.walking, ours.direction, rows_here)
        figures[(set_name, placement)] = (mine, theirs, trees)
        each = lambda key, f: " / ".join(f(x[key]) for x in [mine, *theirs, trees])  # noqa: E731
        rows.append([placement_label(set_name, placement), mine["n_stair"] or "–", each("recall", fmt_score),
                     mine["n_walk"] or "–", each("walk", fmt_rate), each("f1", fmt_score),
                     " / ".join(fmt_score(x["up"]) for x in [mine, theirs[0]]),
                     "; ".join(verdicts(set_name, placement, mine)) or "no target"])
    return markdown_table(header, rows, "lrrrrrrl"), figures


def trial_counts(run: Run, ours: Table, peer: Table, recordings: list[Recording]) -> dict:
    """Per MobiFall stairs trial (one file, however many parts its gaps split it into): stair steps
    (ours, each peer + the plain counter, which reads the file whole) and all steps."""
    counter = PlainCounter()
    out = {"ours": [], "ours_steps": [], "plain_steps": [], ROWS_PEER: [], **{p: [] for p in PEERS}}
    trials: dict[str, list[int]] = {}
    for g, r in enumerate(recordings):
        if r.set == "mobifall" and r.code in ("STU", "STN"):
            trials.setdefault(r.log.meta["path"], []).append(g)
    for parts in trials.values():
        mine = np.isin(ours.log, parts) & ~ours.calibration
        if (run.ours[mine] < 0).any():
            continue  # not held out in this protocol
        out["ours"].append(int(np.sum(run.ours[mine] == 1)))
        out[ROWS_PEER].append(int(np.sum(run.trees[mine] == 1)))
        out["ours_steps"].append(int(mine.sum()))
        t_ns = np.concatenate([recordings[g].log.t_ns for g in parts])
        steps_ns = t_ns[counter.step_indices(t_ns, np.concatenate([recordings[g].log.acc for g in parts]))]
        out["plain_steps"].append(int(steps_ns.size))
        windows = np.flatnonzero(np.isin(peer.log, parts))
        for p in PEERS:
            if not windows.size or steps_ns.size == 0:
                out[p].append(0)
                continue
            nearest = windows[np.abs(peer.centre_ns[windows][None, :] - steps_ns[:, None]).argmin(1)]
            out[p].append(int(np.sum(run.peers[p][nearest] == 1)))
    return {k: np.array(v) for k, v in out.items()}


def within(counts: np.ndarray) -> float:
    return float(np.mean(np.abs(counts - MOBIFALL_STAIRS_PER_TRIAL) <= TRIAL_TOLERANCE)) if counts.size else float("nan")


def trials_section(trials: dict) -> list[str]:
    n = trials["ours"].size
    if n == 0:
        return ["No MobiFall stairs trial was held out in this protocol.", ""]

    def cell(counts):
        share = within(counts)
        return f"{fmt_rate(share)} ({int(round(share * n))}/{n}; median {np.median(counts):.0f})"

    ours, steps = within(trials["ours"]), within(trials["ours_steps"])
    rows = [["stair steps within ±2 of 10: ours", cell(trials["ours"]),
             f"≥ 90 %: {'MET' if ours >= TRIAL_TARGET else f'**MISSED** by {100 * (TRIAL_TARGET - ours):.1f} pts'}"],
            *[[f"stair steps within ±2 of 10: plain counter steps in windows {p} calls STAIR", cell(trials[p]), ""]
              for p in PEERS],
            [f"stair steps within ±2 of 10: {ROWS_PEER}", cell(trials[ROWS_PEER]), ""],
            ["steps within ±2 of 10: ours (kept windows)", cell(trials["ours_steps"]),
             f"≥ 95 %: {'MET' if steps >= STEP_TARGET else f'**MISSED** by {100 * (STEP_TARGET - steps):.1f} pts'}"],
            ["steps within ±2 of 10: plain counter (constructor defaults)", cell(trials["plain_steps"]), ""]]
    return markdown_table(["MobiFall stairs trials (10 stairs each)", "share of trials (median count)",
                           "issue 23 target"], rows, "lrl") + [""]


def calibration_line(run: Run, ours: Table, peer: Table) -> str:
    mine = ours.calibration & (run.ours >= 0)
    cells = [f"{name} {fmt_rate(np.mean(decided[mine] == 1) if mine.any() else None)} of {int(mine.sum())} kept "
             "windows" for name, decided in (("ours", run.ours), (ROWS_PEER, run.trees))]
    for p in PEERS:
        theirs = peer.calibration & (run.peers[p] >= 0)
        cells.append(f"{p} {fmt_rate(np.mean(run.peers[p][theirs] == 1) if theirs.any() else None)} of "
                     f"{int(theirs.sum())} fixed windows")
    return "IPIN calibration opening (own case, no target), windows decided STAIR: " + ", ".join(cells) + "."


# ------------------------------------------------------------------ main


def recipe_variant(recipe: TrainRecipe, changes) -> TrainRecipe:
    """``recipe`` with ``FIELD=VALUE`` changes applied to its configuration or to itself."""
    config_fields = {f.name for f in dataclasses.fields(recipe.config)}
    on_config, on_recipe = {}, {}
    for change in changes:
        name, sep, text = change.partition("=")
        if not sep:
            raise SystemExit(f"--variant {change!r}: write FIELD=VALUE, e.g. orientation=vertical")
        try:
            value = json.loads(text)
        except json.JSONDecodeError:
            value = text
        (on_config if name in config_fields else on_recipe)[name] = value
    return recipe.replace(config=dataclasses.replace(recipe.config, **on_config), **on_recipe)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--folds", type=int, default=5, help="leave-subjects-out folds per set (default 5)")
    parser.add_argument("--max-train", type=int, default=16000,
                        help="training windows per fold for each model, stratified by set and class (default 16000)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--trees", type=int, default=RF_TREES, help="the peer's trees (default 200)")
    parser.add_argument("--quick", action="store_true",
                        help="2 folds, 2000 training windows, 50 trees; writes benchmarks/out/placements_quick.md")
    parser.add_argument("--variant", nargs="+", default=[], metavar="FIELD=VALUE",
                        help="measure a variant of the shipped recipe: fields of its PipelineConfig (orientation=vertical, "
                             "step_context=0, rate_hz=30, ...) or of TrainRecipe (k=79, invariant=true, lam=0.1, ...), "
                             "values as JSON or plain strings; writes benchmarks/out/placements_<variant>.md")
    args = parser.parse_args(argv)
    if args.quick:
        args.folds, args.max_train, args.trees = 2, 2000, 50
    wall0, cpu0, load_before = time.perf_counter(), time.process_time(), load_average()

    train = recipe_variant(TRAIN_DEFAULTS, args.variant)
    ours, recordings, feature_names, info = load_sets(train, progress=False)
    peer = peer_windows(recordings)
    print(f"{ours.y.size} step windows, {peer.y.size} fixed windows", flush=True)

    fold_of = subject_folds(ours, args.folds, args.seed)
    ours_fold = np.array([fold_of[s] for s in ours.subject])
    peer_fold = np.array([fold_of[s] for s in peer.subject])
    lso_folds = [(f"fold {i}", ours_fold == i, peer_fold == i) for i in range(max(fold_of.values()) + 1)]
    loso_folds = [(f"without {s}", ours.set == s, peer.set == s) for s in HELD_OUT_SETS]
    runs = {}
    for name, folds in (("leave-subjects-out", lso_folds), ("leave-one-set-out", loso_folds)):
        runs[name] = run_protocol(name, folds, ours, peer, train, feature_names, args.max_train, args.seed,
                                  args.trees)
        tested = runs[name].ours >= 0
        for decided in (runs[name].ours, runs[name].trees):
            decided[tested] = vote_per_log(decided[tested], ours.log[tested], ours.t_start_ns[tested],
                                           ours.t_end_ns[tested], train.config)
    wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0

    keys = row_keys(ours)
    cmd = (f".venv/bin/python benchmarks/bench_placements.py --folds {args.folds} "
           f"--max-train {args.max_train} --seed {args.seed} --trees {args.trees}"
           + (f" --variant {' '.join(args.variant)}" if args.variant else ""))
    changes = args.variant
    title = "The shipped stair-step model" if not changes else f"A variant ({', '.join(changes)})"
    lines = [f"# {title} in every placement (issue 23)", "",
             f"Command: `{cmd}` at commit `{git_commit(ROOT)}`. Took {wall / 60:.1f} min wall clock and "
             f"{cpu / 60:.1f} CPU-min (one thread per pool; the front end, {len(lso_folds) + len(loso_folds)} "
             f"fits of ours, as many of the trees on our rows and twice as many forests); load average {load_before} before, {load_average()} "
             "after (1/5/15 min, 2 shared cores).", "",
             __doc__.split("\n\n", 1)[1].rsplit("\n\nWrites", 1)[0], "",
             f"Shipped training recipe (`stairsense.models.TRAIN_DEFAULTS`, what `stairsense train` fits): "
             f"{train.describe()}.", "",
             f"Training windows per fold: at most {args.max_train} of each model's (a subsample: `stairsense "
             "train` itself fits on every window; the cap keeps the run near 20 CPU-minutes). Our fits took "
             + ", ".join(f"{name}: median {np.median(r.fit_s):.0f} CPU-s on {int(np.median(r.trained))} windows"
                         for name, r in runs.items()) + ".", "",
             "## The data", ""]
    rows = [[SET_NAMES[s], v["logs"], v["subjects"], v["windows"], v["stair"], v["ambiguous"], v["rejected"],
             ", ".join(v["orientation"])] for s, v in info.items()]
    lines += markdown_table(["set", "logs", "subjects", "kept step windows", "STAIR", "left out (ambiguous or "
                             "unlabelled)", "rejected by the duration filter", "orientation (auto)"], rows,
                            "lrrrrrrl")
    n_open = int(ours.calibration.sum())
    lines += ["", f"Of the kept windows, {n_open} are in IPIN's calibration openings (HANDLING). The peer's fixed "
              f"windows: {peer.y.size} labelled ({int(peer.y.sum())} STAIR).", ""]
    figures = {}
    for name, run in runs.items():
        table, figures[name] = protocol_table(run, ours, peer, keys)
        lines += [f"## {name[0].upper() + name[1:]}", ""]
        if name == "leave-subjects-out":
            lines += [f"{len(lso_folds)} folds; subjects per fold and set by GroupKFold (seed {args.seed}). The "
                      "issue's targets apply here: level walking called stairs ≤ 5 % of steps in every "
                      "placement (UCI HAPT's waist walking has none), stair-step recall ≥ 0.85 in the pocket "
                      "(MobiFall) and on the wrist (WEDA), UCI HAPT F1 ≥ 0.93 with stairs-up recall ≥ 0.9. "
                      "Ours is judged; the forests are the peer in the same run.", ""]
        else:
            lines += ["Each set held out whole (UCI HAPT is always in training); the same targets, as "
                      "information: the issue sets them for leave-subjects-out.", ""]
        lines += table + [""] + trials_section(trial_counts(run, ours, peer, recordings))
        lines += [calibration_line(run, ours, peer), ""]
    lso = figures["leave-subjects-out"]
    walk_rows = [(k, v[0]["walk"]) for k, v in lso.items() if k[0] != "uci" and k[1] != "unknown"]
    missed = [k for k, w in walk_rows if w > WALK_TARGET]
    trees_met = sum(lso[k][2]["walk"] <= WALK_TARGET for k, _ in walk_rows)
    lines += ["## Summary (leave-subjects-out, ours)", "",
              f"Level walking called stairs ≤ 5 %: met in {len(walk_rows) - len(missed)} of {len(walk_rows)} "
              f"placements; missed in " + (", ".join(f"{placement_label(*k)} ({fmt_rate(lso[k][0]['walk'])})"
                                                    for k in missed) or "none") + ".",
              f"The {ROWS_PEER} (same windows, same training data): level walking ≤ 5 % in {trees_met} of "
              f"{len(walk_rows)}; stair-step recall MobiFall {fmt_score(lso['mobifall', 'pocket'][2]['recall'])}, "
              f"WEDA {fmt_score(lso['weda', 'wrist'][2]['recall'])} (ours "
              f"{fmt_score(lso['mobifall', 'pocket'][0]['recall'])}, {fmt_score(lso['weda', 'wrist'][0]['recall'])}).",
              "Not measured here: the exported file's parity (`bench_robustness.py`, `bench_export.py`) and the "
              "Oxford step-count errors (`bench_step_detection.py`).", ""]
    scratch = "_".join((["quick"] if args.quick else []) + [v.replace("=", "-") for v in args.variant])
    out = (ROOT / "benchmarks" / "out" / f"placements_{scratch}.md") if scratch else \
        (ROOT / "benchmarks" / "results" / "placements.md")
    out.parent.mkdir(parents=True, exist_ok=True)
    if scratch:
        out.write_text("\n".join(lines))
    else:
        write_results(out, "\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
