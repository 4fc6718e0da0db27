"""scikit-learn (batch) and river (online) estimators on the online multi-task learner (spec §3).

Batch form (scikit-learn): ``fit(X, y, tasks)`` solves spec §3.2 over all rows at once through
``OnlineMultiTaskLearner.rebuild`` (Alg. 4: every ``R^j`` by Cholesky, then ``H``); the
``tasks`` convention follows ``ADMMMultiTaskClassifier`` (a ``tasks`` argument of ``fit``,
``predict``, ``score``; ids unseen in ``fit`` get the shared model ``ḡ``, the spec's answer for a
new user).  One difference, on purpose: ``tasks=None`` means "every row belongs to the single
default task" in *both* ``fit`` and ``predict``, so ``fit(X, y).predict(X)`` uses the fitted
model rather than a cold start.

Online form (river): the task id travels *in the features dict* under ``task_key`` (default
``"user"``).  ``river.evaluate.progressive_val_score`` calls only ``learn_one(x, y)`` and
``predict_one(x)``, so the dict is the one channel that reaches the model unchanged; a
``river.compose`` pipeline in front must pass the key through (e.g. ``compose.Select`` of the
features plus the key).  A dict without the key belongs to the default task (as ``tasks=None``).
The remaining keys are the input vector, in the order fixed by the first ``learn_one``; a
dict with other keys is a ``ValueError`` naming them (no silent imputation).

Classifiers are least-squares classifiers: binary labels become ±1 targets, the decision is the
regression value ``g_j(x)``, ties at 0 go to the positive class.
"""
from __future__ import annotations

from numbers import Real

import numpy as np
from river import base as river_base
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin, _fit_context
from sklearn.metrics import r2_score
from sklearn.utils._param_validation import Interval
from sklearn.utils.validation import _check_sample_weight, check_is_fitted, validate_data

from ._online import OnlineMultiTaskLearner, check_task_id
from ._tasks import BinaryMultiTaskMixin, binary_classes

__all__ = [
    "OnlineMultiTaskRegressor",
    "OnlineMultiTaskClassifier",
    "RiverMultiTaskRegressor",
    "RiverMultiTaskClassifier",
]

DEFAULT_TASK = 0


DEFAULT_COMPONENTS = 128


def make_learner(alpha, lam, task_kernel, shared_kernel, feature_map, n_features):
    """Learner with the given specs and these defaults (γ = 1/n_features for both):

    task kernel RBF; shared part in feature-map mode with 128 random Fourier features of the
    same RBF (seed 0).  Feature-map mode is the default because these estimators see
    continuous inputs, on which an exact-mode RBF Gram becomes numerically singular after a
    few dozen points (spec §3.7-1 and -3); pass ``shared_kernel`` for exact mode.
    """
    gamma = 1.0 / max(n_features, 1)
    rbf = {"name": "rbf", "gamma": gamma}
    if shared_kernel is None and feature_map is None:
        feature_map = {"name": "rff", "n_features_in": n_features, "n_components": DEFAULT_COMPONENTS,
                       "gamma": gamma, "seed": 0}
    return OnlineMultiTaskLearner(
        alpha, lam, rbf if task_kernel is None else task_kernel, shared_kernel=shared_kernel, feature_map=feature_map
    )


def _task_array(tasks, n, where):
    if tasks is None:
        return [DEFAULT_TASK] * n
    tasks = list(tasks)  # elements keep their type: numpy ints become int in check_task_id
    if len(tasks) != n:
        raise ValueError(f"{where}: tasks has {len(tasks)} entries for {n} rows of X; give one task id per row")
    return [check_task_id(t) for t in tasks]


class _MultiTaskBatch(BaseEstimator):
    """Shared parameters and the batch fit / per-task prediction of the two sklearn estimators."""

    _parameter_constraints = {
        "alpha": [Interval(Real, 0, 1, closed="both")],
        "lam": [Interval(Real, 0, None, closed="neither")],
        "task_kernel": [dict, None],
        "shared_kernel": [dict, None],
        "feature_map": [dict, None],
    }

    def __init__(self, alpha=0.5, lam=1.0, task_kernel=None, shared_kernel=None, feature_map=None):
        self.alpha = alpha
        self.lam = lam
        self.task_kernel = task_kernel
        self.shared_kernel = shared_kernel
        self.feature_map = feature_map

    def _fit_targets(self, X, targets, tasks, sample_weight):
        tasks = _task_array(tasks, X.shape[0], "fit")
        sample_weight = _check_sample_weight(sample_weight, X, dtype=np.float64, ensure_non_negative=True)
        # sklearn weights are importances; the learner's w is a noise-variance scale (spec §3.2):
        # w = 1/sample_weight, and a zero weight drops the row, as sklearn defines it.
        keep = np.flatnonzero(sample_weight > 0)
        learner = make_learner(self.alpha, self.lam, self.task_kernel, self.shared_kernel, self.feature_map, X.shape[1])
        learner.update_many([tasks[i] for i in keep], X[keep], targets[keep], 1.0 / sample_weight[keep])
        learner.rebuild()  # the batch solve (Alg. 4), not the chain of rank-one updates
        self.learner_ = learner
        self.tasks_ = np.array(learner.tasks, dtype=object)
        return self

    def _values(self, X, tasks):
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        tasks = _task_array(tasks, X.shape[0], "predict")
        out = np.empty(X.shape[0])
        groups = {}
        for i, t in enumerate(tasks):
            groups.setdefault(t, []).append(i)
        for t, rows in groups.items():
            out[rows] = self.learner_.predict(t, X[rows])
        return out


