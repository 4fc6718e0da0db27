"""scikit-learn estimators on top of the server-side kernel-machine solvers (spec §1.8).

``KernelMachineClassifier`` and ``KernelMachineRegressor`` fit ``g(x) = sum_i c_i K(x_i, x) + b``
by minimising ``C sum_i w_i L(y_i, g(x_i)) + ||g||^2/2`` with the fixed-point or
coordinate-descent solver of ``stairsense.models.kernel_machines._solver``.

The thesis's problem has no bias (spec erratum E9).  ``fit_intercept=True`` adds one the
way LIBLINEAR does, as a *regularised* bias: the kernel becomes ``K + s^2`` (for the
linear kernel, X gains a constant column ``s = intercept_scaling``), so ``b = s^2 sum_i c_i``
and ``b^2/(2 s^2)`` joins the regulariser.  Large ``s`` weakens that penalty.
"""
from __future__ import annotations

import numbers

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin, _fit_context, is_classifier
from sklearn.metrics.pairwise import pairwise_kernels
from sklearn.preprocessing import LabelBinarizer
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.class_weight import compute_sample_weight
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import _check_sample_weight, check_is_fitted, validate_data

from ._kernel_access import LinearKernel, PrecomputedKernel
from ._solver import solve_kernel_machine
from ._losses import Loss

__all__ = ["KernelMachineClassifier", "KernelMachineRegressor"]

_KERNELS = {"linear", "rbf", "poly", "sigmoid", "laplacian", "cosine", "precomputed"}


