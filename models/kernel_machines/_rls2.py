"""RLS2: regularized least squares with two layers (multiple kernel learning by alternation).

Spec: dinuzzo-solvers-rls2-client-server-mtl.md §2 (Dinuzzo thesis §4.1–4.5, Alg. 3; paper
"Kernel machines with two layers and multiple kernel learning", §4, Alg. 1). Problem (4.1)::

    min_{c, d in simplex}  ||y - K(d) c||^2 / (2 lambda) + c^T K(d) c / 2,
    K(d) = sum_k d_k s_k Ktilde_k,

with basis kernels ``Ktilde_k`` and the second-layer scaling ``s`` of §2.6. The learned
kernel weights ``d`` are sparse, so RLS2 selects kernels; with one linear kernel per
feature (§2.5) it is a linear model that selects features.
"""

import warnings
from collections import namedtuple
from numbers import Integral, Real

import numpy as np
import scipy.linalg
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin, _fit_context
from sklearn.exceptions import ConvergenceWarning
from sklearn.feature_selection import SelectorMixin
from sklearn.utils._param_validation import Hidden, Interval, StrOptions
from sklearn.utils.multiclass import check_classification_targets, type_of_target
from sklearn.utils.validation import check_is_fitted, validate_data
from tqdm.auto import tqdm

from ._simplex_pairwise import simplex_least_squares

__all__ = ["RLS2Classifier", "RLS2Path", "RLS2Regressor", "RLS2Selector", "rls2_path"]

_SCALING_RULES = ("trace", "centered_trace", "class_variance", "class_std")
_CLASS_RULES = ("class_variance", "class_std")


# --------------------------------------------------------------------------- basis kernels
def _solve_positive(matrix, rhs):
    """Solve with a symmetric positive definite matrix (here ``K(d) + lambda I``, lambda > 0)."""
    return scipy.linalg.cho_solve(scipy.linalg.cho_factor(matrix, lower=True), rhs)


class _FeatureKernels:
    """One linear kernel per column of X, ``Ktilde_k = x^k x^k^T`` (spec §2.5, eq. 4.5).

    Never forms the m matrices of size l x l: products cost O(l m) and the c-step solves
    the primal n(d) x n(d) system when fewer than l features are selected.
    """

    def __init__(self, X):
        self.X = X
        self.n_kernels = X.shape[1]

    def trace(self, rows):
        return np.sum(self.X[rows] ** 2, axis=0)

    def total(self, rows):
        return np.sum(self.X[rows], axis=0) ** 2

    def products(self, c):
        return self.X * (self.X.T @ c)

    def solve(self, weights, alpha, y):
        # (X diag(w) X^T + alpha I) c = y. With A = X_B sqrt(w_B) the push-through identity
        # gives c = (y - A (A^T A + alpha I)^{-1} A^T y) / alpha: an n(d) x n(d) solve (§2.5).
        support = weights > 0
        A = self.X[:, support] * np.sqrt(weights[support])
        n_rows, n_selected = A.shape
        if n_selected < n_rows:
            z = _solve_positive(A.T @ A + alpha * np.eye(n_selected), A.T @ y)
            return (y - A @ z) / alpha
        return _solve_positive(A @ A.T + alpha * np.eye(n_rows), y)


class _DenseKernels:
    """Precomputed basis kernel matrices of shape (m, l, l), as in the thesis experiments."""

    def __init__(self, matrices):
        self.matrices = matrices
        self.n_kernels = matrices.shape[0]

    def _block(self, rows):
        return self.matrices[:, rows][:, :, rows]

    def trace(self, rows):
        return np.einsum("kii->k", self._block(rows))

    def total(self, rows):
        return self._block(rows).sum(axis=(1, 2))

    def products(self, c):
        return (self.matrices @ c).T

    def solve(self, weights, alpha, y):
        support = weights > 0
        K = np.tensordot(weights[support], self.matrices[support], axes=1)
        K[np.diag_indices_from(K)] += alpha
        return _solve_positive(K, y)


