"""EasyMKL kernel combination and the rank-one EasyMKL feature selector.

Spec donini-easymkl-komd-climbtheworld-admm §2.1–§2.2 (EasyMKL = KOMD on the sum of the weak kernels,
then one weight per kernel from the separation d_r(γ)) and §2.5(a) with the addendum §2.5 (rank-one
feature kernels: Σ_r x^(r)x^(r)ᵀ = XXᵀ, so the selector never forms an n×n matrix).
"""
from __future__ import annotations

import warnings
from collections.abc import Iterable
from numbers import Integral, Real

import numpy as np
from scipy.linalg.blas import daxpy
from sklearn.base import BaseEstimator, ClassifierMixin, _fit_context
from sklearn.exceptions import ConvergenceWarning
from sklearn.feature_selection import SelectorMixin
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data
from tqdm.auto import tqdm

from ._komd import BinaryDecisionMixin, encode_binary_labels, solve_komd_precomputed
from ._komd_interior import solve_komd_linear_interior
from ._simplex import linear_kernel_operator, solve_komd_linear_dual, solve_komd_projected_gradient

__all__ = ["EasyMKL", "EasyMKLSelector", "PrecomputedKernel", "RankOneKernel", "kernel_weights"]

# L-BFGS iterations EasyMKLSelector tries before switching to the interior point (well-conditioned
# problems need 12–20, mildly correlated ones 40–60; benchmarks/bench_easymkl.py and bench_easymkl_real.py).
_LBFGS_BUDGET = 100


class RankOneKernel:
    """The rank-one linear kernel of one feature, k(a, b) = a_f · b_f (spec §2.5(a)).

    Parameters
    ----------
    feature : int
        Column index f.

    Examples
    --------
    >>> import numpy as np
    >>> RankOneKernel(1)(np.array([[1.0, 2.0]]), np.array([[5.0, 3.0], [0.0, -1.0]])).tolist()
    [[6.0, -2.0]]
    """

    def __init__(self, feature):
        self.feature = int(feature)

    def __call__(self, A, B):
        return np.outer(A[:, self.feature], B[:, self.feature])

    def __repr__(self):
        return f"RankOneKernel({self.feature})"


class PrecomputedKernel:
    """A kernel given as a Gram matrix over a fixed pool of N samples, addressed by index.

    This is how precomputed train and test kernels enter :class:`EasyMKL`: X is a one-column array
    of sample indices into the pool, and k(A, B) = matrix[A[:, 0], B[:, 0]]. Fitting on the training
    indices and predicting on the test indices then uses the train×train and test×train blocks.
    ``matrix`` may be a ``numpy.memmap``, so kernels stored on disk are read one at a time.

    Parameters
    ----------
    matrix : array-like of shape (N, N)

    Examples
    --------
    >>> import numpy as np
    >>> k = PrecomputedKernel(np.arange(9.0).reshape(3, 3))
    >>> k(np.array([[2.0]]), np.array([[0.0], [1.0]])).tolist()
    [[6.0, 7.0]]
    """

    def __init__(self, matrix):
        self.matrix = matrix

    def __call__(self, A, B):
        return np.asarray(self.matrix[np.ix_(self._indices(A), self._indices(B))], dtype=np.float64)

    def _indices(self, X):
        column = np.asarray(X)[:, 0]
        index = column.astype(np.intp)
        pool = self.matrix.shape[0]
        if not np.array_equal(index, column) or index.min(initial=0) < 0 or index.max(initial=0) >= pool:
            raise ValueError(
                f"PrecomputedKernel expects X[:, 0] to hold integer sample indices in [0, {pool}), got values "
                f"from {column.min()} to {column.max()}; pass indices into the kernel matrix, not features"
            )
        return index


def kernel_weights(separation, trace_scales, weight_norm):
    """EasyMKL weights from the separations d_r, spec §2.2 step 5.

    ``scores`` are η = d / ‖d‖ (``"l1"``: the authors' code, ``"l2"``: Eq. 7.5) and weight the
    trace-normalised kernels; ``weights`` = η_r / (tr(K_r)/l) weight the original kernels, as the
    code does (§2.2 step 5 [X]). Both norms give the same order of the kernels.

    Examples
    --------
    >>> s, w = kernel_weights(np.array([3.0, 1.0]), np.array([1.0, 2.0]), "l1")
    >>> s.tolist(), w.tolist()
    ([0.75, 0.25], [0.75, 0.125])
    """
    norm = _weight_norm(separation, weight_norm)
    if not norm > 0:
        raise ValueError(
            "every kernel gives zero separation d_r(γ) = (y∘γ)ᵀK_r(y∘γ), so no kernel weight can be learned; "
            "check that the kernels are not all constant or zero on the training data"
        )
    scores = separation / norm
    return scores, scores / trace_scales


