"""Budget optimiser: the most accurate configuration whose battery cost stays under a budget.

It composes the window rows of labelled recordings, the stair-step classifier, the export's
rounded weights and the energy model of this package; the recordings come from a loader the caller
gives (the command line passes ``stairsense train``'s, so the optimiser reads what ``train`` reads).

Search space: sampling rate × orientation method × segmentation × smoothing × the
barometer (the *front end*) × EasyMKL feature count × export precision. Accuracy is a
leave-subjects-out F1 on labelled recordings (UCI HAPT, or people simulated with a barometer:
:func:`~._people.simulated_people`) under one :class:`Protocol` for every configuration (3 folds of
subjects, the classifier ``stairsense train`` ships), computed once per front-end configuration:
its windows and features are cut once, each fold's model is fitted once per feature count, and
every precision is scored through the export's own stored weights
(:func:`stairsense.export.build_onnx_model` returns the rounded model's scores), so precision's
effect on F1 is measured, not assumed. Cost is the energy model
(:func:`~stairsense.export.energy.estimate`) on a workload measured from a replay of the same
recordings, with the inference cost of that (k, precision) graph. Each front-end configuration's
results are cached on disk, keyed by the configuration, the search settings, the protocol and a
SHA-256 of the recordings' bytes.

The barometer: a configuration that reads it is scored like any other, so only on recordings that
all carry air pressure; UCI HAPT has none. One search never mixes F1 from different recordings:
on people simulated with a barometer, each barometer configuration and its accelerometer-only twin
are scored on the same people, folds and training windows (the twins cut the same windows; the
barometer adds 5 columns), and the search chooses among them; on HAPT the barometer is not in the
search. The report names the recordings its F1 comes from (``write_best``'s ``f1_on``).

Where a cold run's time goes (profiled, benchmarks/results/energy.md): fitting the models
(KOMD's l × l solve for each fold and k) is ~85 % of it; cutting the windows is a few %. Front
ends that differ only in segmentation still share one resampling and standardization
(:func:`front_end_data`), and independent groups of them run in parallel processes.
"""
from __future__ import annotations

import hashlib
import json
import pickle
import textwrap
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

from stairsense.stream import ORIENTATION_METHODS, PipelineConfig, atomic_write

from ._model import estimate
from ._search import Candidate, Protocol, SearchSpace
from ._workload import (
    ActivityCounts,
    InferenceCost,
    StageCosts,
    Workload,
    add_up_counts,
    count_windows,
    inference_cost,
    measure_logs_windows,
    measure_stage_costs,
)

__all__ = ["front_end_data", "evaluate_windows", "evaluate_front_end",
           "evaluate_front_ends", "evaluate_all", "load_recordings", "space_for", "price", "pareto_front", "best_under",
           "twin_of", "write_best", "plot_front"]

# Bump when anything that changes cached results changes.
_CACHE_VERSION = 3  # 3: the stage costs carry the step-context cost per kept window