# --------------------------------------------------------------------------- scaling (§2.6)
def _inverse_of_positive(denominator):
    """Return ``1 / denominator``, with 1 where the denominator is (numerically) zero.

    A zero trace means the kernel vanishes on the training inputs, so its scale is
    irrelevant; a zero within-class variance means the kernel is constant inside each class.
    Either way ``1/0`` would make the alignment infinite, so, like scikit-learn's
    ``_handle_zeros_in_scale``, such kernels keep the neutral scale 1.
    """
    denominator = np.asarray(denominator, dtype=float)
    zero = denominator <= 10 * np.finfo(float).eps * np.max(np.abs(denominator), initial=0.0)
    return np.where(zero, 1.0, 1.0 / np.where(zero, 1.0, denominator))


def _scaling(basis, rule, labels):
    """Second-layer scaling ``s`` of spec §2.6 for the basis kernels.

    ``"trace"`` is (4.12) for linear feature kernels and (4.14) in general; ``"centered_trace"``
    centres in feature space first; ``"class_variance"`` is (4.13) with its non-linear
    generalisation; ``"class_std"`` is its square root (14 Cancers variant, erratum E11).
    """
    n_rows = labels.shape[0]
    everyone = np.arange(n_rows)
    if rule is None:
        return np.ones(basis.n_kernels)
    if not isinstance(rule, str):
        scale = np.asarray(rule, dtype=float)
        if scale.shape != (basis.n_kernels,) or not np.all(np.isfinite(scale)) or np.any(scale <= 0):
            raise ValueError(
                f"scaling given as an array must hold {basis.n_kernels} finite positive values, one "
                f"per basis kernel; got shape {scale.shape}. Pass one of {_SCALING_RULES} or None instead."
            )
        return scale
    if rule == "trace":
        return _inverse_of_positive(basis.trace(everyone))
    if rule == "centered_trace":
        return _inverse_of_positive(basis.trace(everyone) - basis.total(everyone) / n_rows)
    variances = []
    for sign in (1.0, -1.0):
        rows = np.flatnonzero(labels == sign)
        variances.append(basis.trace(rows) / rows.size - basis.total(rows) / rows.size**2)
    spread = variances[0] + variances[1]
    return _inverse_of_positive(spread if rule == "class_variance" else np.sqrt(np.maximum(spread, 0)))


# --------------------------------------------------------------------------- Algorithm 3
def _alternate(basis, y, scale, alpha, d_init, tol, max_iter):
    """Algorithm 3 of spec §2.3: alternate the exact c-step (4.2) and the simplex d-step (4.4).

    Stops when ``||(K(d_new) + alpha I) c - y|| <= tol ||y||`` with the current c, i.e. when c
    (exact for the previous d) is still nearly optimal for the new d (§2.3, stopping criterion).
    Returns ``(c, d, n_iter, converged)`` with c re-solved exactly for the returned d.
    """
    if d_init is None:
        # Lemma 6: as lambda -> infinity the solution is the vertex of the best-aligned kernel.
        alignment = scale * (basis.products(y).T @ y)
        d = np.zeros(basis.n_kernels)
        d[np.argmax(alignment)] = 1.0
    else:
        d = d_init.copy()
    y_norm = np.linalg.norm(y)
    converged = False
    for n_iter in range(1, max_iter + 1):
        c = basis.solve(d * scale, alpha, y)
        V = basis.products(c) * scale
        d = simplex_least_squares(V, y - alpha * c / 2, d_init=d)
        # K(d) c = V d, so the residual costs O(l m) without rebuilding K(d).
        if np.linalg.norm(V @ d + alpha * c - y) <= tol * y_norm:
            converged = True
            break
    return basis.solve(d * scale, alpha, y), d, n_iter, converged


# The thesis's path grid: 30 log-spaced values over 12 decades, i.e. a factor of ~2.6 per step,
# for which it reports 1-3 alternations per lambda.
_CONTINUATION_RATIO = 10 ** (12 / 29)