def _weight_norm(separation, weight_norm):
    """‖d‖₁ or ‖d‖₂, the normaliser of §2.2 step 5."""
    return float(np.abs(separation).sum() if weight_norm == "l1" else np.sqrt(separation @ separation))


def _trace_scale(trace, n_samples):
    """tr(K)/l, the factor that gives a kernel unit mean diagonal (spec §2.2 step 1).

    A kernel with zero trace is zero (PSD), contributes nothing and gets separation 0; its scale is
    set to 1 rather than dividing 0 by 0, as scikit-learn's ``_handle_zeros_in_scale`` does.

    Examples
    --------
    >>> _trace_scale(np.array([8.0, 0.0]), 4).tolist()
    [2.0, 1.0]
    """
    scale = np.asarray(trace, dtype=float) / n_samples
    return np.where(scale > 0, scale, 1.0)


def _clip_rounding(separation, owner):
    """d_r ≥ 0 for PSD kernels; rounding can give −1e-17, which is set to 0, real negatives raise."""
    tolerance = 1e-10 * max(float(np.abs(separation).max(initial=0.0)), np.finfo(float).tiny)
    bad = np.flatnonzero(separation < -tolerance)
    if bad.size:
        raise ValueError(
            f"{owner}: kernels {bad[:10].tolist()} give negative separation (y∘γ)ᵀK_r(y∘γ), so they are not "
            "positive semi-definite on the training data; EasyMKL needs PSD kernels"
        )
    return np.maximum(separation, 0.0)


