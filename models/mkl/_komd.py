"""KOMD, Kernel Optimization of the Margin Distribution (spec donini-easymkl-komd-climbtheworld-admm §1).

The exact solver uses the identity of the spec's addendum §1.4: KOMD (Eq. 5.7) is libsvm's ν-SVC
with ν = 2/l on the kernel K′ = (1 − Λ)K + ΛI, up to a rescaling of the dual variables. libsvm's
SMO only reads kernel rows, so no generic dense QP solver runs in the hot path.
"""
from __future__ import annotations

from numbers import Real

import numpy as np
import psutil
from scipy import sparse
from sklearn.base import BaseEstimator, ClassifierMixin, _fit_context
from sklearn.svm import NuSVC
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

__all__ = ["KOMDClassifier", "rbf_kernel_inplace", "resolve_rbf_gamma", "solve_komd_low_rank", "solve_komd_precomputed"]

#: The most kernel entries ``decision_function`` holds at once (32 MB of float64). The support set
#: may come from a model file, and a small file can hold many short support vectors: scored in one
#: block, a chunk of windows against them could take gigabytes.
KERNEL_BLOCK_ELEMENTS = 1 << 22


def low_rank_cache_mb(n_windows: int) -> float:
    """libsvm's kernel-row cache for :func:`solve_komd_low_rank` on ``n_windows`` examples, in MB.

    The solve is cache-bound: a missed row costs O(l r) to recompute, and SMO revisits rows many
    times. The cache takes all of Q (4 l² bytes in float32: 6.9 GB at 41,538 windows) where a
    quarter of the memory available holds it, else that quarter, and never less than libsvm's
    default 200 MB. ``benchmarks/results/komd_low_rank.md`` measures the solve at the size chosen.
    """
    quarter = psutil.virtual_memory().available / 4
    return max(200.0, min(4.0 * n_windows ** 2, quarter) / 1e6)


def resolve_rbf_gamma(gamma, X):
    """Turn the ``gamma`` parameter into the RBF width actually used, as scikit-learn's ``SVC`` does.

    ``"scale"`` means 1 / (d · X.var()). A constant X has zero variance; like ``SVC`` we then use
    1.0, because any width gives the same (constant) kernel and an infinite one would give NaNs.

    Examples
    --------
    >>> import numpy as np
    >>> resolve_rbf_gamma("scale", np.array([[0.0, 2.0], [2.0, 0.0]]))
    0.5
    >>> resolve_rbf_gamma("scale", np.ones((3, 2)))
    1.0
    """
    if gamma != "scale":
        return float(gamma)
    variance = float(X.var())
    return 1.0 / (X.shape[1] * variance) if variance > 0 else 1.0


def rbf_kernel_inplace(A, B, gamma):
    """RBF kernel exp(−γ‖a − b‖²) built in one (len(A), len(B)) buffer.

    Uses ‖a‖² + ‖b‖² − 2aᵀb with the matrix product from BLAS and in-place element-wise steps, so a
    5,000² training kernel costs one allocation; rounding can make a squared distance slightly
    negative, which is clipped to zero.

    Examples
    --------
    >>> import numpy as np
    >>> rbf_kernel_inplace(np.array([[0.0, 0.0]]), np.array([[0.0, 0.0], [1.0, 1.0]]), 0.5).round(4)
    array([[1.    , 0.3679]])
    """
    K = A @ B.T
    K *= 2.0 * gamma
    K -= gamma * np.einsum("ij,ij->i", A, A)[:, None]
    K -= gamma * np.einsum("ij,ij->i", B, B)[None, :]
    np.minimum(K, 0.0, out=K)
    return np.exp(K, out=K)