def _fit_at(basis, y, scale, alpha, d_init, tol, max_iter):
    """Solve (4.1) at one lambda; a cold start follows the path down from the Lemma 6 regime.

    Algorithm 3 started at the Lemma 6 vertex converges slowly when lambda is small (hundreds
    of alternations, and the residual rule can stop it early), while warm starts along a
    decreasing path need 1-3 per lambda (§2.3, "Regularization path"). So without ``d_init``
    the fit walks a geometric grid from ``100 * max_k s_k tr(Ktilde_k)`` (an upper bound on
    every ``||K^k||``, so Lemma 6 applies there) down to ``alpha``.
    Returns ``(c, d, total alternations, converged at alpha)``.
    """
    if d_init is not None:
        return _alternate(basis, y, scale, alpha, d_init, tol, max_iter)
    start = 100.0 * np.max(scale * basis.trace(np.arange(y.size)))
    steps = int(np.ceil(np.log(start / alpha) / np.log(_CONTINUATION_RATIO))) if start > alpha else 0
    total = 0
    d = None
    for lam in np.geomspace(start, alpha, steps + 1) if steps else [alpha]:
        c, d, n_iter, converged = _alternate(basis, y, scale, lam, d, tol, max_iter)
        total += n_iter
    return c, d, total, converged


def _warn_not_converged(max_iter, alpha):
    warnings.warn(
        f"RLS2 did not reach the stopping tolerance within max_iter={max_iter} alternations at "
        f"alpha={alpha:g}; increase max_iter or tol.",
        ConvergenceWarning,
        stacklevel=3,
    )


RLS2Path = namedtuple("RLS2Path", ["alphas", "kernel_weights", "dual_coefs", "n_iter", "scaling"])
RLS2Path.__doc__ = """Regularization path of RLS2 returned by :func:`rls2_path`.

Attributes
----------
alphas : ndarray of shape (n_alphas,)
    The lambda values, in the (decreasing) order they were visited.
kernel_weights : ndarray of shape (n_alphas, m)
    Learned simplex weights d at each lambda.
dual_coefs : ndarray of shape (n_alphas, n_samples)
    Coefficients c at each lambda.
n_iter : ndarray of shape (n_alphas,)
    Alternations of Algorithm 3 at each lambda.
scaling : ndarray of shape (m,)
    Second-layer scaling s used throughout.
"""