class EasyMKL(BinaryDecisionMixin, ClassifierMixin, BaseEstimator):
    """EasyMKL: learn a non-negative combination of kernels, then classify with KOMD on it.

    Spec donini-easymkl-komd-climbtheworld-admm §2.2: (1) trace-normalise the weak kernels,
    (2) sum them with only two l×l matrices alive, (3) solve KOMD (Eq. 7.7) on the sum with Λ,
    (4) d_r = (y∘γ)ᵀK_r(y∘γ), (5) weights from d (``weight_norm``), (6) re-solve KOMD on Σ η_r K_r
    with the same Λ (or ``final_lam``), (7) score f(x) = Σ_i y_i γ_i Σ_r η_r K_r(x_i, x) − θ.
    Steps 4 and 6 share one pass: Σ_r d_r K_r is accumulated and divided by ‖d‖ at the end, so each
    kernel is evaluated twice on the training data in total.

    Parameters
    ----------
    lam : float in [0, 1], default=0.1
        Λ of both KOMD solves (spec §2.2 step 6 [P]: tied by default).
    kernels : iterable of callables or None, default=None
        Weak kernels k(A, B) -> array of shape (len(A), len(B)), PSD. Evaluated one at a time; only
        the callables are kept (``kernels_``), never their matrices, so a generator of callables
        works for a single fit (``clone`` needs a list). ``None``: one :class:`RankOneKernel` per
        feature (spec §2.5(a)). For precomputed matrices use :class:`PrecomputedKernel`.
    weight_norm : {"l1", "l2"}, default="l1"
        Normalisation of d (§2.2 step 5): "l1" as the authors' code, "l2" as Eq. 7.5.
    trace_normalize : bool, default=True
        Divide each kernel by tr(K_r)/l before combining (§2.2 step 1).
    final_lam : float in [0, 1] or None, default=None
        Λ of the final KOMD; ``None`` uses ``lam``.
    tol : float > 0, default=1e-8
        libsvm tolerance of both KOMD solves.
    progress : bool, default=False
        Show a progress bar over the kernels (two passes).

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
        ``classes_[1]`` is the positive class.
    kernels_ : list of callables
        The weak kernels, in order.
    trace_scales_ : ndarray of shape (R,)
        tr(K_r)/l on the training data (ones if ``trace_normalize=False``).
    separation_ : ndarray of shape (R,)
        d_r(γ) of the trace-normalised kernels at the step-3 solution (Eq. 7.3).
    scores_ : ndarray of shape (R,)
        d / ‖d‖: weights of the trace-normalised kernels, comparable across kernels of any scale.
    weights_ : ndarray of shape (R,)
        η_r of the original kernels: the learned kernel is Σ_r weights_[r] · kernels_[r].
    ranking_ : ndarray of shape (R,)
        Kernel indices by decreasing ``scores_`` (stable for ties).
    mkl_gamma_ : ndarray of shape (l,)
        γ of the KOMD solve on the kernel sum (step 3).
    gamma_dist_ : ndarray of shape (l,)
        γ of the final KOMD solve.
    support_, support_vectors_, dual_coef_, theta_, intercept_ :
        As in :class:`~stairsense.models.KOMDClassifier`, for the learned kernel.
    n_features_in_ : int

    Notes
    -----
    Memory is two l×l float64 matrices whatever R is; time is 2R kernel evaluations plus two KOMD
    solves. The ranking uses ``scores_`` rather than ``weights_`` so that rescaling a feature does not
    move it (with ``trace_normalize=True`` the two differ by the factor tr(K_r)/l).

    Examples
    --------
    >>> from sklearn.datasets import make_classification
    >>> X, y = make_classification(120, 6, n_informative=2, n_redundant=0, shuffle=False, random_state=0)
    >>> mkl = EasyMKL(lam=0.1).fit(X, y)
    >>> int(mkl.ranking_[0]) in (0, 1)  # an informative feature comes first
    True
    >>> float(mkl.score(X, y)) > 0.8
    True
    """

    _parameter_constraints: dict = {
        "lam": [Interval(Real, 0, 1, closed="both")],
        "kernels": [None, Iterable],
        "weight_norm": [StrOptions({"l1", "l2"})],
        "trace_normalize": ["boolean"],
        "final_lam": [None, Interval(Real, 0, 1, closed="both")],
        "tol": [Interval(Real, 0, None, closed="neither")],
        "progress": ["boolean"],
    }

    def __init__(
        self, lam=0.1, kernels=None, weight_norm="l1", trace_normalize=True, final_lam=None, tol=1e-8, progress=False
    ):
        self.lam = lam
        self.kernels = kernels
        self.weight_norm = weight_norm
        self.trace_normalize = trace_normalize
        self.final_lam = final_lam
        self.tol = tol
        self.progress = progress

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        return tags

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Learn the kernel weights and the KOMD classifier on the combined kernel.

        Parameters
        ----------
        X : array-like of shape (l, n_features)
            Whatever the kernels read (features, or sample indices for :class:`PrecomputedKernel`).
        y : array-like of shape (l,)
            Exactly two classes.

        Returns
        -------
        self : EasyMKL
        """
        X, y = validate_data(self, X, y, dtype=np.float64)
        self.classes_, y_signed = encode_binary_labels(y, type(self).__name__)
        kernels = [RankOneKernel(f) for f in range(X.shape[1])] if self.kernels is None else list(self.kernels)
        if not kernels:
            raise ValueError("EasyMKL got an empty kernel list; pass at least one kernel callable k(A, B)")
        not_callable = [i for i, k in enumerate(kernels) if not callable(k)]
        if not_callable:
            raise TypeError(
                f"EasyMKL kernels must be callables k(A, B) -> (len(A), len(B)) array; items {not_callable[:10]} "
                "are not (wrap a precomputed Gram matrix in PrecomputedKernel)"
            )
        l = X.shape[0]

        # Pass 1 (steps 1–3): running sum of trace-normalised kernels, then KOMD on it.
        total = np.zeros((l, l))
        traces = np.empty(len(kernels))
        for r, kernel in enumerate(tqdm(kernels, desc="EasyMKL sum", disable=not self.progress)):
            K_r = self._evaluate(kernel, r, X, X)
            traces[r] = np.trace(K_r)
            scale = _trace_scale(traces[r], l) if self.trace_normalize else 1.0
            daxpy(K_r.ravel(), total.ravel(), a=1.0 / scale)  # in place: no third l×l temporary
            del K_r
        scales = _trace_scale(traces, l) if self.trace_normalize else np.ones(len(kernels))
        mkl_gamma, _ = solve_komd_precomputed(total, y_signed, float(self.lam), tol=self.tol)
        del total
        u = y_signed * mkl_gamma

        # Pass 2 (steps 4–6): d_r per kernel, and Σ_r (d_r / s_r) K_r for the final KOMD.
        combined = np.zeros((l, l))
        separation = np.empty(len(kernels))
        for r, kernel in enumerate(tqdm(kernels, desc="EasyMKL weights", disable=not self.progress)):
            K_r = self._evaluate(kernel, r, X, X)
            separation[r] = u @ K_r @ u / scales[r]
            if separation[r] > 0:
                daxpy(K_r.ravel(), combined.ravel(), a=separation[r] / scales[r])
            del K_r
        separation = _clip_rounding(separation, type(self).__name__)
        self.scores_, self.weights_ = kernel_weights(separation, scales, self.weight_norm)
        combined /= _weight_norm(separation, self.weight_norm)

        final_lam = self.lam if self.final_lam is None else self.final_lam
        gamma, theta = solve_komd_precomputed(combined, y_signed, float(final_lam), tol=self.tol)
        del combined
        self.kernels_ = kernels
        self.trace_scales_ = scales
        self.separation_ = separation
        self.ranking_ = np.argsort(-self.scores_, kind="stable")
        self.mkl_gamma_ = mkl_gamma
        self.gamma_dist_ = gamma
        self.support_ = np.flatnonzero(gamma)
        self.support_vectors_ = X[self.support_]
        self.dual_coef_ = y_signed[self.support_] * gamma[self.support_]
        self.theta_ = theta
        self.intercept_ = -theta
        return self

    @staticmethod
    def _evaluate(kernel, index, A, B):
        K = np.ascontiguousarray(kernel(A, B), dtype=np.float64)
        if K.shape != (A.shape[0], B.shape[0]):
            raise ValueError(
                f"kernel #{index} ({kernel!r}) returned shape {K.shape} for inputs with {A.shape[0]} and "
                f"{B.shape[0]} rows; a kernel must map (A, B) to an array of shape (len(A), len(B))"
            )
        if not np.isfinite(K).all():
            raise ValueError(f"kernel #{index} ({kernel!r}) returned NaN or infinite values")
        return K

    def learned_kernel(self, A, B):
        """The learned kernel Σ_r η_r K_r(A, B) with η = ``weights_`` (spec §2.1, Eq. 7.1).

        Parameters
        ----------
        A : array-like of shape (n_a, n_features)
        B : array-like of shape (n_b, n_features)

        Returns
        -------
        K : ndarray of shape (n_a, n_b)
        """
        check_is_fitted(self)
        A = np.asarray(A, dtype=np.float64)
        B = np.asarray(B, dtype=np.float64)
        K = np.zeros((A.shape[0], B.shape[0]))
        for r in np.flatnonzero(self.weights_):
            K += self.weights_[r] * self._evaluate(self.kernels_[r], r, A, B)
        return K

    def decision_function(self, X):
        """f(x) − θ with the learned kernel (spec §2.2 step 7); ≥ 0 means ``classes_[1]``.

        Parameters
        ----------
        X : array-like of shape (n, n_features)

        Returns
        -------
        scores : ndarray of shape (n,)
        """
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        return self.learned_kernel(X, self.support_vectors_) @ self.dual_coef_ + self.intercept_

class EasyMKLSelector(SelectorMixin, BaseEstimator):
    """Feature selection by EasyMKL over the d rank-one feature kernels, without n×n matrices.

    Spec §2.5(a) and addendum §2.5: with K_r = x^(r)x^(r)ᵀ (columns divided by √(tr(K_r)/l), the RMS,
    when ``trace_normalize``), Σ_r K_r = XXᵀ, so EasyMKL's KOMD is
    min_{γ∈Γ̂} (1 − Λ)‖Xᵀ(y∘γ)‖² + Λ‖γ‖²: for Λ > 0 first by L-BFGS on its d-dimensional dual
    (:func:`~stairsense.models.mkl._simplex.solve_komd_linear_dual`, O(n·d) per iteration, enough on
    well-conditioned features), and if that has not converged in 100 iterations by a primal-dual
    interior-point method in O(n·d²) per iteration
    (:func:`~stairsense.models.mkl._komd_interior.solve_komd_linear_interior`, 15–30 iterations
    whatever Λ, also on the strongly correlated real window features); for
    Λ = 0 by accelerated projected gradient with two simplex projections
    (:func:`~stairsense.models.mkl._simplex.solve_komd_projected_gradient`, which needs hundreds of
    iterations at n = 10⁴ because the primal's conditioning grows with n/Λ); and
    d_r = ((Xᵀ(y∘γ))_r)², the squared gap of the γ-weighted class means of feature r. Weights follow
    §2.2 step 5 as in :class:`EasyMKL`, which gives the same ranking on explicit rank-one kernels.

    More than two classes: one-vs-rest. EasyMKL is a two-class method (spec §2.1); with C > 2
    classes the selector solves the C problems "class c against the rest", normalises each one's
    separations by §2.2 step 5 (so every class counts equally, whatever its size or how separable it
    is), and averages them: ``scores_ = mean_c class_scores_[c]``, renormalised by ``weight_norm``
    (the mean of l1-normalised rows already sums to 1). A feature thus ranks high when it separates
    some classes strongly or many classes moderately. With two classes both one-vs-rest problems are
    the binary problem with the sign of y flipped and give the same scores, so a single solve is run.

    Parameters
    ----------
    lam : float in [0, 1], default=0.1
        Λ.
    k : int ≥ 1 or "all", default=49
        Number of top-ranked features kept when ``threshold`` is None (49 in the thesis, §3.9). If
        k exceeds the number of features all are kept, with a warning.
    threshold : float or None, default=None
        If set, keep the features with ``scores_ ≥ threshold`` instead of the top k.
    trace_normalize : bool, default=True
        Trace-normalise the rank-one kernels (spec §2.2 step 1 [P] for rank-one kernels).
    weight_norm : {"l1", "l2"}, default="l1"
        Normalisation of the weights (§2.2 step 5).
    tol : float > 0, default=1e-6
        Relative duality-gap tolerance of the KOMD solve.
    max_iter : int ≥ 1, default=10000
        Iteration cap of the KOMD solve (for Λ > 0: of each of the two solvers).

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        The sorted class labels; with two, ``classes_[1]`` is the positive class.
    separation_ : ndarray of shape (n_features_in_,), or (n_classes, n_features_in_) if n_classes > 2
        d_r(γ) (per one-vs-rest problem).
    class_scores_ : ndarray of shape (n_classes, n_features_in_)
        d / ‖d‖ of each one-vs-rest problem (with two classes, both rows equal ``scores_``).
    scores_ : ndarray of shape (n_features_in_,)
        d / ‖d‖ (the mean of ``class_scores_``, renormalised, with more classes): the weights of the
        trace-normalised feature kernels; ranking and ``threshold`` use it.
    weights_ : ndarray of shape (n_features_in_,)
        ``scores_`` / ``trace_scales_``: weights of the original kernels x^(r)x^(r)ᵀ.
    ranking_ : ndarray of shape (n_features_in_,)
        Feature indices, best first.
    trace_scales_ : ndarray of shape (n_features_in_,)
        tr(K_r)/l = mean of x^(r)².
    gamma_dist_ : ndarray of shape (n_samples,), or (n_classes, n_samples) if n_classes > 2
        The KOMD solution γ (per one-vs-rest problem).
    duality_gap_ : float
        Duality gap at γ (an upper bound on its objective error); the largest over the problems.
    n_iter_ : int
        Iterations of the solver that returned γ (L-BFGS or interior point for Λ > 0, projected
        gradient for Λ = 0), summed over the problems.
    n_features_in_ : int

    Examples
    --------
    >>> from sklearn.datasets import make_classification
    >>> X, y = make_classification(500, 8, n_informative=2, n_redundant=0, shuffle=False, random_state=0)
    >>> selector = EasyMKLSelector(k=2).fit(X, y)
    >>> sorted(selector.ranking_[:2].tolist()), selector.transform(X).shape
    ([0, 1], (500, 2))
    """

    _parameter_constraints: dict = {
        "lam": [Interval(Real, 0, 1, closed="both")],
        "k": [Interval(Integral, 1, None, closed="left"), StrOptions({"all"})],
        "threshold": [None, Real],
        "trace_normalize": ["boolean"],
        "weight_norm": [StrOptions({"l1", "l2"})],
        "tol": [Interval(Real, 0, None, closed="neither")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
    }

    def __init__(
        self, lam=0.1, k=49, threshold=None, trace_normalize=True, weight_norm="l1", tol=1e-6, max_iter=10_000
    ):
        self.lam = lam
        self.k = k
        self.threshold = threshold
        self.trace_normalize = trace_normalize
        self.weight_norm = weight_norm
        self.tol = tol
        self.max_iter = max_iter

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.required = True
        return tags

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Rank the features by their EasyMKL weight.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
            Two or more classes (more: one-vs-rest, see the class docstring).

        Returns
        -------
        self : EasyMKLSelector
        """
        X, y = validate_data(self, X, y, dtype=np.float64)
        check_classification_targets(y)
        self.classes_, index = np.unique(y, return_inverse=True)
        if self.classes_.size < 2:
            raise ValueError(f"EasyMKLSelector needs at least 2 classes in y, got 1 class: {self.classes_.tolist()}")
        n_samples, n_features = X.shape
        if self.k != "all" and self.threshold is None and self.k > n_features:
            warnings.warn(f"k={self.k} is greater than n_features={n_features}; all the features will be kept")
        if self.trace_normalize:
            scales = _trace_scale(np.einsum("ij,ij->j", X, X), n_samples)
            X = X / np.sqrt(scales)
        else:
            scales = np.ones(n_features)
        # Two classes: one problem, classes_[1] positive. More: class c against the rest, for each c.
        targets = [index == 1] if self.classes_.size == 2 else [index == c for c in range(self.classes_.size)]
        solutions = [self._solve_binary(X, np.where(positive, 1.0, -1.0)) for positive in targets]
        separation = np.array([s for s, _ in solutions])
        class_scores = np.array([kernel_weights(s, scales, self.weight_norm)[0] for s in separation])
        if self.classes_.size == 2:
            class_scores = np.repeat(class_scores, 2, axis=0)
        mean_scores = class_scores.mean(axis=0)
        self.scores_ = mean_scores / _weight_norm(mean_scores, self.weight_norm)
        self.weights_ = self.scores_ / scales
        self.class_scores_ = class_scores
        squeeze = (lambda a: a[0]) if self.classes_.size == 2 else (lambda a: a)
        self.separation_ = squeeze(separation)
        self.gamma_dist_ = squeeze(np.array([sol.gamma for _, sol in solutions]))
        self.duality_gap_ = max(sol.gap for _, sol in solutions)
        self.n_iter_ = sum(sol.n_iter for _, sol in solutions)
        self.trace_scales_ = scales
        self.ranking_ = np.argsort(-self.scores_, kind="stable")
        return self

    def _solve_binary(self, X, y_signed):
        """(d_r for every feature, KOMD solution) of one two-class problem on the scaled X."""
        if self.lam > 0:
            # L-BFGS on the d-dim dual costs O(n·d) an iteration and converges in ~15 on well-conditioned
            # features (0.4 CPU-s at 100,000 × 79); on correlated ones (the real window features) it needs
            # thousands, so after a short budget the interior point (O(n·d²), 15–30 iterations whatever
            # the conditioning; see _komd_interior) takes over.
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ConvergenceWarning)
                solution = solve_komd_linear_dual(X, y_signed, float(self.lam), tol=self.tol,
                                                  max_iter=min(_LBFGS_BUDGET, self.max_iter))
            if solution.gap > self.tol * solution.objective:
                solution = solve_komd_linear_interior(X, y_signed, float(self.lam), tol=self.tol,
                                                      max_iter=self.max_iter)
        else:  # Λ = 0 makes the dual non-smooth; projected gradient handles it
            matvec, lambda_max = linear_kernel_operator(X)
            solution = solve_komd_projected_gradient(
                matvec, y_signed, 0.0, lambda_max, tol=self.tol, max_iter=self.max_iter
            )
        return _clip_rounding((X.T @ (y_signed * solution.gamma)) ** 2, type(self).__name__), solution

    def _get_support_mask(self):
        check_is_fitted(self)
        if self.threshold is not None:
            return self.scores_ >= self.threshold
        mask = np.zeros(self.n_features_in_, dtype=bool)
        mask[self.ranking_[: None if self.k == "all" else self.k]] = True
        return mask