def solve_komd_precomputed(K, y, lam, *, tol=1e-8):
    """Solve KOMD (Eq. 5.7) on an explicit training kernel; returns γ and the threshold θ.

    Spec §1.1–§1.2 and addendum §1.4: ν-SVC on K′ = (1 − Λ)K + ΛI constrains each class's α to sum
    to νl/2 under a box α ≤ 1, and its objective is Eq. 5.7 up to a constant factor, so its solution
    rescaled per class is γ. The addendum uses ν = 2/l (sums of 1); we use ν = 1/l (sums of ½)
    because a class with a single example then sits *at* the box at ν = 2/l and libsvm returns
    non-finite coefficients, while at ½ the box is never active. libsvm also rescales α by 1/r, so γ
    is |dual_coef_| renormalised per class. Λ = 1 has the closed form γ_i = 1/p on positives and 1/n
    on negatives (Eq. 5.9–5.10) and skips the solver.

    Parameters
    ----------
    K : ndarray of shape (l, l), float64
        Symmetric PSD training kernel. **Overwritten** with K′ (callers pass a matrix they own; this
        keeps a single l×l buffer alive, as EasyMKL's memory bound requires).
    y : ndarray of shape (l,)
        Labels in {−1, +1}, both present.
    lam : float
        Λ ∈ [0, 1].
    tol : float, default=1e-8
        libsvm's stopping tolerance, on the KKT violation in the units of K. Its default 1e-3 left
        the objective 0.5 % above optimum (addendum §1.4); 1e-8 costs about 1.5× the time of 1e-3
        on 5,000 RBF points. Known weak spot: Λ ≲ 1e-4 with overlapping class hulls and a low-rank
        K (e.g. linear, l ≫ d) has an optimum near 0 that is not unique, and SMO then needs
        seconds even for l = 18; use Λ ≥ 1e-3 there, or the first-order solver
        ``stairsense.models.mkl._simplex.solve_komd_projected_gradient``.

    Returns
    -------
    gamma : ndarray of shape (l,)
        γ ∈ Γ̂ (exact zeros outside libsvm's support set).
    theta : float
        θ = ½ γᵀK̂Ŷγ with the original kernel K̂ (§1.2), the midpoint between the projections of the
        two optimal hull points.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.0], [1.0], [3.0], [4.0]]); y = np.array([-1.0, -1.0, 1.0, 1.0])
    >>> gamma, theta = solve_komd_precomputed(X @ X.T, y, 0.0, tol=1e-12)
    >>> np.round(gamma, 6).tolist(), round(theta, 6)
    ([0.0, 1.0, 1.0, 0.0], 4.0)
    """
    if lam == 1.0:
        gamma = _centroid_weights(y)
        return gamma, _threshold(gamma, y, lambda w: K @ w)
    K *= 1.0 - lam
    K[np.diag_indices_from(K)] += lam
    gamma = _nu_svc_gamma(K, y, "precomputed", tol)
    # The original kernel recovered from K′: K̂w = (K′w − Λw)/(1 − Λ).
    return gamma, _threshold(gamma, y, lambda w: (K @ w - lam * w) / (1.0 - lam))


def solve_komd_low_rank(phi, y, lam, *, tol=1e-8, cache_mb=None):
    """Solve KOMD (Eq. 5.7) on the kernel K = ΦΦᵀ without forming it; returns γ and θ.

    The reduction of :func:`solve_komd_precomputed` needs K′ = (1 − Λ)ΦΦᵀ + ΛI only through its
    rows, and K′ is the linear kernel of the features [√(1 − Λ) Φ, √Λ I]: row i holds Φ's r
    columns and one entry of its own. libsvm's linear kernel on that sparse matrix computes each
    kernel row on demand (and keeps ``cache_mb`` of them), so memory is O(l r) plus the cache instead of the
    8 l² bytes of the l × l kernel (13 GB at 40,000 windows), and the same γ and θ come out: the
    same ν-SVC on the same kernel.

    Parameters
    ----------
    phi : ndarray of shape (l, r), float64
        Features whose Gram matrix is the training kernel (e.g. Nyström features).
    y : ndarray of shape (l,)
        Labels in {−1, +1}, both present.
    lam : float
        Λ ∈ [0, 1].
    tol : float, default=1e-8
        libsvm's stopping tolerance (see :func:`solve_komd_precomputed`).
    cache_mb : float, optional
        libsvm's kernel-row cache; default :func:`low_rank_cache_mb` of l.

    Returns
    -------
    gamma : ndarray of shape (l,)
    theta : float
        θ = ½ γᵀK̂Ŷγ with K̂ = ΦΦᵀ.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.0], [1.0], [3.0], [4.0]]); y = np.array([-1.0, -1.0, 1.0, 1.0])
    >>> gamma, theta = solve_komd_low_rank(X, y, 0.0, tol=1e-12)
    >>> np.round(gamma, 6).tolist(), round(theta, 6)
    ([0.0, 1.0, 1.0, 0.0], 4.0)
    """
    if lam == 1.0:
        gamma = _centroid_weights(y)
    else:
        features = phi if lam == 0.0 else sparse.hstack(
            [np.sqrt(1.0 - lam) * phi, np.sqrt(lam) * sparse.identity(phi.shape[0])], format="csr")
        gamma = _nu_svc_gamma(features, y, "linear", tol, low_rank_cache_mb(len(y)) if cache_mb is None else cache_mb)
    return gamma, _threshold(gamma, y, lambda w: phi @ (phi.T @ w))


def _centroid_weights(y):
    """γ at Λ = 1 (Eq. 5.9–5.10): 1/p on each positive, 1/n on each negative."""
    positive = y > 0
    return np.where(positive, 1.0 / positive.sum(), 1.0 / (~positive).sum())