def rls2_path(
    data, y, *, kernels="linear", alphas=None, n_alphas=30, alpha_range=(1e-6, 1e6),
    scaling="trace", tol=1e-3, max_iter=500, progress=False,
):
    """Regularization path of RLS2 over decreasing lambda with warm starts (spec §2.3, §4.5.2).

    The first point starts at the Lemma 6 vertex (largest alignment ``s_k y^T Ktilde_k y``);
    every later lambda starts from the previous d, which the thesis reports costs 1–3
    alternations per lambda on average. No intercept is fitted: centre ``y`` first if needed.

    Parameters
    ----------
    data : array-like of shape (n_samples, n_features) or (m, n_samples, n_samples)
        Inputs X when ``kernels="linear"`` (one linear kernel per feature, §2.5), or the m
        precomputed basis kernel matrices ``Ktilde_k`` when ``kernels="precomputed"``.
    y : array-like of shape (n_samples,)
        Targets (use labels in {-1, +1} with the class scaling rules).
    kernels : {"linear", "precomputed"}, default="linear"
        How to read ``data``.
    alphas : array-like, default=None
        Lambda values; visited in decreasing order. ``None`` uses ``n_alphas`` log-spaced
        values in ``alpha_range`` (thesis: 30 values in [1e-6, 1e6]).
    n_alphas : int, default=30
    alpha_range : tuple of two floats, default=(1e-6, 1e6)
    scaling : {"trace", "centered_trace", "class_variance", "class_std"}, array-like or None
        Second-layer scaling s (§2.6); see :class:`RLS2Regressor`.
    tol : float, default=1e-3
        Relative residual tolerance of Algorithm 3 (thesis: 1e-2).
    max_iter : int, default=500
        Cap on alternations per lambda.
    progress : bool, default=False
        Show a tqdm progress bar over the lambda values.

    Returns
    -------
    path : RLS2Path

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(40, 6))
    >>> y = X[:, 0] - 2 * X[:, 3]
    >>> path = rls2_path(X, y, alphas=[1e3, 1e-2])
    >>> path.kernel_weights.round(2)
    array([[0.  , 0.  , 0.  , 1.  , 0.  , 0.  ],
           [0.29, 0.  , 0.  , 0.71, 0.  , 0.  ]])
    """
    y = np.asarray(y, dtype=float)
    if kernels == "linear":
        basis = _FeatureKernels(np.asarray(data, dtype=float))
    elif kernels == "precomputed":
        matrices = np.asarray(data, dtype=float)
        if matrices.ndim != 3 or matrices.shape[1:] != (y.size, y.size):
            raise ValueError(
                f"kernels='precomputed' expects data of shape (m, n_samples, n_samples) = "
                f"(m, {y.size}, {y.size}); got {matrices.shape}. Stack the basis kernel matrices."
            )
        basis = _DenseKernels(matrices)
    else:
        raise ValueError(f"kernels must be 'linear' or 'precomputed'; got {kernels!r}.")
    alphas = np.geomspace(alpha_range[1], alpha_range[0], n_alphas) if alphas is None else alphas
    alphas = np.sort(np.asarray(alphas, dtype=float))[::-1]
    if np.any(alphas <= 0):
        raise ValueError(f"alphas must be positive (lambda > 0 makes the c-step well posed); got {alphas}.")
    if isinstance(scaling, str) and scaling in _CLASS_RULES:
        _check_signed_labels(y, scaling)
    scale = _scaling(basis, scaling, y)
    weights, coefs, iterations = [], [], []
    d = None
    for alpha in tqdm(alphas, desc="RLS2 path", unit="lambda", disable=not progress):
        c, d, n_iter, converged = _fit_at(basis, y, scale, alpha, d, tol, max_iter)
        if not converged:
            _warn_not_converged(max_iter, alpha)
        weights.append(d)
        coefs.append(c)
        iterations.append(n_iter)
    return RLS2Path(alphas, np.array(weights), np.array(coefs), np.array(iterations), scale)


def _check_signed_labels(labels, rule):
    values = set(np.unique(labels).tolist())
    if values != {-1.0, 1.0}:
        raise ValueError(
            f"scaling={rule!r} is the binary-class rule (4.13) and needs targets in {{-1, +1}} with "
            f"both present; got values {sorted(values)[:5]}. Use RLS2Classifier, or scaling='trace'."
        )


