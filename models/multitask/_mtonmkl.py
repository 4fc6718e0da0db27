"""MT-ONMKL: multi-task optimal-neighbourhood multiple kernel learning (spec part B).

Implements spec ``okl-and-neighborhood-mtmkl.md`` part B (Yousefi et al., "Multi-task learning using
neighborhood kernels"). Task ``t`` is an SVM on ``K_t = sum_m theta_t^m K_t^m`` with
``theta_t = mu + lambda_t`` (B1), learned by block coordinate descent over the SVM duals ``alpha``,
the weights ``theta`` and the neighbourhood kernels ``K_hat_t`` (B4).

Every quantity lives in coefficient space (B4 "Efficient form"): ``K_hat_t`` is the combination of
the base kernels with coefficients ``gamma``, so with ``a_t^{(m1, m2)} = <K_t^m1, K_t^m2>_F`` the
matrix ``A = V'V`` (B2), ``b = 2 A gamma``, ``c = gamma' A gamma`` and the ``Tn^2 x Tn^2`` matrix
``Sigma`` of eq. (16) is never built. Vectors over ``theta`` are m-major (B1, H7): ``mu^m`` at ``m``,
``lambda_t^m`` at ``M + m T + t``.

Two variants (B7 H3/H4): ``"literal"`` runs eqs. (13) and (16) as printed (to reproduce the paper;
its problem is unbounded below and it is stable only for ``eta > 7 beta``); ``"consistent"`` uses the
``-2c`` regulariser and the exact ``theta``-step, ``gamma = theta - (beta/eta) A^+ d`` and
``theta = argmin theta'A theta - theta'(2 A gamma + (2/eta) q)``: a proximal method for
trace-regularised multi-task MKL (the spec's recommended default, B8).

Derived here (and tested): in the consistent variant every term depends on ``theta_t = mu + lambda_t``
alone, so ``mu`` only re-parametrises and the fit equals ITL (``mu = 0``) task by task: the
neighbourhood model shares nothing between tasks once its regulariser is made consistent. Sharing
needs a coupling constraint, such as MT-MKL's common budget ``sum theta <= 1``.
"""
from __future__ import annotations

from numbers import Integral, Real

import numpy as np
from scipy.optimize import nnls
from sklearn.base import BaseEstimator, ClassifierMixin, _fit_context
from sklearn.metrics.pairwise import euclidean_distances
from sklearn.svm import SVC
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted, validate_data

from ._tasks import BinaryMultiTaskMixin, binary_classes, check_tasks

__all__ = [
    "MTONMKLClassifier",
    "base_kernels",
    "kernel_alignment_matrix",
    "neighborhood_step",
    "theta_step",
    "task_weights",
    "task_expansion",
]

#: Gaussian widths ``s`` of B6 ("spread" 2^1 .. 2^8), read as ``exp(-||x - y||^2 / (2 s^2))`` (H8).
GAUSSIAN_WIDTHS = 2.0 ** np.arange(1, 9)


def _raw_kernels(X, Z):
    """Unnormalised base kernels (M = 10, B6): linear, ``(x'z + 1)^2`` (H8), 8 Gaussians."""
    inner = X @ Z.T
    squared = euclidean_distances(X, Z, squared=True)
    return [inner, (inner + 1.0) ** 2] + [np.exp(-squared / (2.0 * s * s)) for s in GAUSSIAN_WIDTHS]


def _raw_diagonal(X):
    norms = np.einsum("ij,ij->i", X, X)
    return [norms, (norms + 1.0) ** 2] + [np.ones(len(X))] * len(GAUSSIAN_WIDTHS)