class _BaseKernelMachine(BaseEstimator):
    """Shared fitting: kernel construction, intercept, one solver call per output column."""

    _parameter_constraints: dict = {
        "C": [Interval(numbers.Real, 0, None, closed="neither")],
        "kernel": [StrOptions(_KERNELS), callable],
        "gamma": [StrOptions({"scale"}), Interval(numbers.Real, 0, None, closed="neither"), None],
        "degree": [Interval(numbers.Integral, 1, None, closed="left")],
        "coef0": [Interval(numbers.Real, None, None, closed="neither")],
        "fit_intercept": ["boolean"],
        "intercept_scaling": [Interval(numbers.Real, 0, None, closed="neither")],
        "solver": [StrOptions({"cd", "fp"})],
        "order": [StrOptions({"cyclic", "symmetric", "random", "aitken"}, deprecated={"aitken"})],
        "tol": [Interval(numbers.Real, 0, None, closed="left")],
        "max_iter": [Interval(numbers.Integral, 1, None, closed="left")],
        "warm_start": ["boolean"],
        "random_state": ["random_state"],
    }

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.input_tags.pairwise = self.kernel == "precomputed"
        return tags

    def _gamma(self, X):
        """``gamma='scale'`` is ``1 / (n_features * X.var())`` as in ``sklearn.svm.SVC``."""
        if self.gamma != "scale":
            return self.gamma
        var = (X.multiply(X)).mean() - X.mean() ** 2 if sp.issparse(X) else X.var()
        return 1.0 / (X.shape[1] * var) if var > 0 else 1.0

    def _kernel_matrix(self, X, Y):
        if self.kernel == "precomputed":
            return np.asarray(X, dtype=float)
        params = {"gamma": self.gamma_, "degree": self.degree, "coef0": self.coef0}
        return pairwise_kernels(X, Y, metric=self.kernel, filter_params=True, **params)

    def _kernel_access(self, X):
        if self.kernel == "linear":
            if not self.fit_intercept:
                return LinearKernel(X)
            column = np.full((X.shape[0], 1), float(self.intercept_scaling))
            return LinearKernel(sp.hstack([X, column], format="csr") if sp.issparse(X) else np.hstack([X, column]))
        if self.kernel == "precomputed" and X.shape[0] != X.shape[1]:
            raise ValueError(
                f"kernel='precomputed' needs the square training Gram matrix, got shape {X.shape}. "
                "Pass K(X_train, X_train) to fit and K(X_test, X_train) to predict."
            )
        K = self._kernel_matrix(X, X)
        if self.fit_intercept:
            K = K + float(self.intercept_scaling) ** 2
        return PrecomputedKernel(K)

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None):
        """Fit one machine per output column (one for regression or two classes, else one per class).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features)
            Training inputs, or the training Gram matrix when ``kernel="precomputed"``.
        y : array-like of shape (n_samples,)
            Class labels for the classifier, real targets for the regressor.
        sample_weight : array-like of shape (n_samples,), default=None
            Non-negative multipliers of ``C`` per sample.

        Returns
        -------
        self : object
            The fitted estimator.
        """
        # Regressors coerce object-dtype targets to float; classifiers keep their labels as given.
        X, y = validate_data(self, X, y, accept_sparse="csr", dtype=float, y_numeric=not is_classifier(self))
        sample_weight = _check_sample_weight(sample_weight, X)
        Y, sample_weight = self._encode_targets(y, sample_weight)
        return self._fit_outputs(X, Y, sample_weight)

    def _encode_targets(self, y, sample_weight):
        """The one hook of subclasses: ``y`` as an ``(n_samples, n_outputs)`` float matrix.

        Returns ``(Y, sample_weight)``; the weights may be rescaled (class weights).
        """
        raise NotImplementedError

    def _fit_outputs(self, X, Y, sample_weight):
        """Solve one kernel machine per column of ``Y`` (one-vs-rest for many classes)."""
        self.gamma_ = self._gamma(X) if self.kernel not in ("linear", "precomputed") else None
        access = self._kernel_access(X)
        loss = Loss(self.loss, epsilon=getattr(self, "epsilon", 0.1), delta=getattr(self, "delta", 1.0))
        warm = self.warm_start and getattr(self, "dual_coef_", None) is not None and self.dual_coef_.shape == Y.T.shape
        solutions = [
            solve_kernel_machine(
                access,
                Y[:, k],
                loss,
                C=self.C,
                sample_weight=sample_weight,
                method=self.solver,
                order=self.order,
                tol=self.tol,
                max_iter=self.max_iter,
                c0=self.dual_coef_[k] if warm else None,
                random_state=self.random_state,
                track_objective=True,
            )
            for k in range(Y.shape[1])
        ]
        self.dual_coef_ = np.array([s.coef for s in solutions])
        self.n_iter_ = np.array([s.n_iter for s in solutions])
        self.objective_ = np.array([s.objective for s in solutions])
        self.converged_ = np.array([s.converged for s in solutions])
        self.history_ = [s.history for s in solutions]
        s = float(self.intercept_scaling) if self.fit_intercept else 0.0
        if self.kernel == "linear":
            W = np.array([sol.weights for sol in solutions])
            self.coef_ = W[:, : X.shape[1]]
            self.intercept_ = W[:, -1] * s if self.fit_intercept else np.zeros(len(solutions))
        else:
            self.intercept_ = s**2 * self.dual_coef_.sum(axis=1)
            self.X_fit_ = X
        return self

    def _raw_decision(self, X):
        """``g(x)`` for every output column, shape ``(n_samples, n_outputs)``."""
        check_is_fitted(self)
        X = validate_data(self, X, accept_sparse="csr", reset=False, dtype=float)
        if self.kernel == "linear":
            return np.asarray(X @ self.coef_.T) + self.intercept_
        if self.kernel == "precomputed" and X.shape[1] != self.dual_coef_.shape[1]:
            raise ValueError(
                f"kernel='precomputed' predicts from K(X_test, X_train) with {self.dual_coef_.shape[1]} "
                f"columns (one per training sample); got {X.shape[1]}."
            )
        return self._kernel_matrix(X, self.X_fit_) @ self.dual_coef_.T + self.intercept_


