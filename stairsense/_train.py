"""Training and evaluation from labelled recordings: what ``stairsense train`` / ``evaluate`` call.

Composition only (DESIGN.md): cut windows from the recordings with
:func:`~stairsense._recordings.recording_windows`, then fit the shipped recipe
(:class:`~stairsense.models.TrainRecipe`) or evaluate (:func:`~stairsense.models.evaluate_protocol`).
"""
from __future__ import annotations

from pathlib import Path
from typing import Iterable

import numpy as np
import psutil

from stairsense.models import (TRAIN_DEFAULTS, StairstepModel, TrainRecipe, default_grid, evaluate_protocol,
                               height_mask, make_classifier, stair_rates, vote_decisions)
from stairsense.stream import PipelineConfig

from ._recordings import recording_windows

__all__ = ["train_from_recordings", "evaluate"]


def _available_bytes() -> int:
    """Memory a new allocation can take without swapping (psutil's ``available``; on Linux the
    kernel's ``MemAvailable``)."""
    return psutil.virtual_memory().available


def _check_kernel_fits(n_windows: int, exact_komd: bool, paths: list[str], instead: str) -> None:
    """Refuse an exact KOMD fit whose training kernel cannot fit in memory before it is allocated.

    Exact KOMD's solver holds the training windows' l × l RBF kernel in float64: 8 l² bytes, 13 GB
    at l = 40,000. Past the memory available the fit would be killed, or swap for hours, without a
    word. The Nyström head (``n_landmarks``) solves through its features and holds no such matrix.
    ``instead`` names the options that fit without one.
    """
    need, available = 8 * n_windows ** 2, _available_bytes()
    if exact_komd and need > available:
        named = ", ".join(paths) if len(paths) <= 3 else f"{paths[0]} and {len(paths) - 1} more"
        raise ValueError(f"{named}: exact KOMD on {n_windows:,} training windows holds a "
                         f"{n_windows:,} × {n_windows:,} kernel matrix ({need / 1e9:.1f} GB), more than the "
                         f"{available / 1e9:.1f} GB of memory available; use fewer recordings, or {instead}")


def _false_stair_rates(held_out, y, placement) -> dict:
    """Share of held-out NO_STAIR windows decided STAIR, per placement."""
    tested = (held_out >= 0) & (y == 0)
    return {str(p): float(np.mean(held_out[tested & (placement == p)] == 1))
            for p in np.unique(placement) if np.any(tested & (placement == p))}


def train_from_recordings(paths: Iterable[str | Path], recipe: TrainRecipe = TRAIN_DEFAULTS, *,
                          progress: bool = False, read: dict | None = None) -> StairstepModel:
    """Fit the stair-step classifier on every labelled window of ``paths``.

    Parameters
    ----------
    paths : iterable of str or Path
        As in :func:`~stairsense.recording_windows`.
    recipe : TrainRecipe, default=TRAIN_DEFAULTS
        The front end that cuts the windows (``recipe.config``, saved with the model) and the
        classifier fitted on them; the default is what ``stairsense train`` ships.
    progress : bool
        tqdm progress bars.
    read : dict, optional
        Keyword arguments of :func:`~stairsense._recordings.load_labelled_logs` (``repair``,
        ``units``, ``reports``).

    Returns
    -------
    StairstepModel
        Its ``summary["orientation_methods"]`` lists the orientation methods the training windows
        were standardized with (what ``auto`` resolved to).
    """
    paths = [str(p) for p in paths]
    found = recording_windows(paths, recipe.config, progress=progress, read=read)
    ds = found.dataset
    if len(set(ds.y.tolist())) < 2:
        raise ValueError(f"the windows of {paths} hold only class {ds.y[:1].tolist()}: training needs both STAIR "
                         "and NO_STAIR windows; add recordings with stairs and with level walking")
    _check_kernel_fits(len(ds), recipe.resolved_head == "komd" and recipe.n_landmarks is None, paths,
                       f"n_landmarks={TRAIN_DEFAULTS.n_landmarks} or head='trees' (neither holds a kernel matrix)")
    model = recipe.fit(ds.X, ds.y, ds.feature_names, groups=ds.groups, sources=paths)
    model.summary["orientation_methods"] = found.orientation_methods
    return model


def _per_set_placement(held_out, found) -> list[dict]:
    """:func:`~stairsense.models.stair_rates` of the held-out decisions for each (set, placement)."""
    ds = found.dataset
    source, placement = found.window_source, _placements(found)
    figures = []
    for set_name in found.sources:
        for where in np.unique(placement[source == set_name]):
            rows = (source == set_name) & (placement == where)
            figures.append({"set": set_name, "placement": str(where),
                            **stair_rates(held_out[rows], ds.y[rows], ds.activity[rows])})
    return figures