class OnlineMultiTaskRegressor(RegressorMixin, _MultiTaskBatch):
    """Mixed-effect multi-task kernel ridge regression, batch form of spec §3 (Alg. 4).

    Each task (user) predicts ``g_j = ḡ + g̃_j``; ``alpha`` weighs the shared ``ḡ``
    (1 = one model for all, 0 = independent per-task models).

    Parameters
    ----------
    alpha : float in [0, 1], default=0.5
        Weight of the shared component.
    lam : float > 0, default=1.0
        Regularisation λ.
    task_kernel, shared_kernel, feature_map : dict, default=None
        Kernel / feature-map specs as for :class:`OnlineMultiTaskLearner`.  Defaults: RBF task
        kernel with ``gamma = 1/n_features``; shared part in feature-map mode with 128 random
        Fourier features of that RBF (give ``shared_kernel`` for exact mode).

    Attributes
    ----------
    learner_ : OnlineMultiTaskLearner
        The fitted learner (can keep learning online with ``learner_.update``).
    tasks_ : ndarray of object
        Task ids seen in ``fit``, in order of first appearance.
    n_features_in_ : int

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(60, 2)); tasks = np.repeat([0, 1, 2], 20)
    >>> y = np.sin(X[:, 0]) + 0.5 * tasks * X[:, 1]
    >>> model = OnlineMultiTaskRegressor(alpha=0.5, lam=0.01).fit(X, y, tasks)
    >>> round(model.score(X, y, tasks), 2) > 0.95
    True
    """

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, tasks=None, sample_weight=None):
        """Solve spec §3.2 over all rows.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        tasks : array-like of shape (n_samples,), default=None
            Task id (int or str) of each row; ``None`` puts all rows in one task.
        sample_weight : array-like of shape (n_samples,), default=None
            Importance of each row (the learner's noise scale is ``w = 1/sample_weight``).

        Returns
        -------
        self
        """
        X, y = validate_data(self, X, y, dtype=np.float64, y_numeric=True)
        return self._fit_targets(X, y.astype(np.float64), tasks, sample_weight)

    def predict(self, X, tasks=None):
        """``g_j(x)`` for each row's task (the shared ``ḡ(x)`` for tasks unseen in ``fit``)."""
        return self._values(X, tasks)

    def score(self, X, y, tasks=None, sample_weight=None):
        """R² of ``predict(X, tasks)``."""
        return r2_score(y, self.predict(X, tasks), sample_weight=sample_weight)


class OnlineMultiTaskClassifier(BinaryMultiTaskMixin, ClassifierMixin, _MultiTaskBatch):
    """Binary least-squares classifier on the mixed-effect multi-task kernel (spec §3, batch form).

    Labels become ±1 (``classes_[1]`` is +1) and the decision function is the regression value
    ``g_j(x)``; parameters and attributes as :class:`OnlineMultiTaskRegressor`, plus
    ``classes_``.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(90, 2)); tasks = np.repeat(["a", "b", "c"], 30)
    >>> y = np.where(X[:, 0] + (tasks == "c") * X[:, 1] > 0, "up", "flat")
    >>> model = OnlineMultiTaskClassifier(alpha=0.5, lam=0.1).fit(X, y, tasks)
    >>> model.score(X, y, tasks) > 0.9
    True
    """

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, tasks=None, sample_weight=None):
        """Fit on binary labels (see :meth:`OnlineMultiTaskRegressor.fit` for the arguments)."""
        X, y = validate_data(self, X, y, dtype=np.float64)
        self.classes_ = binary_classes(y, type(self).__name__)
        return self._fit_targets(X, np.where(y == self.classes_[1], 1.0, -1.0), tasks, sample_weight)

    def decision_function(self, X, tasks=None):
        """``g_j(x)``; positive values predict ``classes_[1]``."""
        return self._values(X, tasks)