def base_kernels(X, Z=None):
    """The M = 10 normalised base kernels of B6, ``k(x, z) / sqrt(k(x, x) k(z, z))``.

    Parameters
    ----------
    X : ndarray of shape (n, d)
    Z : ndarray of shape (n_z, d), default=None
        ``None`` uses ``X``.

    Returns
    -------
    ndarray of shape (10, n, n_z)

    Examples
    --------
    >>> K = base_kernels(np.array([[1.0, 0.0], [0.0, 2.0]]))
    >>> K.shape, np.allclose(K[:, 0, 0], 1.0)
    ((10, 2, 2), True)
    """
    Z = X if Z is None else Z
    # A zero vector has linear self-kernel 0; its normalised linear kernel is taken as 0, not nan.
    tiny = np.finfo(float).tiny
    return np.stack([
        K / np.sqrt(np.maximum(np.outer(dx, dz), tiny))
        for K, dx, dz in zip(_raw_kernels(X, Z), _raw_diagonal(X), _raw_diagonal(Z))
    ])


def task_expansion(n_kernels, n_tasks):
    """Matrices ``G_t`` (T, M, N) with ``G_t theta = theta_t = mu + lambda_t`` (m-major, B1).

    ``A = sum_t G_t' a_t G_t``, ``d = sum_t G_t' D_t`` and ``q = sum_t G_t' Q_t`` (B2, B4): the
    ``[X 1_T; vec X']`` structure of the paper.
    """
    M, T = n_kernels, n_tasks
    G = np.zeros((T, M, M * (T + 1)))
    for t in range(T):
        G[t, np.arange(M), np.arange(M)] = 1.0
        G[t, np.arange(M), M + np.arange(M) * T + t] = 1.0
    return G


def task_weights(theta, n_kernels, n_tasks):
    """``theta_t^m = mu^m + lambda_t^m`` as a (T, M) array."""
    M, T = n_kernels, n_tasks
    return theta[:M][None, :] + theta[M:].reshape(M, T).T


def kernel_alignment_matrix(task_kernels):
    """``A`` of B2 from per-task base kernels: ``sum_t G_t' a_t G_t``, ``a_t^{(m1,m2)} = <K_t^m1, K_t^m2>_F``.

    Parameters
    ----------
    task_kernels : list of ndarray of shape (M, n_t, n_t)

    Returns
    -------
    A : ndarray of shape (N, N), ``N = M (T + 1)``
    d : ndarray of shape (N,)
        ``d = sum_t G_t' [tr K_t^m]_m``.
    """
    M, T = task_kernels[0].shape[0], len(task_kernels)
    G = task_expansion(M, T)
    a = np.stack([np.einsum("aij,bij->ab", K, K) for K in task_kernels])
    traces = np.stack([np.einsum("mii->m", K) for K in task_kernels])
    return np.einsum("tmi,tmk,tkj->ij", G, a, G), np.einsum("tmi,tm->i", G, traces)


def neighborhood_step(theta, A_pinv_d, eta, beta, variant):
    """K-hat step in coefficient space: ``gamma`` with ``K_hat_t = sum_m gamma_t^m K_t^m`` (B4, H3).

    ``"literal"``: ``gamma = (eta theta - beta A^+ d) / (2 eta - 7 beta)`` (eq. 16 via
    ``Sigma a = (eta - 3.5 beta) a`` on ``range(V)``); ``"consistent"``:
    ``gamma = theta - (beta / eta) A^+ d`` (exact minimiser with the ``-2c`` regulariser).
    """
    if variant == "literal":
        return (eta * theta - beta * A_pinv_d) / (2.0 * eta - 7.0 * beta)
    return theta - (beta / eta) * A_pinv_d