def data_fingerprint(paths) -> str:
    """SHA-256 over the bytes of every file under ``paths`` (sorted), so the cache follows the data."""
    digest = hashlib.sha256()
    files = []
    for path in map(Path, paths):
        files.extend(sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path])
    for file in files:
        digest.update(file.name.encode())
        with open(file, "rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                digest.update(block)
    return digest.hexdigest()


def _with_virtual_sensors(log):
    """``log`` with virtual rotation-vector and linear-acceleration streams, and the CPU seconds
    it took (a worker's time is not the parent's: the caller adds it up)."""
    from stairsense.stream import with_virtual_sensors

    started = time.process_time()
    out = log if log.rotvec is not None and log.linacc is not None else with_virtual_sensors(log)
    return out, time.process_time() - started


def recordings_key(fingerprint: str, subjects) -> str:
    return hashlib.sha256(f"{fingerprint}|{sorted(subjects) if subjects else 'all'}".encode()).hexdigest()[:16]


def load_recordings(paths, subjects, cache_dir: Path, fingerprint: str, load_logs, progress: bool = False,
                    n_jobs: int = 1):
    """Labelled logs of ``subjects`` (``load_logs(paths)``) with virtual rotation-vector and
    linear-acceleration streams (Madgwick fusion, as ``stairsense train`` adds them), cached on
    disk after the first run.

    The fusion is a per-sample filter (most of a cold start: ~2 CPU-s per UCI HAPT recording),
    so the recordings are fused in ``n_jobs`` processes. Returns ``(logs, cpu_seconds)``.
    """
    from joblib import Parallel, delayed
    from tqdm.auto import tqdm

    cache_dir.mkdir(parents=True, exist_ok=True)
    cache = cache_dir / f"recordings-{recordings_key(fingerprint, subjects)}.pkl"
    if cache.is_file():
        with open(cache, "rb") as f:
            return pickle.load(f), 0.0
    started = time.process_time()
    logs = load_logs(paths)
    if subjects:
        logs = [log for log in logs if log.meta.get("subject") in set(subjects)]
        if not logs:
            raise ValueError(f"no recording of subjects {sorted(subjects)} in {list(map(str, paths))}")
    out, cpu = [], time.process_time() - started
    runner = Parallel(n_jobs=n_jobs, return_as="generator")
    for log, seconds in tqdm(runner(delayed(_with_virtual_sensors)(log) for log in logs), total=len(logs),
                             desc="virtual sensors", unit="log", disable=not progress):
        out.append(log)
        cpu += seconds
    with atomic_write(cache) as tmp:
        tmp.write_bytes(pickle.dumps(out))
    return out, cpu


def _standardization_of(config: PipelineConfig) -> PipelineConfig:
    """What the standardization reads of a configuration: configurations equal up to their
    segmentation and barometer share one standardized stream."""
    return config.replace(segmentation="pattern", barometer=False)


def front_end_data(logs, configs) -> list[tuple]:
    """``window_dataset`` and ``measure_logs_windows`` of every configuration, the shared work done once.

    Per log, resampling runs once per rate and smoothing + gravity removal + rotation once per
    (rate, orientation, smoothing); the pattern and the sliding windows are cut from that one
    standardized stream, and each configuration's replay counts come from the same pass (a
    barometer configuration's rows add the height features of the log's air pressure). The rows
    and labels are :meth:`~stairsense.features.WindowDataset.of_log` of those front-end results, as
    in ``window_dataset`` (``tests/test_energy.py`` checks the result equals the
    per-configuration calls).

    Returns
    -------
    list of (WindowDataset, counts, median window), one per configuration, in order.
    """
    from stairsense.features import WindowDataset
    from stairsense.stream import (
        FrontEndResult,
        Standardizer,
        resample,
        resolve_orientation,
        segment_steps,
        sliding_windows,
    )

    configs = list(configs)
    parts = [[] for _ in configs]
    replay = [[] for _ in configs]
    for index, log in enumerate(logs):
        if log.label is None:
            raise ValueError(f"log {log.meta.get('path', index)} has no per-sample labels; cannot build a training set")
        resampled, standardized = {}, {}
        for c, config in enumerate(configs):
            if config.rate_hz not in resampled:
                resampled = {config.rate_hz: log if config.rate_hz is None else resample(log, config.rate_hz)}
            at_rate = resampled[config.rate_hz]
            key = _standardization_of(config)
            if key not in standardized:
                standardized[key] = Standardizer(config, resolve_orientation(config, at_rate), at_rate.rate_hz).process(
                    at_rate.t_ns, at_rate.acc, gyro=at_rate.gyro, rotvec=at_rate.rotvec, linacc=at_rate.linacc)
            std = standardized[key]
            windows = (segment_steps(std.t_ns, std.vertical, config) if config.segmentation == "pattern"
                       else sliding_windows(std.t_ns, config))
            result = FrontEndResult(std, windows, at_rate)
            replay[c].append(count_windows(result))
            parts[c].append(WindowDataset.of_log(result, config, index))
    return [(WindowDataset.concatenate(parts[c]), *add_up_counts(replay[c], config)) for c, config in enumerate(configs)]


def _f1(y, pred) -> float:
    from stairsense.models import stair_counts, stair_scores

    return stair_scores(stair_counts(pred == 1, y == 1))[2]


def _subsample(index, y, limit, rng):
    """At most ``limit`` of ``index``, stratified by ``y`` (KOMD solves an l × l problem)."""
    if index.size <= limit:
        return index
    keep = []
    for label in (0, 1):
        members = index[y[index] == label]
        take = int(round(limit * members.size / index.size))
        keep.append(rng.choice(members, size=min(take, members.size), replace=False))
    return np.sort(np.concatenate(keep))


def _fold_models(config, X, y, feature_names, ks, n_landmarks=Protocol.n_landmarks):
    """``(k, StairstepModel)`` for every k, fitted on one fold: the scaler and EasyMKL's feature
    ranking do not depend on k (the selector keeps the top k of one ranking), so they are fitted
    once and only the head (KOMD, or the trees of a barometer configuration) is fitted per k — the
    same models as fitting each pipeline from scratch.
    A barometer configuration's pipeline keeps its height features beside the top k (a
    :class:`~stairsense.models.stairstep.RestrictedSelector`, as ``train`` fits it); its selector is fitted
    per k (one EasyMKL solve each, seconds)."""
    from copy import deepcopy

    from sklearn.base import clone

    from stairsense.models import TRAIN_DEFAULTS, StairstepModel
    from stairsense.models.stairstep import RestrictedSelector

    # the configuration chooses the head as train does: the trees for a barometer front end
    recipe = TRAIN_DEFAULTS.replace(config=config, n_landmarks=n_landmarks)
    template = recipe.replace(k=max(ks)).pipeline(feature_names)
    (scale_name, scaler), (select_name, selector), (head_name, head) = template.steps
    scaled = scaler.fit_transform(X, y)
    shared_ranking = not isinstance(selector, RestrictedSelector)
    if shared_ranking:
        selector.fit(scaled, y)
    for k in ks:
        pipeline = recipe.replace(k=k).pipeline(feature_names)
        if shared_ranking:
            chosen = deepcopy(selector).set_params(k=k)
        else:
            chosen = pipeline.named_steps[select_name].fit(scaled, y)
        fitted_head = clone(head).fit(chosen.transform(scaled), y)
        pipeline.steps = [(scale_name, scaler), (select_name, chosen), (head_name, fitted_head)]
        yield k, StairstepModel(pipeline, config, feature_names, {"n_windows": int(len(y))})


def evaluate_windows(config: PipelineConfig, data, counts, window: int, feature_counts, precisions,
                     protocol: Protocol = Protocol()) -> dict:
    """Leave-subjects-out F1 for every (k, precision) of one front end's windows, and its workload.

    For each fold of subjects and each k the model is fitted once (the scaler and the EasyMKL
    ranking once per fold, :func:`_fold_models`), then each precision is scored on the held-out
    subjects with the export's stored (rounded) weights. F1 is of the STAIR class over the pooled
    held-out predictions of all folds. ``data``, ``counts`` and ``window`` are the front end's
    :class:`~stairsense.WindowDataset` and replay counts (:func:`front_end_data`).

    Returns
    -------
    dict
        ``config``, ``f1`` {str(k): {precision: F1}}, ``inference`` {str(k): {precision: InferenceCost dict}},
        ``counts`` (per activity class), ``stages`` (StageCosts dict), ``n_windows``, ``n_stair``.
    """
    from sklearn.model_selection import GroupKFold

    from .._export import build_onnx_model

    groups = np.asarray([str(g) for g in data.groups])
    n_features = data.X.shape[1]
    ks = sorted({min(int(k), n_features) for k in feature_counts})
    rng = np.random.default_rng(protocol.seed)
    predictions = {k: {p: np.zeros(len(data), dtype=np.int64) for p in precisions} for k in ks}
    graphs = {}
    folds = GroupKFold(n_splits=min(protocol.n_folds, len(set(groups))))
    for fold, (train, test) in enumerate(folds.split(data.X, data.y, groups)):
        train = _subsample(train, data.y, protocol.max_train, rng)
        for k, model in _fold_models(config, data.X[train], data.y[train], data.feature_names, ks,
                                     protocol.n_landmarks):
            for precision in precisions:
                proto, stored, _ = build_onnx_model(model, precision)
                predictions[k][precision][test] = (stored(data.X[test]) >= 0).astype(np.int64)
                if fold == 0:
                    selected = list(np.flatnonzero(model.pipeline[1].get_support()))
                    graphs[(k, precision)] = (proto, selected)
    inference = {str(k): {p: inference_cost(graphs[(k, p)][0], window, graphs[(k, p)][1], data.feature_names,
                                       repeats=100).to_dict() for p in precisions} for k in ks}
    return {
        "config": config.to_dict(),
        "f1": {str(k): {p: _f1(data.y, predictions[k][p]) for p in precisions} for k in ks},  # JSON keys
        "inference": inference,
        "counts": {name: vars(c) for name, c in counts.items()},
        "stages": measure_stage_costs(config).to_dict(),
        "n_windows": len(data),
        "n_stair": int(data.y.sum()),
    }


def evaluate_front_end(config: PipelineConfig, logs, feature_counts, precisions,
                       protocol: Protocol = Protocol()) -> dict:
    """:func:`evaluate_windows` of one configuration on its own: its windows from
    :func:`stairsense.window_dataset`, its counts from a replay (:func:`measure_logs_windows`).
    The optimiser evaluates configurations that share a standardization together
    (:func:`evaluate_front_ends`); this is the one-configuration form, and their reference."""
    from stairsense.features import window_dataset

    return evaluate_windows(config, window_dataset(logs, config), *measure_logs_windows(logs, config),
                            feature_counts, precisions, protocol)


def evaluate_front_ends(configs, logs, feature_counts, precisions, protocol: Protocol = Protocol()) -> list[dict]:
    """:func:`evaluate_front_end` of each configuration, with the front-end work they share done
    once (:func:`front_end_data`); each record carries the CPU seconds it took (``cpu_s``)."""
    started = time.process_time()
    prepared = front_end_data(logs, configs)
    shared = (time.process_time() - started) / len(prepared)
    records = []
    for config, (data, counts, window) in zip(configs, prepared):
        started = time.process_time()
        record = evaluate_windows(config, data, counts, window, feature_counts, precisions, protocol)
        record["cpu_s"] = shared + time.process_time() - started
        records.append(record)
    return records


def _cache_key(config: PipelineConfig, fingerprint: str, subjects, space: SearchSpace, protocol: Protocol):
    payload = json.dumps({"v": _CACHE_VERSION, "config": config.to_dict(), "data": fingerprint,
                          "subjects": sorted(subjects) if subjects else "all", "k": list(space.feature_counts),
                          "precisions": list(space.precisions), **protocol.to_dict()}, sort_keys=True)
    return hashlib.sha256(payload.encode()).hexdigest()[:20]


_WORKER_LOGS: dict = {}


def _front_ends_job(config_dicts, logs_path, space, protocol):
    """Front ends sharing one standardization, in a worker process that loads the recordings once."""
    if logs_path not in _WORKER_LOGS:
        with open(logs_path, "rb") as f:
            _WORKER_LOGS.clear()
            _WORKER_LOGS[logs_path] = pickle.load(f)
    configs = [PipelineConfig.from_dict(c) for c in config_dicts]
    return evaluate_front_ends(configs, _WORKER_LOGS[logs_path], space.feature_counts, space.precisions, protocol)


def evaluate_all(paths, space: SearchSpace, cache_dir: Path, load_logs, *, subjects=None,
                 protocol: Protocol = Protocol(), n_jobs=1, progress=True,
                 fingerprint: str | None = None) -> tuple[list[dict], dict]:
    """Every front-end record of ``space``, from the disk cache or computed in ``n_jobs`` processes.
    ``load_logs(paths)`` reads the labelled recordings (:func:`load_recordings`); ``fingerprint``
    identifies recordings that are not files under ``paths`` (simulated people:
    :func:`~._people.logs_fingerprint`), else it is the SHA-256 of their bytes.

    The unit of work is a group of front ends that differ only in segmentation and barometer (one
    standardization, :func:`evaluate_front_ends`); groups run in parallel and the progress bar
    counts front ends as their groups finish, in whatever order. ``stats`` gives the wall and CPU
    seconds of the computation (the workers' CPU time included).

    Raises
    ------
    ValueError
        When ``space`` has barometer front ends to compute and a recording has no air pressure
        (one line naming it): they are scored on the same recordings as their twins, or not at all.
    """
    from joblib import Parallel, delayed
    from tqdm.auto import tqdm

    wall, cpu = time.perf_counter(), time.process_time()
    cache_dir.mkdir(parents=True, exist_ok=True)
    fingerprint = fingerprint or data_fingerprint(paths)
    front_ends = space.front_ends()
    keys = [_cache_key(c, fingerprint, subjects, space, protocol) for c in front_ends]
    records = {}
    for key in keys:
        file = cache_dir / f"front-end-{key}.json"
        if file.is_file():
            records[key] = json.loads(file.read_text())
    todo = {key: c for key, c in zip(keys, front_ends) if key not in records}
    stats = {"front_ends": len(front_ends), "cached": len(front_ends) - len(todo), "computed": len(todo),
             "data_sha256": fingerprint, "protocol": protocol.to_dict()}
    worker_cpu = 0.0
    if todo:
        logs, worker_cpu = load_recordings(paths, subjects, cache_dir, fingerprint, load_logs, progress=progress,
                                           n_jobs=n_jobs)
        if any(c.barometer for c in todo.values()):
            _check_pressure(logs)
        logs_path = str(cache_dir / f"recordings-{recordings_key(fingerprint, subjects)}.pkl")
        stats["subjects"] = sorted({str(log.meta.get("subject")) for log in logs})
        del logs  # the workers read the pickle; the parent keeps no copy
        groups: dict = {}
        for key, config in todo.items():
            groups.setdefault(_standardization_of(config), []).append((key, config))
        jobs = (delayed(_front_ends_job)([c.to_dict() for _, c in group], logs_path, space, protocol)
                for group in groups.values())
        runner = Parallel(n_jobs=n_jobs, return_as="generator_unordered")
        keys_of = {json.dumps(c.to_dict(), sort_keys=True): key for key, c in todo.items()}
        with tqdm(total=len(todo), desc="front-end configurations", unit="config", disable=not progress) as bar:
            for group_records in runner(jobs):
                for record in group_records:
                    key = keys_of[json.dumps(record["config"], sort_keys=True)]
                    with atomic_write(cache_dir / f"front-end-{key}.json") as tmp:
                        tmp.write_text(json.dumps(record))
                    records[key] = record
                    worker_cpu += record["cpu_s"]
                    bar.update(1)
    stats["wall_s"] = time.perf_counter() - wall
    stats["cpu_s"] = time.process_time() - cpu + worker_cpu
    return [records[k] for k in keys], stats


def _check_pressure(logs) -> None:
    without = next((log for log in logs if log.pressure is None), None)
    if without is not None:
        name = without.meta.get("path") or f"the recording of subject {without.meta.get('subject')}"
        raise ValueError(f"{name}: no air pressure, and the search has barometer configurations, which are scored on "
                         "the same recordings as their accelerometer-only twins; search recordings that all carry "
                         "pressure (a p column, or --simulated-people N), or leave the barometer out "
                         "(--barometers off)")


def space_for(space: SearchSpace, profile) -> tuple[SearchSpace, str | None]:
    """``space`` without the barometer front ends when ``profile``'s phone has no barometer, and
    why (one line; None when nothing is left out).

    Raises
    ------
    ValueError
        When the barometer is all the space holds: no configuration is left to search.
    """
    if True not in space.barometers:
        return space, None
    try:
        profile.hardware_for(["barometer"])
    except ValueError as exc:
        if False not in space.barometers:
            raise
        return replace(space, barometers=(False,)), f"every barometer configuration, left out: {exc}"
    return space, None


def price(records, profile, day) -> list[Candidate]:
    """Every (front end, k, precision) of the cached records priced on ``profile`` over ``day``."""
    candidates = []
    for record in records:
        counts = {name: ActivityCounts(**c) for name, c in record["counts"].items()}
        stages = StageCosts(**record["stages"])
        for k, by_precision in record["f1"].items():
            for precision, f1 in by_precision.items():
                inference = InferenceCost(**record["inference"][k][precision])
                report = estimate(profile, Workload(record["config"], counts, stages, inference), day)
                candidates.append(Candidate(record["config"], int(k), precision, float(f1), report.percent_per_day,
                                            report.total_mah))
    return candidates


def pareto_front(candidates: list[Candidate]) -> list[Candidate]:
    """Candidates no other beats on both F1 (higher) and battery (lower), cheapest first."""
    front, best = [], -1.0
    for c in sorted(candidates, key=lambda c: (c.percent_per_day, -c.f1)):
        if c.f1 > best:
            front.append(c)
            best = c.f1
    return front


def best_under(candidates: list[Candidate], budget: float) -> Candidate:
    """The highest F1 within ``budget`` %/day (the cheaper on a tie); ``ValueError`` if none fits."""
    fitting = [c for c in candidates if c.percent_per_day <= budget]
    if not fitting:
        cheapest = min(candidates, key=lambda c: c.percent_per_day)
        raise ValueError(f"no configuration meets --budget {budget:g}%/day: the cheapest, {cheapest.label()}, costs "
                         f"{cheapest.percent_per_day:.3f}%/day on this profile; raise the budget or choose a phone "
                         "profile with a sensor hub")
    return max(fitting, key=lambda c: (c.f1, -c.percent_per_day))


def twin_of(candidate: Candidate, candidates: list[Candidate]) -> Candidate | None:
    """The candidate that is ``candidate`` with the barometer switched the other way (same front end
    otherwise, k and precision), or None when the search has no such configuration."""
    other = {**candidate.config, "barometer": not candidate.config.get("barometer", False)}
    same = (candidate.k, candidate.precision)
    return next((c for c in candidates if c.config == other and (c.k, c.precision) == same), None)


def write_best(candidate: Candidate, path, *, profile: str, budget: float, day: dict, f1_on: str = "") -> Path:
    """The chosen configuration as a file ``stairsense train --config`` and ``export --config`` read:
    the PipelineConfig under ``pipeline``, ``train.k`` and ``export.precision``; ``f1_on`` says
    which recordings its F1 comes from."""
    path = Path(path)
    payload = {
        "pipeline": candidate.config,
        "train": {"k": candidate.k},
        "export": {"precision": candidate.precision},
        "energy": {"profile": profile, "budget_percent_per_day": budget, "percent_per_day": candidate.percent_per_day,
                   "f1": candidate.f1, "f1_on": f1_on, "day_hours": {a: s / 3600 for a, s in day.items()}},
    }
    with atomic_write(path) as tmp:
        tmp.write_text(json.dumps(payload, indent=2) + "\n")
    return path


def plot_front(candidates, front, best, budget, path, title) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8.5, 5))
    colours = ("tab:blue", "tab:purple", "tab:gray", "tab:orange", "tab:green")
    for orientation, colour in zip(ORIENTATION_METHODS, colours, strict=True):
        for barometer, marker in ((False, "o"), (True, "^")):
            mine = [c for c in candidates
                    if c.config["orientation"] == orientation and c.config.get("barometer", False) == barometer]
            if barometer and not mine:
                continue
            ax.scatter([c.percent_per_day for c in mine], [c.f1 for c in mine], s=8, alpha=0.35, color=colour,
                       marker=marker, label=f"{orientation}{' + barometer' if barometer else ''} ({len(mine)})")
    ax.plot([c.percent_per_day for c in front], [c.f1 for c in front], "k.-", lw=1.2, ms=6, label="Pareto front")
    ax.axvline(budget, color="tab:red", ls="--", lw=1, label=f"budget {budget:g} %/day")
    ax.scatter([best.percent_per_day], [best.f1], s=120, facecolors="none", edgecolors="tab:red", lw=2,
               label=f"best: {best.label()}")
    ax.set_xscale("log")
    ax.set_xlabel("% battery per day (log scale)")
    ax.set_ylabel("leave-subjects-out STAIR F1")
    ax.set_title("\n".join(textwrap.wrap(title, 120)), fontsize=9)
    ax.legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    with atomic_write(path) as tmp:
        fig.savefig(tmp, dpi=110)
    plt.close(fig)