class _RiverMultiTask:
    """The river side: task id from ``x[task_key]``, the rest of ``x`` as the input vector."""

    def __init__(self, alpha=0.5, lam=1.0, task_kernel=None, shared_kernel=None, feature_map=None, task_key="user"):
        self.alpha = alpha
        self.lam = lam
        self.task_kernel = task_kernel
        self.shared_kernel = shared_kernel
        self.feature_map = feature_map
        self.task_key = task_key
        self.learner = None
        self.feature_names = None

    def _split(self, x):
        task = check_task_id(x[self.task_key]) if self.task_key in x else DEFAULT_TASK
        names = [k for k in x if k != self.task_key]
        if self.feature_names is None:
            return task, names, None
        if len(names) != len(self.feature_names) or set(names) != set(self.feature_names):
            missing = sorted(set(self.feature_names) - set(names), key=str)
            extra = sorted(set(names) - set(self.feature_names), key=str)
            raise ValueError(
                f"{type(self).__name__}: features differ from the first learn_one (missing {missing}, "
                f"unexpected {extra}); the learner needs a fixed input vector (put the task id under "
                f"{self.task_key!r})"
            )
        return task, names, np.array([float(x[k]) for k in self.feature_names])

    def _learn(self, x, target, w):
        task, names, vec = self._split(x)
        if self.learner is None:
            self.feature_names = sorted(names, key=str)  # fixed order, so shuffled dicts are equal
            vec = np.array([float(x[k]) for k in self.feature_names])
            self.learner = make_learner(
                self.alpha, self.lam, self.task_kernel, self.shared_kernel, self.feature_map, len(vec)
            )
        self.learner.update(task, vec, target, w)
        return self

    def _value(self, x):
        if self.learner is None:
            return 0.0
        task, _, vec = self._split(x)
        return float(self.learner.predict(task, vec[None, :])[0])

    @classmethod
    def _unit_test_params(cls):
        yield {"alpha": 0.5, "lam": 1.0}

    def _unit_test_skips(self):
        # A kernel method keeps its examples: memory grows with the stream (use feature_map to
        # bound the shared part; each user's R^j still grows with that user's data).  And the input
        # vector is fixed: emerging/disappearing features raise a clear ValueError by design
        # (STYLE: no silent imputation) instead of being filled in.
        return {
            "check_bounded_memory_growth",
            "check_emerging_features",
            "check_disappearing_features",
            "check_radically_disappearing_features",
        }


class RiverMultiTaskRegressor(_RiverMultiTask, river_base.Regressor):
    """river regressor on :class:`OnlineMultiTaskLearner`: exact after every ``learn_one``.

    Parameters
    ----------
    alpha, lam, task_kernel, shared_kernel, feature_map
        As :class:`OnlineMultiTaskRegressor`.
    task_key : str, default="user"
        Key of ``x`` holding the task (user) id; the other keys are the input features.

    Examples
    --------
    >>> from river import evaluate, metrics
    >>> stream = [({"user": u, "a": float(i % 7), "b": float(i % 3)}, float(i % 7) * (1 + u))
    ...           for i in range(60) for u in (0, 1)]
    >>> model = RiverMultiTaskRegressor(alpha=0.5, lam=0.1)
    >>> evaluate.progressive_val_score(stream, model, metrics.MAE()).get() < 1.0
    True
    """

    def learn_one(self, x, y, w=1.0):
        """Add ``(x, y)`` for task ``x[task_key]``; ``w`` is the noise scale (spec §3.2)."""
        return self._learn(x, float(y), w)

    def predict_one(self, x):
        """``g_j(x)`` (0 before any learning; the shared ``ḡ`` for an unseen task)."""
        return self._value(x)


class RiverMultiTaskClassifier(_RiverMultiTask, river_base.Classifier):
    """Binary river classifier (labels ``True``/``False``) on the least-squares learner.

    ``predict_proba_one`` maps the regression value ``g`` to ``P(True) = clip((g + 1)/2, 0, 1)``:
    a calibration-free score in [0, 1], not a fitted probability.  Parameters as
    :class:`RiverMultiTaskRegressor`.
    """

    @property
    def _multiclass(self):
        return False

    def learn_one(self, x, y, w=1.0):
        """Add ``(x, y)``; ``y`` must be a bool (binarise labels first, e.g. stairs vs. not)."""
        if not isinstance(y, (bool, np.bool_)):
            raise ValueError(f"{type(self).__name__} takes bool labels, got {y!r}; binarise y first")
        return self._learn(x, 1.0 if y else -1.0, w)

    def predict_proba_one(self, x):
        p = min(1.0, max(0.0, (self._value(x) + 1.0) / 2.0))
        return {True: p, False: 1.0 - p}

    def predict_one(self, x):
        """``True`` where ``g_j(x) > 0`` (the batch classifiers' tie rule: no evidence is not a stair)."""
        return self._value(x) > 0.0