class KernelMachineClassifier(ClassifierMixin, _BaseKernelMachine):
    """Kernel classifier trained by the server-side solvers of spec §1 (one-vs-rest).

    Minimises ``C sum_i w_i L(y_i, g(x_i)) + ||g||^2/2`` over the RKHS of ``kernel``
    (spec §1.1), with labels encoded as -1/+1 for each class against the rest.

    Parameters
    ----------
    loss : {"hinge", "squared_hinge", "logistic", "square"}, default="hinge"
        Margin loss (spec §1.3); ``"square"`` fits the +-1 codes by least squares.
    C : float, default=1.0
        Loss weight against the RKHS norm (as ``C`` of ``sklearn.svm.SVC``).
    kernel : {"rbf", "linear", "poly", "sigmoid", "laplacian", "cosine", "precomputed"} or callable, default="rbf"
        ``"linear"`` never forms K (``w = X'c``, dense or sparse X) and exposes ``coef_``.
    gamma : "scale", float or None, default="scale"
        Kernel width; ``"scale"`` is ``1/(n_features X.var())``.
    degree : int, default=3
        Degree of the polynomial kernel.
    coef0 : float, default=1.0
        Constant of the polynomial and sigmoid kernels.
    fit_intercept : bool, default=True
        Add a regularised bias (module docstring).
    intercept_scaling : float, default=1.0
        ``s`` of the regularised bias.
    solver : {"cd", "fp"}, default="cd"
        Coordinate descent (spec §1.5) or fixed point (spec §1.4, step ``1/tr K``).
    order : {"random", "cyclic", "symmetric"}, default="random"
        Coordinate order of ``solver="cd"`` (``"symmetric"``: forward then backward sweeps;
        its former name ``"aitken"`` is deprecated).
    tol : float, default=1e-6
        Stopping rule ``max |h| <= tol max(1, max |c|)`` (``_solver`` docstring).
    max_iter : int, default=1000
        Maximum sweeps / fixed-point steps per output.
    warm_start : bool, default=False
        Start from the previous ``dual_coef_`` when it fits the new problem's shape.
    class_weight : dict, "balanced" or None, default=None
        Multiplies the sample weights per class.
    random_state : int, RandomState or None, default=None
        Seeds the random coordinate order.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    dual_coef_ : ndarray of shape (n_outputs, n_samples)
        ``c`` per output; one output for two classes, one per class otherwise.
    coef_ : ndarray of shape (n_outputs, n_features)
        Primal weights ``w = X'c`` (``kernel="linear"`` only).
    intercept_ : ndarray of shape (n_outputs,)
    X_fit_ : array of shape (n_samples, n_features)
        Training inputs, kept for non-linear kernels.
    gamma_ : float or None
        The resolved kernel width.
    n_iter_, objective_, converged_ : ndarray of shape (n_outputs,)
        Iterations run, final objective F(c), and whether the stopping rule was met.
    history_ : list of dict
        Per output, ``"max_change"`` and ``"objective"`` after every iteration.
    n_features_in_ : int

    See Also
    --------
    KernelMachineRegressor : the same solvers with regression losses.
    sklearn.svm.LinearSVC : LIBLINEAR, the peer of ``loss="hinge", kernel="linear"``.

    Examples
    --------
    >>> from sklearn.datasets import make_moons
    >>> X, y = make_moons(80, noise=0.1, random_state=0)
    >>> clf = KernelMachineClassifier(C=10.0, random_state=0).fit(X, y)
    >>> clf.score(X, y) > 0.95
    True
    """

    _parameter_constraints: dict = {
        **_BaseKernelMachine._parameter_constraints,
        "loss": [StrOptions({"hinge", "squared_hinge", "logistic", "square"})],
        "class_weight": [dict, StrOptions({"balanced"}), None],
    }

    def __init__(
        self,
        loss="hinge",
        *,
        C=1.0,
        kernel="rbf",
        gamma="scale",
        degree=3,
        coef0=1.0,
        fit_intercept=True,
        intercept_scaling=1.0,
        solver="cd",
        order="random",
        tol=1e-6,
        max_iter=1000,
        warm_start=False,
        class_weight=None,
        random_state=None,
    ):
        self.loss = loss
        self.C = C
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.fit_intercept = fit_intercept
        self.intercept_scaling = intercept_scaling
        self.solver = solver
        self.order = order
        self.tol = tol
        self.max_iter = max_iter
        self.warm_start = warm_start
        self.class_weight = class_weight
        self.random_state = random_state

    def _encode_targets(self, y, sample_weight):
        """-1/+1 codes: one column for two classes, one per class against the rest otherwise."""
        check_classification_targets(y)
        binarizer = LabelBinarizer(neg_label=-1, pos_label=1)
        Y = binarizer.fit_transform(y).astype(float)
        self.classes_ = binarizer.classes_
        if self.classes_.shape[0] < 2:
            raise ValueError(
                f"The classifier needs samples of at least 2 classes; got only one class, {self.classes_[0]!r}."
            )
        if self.class_weight is not None:
            sample_weight = sample_weight * compute_sample_weight(self.class_weight, y)
        return Y, sample_weight

    def decision_function(self, X):
        """Signed scores ``g(x)``: shape (n_samples,) for two classes, else (n_samples, n_classes)."""
        scores = self._raw_decision(X)
        return scores[:, 0] if scores.shape[1] == 1 else scores

    def predict(self, X):
        """The class with the largest score (the sign of the score for two classes)."""
        scores = self.decision_function(X)
        if scores.ndim == 1:
            return self.classes_[(scores > 0).astype(int)]
        return self.classes_[np.argmax(scores, axis=1)]