def theta_step(A, linear, ridge=0.0, budget=None):
    """``argmin_{theta >= 0} theta' A theta - theta' r (+ ridge ||theta||^2)``, optionally ``sum theta <= budget``.

    Without a budget this is an NNLS (B4 "QP solver"): with ``A + ridge I = U S U'`` and
    ``R = S^{1/2} U'`` the objective is ``||R theta - S^{-1/2} U' r / 2||^2 + const``. With a budget
    (the ``sum theta <= 1`` of the MT-MKL baseline, H10) the KKT conditions make the solution the
    NNLS one for ``r - nu 1``, with the multiplier ``nu >= 0`` found by bisection: ``sum theta(nu)``
    is non-increasing in ``nu``.

    Parameters
    ----------
    A : ndarray of shape (N, N), PSD
    linear : ndarray of shape (N,)
        ``r``.
    ridge : float, default=0.0
        Added to the diagonal for a unique solution (A is singular, H1); needs ``> 0`` with a budget.
    budget : float, default=None

    Returns
    -------
    ndarray of shape (N,)
    """
    S, U = np.linalg.eigh(A + ridge * np.eye(len(A)))
    keep = S > S.max() * 1e-12
    S, U = S[keep], U[:, keep]
    R = np.sqrt(S)[:, None] * U.T

    def solve(r):
        return nnls(R, (U.T @ r) / (2.0 * np.sqrt(S)), maxiter=50 * len(A))[0]

    theta = solve(linear)
    if budget is None or theta.sum() <= budget:
        return theta
    low, high = 0.0, float(np.max(linear))  # at nu = max(r) the linear term is <= 0: theta = 0
    for _ in range(100):
        nu = 0.5 * (low + high)
        if solve(linear - nu).sum() > budget:
            low = nu
        else:
            high = nu
        if high - low <= 1e-12 * max(high, 1.0):
            break
    return solve(linear - high)


def _svm_dual(K, y, C):
    """SVC (LIBSVM) on a precomputed kernel: returns ``(Y alpha, bias)`` over all rows; one class: ``(0, ±1)``."""
    if len(np.unique(y)) == 1:
        return np.zeros(len(y)), float(y[0])
    svm = SVC(C=C, kernel="precomputed", tol=1e-6).fit(K, y)
    signed = np.zeros(len(y))
    signed[svm.support_] = svm.dual_coef_[0]
    # SVC orders classes (-1, +1): its dual_coef_ is y_i alpha_i and its decision is positive for +1.
    return signed, float(svm.intercept_[0])