def _nu_svc_gamma(data, y, kernel, tol, cache_mb=200):
    """γ from libsvm's ν-SVC on K′ (given as ``data`` for ``kernel``): |α| renormalised per class."""
    l = y.shape[0]
    # ν = 1/l: each class's α sums to ½ (see solve_komd_precomputed); ν ≤ 2·min(p, n)/l, so libsvm accepts it.
    svc = NuSVC(nu=1.0 / l, kernel=kernel, tol=tol, shrinking=True, cache_size=cache_mb).fit(data, y)
    coef = svc.dual_coef_
    gamma = np.zeros(l)
    gamma[svc.support_] = np.abs(coef.toarray()[0] if sparse.issparse(coef) else coef[0])
    for mask in (y > 0, y <= 0):
        gamma[mask] /= gamma[mask].sum()
    return gamma


def _threshold(gamma, y, kernel_times):
    """θ = ½ γᵀK̂Ŷγ (§1.2), with ``kernel_times(w)`` = K̂w (one product with the whole kernel: a
    support-sized block of it would be a copy, all of K where the support is every example)."""
    return 0.5 * float(gamma @ kernel_times(y * gamma))


class BinaryDecisionMixin:
    """``predict`` of a two-class margin classifier from its one hook, ``decision_function``.

    ``classes_`` comes from :func:`encode_binary_labels` (``classes_[1]`` is +1). KOMD and EasyMKL
    share this one rule, so a decision of exactly 0 goes to the same class in both.
    """

    def predict(self, X):
        """Class labels: ``classes_[1]`` where the decision is ≥ 0, else ``classes_[0]``.

        Parameters
        ----------
        X : array-like
            What the estimator's ``decision_function`` takes.

        Returns
        -------
        labels : ndarray of shape (n,)
        """
        positive = self.decision_function(X) >= 0
        return self.classes_[positive.astype(int)]


