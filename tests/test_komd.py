"""KOMD (spec donini-easymkl-komd-climbtheworld-admm §1) and the Γ̂ projection, against independent oracles."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from scipy.optimize import minimize
from sklearn.datasets import make_blobs
from sklearn.metrics.pairwise import rbf_kernel
from sklearn.svm import SVC

from stairsense.models.mkl._komd import KOMDClassifier, solve_komd_low_rank, solve_komd_precomputed
from stairsense.models.mkl._komd_interior import solve_komd_linear_interior
from stairsense.models.mkl._simplex import (
    dense_kernel_operator,
    linear_kernel_operator,
    project_class_simplices,
    project_simplex,
    solve_komd_linear_dual,
    solve_komd_projected_gradient,
)


def komd_objective(gamma, K, y, lam):
    u = y * gamma
    return (1 - lam) * u @ K @ u + lam * gamma @ gamma


def scipy_komd(K, y, lam):
    """Oracle: Eq. 5.7 by SLSQP, a generic constrained solver with analytic gradient."""
    positive = y > 0
    start = np.where(positive, 1 / positive.sum(), 1 / (~positive).sum())
    result = minimize(
        komd_objective,
        start,
        args=(K, y, lam),
        jac=lambda g, *a: 2 * (1 - lam) * y * (K @ (y * g)) + 2 * lam * g,
        method="SLSQP",
        bounds=[(0, None)] * len(y),
        constraints=[
            {"type": "eq", "fun": lambda g: g[positive].sum() - 1},
            {"type": "eq", "fun": lambda g: g[~positive].sum() - 1},
        ],
        options={"ftol": 1e-15, "maxiter": 1000},
    )
    assert result.success, result.message
    return result.fun


def random_problem(seed, kernel, l=18):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(l, 3))
    y = np.where(np.arange(l) % 3 == 0, 1.0, -1.0)
    X[y > 0] += 0.8  # overlapping but not identical classes
    K = rbf_kernel(X, gamma=0.4) if kernel == "rbf" else X @ X.T
    return X, y, K


def kernel_features(K):
    """Φ with ΦΦᵀ = K, from K's eigen-decomposition (rounding's tiny negative eigenvalues dropped)."""
    eigval, eigvec = np.linalg.eigh(K)
    keep = eigval > 1e-12 * eigval[-1]
    return eigvec[:, keep] * np.sqrt(eigval[keep])


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(4, 40), st.integers(1, 6), st.sampled_from([0.05, 0.3, 0.7, 1.0]))
def test_low_rank_solve_is_the_precomputed_solve(seed, l, rank, lam):
    """Through Φ, libsvm solves the same ν-SVC as on the explicit K = ΦΦᵀ: the same γ and θ, and
    exactly the same with a cache too small to hold two rows (the cache only saves recomputing)."""
    rng = np.random.default_rng(seed)
    phi = rng.normal(size=(l, rank))
    y = np.where(np.arange(l) % 2 == 0, 1.0, -1.0)
    phi[y > 0] += rng.uniform(0, 2)
    expected_gamma, expected_theta = solve_komd_precomputed(phi @ phi.T, y, lam, tol=1e-12)
    gamma, theta = solve_komd_low_rank(phi, y, lam, tol=1e-12)
    np.testing.assert_allclose(gamma, expected_gamma, atol=1e-7)
    assert theta == pytest.approx(expected_theta, rel=1e-7, abs=1e-9)
    uncached_gamma, uncached_theta = solve_komd_low_rank(phi, y, lam, tol=1e-12, cache_mb=1e-6)
    assert np.array_equal(uncached_gamma, gamma) and uncached_theta == theta


# --- the projection onto Γ̂ ---------------------------------------------------------------------


@settings(max_examples=40, deadline=None)
@given(arrays(np.float64, st.integers(1, 8), elements=st.floats(-5, 5)))
def test_simplex_projection_matches_scipy(v):
    oracle = minimize(
        lambda x: np.sum((x - v) ** 2),
        np.full(v.size, 1 / v.size),
        jac=lambda x: 2 * (x - v),
        method="SLSQP",
        bounds=[(0, None)] * v.size,
        constraints=[{"type": "eq", "fun": lambda x: x.sum() - 1}],
        options={"ftol": 1e-14},
    ).x
    np.testing.assert_allclose(project_simplex(v), oracle, atol=1e-6)


def test_class_projection_is_per_class_and_idempotent():
    rng = np.random.default_rng(0)
    v = rng.normal(size=9)
    positive = np.arange(9) < 4
    gamma = project_class_simplices(v, positive)
    np.testing.assert_allclose(gamma[positive], project_simplex(v[positive]))
    np.testing.assert_allclose(gamma[~positive], project_simplex(v[~positive]))
    np.testing.assert_allclose(project_class_simplices(gamma, positive), gamma, atol=1e-12)


# --- solvers against the generic QP oracle -----------------------------------------------------


# The linear kernel here has rank 3 < l with overlapping hulls: at Λ = 0 the optimum is 0 and not
# unique, and libsvm's SMO crawls there (documented in solve_komd_precomputed), so it starts at 0.01.
@pytest.mark.parametrize(
    ("kernel", "lam"), [("rbf", 0.0), ("rbf", 0.3), ("rbf", 0.9), ("linear", 0.01), ("linear", 0.3), ("linear", 0.9)]
)
@pytest.mark.parametrize("seed", [0, 1])
def test_solvers_reach_scipy_optimum(kernel, lam, seed):
    _, y, K = random_problem(seed, kernel)
    expected = scipy_komd(K, y, lam)
    gamma, _ = solve_komd_precomputed(K.copy(), y, lam, tol=1e-10)
    low_rank, _ = solve_komd_low_rank(kernel_features(K), y, lam, tol=1e-10)
    matvec, lmax = dense_kernel_operator(K)
    fista = solve_komd_projected_gradient(matvec, y, lam, lmax, tol=1e-9, max_iter=20_000)
    for found in (gamma, low_rank, fista.gamma):
        assert np.all(found >= 0)
        np.testing.assert_allclose([found[y > 0].sum(), found[y < 0].sum()], 1, atol=1e-12)
        assert komd_objective(found, K, y, lam) == pytest.approx(expected, abs=1e-6, rel=1e-6)
    assert fista.objective == pytest.approx(komd_objective(fista.gamma, K, y, lam), rel=1e-12)


@pytest.mark.parametrize("lam", [0.01, 0.3, 0.9])
def test_linear_dual_reaches_scipy_optimum_with_a_valid_gap(lam):
    X, y, K = random_problem(6, "linear", l=30)
    expected = scipy_komd(K, y, lam)
    solution = solve_komd_linear_dual(X, y, lam, tol=1e-10)
    assert solution.objective == pytest.approx(komd_objective(solution.gamma, K, y, lam), rel=1e-12)
    assert solution.objective == pytest.approx(expected, abs=1e-8, rel=1e-7)
    assert 0 <= solution.gap <= 1e-10 * solution.objective
    assert solution.objective - solution.gap <= expected + 1e-12  # the certificate is a lower bound


@pytest.mark.parametrize("lam", [0.01, 0.3])
@pytest.mark.parametrize("tol", [1e-3, 1e-6])
def test_linear_dual_stops_once_its_gap_bounds_the_error_of_w(lam, tol):
    # The stopping test gap ≤ tol·(1 − Λ)‖w‖² must bound the error of w = Xᵀ(y∘γ) by √tol, checked
    # against w* from the interior-point solver (a different algorithm) run to 1e-13.
    X, y, K = random_problem(7, "linear", l=30)
    expected = scipy_komd(K, y, lam)
    solution = solve_komd_linear_dual(X, y, lam, tol=tol)
    w = X.T @ (y * solution.gamma)
    w_star = X.T @ (y * solve_komd_linear_interior(X, y, lam, tol=1e-13).gamma)
    assert 0 <= solution.gap <= tol * (1 - lam) * (w @ w)
    assert solution.objective == pytest.approx(komd_objective(solution.gamma, K, y, lam), rel=1e-12)
    assert expected - 1e-12 <= solution.objective <= expected + solution.gap + 1e-12
    assert np.linalg.norm(w - w_star) <= np.sqrt(tol) * np.linalg.norm(w) + 1e-9
    assert solution.n_iter <= solve_komd_linear_dual(X, y, lam, tol=1e-12).n_iter


@pytest.mark.parametrize("lam", [0.01, 0.3])
def test_linear_dual_stops_early_at_a_loose_tol(lam):
    X, y, _ = random_problem(7, "linear", l=30)
    assert solve_komd_linear_dual(X, y, lam, tol=1e-3).n_iter < solve_komd_linear_dual(X, y, lam, tol=1e-12).n_iter


def test_linear_operator_matches_dense_kernel():
    X, y, K = random_problem(3, "linear")
    matvec, lmax = linear_kernel_operator(X)
    u = np.random.default_rng(1).normal(size=len(y))
    np.testing.assert_allclose(matvec(u), K @ u)
    assert lmax == pytest.approx(np.linalg.eigvalsh(K)[-1])


def test_projected_gradient_warns_when_iteration_cap_is_hit():
    _, y, K = random_problem(0, "rbf")
    matvec, lmax = dense_kernel_operator(K)
    with pytest.warns(Warning, match="stopped after 2 iterations.*increase max_iter"):
        solve_komd_projected_gradient(matvec, y, 0.1, lmax, tol=1e-12, max_iter=2)


# --- closed forms and the SVM limit -------------------------------------------------------------


def centroid_threshold(K, y):
    """Λ = 1 oracle (Eq. 5.9–5.10): f(x_i) is the gap of mean kernel values to the two classes."""
    pos, neg = y > 0, y < 0
    f = K[:, pos].mean(axis=1) - K[:, neg].mean(axis=1)
    return 0.5 * (f[pos].mean() + f[neg].mean())


@pytest.mark.parametrize("lam", [1.0, 1 - 1e-9])  # the closed form, and libsvm just below it
def test_lambda_one_is_uniform_with_centroid_threshold(lam):
    X, y, K = random_problem(4, "rbf")
    clf = KOMDClassifier(lam=lam, gamma=0.4).fit(X, y)
    expected = np.where(y > 0, 1 / (y > 0).sum(), 1 / (y < 0).sum())
    np.testing.assert_allclose(clf.gamma_dist_, expected, atol=1e-7)
    assert clf.theta_ == pytest.approx(centroid_threshold(K, y), abs=1e-7)


def test_lambda_zero_separable_is_the_hard_margin_svm():
    X, y = make_blobs(60, centers=[[-2, 0], [2, 1]], cluster_std=0.7, random_state=0)
    komd = KOMDClassifier(lam=0.0, kernel="linear", tol=1e-12).fit(X, y)
    svm = SVC(kernel="linear", C=1e8, tol=1e-10).fit(X, y)
    assert svm.score(X, y) == 1.0  # the oracle needs separable data
    # Same hyperplane: the decision functions are proportional with a positive factor.
    grid = np.random.default_rng(0).normal(size=(50, 2)) * 3
    ratio = komd.decision_function(grid) / svm.decision_function(grid)
    np.testing.assert_allclose(ratio, ratio.mean(), rtol=1e-4)
    assert ratio.mean() > 0
    # Nearest points of the hulls: KOMD's γ is the SVM's α rescaled to sum 1 per class.
    alpha = np.zeros(len(y))
    alpha[svm.support_] = np.abs(svm.dual_coef_[0])
    alpha /= alpha[y == 1].sum()
    np.testing.assert_allclose(komd.gamma_dist_, alpha, atol=1e-4)


# --- the estimator -----------------------------------------------------------------------------


def test_dropped_examples_do_not_change_the_decision():
    X, y, K = random_problem(5, "rbf", l=40)
    clf = KOMDClassifier(lam=0.05, gamma=0.4).fit(X, y)
    assert 0 < len(clf.support_) < len(y)
    new = np.random.default_rng(2).normal(size=(7, 3))
    signed = np.where(y > 0, 1.0, -1.0)
    full = rbf_kernel(new, X, gamma=0.4) @ (signed * clf.gamma_dist_) - clf.theta_
    np.testing.assert_allclose(clf.decision_function(new), full, atol=1e-12)
    np.testing.assert_allclose(clf.support_vectors_, X[clf.support_])
    assert clf.intercept_ == -clf.theta_


def test_precomputed_equals_rbf_and_scale_matches_svc():
    X, y = make_blobs(50, centers=2, random_state=1)
    rbf = KOMDClassifier(lam=0.2).fit(X, y)
    assert rbf.gamma_ == pytest.approx(1 / (X.shape[1] * X.var()))
    pre = KOMDClassifier(lam=0.2, kernel="precomputed").fit(rbf_kernel(X, gamma=rbf.gamma_), y)
    new = X[:9] + 0.3
    np.testing.assert_allclose(
        pre.decision_function(rbf_kernel(new, X, gamma=rbf.gamma_)), rbf.decision_function(new), atol=1e-8
    )


def test_string_labels_second_class_is_positive_and_zero_goes_positive():
    X = np.array([[-1.0], [1.0]])
    clf = KOMDClassifier(lam=0.0, kernel="linear").fit(X, ["down", "up"])
    assert clf.classes_.tolist() == ["down", "up"]
    assert clf.decision_function([[0.0]])[0] == 0.0
    assert clf.predict([[0.0], [-0.5], [0.5]]).tolist() == ["up", "down", "up"]


@pytest.mark.parametrize(
    ("params", "X", "y", "message"),
    [
        ({}, np.eye(3), [0, 1, 2], "Only binary classification is supported"),
        ({"kernel": "precomputed"}, np.ones((3, 2)), [0, 1, 1], r"square \(l, l\)"),
        ({"lam": 1.5}, np.eye(2), [0, 1], "'lam' parameter"),
    ],
)
def test_bad_input_is_explained(params, X, y, message):
    with pytest.raises(ValueError, match=message):
        KOMDClassifier(**params).fit(X, y)