class KernelMachineRegressor(RegressorMixin, _BaseKernelMachine):
    """Kernel regression trained by the server-side solvers of spec §1.

    Parameters
    ----------
    loss : {"square", "absolute", "epsilon_insensitive", "huber"}, default="square"
        ``(y - z)^2/2`` (kernel ridge, with ``C = 1/lambda``), ``|y - z|``,
        ``(|y - z| - epsilon)_+`` (SVR) or Huber with threshold ``delta`` (spec §1.3).
    epsilon : float, default=0.1
        Insensitive zone of ``"epsilon_insensitive"``.
    delta : float, default=1.0
        Threshold of ``"huber"``.
    C, kernel, gamma, degree, coef0, fit_intercept, intercept_scaling, solver, order, tol, max_iter, \
warm_start, random_state
        As in ``KernelMachineClassifier``.

    Attributes
    ----------
    dual_coef_ : ndarray of shape (1, n_samples)
    coef_ : ndarray of shape (1, n_features)
        ``kernel="linear"`` only.
    intercept_ : ndarray of shape (1,)
    X_fit_, gamma_, n_iter_, objective_, converged_, history_, n_features_in_
        As in ``KernelMachineClassifier``.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = rng.uniform(-3, 3, size=(60, 1)); y = np.sin(X[:, 0])
    >>> reg = KernelMachineRegressor(C=10.0, random_state=0).fit(X, y)
    >>> reg.score(X, y) > 0.99
    True
    """

    _parameter_constraints: dict = {
        **_BaseKernelMachine._parameter_constraints,
        "loss": [StrOptions({"square", "absolute", "epsilon_insensitive", "huber"})],
        "epsilon": [Interval(numbers.Real, 0, None, closed="left")],
        "delta": [Interval(numbers.Real, 0, None, closed="neither")],
    }

    def __init__(
        self,
        loss="square",
        *,
        epsilon=0.1,
        delta=1.0,
        C=1.0,
        kernel="rbf",
        gamma="scale",
        degree=3,
        coef0=1.0,
        fit_intercept=True,
        intercept_scaling=1.0,
        solver="cd",
        order="random",
        tol=1e-6,
        max_iter=1000,
        warm_start=False,
        random_state=None,
    ):
        self.loss = loss
        self.epsilon = epsilon
        self.delta = delta
        self.C = C
        self.kernel = kernel
        self.gamma = gamma
        self.degree = degree
        self.coef0 = coef0
        self.fit_intercept = fit_intercept
        self.intercept_scaling = intercept_scaling
        self.solver = solver
        self.order = order
        self.tol = tol
        self.max_iter = max_iter
        self.warm_start = warm_start
        self.random_state = random_state

    def _encode_targets(self, y, sample_weight):
        """The real targets as the single output column."""
        return np.asarray(y, dtype=float)[:, None], sample_weight

    def predict(self, X):
        """``g(x) = sum_i c_i K(x_i, x) + b``."""
        return self._raw_decision(X)[:, 0]