class MTONMKLClassifier(BinaryMultiTaskMixin, ClassifierMixin, BaseEstimator):
    """Multi-task optimal-neighbourhood MKL SVM and its baselines from the same code (spec B).

    Task ``t`` predicts ``sign(sum_i alpha_t^i y_t^i sum_m theta_t^m k_m(x_t^i, x) + b_t)`` with the
    ten normalised base kernels of B6 and ``theta_t = mu + lambda_t``.

    Parameters
    ----------
    C : float, default=1.0
        SVM cost.
    eta, beta : float, default=32.0, 1.0
        Neighbourhood weight and complexity weight of eq. (10); the literal variant needs
        ``eta > 7 beta`` (B4 stability, H5) and is refused otherwise.
    variant : {"consistent", "literal"}, default="consistent"
        Updates of B7 H3 (see the module docstring).
    weights : {"learned", "uniform", "independent", "mtmkl"}, default="learned"
        ``"learned"`` is MT-ONMKL; ``"uniform"`` is AVMTMKL (``theta_t = 1/M``, one SVM per task);
        ``"independent"`` is ITL (``mu = 0``: each task learns its own weights, the same updates);
        ``"mtmkl"`` is MT-MKL (``beta = 0``, ``sum theta <= 1`` as in [29], H10), proximal
        ``theta``-steps of step ``eta``.
    max_iter : int, default=100
    tol : float, default=1e-4
        Stop when ``||theta_new - theta|| <= tol ||theta||`` (B4 suggestion).

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
    tasks_ : ndarray of shape (n_tasks,)
    theta_ : ndarray of shape (M (T + 1),)
        ``[mu; lambda]`` m-major.
    task_weights_ : ndarray of shape (n_tasks, M)
        ``theta_t``.
    gamma_ : ndarray of shape (M (T + 1),)
        Coefficients of the neighbourhood kernels ``K_hat_t`` (``None`` for the fixed-weight baseline).
    n_iter_ : int
    theta_changes_ : list of float
        Relative change of ``theta`` per iteration.
    n_features_in_ : int

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(80, 2)); tasks = np.repeat([0, 1], 40)
    >>> y = np.where(X[:, 0] > 0, 1, -1)
    >>> model = MTONMKLClassifier(C=10.0).fit(X, y, tasks)
    >>> model.task_weights_.shape, float(model.score(X, y, tasks)) > 0.9
    ((2, 10), True)
    """

    _parameter_constraints = {
        "C": [Interval(Real, 0, None, closed="neither")],
        "eta": [Interval(Real, 0, None, closed="neither")],
        "beta": [Interval(Real, 0, None, closed="left")],
        "variant": [StrOptions({"consistent", "literal"})],
        "weights": [StrOptions({"learned", "uniform", "independent", "mtmkl"})],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left")],
    }

    def __init__(self, C=1.0, eta=32.0, beta=1.0, variant="consistent", weights="learned", max_iter=100, tol=1e-4):
        self.C = C
        self.eta = eta
        self.beta = beta
        self.variant = variant
        self.weights = weights
        self.max_iter = max_iter
        self.tol = tol

    def _check_tasks(self, tasks, n_samples, method):
        tasks = check_tasks(tasks, n_samples, f"{type(self).__name__}.{method}")
        return np.zeros(n_samples, dtype=int) if tasks is None else tasks  # None: one task

    def _svm_step(self, task_kernels, signs, weights):
        duals = [_svm_dual(np.tensordot(w, K, axes=1), s, self.C) for K, s, w in zip(task_kernels, signs, weights)]
        # q_t^m = 1/2 (Y alpha)' K_t^m (Y alpha) (eq. 13).
        Q = np.stack([0.5 * np.einsum("i,mij,j->m", d, K, d) for (d, _), K in zip(duals, task_kernels)])
        return duals, Q

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, tasks=None):
        """Block coordinate descent over ``alpha``, ``theta`` and ``K_hat`` (spec B4).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            Standardise features first (H8: the Gaussian widths assume unit scale).
        y : array-like of shape (n_samples,)
            Two distinct labels.
        tasks : array-like of shape (n_samples,), default=None
            Task id of each row; ``None`` is one task.

        Returns
        -------
        self
        """
        if self.variant == "literal" and self.weights in ("learned", "independent") and not self.eta > 7 * self.beta:
            raise ValueError(f"variant='literal' diverges unless eta > 7 beta (spec B4); got eta={self.eta}, "
                             f"beta={self.beta}. Raise eta or lower beta, or use variant='consistent'.")
        X, y = validate_data(self, X, y, dtype=np.float64)
        self.classes_ = binary_classes(y, type(self).__name__)
        tasks = self._check_tasks(tasks, X.shape[0], "fit")
        self.tasks_, task_index = np.unique(tasks, return_inverse=True)
        rows = [np.flatnonzero(task_index == t) for t in range(len(self.tasks_))]
        signs = [np.where(y[r] == self.classes_[1], 1.0, -1.0) for r in rows]
        task_kernels = [base_kernels(X[r]) for r in rows]
        M, T = task_kernels[0].shape[0], len(rows)
        N = M * (T + 1)
        theta = np.concatenate([np.full(M, 1.0 / M), np.zeros(M * T)])  # start at AVMTMKL (B4)
        gamma, changes = None, []
        if self.weights != "uniform":
            A, d = kernel_alignment_matrix(task_kernels)
            # A is singular (H1), and nearly so beyond its M null directions when wide Gaussians are almost
            # constant on a task: a relative cut-off keeps A^+ d from amplifying rounding noise.
            A_pinv_d = np.linalg.pinv(A, rtol=1e-10, hermitian=True) @ d
            ridge = 1e-8 * np.trace(A) / N
            free = np.ones(N, dtype=bool)
            if self.weights == "independent":
                free[:M] = False  # ITL: no shared mu, so the tasks decouple
                theta = np.concatenate([np.zeros(M), np.full(M * T, 1.0 / M)])
            beta = 0.0 if self.weights == "mtmkl" else self.beta
            budget = 1.0 if self.weights == "mtmkl" else None
            if budget is not None:
                theta /= theta.sum()
            gamma = neighborhood_step(theta, A_pinv_d, self.eta, beta, self.variant)
        for _ in range(1 if self.weights == "uniform" else self.max_iter):
            duals, Q = self._svm_step(task_kernels, signs, task_weights(theta, M, T))
            if self.weights == "uniform":
                break
            q = np.einsum("tmi,tm->i", task_expansion(M, T), Q)
            if self.variant == "literal":
                linear = 2.0 * A @ gamma + q  # eq. (13) as printed, b = 2 A gamma (H2)
            else:
                linear = 2.0 * A @ gamma + (2.0 / self.eta) * q  # exact theta-step (H4)
            new = np.zeros(N)
            new[free] = theta_step(A[np.ix_(free, free)], linear[free], ridge, budget)
            changes.append(float(np.linalg.norm(new - theta) / max(np.linalg.norm(theta), 1e-300)))
            theta = new
            gamma = neighborhood_step(theta, A_pinv_d, self.eta, beta, self.variant)
            if changes[-1] <= self.tol:
                break
        # The SVMs must be the ones of the final theta, so the predictor and theta agree (B1).
        if self.weights != "uniform":
            duals, _ = self._svm_step(task_kernels, signs, task_weights(theta, M, T))
        self.theta_, self.gamma_, self.theta_changes_ = theta, gamma, changes
        self.task_weights_ = task_weights(theta, M, T)
        self.n_iter_ = max(1, len(changes))
        self._train = [(X[r], d, b) for r, (d, b) in zip(rows, duals)]
        return self

    def fold_in(self, X, y, tasks):
        """Add (or replace) tasks with their own SVM on a population kernel, other tasks frozen (spec B8).

        A new user gets ``theta_u`` = the mean of the fitted ``theta_t`` (``mu`` plus the mean
        ``lambda_t``; B8 proposes ``mu`` alone, which is 0 whenever the ``lambda_t`` carry all the
        weight) and an SVM on its labelled rows. Returns ``self``.
        """
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        tasks = self._check_tasks(tasks, X.shape[0], "fold_in")
        population = self.task_weights_.mean(axis=0)
        known = dict(zip(self.tasks_.tolist(), zip(self._train, self.task_weights_)))
        for task in np.unique(tasks).tolist():
            rows = tasks == task
            signs = np.where(np.asarray(y)[rows] == self.classes_[1], 1.0, -1.0)
            signed, bias = _svm_dual(np.tensordot(population, base_kernels(X[rows]), axes=1), signs, self.C)
            known[task] = ((X[rows], signed, bias), population)
        self.tasks_ = np.array(sorted(known))
        self._train = [known[t][0] for t in self.tasks_.tolist()]
        self.task_weights_ = np.array([known[t][1] for t in self.tasks_.tolist()])
        return self

    def decision_function(self, X, tasks=None):
        """``f_t(x)`` of each row's task; positive predicts ``classes_[1]``.

        Raises ValueError for a task not seen in ``fit``: each task needs its own SVM (B8: refit
        with the new user's labelled windows).
        """
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        tasks = self._check_tasks(tasks, X.shape[0], "decision_function")
        position = np.minimum(np.searchsorted(self.tasks_, tasks), len(self.tasks_) - 1)
        unknown = self.tasks_[position] != tasks
        if unknown.any():
            raise ValueError(f"tasks {np.unique(tasks[unknown])[:5].tolist()} were not seen in fit; MT-ONMKL has one "
                             "SVM per task, so refit with labelled rows of those tasks.")
        scores = np.empty(X.shape[0])
        for t in np.unique(position):
            here = position == t
            X_t, signed, bias = self._train[t]
            kernel = np.tensordot(self.task_weights_[t], base_kernels(X_t, X[here]), axes=1)
            scores[here] = signed @ kernel + bias
        return scores