class KOMDClassifier(BinaryDecisionMixin, ClassifierMixin, BaseEstimator):
    """Kernel Optimization of the Margin Distribution, a two-class kernel classifier.

    Spec donini-easymkl-komd-climbtheworld-admm §1: γ* = argmin_{γ∈Γ̂} (1 − Λ)γᵀŶK̂Ŷγ + Λ‖γ‖²
    (Eq. 5.7), score f(x) = Σ_i y_i γ_i K(x_i, x) (Eq. 5.11) and hard labels sign(f(x) − θ) with
    θ = ½γᵀK̂Ŷγ (§1.2). Λ = 0 is the hard-margin SVM (nearest points of the class hulls), Λ = 1 the
    difference of class centroids. Solved exactly by libsvm's ν-SVC (addendum §1.4, see
    :func:`solve_komd_precomputed`).

    Parameters
    ----------
    lam : float, default=0.1
        Λ ∈ [0, 1], the weight of the ‖γ‖² regulariser.
    kernel : {"rbf", "linear", "precomputed"}, default="rbf"
        With ``"precomputed"`` ``fit`` takes the (l, l) training kernel and ``decision_function``
        the (n, l) kernel between new and training examples.
    gamma : "scale" or float > 0, default="scale"
        RBF width; ``"scale"`` is 1 / (d · X.var()) as in scikit-learn's ``SVC``.
    tol : float > 0, default=1e-8
        libsvm's stopping tolerance (tight on purpose, see :func:`solve_komd_precomputed`).
    random_state : None, int or RandomState, default=None
        Accepted for uniformity with the other stairsense estimators; the solver is deterministic,
        so it has no effect.

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
        ``classes_[1]`` is the positive class (y = +1), as in ``SVC``.
    support_ : ndarray of shape (m,)
        Indices into the training X of the examples with γ_i > 0; the others are dropped.
    support_vectors_ : ndarray of shape (m, n_features_in_)
        Those examples (only for ``"rbf"`` and ``"linear"``).
    dual_coef_ : ndarray of shape (m,)
        y_i γ_i on the support.
    gamma_dist_ : ndarray of shape (l,)
        The full distribution γ over the training examples.
    gamma_ : float or None
        The RBF width used; ``None`` for the other kernels.
    theta_ : float
        The threshold θ.
    intercept_ : float
        −θ, so ``decision_function(X) = K(X, support_vectors_) @ dual_coef_ + intercept_``.
    n_features_in_ : int

    See Also
    --------
    stairsense.models.EasyMKL : KOMD on a learned combination of kernels.

    Notes
    -----
    The fit holds the l×l kernel (8·l² bytes: 200 MB at l = 5,000). ``predict`` returns
    ``classes_[1]`` where the decision is ≥ 0, as the authors' code maps 0 to +1 (spec §1.3 [X]).

    References
    ----------
    F. Aiolli, G. Da San Martino, A. Sperduti, "A kernel method for the optimization of the margin
    distribution", ICANN 2008. M. Donini, PhD thesis, Univ. Padova, 2016, Ch. 5.

    Examples
    --------
    >>> from sklearn.datasets import make_classification
    >>> X, y = make_classification(200, 5, random_state=0)
    >>> clf = KOMDClassifier(lam=0.1).fit(X, y)
    >>> float(clf.score(X, y)) > 0.9
    True
    >>> bool(abs(clf.dual_coef_[clf.dual_coef_ > 0].sum() - 1) < 1e-9)
    True
    """

    _parameter_constraints: dict = {
        "lam": [Interval(Real, 0, 1, closed="both")],
        "kernel": [StrOptions({"rbf", "linear", "precomputed"})],
        "gamma": [StrOptions({"scale"}), Interval(Real, 0, None, closed="neither")],
        "tol": [Interval(Real, 0, None, closed="neither")],
        "random_state": ["random_state"],
    }

    def __init__(self, lam=0.1, kernel="rbf", gamma="scale", tol=1e-8, random_state=None):
        self.lam = lam
        self.kernel = kernel
        self.gamma = gamma
        self.tol = tol
        self.random_state = random_state

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        tags.input_tags.pairwise = self.kernel == "precomputed"
        return tags

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Solve Eq. 5.7 on (X, y) and store the support set and threshold.

        Parameters
        ----------
        X : array-like of shape (l, n_features), or (l, l) if ``kernel="precomputed"``
        y : array-like of shape (l,)
            Exactly two classes.

        Returns
        -------
        self : KOMDClassifier
        """
        X, y = validate_data(self, X, y, dtype=np.float64)
        self.classes_, y_signed = encode_binary_labels(y, type(self).__name__)
        if self.kernel == "precomputed":
            if X.shape[0] != X.shape[1]:
                raise ValueError(
                    f"kernel='precomputed' needs the square (l, l) training kernel in fit, got shape {X.shape}; "
                    "pass K(X_train, X_train)"
                )
            K = X.copy()  # the solver overwrites its input; the caller's matrix must survive
            self.gamma_ = None
        else:
            self.gamma_ = resolve_rbf_gamma(self.gamma, X) if self.kernel == "rbf" else None
            K = self._kernel(X, X)
        gamma_dist, theta = solve_komd_precomputed(K, y_signed, float(self.lam), tol=self.tol)
        del K
        self.gamma_dist_ = gamma_dist
        self.support_ = np.flatnonzero(gamma_dist)
        self.dual_coef_ = y_signed[self.support_] * gamma_dist[self.support_]
        if self.kernel != "precomputed":
            self.support_vectors_ = X[self.support_]
        self.theta_ = theta
        self.intercept_ = -theta
        return self

    def _kernel(self, A, B):
        if self.kernel == "rbf":
            return rbf_kernel_inplace(A, B, self.gamma_)
        return A @ B.T

    def decision_function(self, X):
        """Signed score f(x) − θ (Eq. 5.11 and §1.2); ≥ 0 means ``classes_[1]``.

        Parameters
        ----------
        X : array-like of shape (n, n_features), or (n, l) kernel rows if ``kernel="precomputed"``

        Returns
        -------
        scores : ndarray of shape (n,)
        """
        check_is_fitted(self)
        X = validate_data(self, X, dtype=np.float64, reset=False)
        if self.kernel == "precomputed":
            return self._scores(X[:, self.support_])
        rows = max(1, KERNEL_BLOCK_ELEMENTS // max(1, self.support_vectors_.shape[0]))
        scores = np.empty(X.shape[0])
        for start in range(0, X.shape[0], rows):
            scores[start:start + rows] = self._scores(self._kernel(X[start:start + rows], self.support_vectors_))
        return scores

    def _scores(self, K):
        """Decision scores from kernel rows ``K(X, support_vectors_)``."""
        return K @ self.dual_coef_ + self.intercept_

def encode_binary_labels(y, owner):
    """Classes (sorted) and labels mapped to {−1, +1} with ``classes_[1]`` as +1; exactly 2 classes.

    Examples
    --------
    >>> classes, signed = encode_binary_labels(["up", "flat", "up"], "KOMDClassifier")
    >>> classes.tolist(), signed.tolist()
    (['flat', 'up'], [1.0, -1.0, 1.0])
    """
    check_classification_targets(y)
    classes, index = np.unique(y, return_inverse=True)
    if classes.size != 2:
        raise ValueError(
            f"Only binary classification is supported. {owner} needs exactly 2 classes in y, got "
            f"{classes.size} class(es): {classes.tolist()[:10]}; for more classes wrap it in "
            "sklearn.multiclass.OneVsRestClassifier"
        )
    return classes, np.where(index == 1, 1.0, -1.0)
