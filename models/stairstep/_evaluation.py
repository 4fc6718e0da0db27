"""Evaluation protocols, baselines and STAIR metrics of the stair-step classifier (spec §3.7).

Three protocols, all with model selection nested inside the training folds:

* ``"nested-cv"``: the thesis's protocol. Outer stratified 10-fold CV over windows; in each outer
  fold the hyper-parameters are chosen by an inner stratified 10-fold CV on the other nine parts
  (selection by inner F1, spec §3.7 [P]), the model is refit on those nine and tested on the tenth.
  Windows of one person land in both training and test folds, which flatters every classifier.
* ``"loso"``: leave-subjects-out. Outer folds hold out whole subjects (one each, or ``n_outer``
  groups); the inner selection folds are grouped by subject as well, so no person's windows ever
  inform a model tested on that person. This is the honest estimate of performance on a new user.
* ``"leave-one-set-out"``: each outer fold holds out one whole set (a dataset: another placement,
  device and protocol) and trains on all the others; the inner selection folds are grouped
  by subject as in ``"loso"``. It asks whether a model holds on a kind of recording it never saw.

Every fit of the grid and of the outer folds is one independent task run by the same function,
serially, through joblib, or on a Dask cluster when a ``client`` is given. A ``vote`` turns each
fold's held-out decisions into what is counted (the step vote of each log's windows, as ``replay``
decides them) before the inner selection and the outer scores see them.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass, field

import numpy as np
from sklearn.base import clone
from sklearn.model_selection import GroupKFold, LeaveOneGroupOut, StratifiedKFold
from sklearn.neighbors import KNeighborsClassifier
from sklearn.pipeline import Pipeline
from sklearn.tree import DecisionTreeClassifier
from sklearn.utils import check_random_state

from stairsense.features import make_feature_scaler

from ._model import make_stairstep_pipeline

__all__ = [
    "PROTOCOLS",
    "CLASSIFIERS",
    "make_classifier",
    "default_grid",
    "stair_scores",
    "stair_counts",
    "stair_rates",
    "CVResult",
    "evaluate_protocol",
]

PROTOCOLS = ("nested-cv", "loso", "leave-one-set-out")
CLASSIFIERS = ("dt", "knn", "komd")

# Spec §3.7 [P] grids ("full") and the small defaults that keep a laptop run short.
_GRIDS = {
    "komd": {
        "small": {"komd__lam": [0.01, 0.1], "komd__gamma": [2.0**-5, 2.0**-3]},
        "full": {"komd__lam": [round(0.1 * i, 1) for i in range(11)],
                 "komd__gamma": [2.0**e for e in range(-6, 3)]},
    },
    "knn": {
        "small": {"clf__n_neighbors": [3, 7, 11]},
        "full": {"clf__n_neighbors": list(range(1, 16, 2))},
    },
    "dt": {
        "small": {"clf__min_samples_leaf": [2, 5, 10]},
        # ccp_alpha stands in for C4.5's pruning level (spec §3.7 [P]); it is not C4.5's pessimistic pruning.
        "full": {"clf__min_samples_leaf": [2, 5, 10], "clf__ccp_alpha": [0.0, 1e-3, 1e-2]},
    },
}


def make_classifier(name: str, *, k=49, random_state=None, required=None) -> Pipeline:
    """An unfitted classifier of Table 12.2 behind the same [-1, 1] scaler (spec §3.6, §3.7).

    Parameters
    ----------
    name : {"dt", "knn", "komd"}
        ``"dt"``: ``DecisionTreeClassifier(criterion="entropy")``, only an approximation of C4.5
        (J48 uses gain ratio and pessimistic pruning). ``"knn"``: k-nearest neighbours (IBk).
        ``"komd"``: :func:`~stairsense.models.make_stairstep_pipeline`.
    k : int or "all", default=49
        Features EasyMKL keeps for KOMD (ignored by the baselines, which see every feature as in
        the thesis's table).
    random_state : None or int
        Seeds the tree's tie-breaking between equally good splits.
    required : array-like of bool, optional
        Columns KOMD keeps beside EasyMKL's ``k`` (the barometer's height features, as
        :meth:`~stairsense.models.TrainRecipe.pipeline` keeps them); the baselines see every column.

    Returns
    -------
    sklearn.pipeline.Pipeline
        Baselines have steps ``"scale"`` and ``"clf"``; KOMD has ``"scale"``, ``"select"``, ``"komd"``.

    Examples
    --------
    >>> [s for s, _ in make_classifier("knn").steps]
    ['scale', 'clf']
    """
    if name == "komd":
        return make_stairstep_pipeline(k=k, random_state=random_state, required=required)
    if name == "dt":
        clf = DecisionTreeClassifier(criterion="entropy", random_state=random_state)
    elif name == "knn":
        clf = KNeighborsClassifier()
    else:
        raise ValueError(f"unknown classifier {name!r}; expected one of {CLASSIFIERS}")
    return Pipeline([("scale", make_feature_scaler()), ("clf", clf)])


def default_grid(name: str, size: str = "small") -> dict[str, list]:
    """Hyper-parameter grid of a Table 12.2 classifier (the thesis gives none, spec §3.7 [P]).

    Parameters
    ----------
    name : {"dt", "knn", "komd"}
    size : {"small", "full"}
        ``"full"`` is the spec's grid: Λ ∈ {0, 0.1, …, 1}, γ ∈ {2⁻⁶, …, 2²}; k ∈ {1, 3, …, 15};
        min_samples_leaf ∈ {2, 5, 10} × a cost-complexity pruning level. ``"small"`` is a subset.

    Returns
    -------
    dict of str to list
        Parameter names as in :func:`make_classifier`'s pipeline.

    Examples
    --------
    >>> default_grid("knn", "full")["clf__n_neighbors"]
    [1, 3, 5, 7, 9, 11, 13, 15]
    """
    if name not in _GRIDS:
        raise ValueError(f"unknown classifier {name!r}; expected one of {CLASSIFIERS}")
    if size not in _GRIDS[name]:
        raise ValueError(f"unknown grid size {size!r}; expected 'small' or 'full'")
    return {k: list(v) for k, v in _GRIDS[name][size].items()}


def stair_scores(counts) -> tuple[float, float, float]:
    """Precision, recall and F1 (β = 1) of the STAIR class from ``(tp, fp, fn)``.

    A ratio with a zero denominator is 0 (no STAIR predicted, or none present), as scikit-learn's
    ``zero_division=0``.

    Examples
    --------
    >>> stair_scores((8, 2, 8))
    (0.8, 0.5, 0.6153846153846154)
    """
    tp, fp, fn = (float(c) for c in counts[:3])
    precision = tp / (tp + fp) if tp + fp else 0.0
    recall = tp / (tp + fn) if tp + fn else 0.0
    f1 = 2 * tp / (2 * tp + fp + fn) if tp else 0.0
    return precision, recall, f1


@dataclass
class CVResult:
    """Per-fold STAIR metrics of one protocol run and the summaries Table 12.2 needs.

    Attributes
    ----------
    protocol : str
    counts : ndarray of shape (n_folds, 3)
        (tp, fp, fn) of the STAIR class on each outer test fold.
    best_params : list of dict
        Hyper-parameters chosen by the inner selection for each outer fold.
    inner_f1 : ndarray of shape (n_folds, n_candidates)
        Mean inner-fold F1 of every grid candidate (empty columns when the grid has one point).
    test_groups : list of list
        Subjects held out in each outer fold (``loso``), the set (``leave-one-set-out``), empty lists
        for ``nested-cv``.
    held_out_stair : ndarray of int8, shape (m,), optional
        Each window's STAIR decision (1/0) by the model of the outer fold that held it out (−1 if
        no fold did): per-group figures such as the false-stair rate per placement come from it.
    """

    protocol: str
    counts: np.ndarray
    best_params: list = field(default_factory=list)
    inner_f1: np.ndarray | None = None
    test_groups: list = field(default_factory=list)
    held_out_stair: np.ndarray | None = None

    @property
    def per_fold(self) -> np.ndarray:
        """(n_folds, 3) array of precision, recall, F1 per outer fold."""
        return np.array([stair_scores(c) for c in self.counts]).reshape(-1, 3)

    def summary(self) -> dict:
        """Means and standard deviations over folds, and both F1 conventions (spec §3.7).

        ``f1_of_means`` is 2PR/(P + R) of the fold-averaged precision and recall, which is how every
        F1 of Table 12.2 was computed; ``f1_mean`` is the mean of per-fold F1. Standard deviations
        are over folds with ``ddof=0``; ``f1_pooled`` is the F1 of the summed confusion counts.
        """
        p, r, f = self.per_fold.T
        pm, rm = float(p.mean()), float(r.mean())
        return {
            "protocol": self.protocol,
            "n_folds": int(len(self.counts)),
            "precision_mean": pm, "precision_std": float(p.std()),
            "recall_mean": rm, "recall_std": float(r.std()),
            "f1_of_means": 2 * pm * rm / (pm + rm) if pm + rm else 0.0,
            "f1_mean": float(f.mean()), "f1_std": float(f.std()),
            "f1_pooled": stair_scores(self.counts.sum(axis=0))[2],
            "best_params": self.best_params,
        }


def _fit_count(estimator, params, X, y, train, test, pos_label):
    """Fit a clone with ``params`` on ``train``; return its STAIR decisions (bool) on ``test``."""
    model = clone(estimator).set_params(**params).fit(X[train], y[train])
    return model.predict(X[test]) == pos_label


def stair_counts(pred, truth) -> np.ndarray:
    """STAIR ``(tp, fp, fn)`` of boolean decisions against boolean truth (:func:`stair_scores`
    turns them into precision, recall and F1).

    Examples
    --------
    >>> stair_counts(np.array([True, True, False, False]), np.array([True, False, True, False])).tolist()
    [1, 1, 1]
    """
    return np.array([np.sum(pred & truth), np.sum(pred & ~truth), np.sum(~pred & truth)])


def stair_rates(decided, y, activity) -> dict:
    """The placement figures of held-out decisions: stair-step recall, level walking called stairs, F1.

    Parameters
    ----------
    decided : array-like of int, shape (m,)
        Each window's decision, 1 STAIR or 0 NO_STAIR; a negative value (a window no fold tested,
        as :attr:`CVResult.held_out_stair` marks it) is left out.
    y : array-like of int, shape (m,)
        1 STAIR, 0 NO_STAIR; other values (ambiguous windows) count only where ``activity`` says
        level walking.
    activity : array-like of int, shape (m,)
        The Activity code of each window (:attr:`~stairsense.features.WindowDataset.activity`).

    Returns
    -------
    dict
        ``stair_windows`` and ``stair_recall`` (share of STAIR windows decided STAIR),
        ``walking_windows`` and ``walking_called_stairs`` (share of windows of level walking,
        ``Activity.WALKING`` throughout, decided STAIR), and ``f1`` of STAIR over the STAIR and
        NO_STAIR windows. A rate without windows to count is None, and so is F1 unless both classes
        were tested.

    Examples
    --------
    >>> stair_rates([1, 0, 1, 0, -1], [1, 1, 0, 0, 1], [2, 2, 1, 1, 2])
    {'stair_windows': 2, 'stair_recall': 0.5, 'walking_windows': 2, 'walking_called_stairs': 0.5, 'f1': 0.5}
    """
    from stairsense.stream import Activity

    decided, y, activity = np.asarray(decided), np.asarray(y), np.asarray(activity)
    tested = decided >= 0
    called = decided == 1
    stair, walking = tested & (y == 1), tested & (activity == int(Activity.WALKING))
    labelled = tested & ((y == 0) | (y == 1))
    share = lambda rows: float(called[rows].mean()) if rows.any() else None  # noqa: E731
    f1 = stair_scores(stair_counts(called[labelled], y[labelled] == 1))[2] if stair.any() and (
        labelled & (y == 0)).any() else None
    return {"stair_windows": int(stair.sum()), "stair_recall": share(stair), "walking_windows": int(walking.sum()),
            "walking_called_stairs": share(walking), "f1": f1}


def _run_fits(jobs, estimator, X, y, pos_label, *, client, n_jobs, progress, desc):
    """Run :func:`_fit_count` for every ``(params, train, test)`` job; its decisions, in order of ``jobs``.

    The same task function runs serially / on joblib workers (``client=None``) or on Dask, where
    X and y are scattered once to every worker instead of being shipped with each task.
    """
    from tqdm.auto import tqdm

    bar = tqdm(total=len(jobs), desc=desc, unit="fit", disable=not progress)
    try:
        if client is not None:
            from dask.distributed import as_completed

            # hash=False: a fresh key per call, so releasing an earlier call's copy cannot cancel this one.
            X_f, y_f = client.scatter([X, y], broadcast=True, hash=False)
            futures = [client.submit(_fit_count, estimator, params, X_f, y_f, tr, te, pos_label, pure=False)
                       for params, tr, te in jobs]
            for _ in as_completed(futures):
                bar.update()
            return client.gather(futures)
        from joblib import Parallel, delayed

        results = []
        parallel = Parallel(n_jobs=n_jobs, return_as="generator")
        for result in parallel(delayed(_fit_count)(estimator, params, X, y, tr, te, pos_label)
                               for params, tr, te in jobs):
            results.append(result)
            bar.update()
        return results
    finally:
        bar.close()


def _splitters(protocol, n_outer, n_inner, y, groups, rng, sets=None):
    """Outer and inner split functions: stratified for ``nested-cv``; grouped by subject for ``loso``;
    one set per outer fold and inner folds grouped by subject for ``leave-one-set-out``."""
    seeds = rng.randint(np.iinfo(np.int32).max, size=2)
    if protocol == "nested-cv":
        outer = StratifiedKFold(n_outer, shuffle=True, random_state=seeds[0]).split(np.zeros(y.size), y)

        def inner(train):
            folds = StratifiedKFold(n_inner, shuffle=True, random_state=seeds[1])
            return [(train[a], train[b]) for a, b in folds.split(np.zeros(train.size), y[train])]

        return list(outer), inner
    n_groups = np.unique(groups).size
    if protocol == "leave-one-set-out":
        outer = LeaveOneGroupOut().split(np.zeros(y.size), y, sets)
    elif n_outer is None or n_outer >= n_groups:
        outer = LeaveOneGroupOut().split(np.zeros(y.size), y, groups)
    else:
        outer = GroupKFold(n_outer, shuffle=True, random_state=seeds[0]).split(np.zeros(y.size), y, groups)

    def inner(train):
        g = groups[train]
        n = min(n_inner, np.unique(g).size)
        if n < 2:
            raise ValueError("leave-subjects-out model selection needs at least 2 subjects in every training "
                             f"fold, found {n}; give more subjects or a one-point grid")
        folds = GroupKFold(n, shuffle=True, random_state=seeds[1])
        return [(train[a], train[b]) for a, b in folds.split(np.zeros(train.size), y[train], g)]

    return list(outer), inner


def _check_inputs(X, y, groups, protocol, pos_label, sets=None):
    if protocol not in PROTOCOLS:
        raise ValueError(f"unknown protocol {protocol!r}; expected one of {PROTOCOLS}")
    X = np.asarray(X)
    y = np.asarray(y)
    if X.ndim != 2 or y.shape != (X.shape[0],):
        raise ValueError(f"X must be (m, d) and y (m,) with the same m; got X {X.shape} and y {y.shape}")
    if not np.any(y == pos_label):
        raise ValueError(f"y has no window of the positive (STAIR) class pos_label={pos_label!r}; "
                         "STAIR precision and recall are undefined")
    if protocol in ("loso", "leave-one-set-out"):
        if groups is None:
            raise ValueError(f"protocol={protocol!r} needs groups (the subject of each window); pass groups=...")
        groups = np.asarray(groups)
        if groups.shape != y.shape:
            raise ValueError(f"groups must have shape {y.shape} like y, got {groups.shape}")
        if protocol == "loso" and np.unique(groups).size < 2:
            raise ValueError("protocol='loso' needs windows of at least 2 subjects")
    if protocol == "leave-one-set-out":
        if sets is None:
            raise ValueError("protocol='leave-one-set-out' needs sets (the set of each window); pass sets=...")
        sets = np.asarray(sets)
        if sets.shape != y.shape:
            raise ValueError(f"sets must have shape {y.shape} like y, got {sets.shape}")
        if np.unique(sets).size < 2:
            raise ValueError("protocol='leave-one-set-out' needs windows of at least 2 sets")
    return X, y, groups, sets


def evaluate_protocol(estimator, X, y, *, groups=None, protocol="loso", param_grid=None, n_outer=10,
                      n_inner=10, random_state=0, client=None, n_jobs=1, progress=False,
                      pos_label=1, sets=None, vote=None) -> CVResult:
    """Estimate STAIR precision, recall and F1 with nested model selection (spec §3.7).

    Parameters
    ----------
    estimator : scikit-learn classifier
        Cloned for every fit; ``param_grid`` names its parameters.
    X : array-like of shape (m, d)
    y : array-like of shape (m,)
        1 = STAIR, 0 = NO_STAIR (see ``pos_label``).
    groups : array-like of shape (m,), optional
        Subject of each window; required by ``"loso"`` and ``"leave-one-set-out"``.
    protocol : {"loso", "nested-cv", "leave-one-set-out"}, default="loso"
        See the module docstring.
    param_grid : dict of str to list, optional
        Candidates (a Cartesian product, in order; ties go to the first). ``None`` or a grid with
        one point skips the inner selection.
    n_outer : int or None, default=10
        Outer folds. For ``"loso"``, ``None`` (or at least the number of subjects) holds out one
        subject per fold; a smaller number holds out groups of subjects (``GroupKFold``).
        ``"leave-one-set-out"`` ignores it: one fold per set.
    n_inner : int, default=10
        Inner selection folds (grouped by subject for ``"loso"``, capped by the subjects available).
    random_state : int, RandomState or None, default=0
        Seeds the fold shuffles.
    client : dask.distributed.Client, optional
        Run the fits on this cluster; otherwise with joblib (``n_jobs``).
    n_jobs : int, default=1
        joblib workers when ``client`` is None.
    progress : bool, default=False
        Show tqdm progress bars.
    pos_label : default=1
        The STAIR label in ``y``.
    sets : array-like of shape (m,), optional
        Set (dataset) of each window; required by ``"leave-one-set-out"``.
    vote : callable, optional
        ``vote(decided, test)`` returns the decisions counted for the windows of index array
        ``test`` (in its order) from the model's ``decided`` (bool), e.g. each log's step vote;
        applied to every inner and outer test fold. ``None`` counts each window's decision alone.

    Returns
    -------
    CVResult

    Examples
    --------
    >>> from sklearn.datasets import make_classification
    >>> X, y = make_classification(240, 6, random_state=0)
    >>> groups = np.repeat(np.arange(6), 40)
    >>> res = evaluate_protocol(make_classifier("knn"), X, y, groups=groups, protocol="loso",
    ...                         param_grid={"clf__n_neighbors": [3, 9]}, n_inner=3)
    >>> s = res.summary()
    >>> s["n_folds"], s["f1_mean"] > 0.8
    (6, True)
    """
    X, y, groups, sets = _check_inputs(X, y, groups, protocol, pos_label, sets)
    rng = check_random_state(random_state)
    outer, inner = _splitters(protocol, n_outer, n_inner, y, groups, rng, sets)
    names = sorted(param_grid or {})
    for name in names:
        if isinstance(param_grid[name], str) or not hasattr(param_grid[name], "__len__") or not len(param_grid[name]):
            raise ValueError(f"param_grid[{name!r}] must be a non-empty list of candidates, got "
                             f"{param_grid[name]!r}; wrap a single value in a list")
    candidates = [dict(zip(names, values)) for values in itertools.product(*(param_grid[n] for n in names))]
    candidates = candidates or [{}]
    kw = dict(client=client, n_jobs=n_jobs, progress=progress)

    def counted(preds, tests):
        return [pred if vote is None else np.asarray(vote(pred, te), dtype=bool) for pred, te in zip(preds, tests)]

    if len(candidates) > 1:
        inner_splits = [inner(train) for train, _ in outer]
        jobs = [(p, tr, te) for splits in inner_splits for p in candidates for tr, te in splits]
        preds = counted(_run_fits(jobs, estimator, X, y, pos_label, desc=f"{protocol} inner grid", **kw),
                        [te for _, _, te in jobs])
        counts = iter(stair_counts(pred, y[te] == pos_label) for pred, (_, _, te) in zip(preds, jobs))
        inner_f1 = np.array([[np.mean([stair_scores(next(counts))[2] for _ in splits]) for _ in candidates]
                             for splits in inner_splits])
        best = [candidates[int(np.argmax(row))] for row in inner_f1]
    else:
        inner_f1 = np.zeros((len(outer), 0))
        best = [candidates[0]] * len(outer)

    jobs = [(p, tr, te) for p, (tr, te) in zip(best, outer)]
    preds = counted(_run_fits(jobs, estimator, X, y, pos_label, desc=f"{protocol} outer folds", **kw),
                    [te for _, te in outer])
    counts = np.array([stair_counts(pred, y[te] == pos_label) for pred, (_, te) in zip(preds, outer)])
    held_out = np.full(y.size, -1, dtype=np.int8)
    for pred, (_, te) in zip(preds, outer):
        held_out[te] = pred
    held_out_names = {"loso": groups, "leave-one-set-out": sets}.get(protocol)
    test_groups = [sorted(np.unique(held_out_names[te]).tolist()) if held_out_names is not None else []
                   for _, te in outer]
    return CVResult(protocol, counts.reshape(-1, 3), best, inner_f1, test_groups, held_out)