def _placements(found) -> np.ndarray:
    """Each window's placement (``meta["placement"]``, lower case; "unknown" where a log names none)."""
    return np.array([str(p).lower() for p in found.log_meta("placement", "unknown")], dtype=object)


def evaluate(paths: Iterable[str | Path], config: PipelineConfig | None = None, *, protocol="loso",
             classifier="komd", k=TRAIN_DEFAULTS.k, grid="small", n_outer=None, n_inner=5, random_state=0,
             client=None, n_jobs=1, progress: bool = False, read: dict | None = None) -> dict:
    """Evaluate a Table 12.2 classifier on labelled recordings with a nested protocol (spec §3.7).

    Parameters
    ----------
    paths : iterable of str or Path
        As in :func:`~stairsense.recording_windows`; for ``"leave-one-set-out"`` each path is one set.
    config : PipelineConfig, optional
    protocol : {"loso", "nested-cv", "leave-one-set-out"}
        Leave-subjects-out (one subject per outer fold when ``n_outer`` is None), the thesis's
        nested stratified 10-fold CV (``n_outer`` None means 10), or one path held out per outer
        fold (``n_outer`` ignored); see :func:`~stairsense.models.evaluate_protocol`.
    classifier : {"komd", "knn", "dt"}
    k : int or "all"
        Features EasyMKL keeps for KOMD; a barometer configuration's 7 height features are kept
        beside them, as ``train`` keeps them.
    grid : {"small", "full"} or dict
        Hyper-parameter candidates for the inner selection (:func:`default_grid`).
    n_outer, n_inner, random_state, client, n_jobs, progress
        As in :func:`~stairsense.models.evaluate_protocol`.
    read : dict, optional
        As in :func:`train_from_recordings`.

    Returns
    -------
    dict
        :meth:`CVResult.summary` plus ``per_fold`` (precision, recall, F1 lists), ``test_groups``,
        ``false_stair_rate`` (held-out NO_STAIR windows decided STAIR, per ``meta["placement"]`` —
        Oxford recordings name theirs, others count as "unknown"), ``per_set`` (for each path and
        placement: :func:`~stairsense.models.stair_rates` of its held-out windows, the level walking
        among them included), ``n_windows``, ``n_stair``, ``config`` and ``classifier``.

    Notes
    -----
    Subjects for ``"loso"`` come from each log's ``meta["subject"]`` (UCI HAPT sets it); a log
    without one counts as its own subject.

    With ``"loso"`` and ``"leave-one-set-out"`` every figure (the inner selection's F1 too) counts
    the decisions ``replay`` counts: each held-out log's, voted over ``config.vote_steps``
    consecutive windows (:func:`~stairsense.models.vote_decisions`). The vote runs over the
    labelled windows; a window straddling a stair boundary is left out of it, where the phone
    would count its vote. ``"nested-cv"`` decides each window alone, as the thesis did: its folds
    split a log's windows, leaving no run to vote over.
    """
    config = config or PipelineConfig()
    paths = [str(p) for p in paths]
    found = recording_windows(paths, config, progress=progress, read=read)
    ds = found.dataset
    grid = default_grid(classifier, grid) if isinstance(grid, str) else grid
    if protocol == "nested-cv" and n_outer is None:
        n_outer = 10

    def vote(decided, test):
        return vote_decisions(decided.astype(np.int64), ds.t_start_ns[test], ds.t_end_ns[test], config.vote_steps,
                              config.step_context_gap_s, log_index=ds.log_index[test]) == 1

    # the largest outer fold trains on nearly all of them
    _check_kernel_fits(len(ds), classifier == "komd", paths, "classifier='knn' or classifier='dt' (no kernel matrix)")
    estimator = make_classifier(classifier, k=k, random_state=random_state, required=height_mask(ds.feature_names))
    result = evaluate_protocol(estimator, ds.X, ds.y, groups=ds.groups, protocol=protocol, param_grid=grid,
                               n_outer=n_outer, n_inner=n_inner, random_state=random_state, client=client,
                               n_jobs=n_jobs, progress=progress, sets=found.window_source,
                               vote=None if protocol == "nested-cv" else vote)
    per_fold = result.per_fold
    return {
        **result.summary(),
        "per_fold": {"precision": per_fold[:, 0].tolist(), "recall": per_fold[:, 1].tolist(),
                     "f1": per_fold[:, 2].tolist()},
        "test_groups": result.test_groups,
        "false_stair_rate": _false_stair_rates(result.held_out_stair, ds.y, _placements(found)),
        "per_set": _per_set_placement(result.held_out_stair, found),
        "n_windows": len(ds),
        "n_stair": int(ds.y.sum()),
        "classifier": classifier,
        "config": config.to_dict(),
    }
