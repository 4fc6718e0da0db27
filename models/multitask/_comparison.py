"""Users as tasks: multi-task ADMM against one pooled model and independent per-user models.

The comparison of spec donini-easymkl-komd-climbtheworld-admm §4.5 (thesis §13.6.2) at matched
regularisation of Eq. 13.3, with windows left out within users; ``synthetic_users`` makes related
users (a shared direction plus personal tilts) for tests and benchmarks.
"""
from __future__ import annotations

import numpy as np
from sklearn.metrics import f1_score
from sklearn.model_selection import KFold, StratifiedKFold
from sklearn.preprocessing import StandardScaler
from sklearn.svm import LinearSVC

from ._admm_mtl import ADMMMultiTaskClassifier

__all__ = ["lambdas_for_sharing", "synthetic_users", "compare_mtl_pooled_independent"]


def lambdas_for_sharing(alpha, scale=1.0):
    """(lambda1, lambda2) with sharing ``alpha = lambda2/(lambda1+lambda2)`` (spec §4.1).

    ``lambda1 = scale/alpha`` and ``lambda2 = scale/(1-alpha)`` keep both extremes
    finite where they should be: alpha = 0 is one SVM with ``lambda2 = scale``,
    alpha = 1 independent SVMs with ``lambda1 = scale``.
    """
    with np.errstate(divide="ignore"):
        return float(np.float64(scale) / alpha), float(np.float64(scale) / (1.0 - alpha))


def synthetic_users(n_users=20, n_per_user=60, n_features=10, spread=1.0, seed=0):
    """Users sharing one direction plus a personal tilt of size ``spread``, 10% label noise."""
    rng = np.random.default_rng(seed)
    shared = rng.normal(size=n_features)
    shared /= np.linalg.norm(shared)
    W = shared + spread * rng.normal(size=(n_users, n_features)) / np.sqrt(n_features)
    tasks = np.repeat(np.arange(n_users), n_per_user)
    X = rng.normal(size=(len(tasks), n_features))
    y = np.sign(np.einsum("ij,ij->i", X, W[tasks]))
    y[rng.random(len(y)) < 0.1] *= -1
    return X, y, tasks


def _within_user_folds(y, tasks, n_folds, random_state):
    """Fold id per row: each user's windows are split into ``n_folds`` parts (stratified when possible)."""
    fold = np.empty(len(y), dtype=int)
    for t in np.unique(tasks):
        rows = np.flatnonzero(tasks == t)
        if len(rows) < n_folds:
            raise ValueError(
                f"user {t!r} has {len(rows)} windows, fewer than n_folds={n_folds}; "
                "drop such users or lower n_folds."
            )
        _, counts = np.unique(y[rows], return_counts=True)
        splitter = (StratifiedKFold if len(counts) == 2 and counts.min() >= n_folds else KFold)(
            n_folds, shuffle=True, random_state=random_state
        )
        for f, (_, test) in enumerate(splitter.split(rows, y[rows])):
            fold[rows[test]] = f
    return fold


def _independent_predict(X_train, y_train, t_train, X_test, t_test, C):
    """Per-user LinearSVC; a user with one class in training predicts that class."""
    out = np.empty(len(t_test), dtype=y_train.dtype)
    for t in np.unique(t_test):
        train, test = t_train == t, t_test == t
        labels = np.unique(y_train[train])
        if len(labels) == 1:
            out[test] = labels[0]
        else:
            svm = LinearSVC(C=C, loss="hinge", max_iter=100_000).fit(X_train[train], y_train[train])
            out[test] = svm.predict(X_test[test])
    return out


def compare_mtl_pooled_independent(
    X, y, tasks, *, n_folds=5, alphas=(0.5,), scale=1.0, scaler=StandardScaler, max_iter=200, random_state=0
):
    """F1 of multi-task ADMM vs. one pooled SVM vs. independent per-user SVMs.

    Leave-windows-out within users: every user's windows are split into
    ``n_folds`` folds (stratified per user when both classes have enough
    windows); fold ``f`` of all users is the test set, the rest trains.
    The models solve Eq. 13.3 at matched regularisation
    (:func:`lambdas_for_sharing`): ADMM at each sharing ``alpha``, the pooled
    liblinear SVM at alpha = 0 (C = 1/(2 lambda2)), the per-user liblinear
    SVMs at alpha = 1 (C = T/(2 lambda1)). Features are scaled by ``scaler()``
    fitted on the training part; every model has a bias.

    Parameters
    ----------
    X : ndarray of shape (n_windows, n_features)
    y : ndarray of shape (n_windows,)
        Binary labels; F1 is for ``np.unique(y)[1]``.
    tasks : ndarray of shape (n_windows,)
        User id per window.
    n_folds : int, default=5
    alphas : sequence of float, default=(0.5,)
        Sharing of the multi-task models, each in (0, 1); one row per value.
    scale : float, default=1.0
        Regularisation scale of :func:`lambdas_for_sharing`.
    scaler : callable, default=StandardScaler
        Returns a fresh scikit-learn transformer.
    max_iter : int, default=200
        ADMM iteration budget (the thesis's Table 13.2 uses budgets of 5, 30, 50).
    random_state : int, default=0
        Seeds the fold split.

    Returns
    -------
    dict
        Row name -> ``{"f1_mean", "f1_std", "folds"}`` over the folds.
    """
    X, y, tasks = np.asarray(X, dtype=float), np.asarray(y), np.asarray(tasks)
    positive = np.unique(y)[1]
    n_tasks = len(np.unique(tasks))
    pooled_lambda2 = lambdas_for_sharing(0.0, scale)[1]
    independent_lambda1 = lambdas_for_sharing(1.0, scale)[0]
    fold = _within_user_folds(y, tasks, n_folds, random_state)
    scores = {}
    for f in range(n_folds):
        train, test = fold != f, fold == f
        fitted = scaler().fit(X[train])
        X_train, X_test = fitted.transform(X[train]), fitted.transform(X[test])
        pooled = LinearSVC(C=1 / (2 * pooled_lambda2), loss="hinge", max_iter=100_000).fit(X_train, y[train])
        predictions = {"pooled (one SVM)": pooled.predict(X_test)}
        for alpha in alphas:
            lambda1, lambda2 = lambdas_for_sharing(alpha, scale)
            mtl = ADMMMultiTaskClassifier(lambda1=lambda1, lambda2=lambda2, max_iter=max_iter).fit(X_train, y[train], tasks[train])
            predictions[f"multi-task (ADMM, alpha={alpha})"] = mtl.predict(X_test, tasks[test])
        predictions["independent (SVM per user)"] = _independent_predict(
            X_train, y[train], tasks[train], X_test, tasks[test], C=n_tasks / (2 * independent_lambda1)
        )
        for name, predicted in predictions.items():
            scores.setdefault(name, []).append(f1_score(y[test], predicted, pos_label=positive))
    return {
        name: {"f1_mean": float(np.mean(s)), "f1_std": float(np.std(s)), "folds": len(s)} for name, s in scores.items()
    }