# --------------------------------------------------------------------------- estimators
class _BaseRLS2(BaseEstimator):
    """Shared fitting of one RLS2 problem per target column (regression, or one-vs-all)."""

    _parameter_constraints: dict = {
        "kernels": [StrOptions({"linear"}), list],
        "alpha": [Interval(Real, 0, None, closed="neither")],
        "scaling": [StrOptions(set(_SCALING_RULES)), "array-like", None],
        "fit_intercept": ["boolean"],
        "tol": [Interval(Real, 0, None, closed="left")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "warm_start": ["boolean"],
    }

    def __init__(
        self, kernels="linear", *, alpha=1.0, scaling="trace", fit_intercept=True, tol=1e-3,
        max_iter=500, warm_start=False,
    ):
        self.kernels = kernels
        self.alpha = alpha
        self.scaling = scaling
        self.fit_intercept = fit_intercept
        self.tol = tol
        self.max_iter = max_iter
        self.warm_start = warm_start

    def _linear(self):
        return isinstance(self.kernels, str)

    def _basis(self, X):
        if self._linear():
            return _FeatureKernels(X)
        return _DenseKernels(np.stack([self._evaluate(index, X, X) for index in range(len(self.kernels))]))

    def _evaluate(self, index, X, Y):
        kernel = self.kernels[index]
        if not callable(kernel):
            raise TypeError(
                f"kernels[{index}] must be a callable k(X, Y) -> array of shape (len(X), len(Y)); "
                f"got {type(kernel).__name__}. Wrap precomputed matrices with rls2_path(kernels='precomputed')."
            )
        gram = np.asarray(kernel(X, Y), dtype=float)
        if gram.shape != (X.shape[0], Y.shape[0]) or not np.all(np.isfinite(gram)):
            raise ValueError(
                f"kernels[{index}](X, Y) must return a finite array of shape {(X.shape[0], Y.shape[0])}; "
                f"got shape {gram.shape}. Check the kernel function."
            )
        return gram

    def _fit_targets(self, X, targets, labels):
        """Fit one RLS2 problem per row of ``targets`` (labels drive the class scaling rules)."""
        if not self._linear() and len(self.kernels) == 0:
            raise ValueError("kernels is an empty list; pass at least one callable k(X, Y) or 'linear'.")
        basis = self._basis(X)
        n_problems = targets.shape[0]
        previous = getattr(self, "kernel_weights_", None) if self.warm_start else None
        if previous is not None and np.shape(np.atleast_2d(previous)) != (n_problems, basis.n_kernels):
            previous = None
        intercepts = targets.mean(axis=1) if self.fit_intercept else np.zeros(n_problems)
        scales, weights, coefs, iterations = [], [], [], []
        for p in range(n_problems):
            if isinstance(self.scaling, str) and self.scaling in _CLASS_RULES:
                _check_signed_labels(labels[p], self.scaling)
            scale = _scaling(basis, self.scaling, labels[p])
            d_init = None if previous is None else np.atleast_2d(previous)[p]
            c, d, n_iter, converged = _fit_at(
                basis, targets[p] - intercepts[p], scale, self.alpha, d_init, self.tol, self.max_iter
            )
            if not converged:
                _warn_not_converged(self.max_iter, self.alpha)
            scales.append(scale)
            weights.append(d)
            coefs.append(c)
            iterations.append(n_iter)
        scales, weights, coefs = np.array(scales), np.array(weights), np.array(coefs)
        if self._linear():
            # (4.6)-(4.7): w_j = d_j s_j (X^T c)_j.
            self.coef_ = self._shape(weights * scales * (coefs @ X))
        else:
            self.X_fit_ = X
        self.scaling_ = self._shape(scales)
        self.kernel_weights_ = self._shape(weights)
        self.dual_coef_ = self._shape(coefs)
        self.intercept_ = self._shape(intercepts)
        self.n_iter_ = self._shape(np.array(iterations))
        return self

    def _decision(self, X):
        """Real-valued outputs of shape (n_samples, n_problems), eq. (4.6) / Thm 14 predictor."""
        check_is_fitted(self)
        X = validate_data(self, X, reset=False)
        if self._linear():
            return X @ np.atleast_2d(self.coef_).T + np.atleast_1d(self.intercept_)
        weights = np.atleast_2d(self.kernel_weights_) * np.atleast_2d(self.scaling_)
        output = np.tile(np.atleast_1d(self.intercept_), (X.shape[0], 1))
        for index in np.flatnonzero(np.any(weights > 0, axis=0)):
            cross = self._evaluate(index, X, self.X_fit_)
            output += (cross @ np.atleast_2d(self.dual_coef_).T) * weights[:, index]
        return output


_PARAMETERS_DOC = """
    kernels : "linear" or list of callables, default="linear"
        ``"linear"``: one linear kernel per input feature (linear RLS2, spec §2.5), giving a
        sparse linear model ``coef_``. A list: basis kernels ``k(X, Y) -> (len(X), len(Y))``
        (e.g. ``functools.partial(sklearn.metrics.pairwise.rbf_kernel, gamma=0.1)``); they are
        evaluated once on the training inputs and again on new inputs at prediction. For
        kernel matrices you already hold, use :func:`rls2_path` with ``kernels="precomputed"``.
    alpha : float, default=1.0
        The regularization parameter lambda of (4.1), > 0. Large values select the single
        best-aligned kernel (Lemma 6); small values approach interpolation.
    scaling : {"trace", "centered_trace", "class_variance", "class_std"}, array-like or None, \
default="trace"
        Second-layer scaling s (spec §2.6), which decides what "aligned" means:
        ``"trace"`` is (4.12) ``s_k = ||x^k||^-2`` for linear kernels and the inverse trace
        (4.14) in general; ``"centered_trace"`` centres in feature space first;
        ``"class_variance"`` is (4.13) ``1 / (sigma_+^2 + sigma_-^2)`` (needs ±1 labels);
        ``"class_std"`` its square root (erratum E11); an array gives s directly; None means 1.
    fit_intercept : bool, default=True
        Subtract the target mean and add it back at prediction, as the thesis does for
        regression (§2.8). The features are not centred, so this is not a jointly fitted bias.
    tol : float, default=1e-3
        Relative residual tolerance of Algorithm 3's stopping rule (thesis: 1e-2).
    max_iter : int, default=500
        Cap on alternations of Algorithm 3; reaching it warns with ``ConvergenceWarning``.
    warm_start : bool, default=False
        Start from the previous ``kernel_weights_``, for regularization paths (decreasing
        ``alpha``). A cold fit instead walks a geometric lambda grid down from the Lemma 6
        regime to ``alpha`` (warm-starting each step), because Algorithm 3 started at a
        vertex is slow at small lambda; ``n_iter_`` counts all those alternations."""


class RLS2Regressor(RegressorMixin, _BaseRLS2):
    __doc__ = f"""Regularized least squares with two layers: MKL by alternation (spec §2.3, Alg. 3).

    Learns kernel weights d on the simplex and coefficients c for problem (4.1); the
    predictor is ``g(x) = sum_j c_j sum_k d_k s_k k_k(x_j, x) + intercept``.

    Parameters
    ----------{_PARAMETERS_DOC}

    Attributes
    ----------
    kernel_weights_ : ndarray of shape (m,)
        Learned simplex weights d; zeros mark kernels (features) not selected.
    scaling_ : ndarray of shape (m,)
        Scaling s used.
    dual_coef_ : ndarray of shape (n_samples,)
        Coefficients c, exact for ``kernel_weights_`` (4.2).
    coef_ : ndarray of shape (n_features,)
        Linear weights ``w = d * s * (X^T c)`` (4.6); only with ``kernels="linear"``.
    intercept_ : float
    X_fit_ : ndarray of shape (n_samples, n_features)
        Training inputs, kept for kernel evaluation; only with a kernel list.
    n_iter_ : int
        Alternations of Algorithm 3.
    n_features_in_ : int

    See Also
    --------
    RLS2Classifier : one-vs-all classification on ±1 targets.
    RLS2Selector : linear RLS2 as a feature selector.
    rls2_path : regularization path with warm starts, also for precomputed kernels.

    Notes
    -----
    Linear RLS2 solves the squared weighted-l1 problem (4.9),
    ``||y - Xw||^2 / (2 lambda) + (sum_i |w_i| / sqrt(s_i))^2 / 2`` (Lemma 7).

    References
    ----------
    F. Dinuzzo, "Learning functions with kernel methods", PhD thesis, Pavia 2011, Ch. 4.
    F. Dinuzzo, "Kernel machines with two layers and multiple kernel learning".

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = rng.integers(0, 2, size=(30, 20)).astype(float)
    >>> y = X[:, 0] + X[:, 1] + X[:, 2]
    >>> model = RLS2Regressor(alpha=1e-3, fit_intercept=False).fit(X, y)
    >>> np.flatnonzero(model.kernel_weights_)
    array([0, 1, 2])
    >>> model.coef_[:3].round(2)
    array([1., 1., 1.])
    """

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Fit RLS2 on inputs ``X`` of shape (n_samples, n_features) and targets ``y``."""
        X, y = validate_data(self, X, y, y_numeric=True, dtype=np.float64)
        self._fit_targets(X, y[None, :], y[None, :])
        return self

    def predict(self, X):
        """Predicted targets, shape (n_samples,)."""
        return self._decision(X)[:, 0]

    @staticmethod
    def _shape(array):
        return array[0]


class RLS2Classifier(ClassifierMixin, _BaseRLS2):
    __doc__ = f"""RLS2 classifier: regression on ±1 labels, one-vs-all for many classes (spec §2.7).

    Binary problems regress ``+1`` for ``classes_[1]`` and ``-1`` for ``classes_[0]`` and
    predict by the sign; with more classes one RLS2 per class (that class against the rest)
    and the argmax of the real-valued outputs, as the thesis does on 14 Cancers.

    Parameters
    ----------{_PARAMETERS_DOC}

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    kernel_weights_ : ndarray of shape (n_problems, m)
        Simplex weights d per binary problem (``n_problems`` is 1 for two classes, else
        ``n_classes``).
    scaling_ : ndarray of shape (n_problems, m)
    dual_coef_ : ndarray of shape (n_problems, n_samples)
    coef_ : ndarray of shape (n_problems, n_features)
        Only with ``kernels="linear"``.
    intercept_ : ndarray of shape (n_problems,)
    X_fit_ : ndarray of shape (n_samples, n_features)
        Only with a kernel list.
    n_iter_ : ndarray of shape (n_problems,)
    n_features_in_ : int

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(60, 5))
    >>> y = np.where(X[:, 2] > 0, "stairs", "flat")
    >>> clf = RLS2Classifier(alpha=10.0, scaling="class_variance").fit(X, y)
    >>> np.flatnonzero(clf.kernel_weights_[0])
    array([2])
    >>> float(clf.score(X, y)) > 0.9
    True
    """

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Fit one RLS2 per binary problem on ``X`` (n_samples, n_features) and labels ``y``."""
        X, y = validate_data(self, X, y, dtype=np.float64)
        check_classification_targets(y)
        self.classes_, encoded = np.unique(y, return_inverse=True)
        if self.classes_.size < 2:
            raise ValueError(
                f"RLS2Classifier needs samples of at least 2 classes in y; got one class, "
                f"{self.classes_.tolist()}. Add examples of another class."
            )
        positives = [1] if self.classes_.size == 2 else range(self.classes_.size)
        labels = np.array([np.where(encoded == k, 1.0, -1.0) for k in positives])
        return self._fit_targets(X, labels, labels)

    def decision_function(self, X):
        """Real-valued outputs: shape (n_samples,) for two classes, else (n_samples, n_classes)."""
        output = self._decision(X)
        return output[:, 0] if self.classes_.size == 2 else output

    def predict(self, X):
        """Class labels: the sign for two classes, the one-vs-all argmax otherwise."""
        scores = self.decision_function(X)
        index = (scores > 0).astype(int) if scores.ndim == 1 else np.argmax(scores, axis=1)
        return self.classes_[index]

    @staticmethod
    def _shape(array):
        return array


class RLS2Selector(SelectorMixin, BaseEstimator):
    """Feature selection by linear RLS2: keep the features with non-zero kernel weight (§2.5).

    With one linear kernel per feature, RLS2's simplex weights d are sparse and
    ``d_i`` is proportional to ``|w_i| / sqrt(s_i)`` (Lemma 7), so the support of d is an
    embedded feature selection and d ranks the selected features.

    Parameters
    ----------
    alpha : float, default=1.0
        Lambda of (4.1); larger keeps fewer features (one at the Lemma 6 limit).
    scaling : {"trace", "centered_trace", "class_variance", "class_std"}, array-like or None, \
default="trace"
        Second-layer scaling (§2.6); the class rules need a classification target.
    task : {"auto", "classification", "regression"}, default="auto"
        ``"classification"`` fits :class:`RLS2Classifier` (±1 regression, one-vs-all) and
        selects the union of the per-class supports; ``"regression"`` fits
        :class:`RLS2Regressor`; ``"auto"`` picks classification for binary or multiclass
        targets (``sklearn.utils.multiclass.type_of_target``).
    k : int, default=None
        Keep at most this many of the selected features, by decreasing weight (``None``: all of
        them). The same name as :class:`~stairsense.models.EasyMKLSelector`'s ``k`` and
        scikit-learn's ``SelectKBest``.
    fit_intercept : bool, default=True
    tol : float, default=1e-3
    max_iter : int, default=500
        As in :class:`RLS2Regressor`.
    max_features : int or None
        Deprecated name of ``k`` (one name for the same idea across selectors); passing
        it warns with a ``DeprecationWarning`` and sets ``k``.

    Attributes
    ----------
    estimator_ : RLS2Regressor or RLS2Classifier
        The fitted linear RLS2 model.
    feature_weights_ : ndarray of shape (n_features,)
        Kernel weights d, averaged over the one-vs-all problems; they sum to 1.
    n_iter_ : int or ndarray of shape (n_problems,)
        Alternations of Algorithm 3 (per one-vs-all problem for classification).
    k_ : int or None
        The cap on kept features in effect (``k``, or the deprecated ``max_features``).
    n_features_in_ : int

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(80, 8))
    >>> y = (X[:, 1] - X[:, 5] > 0).astype(int)
    >>> selector = RLS2Selector(alpha=1.0).fit(X, y)
    >>> selector.get_support(indices=True)
    array([1, 5])
    """

    _parameter_constraints: dict = {
        "alpha": [Interval(Real, 0, None, closed="neither")],
        "scaling": [StrOptions(set(_SCALING_RULES)), "array-like", None],
        "task": [StrOptions({"auto", "classification", "regression"})],
        "k": [Interval(Integral, 1, None, closed="left"), None],
        "fit_intercept": ["boolean"],
        "tol": [Interval(Real, 0, None, closed="left")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "max_features": [Interval(Integral, 1, None, closed="left"), None, Hidden(StrOptions({"deprecated"}))],
    }

    def __init__(
        self, alpha=1.0, *, scaling="trace", task="auto", k=None, fit_intercept=True,
        tol=1e-3, max_iter=500, max_features="deprecated",
    ):
        self.alpha = alpha
        self.scaling = scaling
        self.task = task
        self.k = k
        self.fit_intercept = fit_intercept
        self.tol = tol
        self.max_iter = max_iter
        # scikit-learn's deprecation pattern: the old name keeps its own parameter (so get_params
        # and clone round-trip) with a sentinel default, and fit reads it only when it was passed.
        self.max_features = max_features

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Fit linear RLS2 on ``X`` (n_samples, n_features) and ``y``."""
        X, y = validate_data(self, X, y, dtype=np.float64)
        self.k_ = self._resolve_k()
        classify = self.task == "classification" or (
            self.task == "auto" and type_of_target(y) in ("binary", "multiclass")
        )
        model = RLS2Classifier if classify else RLS2Regressor
        self.estimator_ = model(
            "linear", alpha=self.alpha, scaling=self.scaling, fit_intercept=self.fit_intercept,
            tol=self.tol, max_iter=self.max_iter,
        ).fit(X, y)
        self.feature_weights_ = np.atleast_2d(self.estimator_.kernel_weights_).mean(axis=0)
        self.n_iter_ = self.estimator_.n_iter_
        return self

    def _resolve_k(self):
        """``k``, or the deprecated ``max_features`` when that was passed instead (with a warning)."""
        if self.max_features == "deprecated":
            return self.k
        if self.k is not None:
            raise ValueError("RLS2Selector: pass k only (max_features is its deprecated name), not both")
        warnings.warn("RLS2Selector(max_features=...) is deprecated; use k=... (the name EasyMKLSelector "
                      "and scikit-learn's SelectKBest use)", DeprecationWarning, stacklevel=3)
        return self.max_features

    def _get_support_mask(self):
        check_is_fitted(self)
        mask = self.feature_weights_ > 0
        if self.k_ is not None and mask.sum() > self.k_:
            keep = np.argsort(-self.feature_weights_, kind="stable")[: self.k_]
            mask = np.zeros_like(mask)
            mask[keep] = True
        return mask
