"""RLS2 (spec dinuzzo-solvers-rls2-client-server-mtl.md §2) against independent oracles."""

import functools
import itertools

import numpy as np
import pytest
import scipy.optimize
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.base import clone
from sklearn.metrics.pairwise import rbf_kernel
from threadpoolctl import threadpool_limits

from stairsense.models.kernel_machines._rls2 import (
    RLS2Classifier,
    RLS2Regressor,
    RLS2Selector,
    rls2_path,
)
from stairsense.models.kernel_machines._simplex_pairwise import simplex_least_squares


@pytest.fixture(autouse=True)
def single_blas_thread():
    """One BLAS thread: on the shared 2-core machine, multithreaded BLAS on 200 x 200 solves
    is ~100x slower from oversubscription, which would dominate this file's run time."""
    with threadpool_limits(limits=1, user_api="blas"):
        yield


# ----------------------------------------------------------------------------- oracles
def brute_force_simplex_ls(V, u):
    """Exact minimiser over the simplex: best KKT point over every support (small m only)."""
    m = V.shape[1]
    best, best_value = None, np.inf
    for size in range(1, m + 1):
        for support in itertools.combinations(range(m), size):
            A = V[:, support]
            # Equality-constrained LS on the support: KKT system [2A^TA 1; 1^T 0].
            kkt = np.zeros((size + 1, size + 1))
            kkt[:size, :size] = 2 * A.T @ A
            kkt[:size, size] = kkt[size, :size] = 1
            rhs = np.concatenate([2 * A.T @ u, [1.0]])
            solution = np.linalg.lstsq(kkt, rhs, rcond=None)[0][:size]
            if np.any(solution < -1e-12):
                continue
            d = np.zeros(m)
            d[list(support)] = np.clip(solution, 0, None)
            d /= d.sum()
            value = np.sum((V @ d - u) ** 2)
            if value < best_value:
                best, best_value = d, value
    return best, best_value


def squared_weighted_l1(X, y, alpha, scale):
    """Solve (4.9) independently: w = p - q with p, q >= 0 and L-BFGS-B (Lemma 7)."""
    weights = 1 / np.sqrt(scale)
    n = X.shape[1]

    def objective(pq):
        p, q = pq[:n], pq[n:]
        residual = y - X @ (p - q)
        penalty = weights @ (p + q)
        gradient_w = -X.T @ residual / alpha
        return (
            residual @ residual / (2 * alpha) + penalty**2 / 2,
            np.concatenate([gradient_w + penalty * weights, -gradient_w + penalty * weights]),
        )

    result = scipy.optimize.minimize(
        objective, np.zeros(2 * n), jac=True, method="L-BFGS-B", bounds=[(0, None)] * (2 * n),
        options={"ftol": 1e-15, "gtol": 1e-12, "maxiter": 20000, "maxcor": 30},
    )
    return result.x[:n] - result.x[n:], result.fun


def lemma4_objective(matrices, y, alpha, d):
    """y^T (K(d) + lambda I)^{-1} y / 2: the value of (4.1) minimised over c (Lemma 4)."""
    K = np.tensordot(d, matrices, axes=1) + alpha * np.eye(y.size)
    return y @ np.linalg.solve(K, y) / 2


def binary_strings(n_train, seed=0):
    """Spec §2.8 Exp. 1: bits ~ Bernoulli(0.5), y = x1 + x2 + x3 + N(0, 0.01^2)."""
    rng = np.random.default_rng(seed)
    X = rng.integers(0, 2, size=(n_train + 100, 100)).astype(float)
    y = X[:, :3].sum(axis=1) + 0.01 * rng.normal(size=n_train + 100)
    return X[:n_train], y[:n_train], X[n_train:], y[n_train:]


# ----------------------------------------------------------------------------- simplex solver
@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10_000), m=st.integers(1, 5), rows=st.integers(1, 8))
def test_simplex_least_squares_matches_brute_force(seed, m, rows):
    rng = np.random.default_rng(seed)
    V, u = rng.normal(size=(rows, m)), rng.normal(size=rows)
    _, best_value = brute_force_simplex_ls(V, u)
    # Cold start (best vertex) and a random interior warm start, as RLS2's d-steps use.
    for d_init in (None, rng.dirichlet(np.ones(m))):
        d = simplex_least_squares(V, u, d_init=d_init, tol=1e-13)
        assert d.min() >= 0 and d.sum() == pytest.approx(1.0)
        assert np.sum((V @ d - u) ** 2) == pytest.approx(best_value, rel=1e-9, abs=1e-10)


def test_simplex_least_squares_warm_start_and_bad_start():
    rng = np.random.default_rng(1)
    V, u = rng.normal(size=(6, 4)), rng.normal(size=6)
    cold = simplex_least_squares(V, u, tol=1e-13)
    warm = simplex_least_squares(V, u, d_init=np.full(4, 0.25), tol=1e-13)
    np.testing.assert_allclose(warm, cold, atol=1e-8)
    with pytest.raises(ValueError, match="point of the simplex"):
        simplex_least_squares(V, u, d_init=np.array([1.0, 1.0, 0.0, 0.0]))


# ----------------------------------------------------------------------------- linear RLS2
@pytest.mark.parametrize("alpha", [10.0, 0.3, 0.03])
@pytest.mark.parametrize("scaling", ["trace", None, "centered_trace"])
def test_linear_rls2_solves_squared_weighted_l1(alpha, scaling):
    rng = np.random.default_rng(3)
    X = rng.normal(size=(25, 8)) + 0.5
    y = X[:, 0] - 2 * X[:, 4] + 0.1 * rng.normal(size=25)
    model = RLS2Regressor(alpha=alpha, scaling=scaling, fit_intercept=False, tol=1e-7, max_iter=50_000)
    model.fit(X, y)
    w_oracle, value_oracle = squared_weighted_l1(X, y, alpha, model.scaling_)
    np.testing.assert_allclose(model.coef_, w_oracle, atol=1e-4 * np.abs(w_oracle).max())
    # Lemma 4: the optimal value of (4.1) is y^T c / 2; it must equal (4.9)'s optimum.
    assert y @ model.dual_coef_ / 2 == pytest.approx(value_oracle, rel=1e-7)
    # Lemma 7: d_i = (|w_i| / sqrt(s_i)) / sum_j (|w_j| / sqrt(s_j)).
    ratio = np.abs(model.coef_) / np.sqrt(model.scaling_)
    np.testing.assert_allclose(model.kernel_weights_, ratio / ratio.sum(), atol=1e-4)


def test_feature_kernels_equal_the_same_kernels_as_callables():
    """Primal n(d) x n(d) solve (linear mode) equals the dense l x l solve on callables."""
    rng = np.random.default_rng(4)
    X = rng.normal(size=(12, 20))  # more features than samples: both c-step branches run
    y = X[:, :4].sum(axis=1)
    columns = [functools.partial(lambda A, B, k: np.outer(A[:, k], B[:, k]), k=k) for k in range(20)]
    X_new = rng.normal(size=(5, 20))
    for alpha in (1.0, 1e-3):
        # Same iterations in exact arithmetic, so even a loose tolerance must agree closely.
        linear = RLS2Regressor(alpha=alpha).fit(X, y)
        dense = RLS2Regressor(columns, alpha=alpha).fit(X, y)
        assert linear.n_iter_ == dense.n_iter_
        np.testing.assert_allclose(linear.kernel_weights_, dense.kernel_weights_, atol=1e-8)
        np.testing.assert_allclose(linear.predict(X_new), dense.predict(X_new), rtol=1e-6, atol=1e-8)


# ----------------------------------------------------------------------------- kernel RLS2
def test_kernel_rls2_minimises_the_lemma4_objective_over_the_simplex():
    rng = np.random.default_rng(5)
    X = rng.normal(size=(30, 3))
    y = np.sin(2 * X[:, 0]) + 0.1 * rng.normal(size=30)
    kernels = [functools.partial(rbf_kernel, gamma=g) for g in (0.01, 0.1, 1.0, 10.0)]
    model = RLS2Regressor(kernels, alpha=0.1, fit_intercept=False, tol=1e-8, max_iter=5000).fit(X, y)
    matrices = np.stack([k(X, X) for k in kernels]) * model.scaling_[:, None, None]
    found = lemma4_objective(matrices, y, 0.1, model.kernel_weights_)
    assert y @ model.dual_coef_ / 2 == pytest.approx(found, rel=1e-10)
    best = min(
        (
            scipy.optimize.minimize(
                lambda d: lemma4_objective(matrices, y, 0.1, d), start, method="SLSQP",
                bounds=[(0, 1)] * 4, constraints={"type": "eq", "fun": lambda d: d.sum() - 1},
                options={"ftol": 1e-14, "maxiter": 500},
            )
            for start in np.eye(4)
        ),
        key=lambda result: result.fun,
    )
    assert found == pytest.approx(best.fun, rel=1e-6)
    assert found <= best.fun * (1 + 1e-9)


def test_lemma6_large_lambda_limit_is_the_best_aligned_vertex():
    rng = np.random.default_rng(6)
    X = rng.normal(size=(40, 6))
    y = X @ rng.normal(size=6)
    alpha = 1e7
    # Start away from the vertex so only the algorithm, not the initialisation, can find it.
    model = RLS2Regressor(alpha=alpha, fit_intercept=False, warm_start=True, tol=1e-12)
    model.kernel_weights_ = np.full(6, 1 / 6)
    model.fit(X, y)
    alignment = (X.T @ y) ** 2 / np.sum(X**2, axis=0)  # s_k y^T K^k y with s_k = ||x^k||^-2
    np.testing.assert_array_equal(model.kernel_weights_, np.eye(6)[np.argmax(alignment)])
    np.testing.assert_allclose(model.dual_coef_ * alpha, y, rtol=1e-5)


def test_path_warm_starts_agree_with_cold_fits_and_stay_cheap():
    rng = np.random.default_rng(2)
    X = rng.integers(0, 2, size=(30, 15)).astype(float)
    y = X[:, :3].sum(axis=1) + 0.01 * rng.normal(size=30)
    # The thesis reports 1-3 alternations per lambda on average along the path (§2.3).
    assert rls2_path(X, y).n_iter.mean() <= 3
    path = rls2_path(X, y, tol=1e-6, max_iter=5000)
    assert np.all(np.diff(path.alphas) < 0)
    for index in (5, 15, 29):
        cold = RLS2Regressor(alpha=path.alphas[index], fit_intercept=False, tol=1e-6, max_iter=5000)
        cold.fit(X, y)
        assert y @ cold.dual_coef_ == pytest.approx(y @ path.dual_coefs[index], rel=1e-6)


def test_precomputed_path_equals_callable_estimator():
    rng = np.random.default_rng(7)
    X = rng.normal(size=(20, 2))
    y = X[:, 0] ** 2 - 1
    kernels = [functools.partial(rbf_kernel, gamma=g) for g in (0.1, 1.0)] + [lambda A, B: (1 + A @ B.T) ** 2]
    path = rls2_path(np.stack([k(X, X) for k in kernels]), y, kernels="precomputed", alphas=[0.5], tol=1e-10)
    model = RLS2Regressor(kernels, alpha=0.5, fit_intercept=False, tol=1e-10).fit(X, y)
    np.testing.assert_allclose(path.kernel_weights[0], model.kernel_weights_, atol=1e-8)


# ----------------------------------------------------------------------------- §2.8 Exp. 1
def test_binary_strings_recovers_the_three_relevant_bits():
    """Spec §2.8: after ~12 examples linear RLS2 has d ~ (1/3, 1/3, 1/3, 0, ...)."""
    for n_train in (12, 20):
        X, y, X_test, y_test = binary_strings(n_train)
        path = rls2_path(X, y)
        # The paper reports the lower envelope over lambda of the test error.
        errors = [np.sqrt(np.mean((X_test @ (d * path.scaling * (X.T @ c)) - y_test) ** 2))
                  for d, c in zip(path.kernel_weights, path.dual_coefs)]
        d = path.kernel_weights[int(np.argmin(errors))]
        np.testing.assert_allclose(d[:3], 1 / 3, atol=0.08)
        assert d[3:].sum() < 0.02
        assert min(errors) < 0.1


# ----------------------------------------------------------------------------- scaling §2.6
def test_scaling_rules_match_their_formulas():
    rng = np.random.default_rng(8)
    X = rng.normal(size=(30, 4)) + 1.0
    labels = np.where(rng.random(30) > 0.4, 1, -1)
    fit = functools.partial(RLS2Classifier, alpha=1.0)
    np.testing.assert_allclose(fit(scaling="trace").fit(X, labels).scaling_[0], 1 / np.sum(X**2, axis=0))
    np.testing.assert_allclose(
        fit(scaling="centered_trace").fit(X, labels).scaling_[0], 1 / (30 * X.var(axis=0))
    )
    spread = X[labels == 1].var(axis=0) + X[labels == -1].var(axis=0)  # (4.13)
    np.testing.assert_allclose(fit(scaling="class_variance").fit(X, labels).scaling_[0], 1 / spread)
    np.testing.assert_allclose(fit(scaling="class_std").fit(X, labels).scaling_[0], spread**-0.5)
    # The non-linear generalisation of (4.13) reduces to it for linear kernels.
    columns = [functools.partial(lambda A, B, k: np.outer(A[:, k], B[:, k]), k=k) for k in range(4)]
    np.testing.assert_allclose(
        fit(columns, scaling="class_variance").fit(X, labels).scaling_[0], 1 / spread, rtol=1e-10
    )


def test_zero_feature_keeps_neutral_scale():
    X = np.column_stack([np.zeros(10), np.arange(10.0)])
    model = RLS2Regressor(alpha=1.0).fit(X, np.arange(10.0))
    assert model.scaling_[0] == 1.0 and model.kernel_weights_[0] == 0.0


# ----------------------------------------------------------------------------- classifier / selector
def test_one_vs_all_equals_separate_regressions_on_signed_labels():
    rng = np.random.default_rng(9)
    X = rng.normal(size=(45, 5))
    y = np.repeat(["a", "b", "c"], 15)
    X[y == "b", 1] += 2
    X[y == "c", 3] -= 2
    clf = RLS2Classifier(alpha=0.5, scaling="class_variance").fit(X, y)
    outputs = np.column_stack([
        RLS2Regressor(alpha=0.5, scaling="class_variance").fit(X, np.where(y == k, 1.0, -1.0)).predict(X)
        for k in "abc"
    ])
    np.testing.assert_allclose(clf.decision_function(X), outputs, atol=1e-10)
    np.testing.assert_array_equal(clf.predict(X), np.array(list("abc"))[outputs.argmax(axis=1)])


def test_selector_keeps_the_support_and_caps_it():
    rng = np.random.default_rng(10)
    X = rng.normal(size=(60, 10))
    y = X[:, 2] + 0.5 * X[:, 7] - 0.2 * X[:, 4]
    selector = RLS2Selector(alpha=1e-2).fit(X, y)
    weights = selector.estimator_.kernel_weights_
    np.testing.assert_array_equal(selector.get_support(), weights > 0)
    np.testing.assert_array_equal(selector.transform(X), X[:, weights > 0])
    top = RLS2Selector(alpha=1e-2, k=2).fit(X, y)
    np.testing.assert_array_equal(top.get_support(indices=True), [2, 7])


def test_selector_max_features_is_a_deprecated_alias_of_k():
    rng = np.random.default_rng(10)
    X = rng.normal(size=(60, 10))
    y = X[:, 2] + 0.5 * X[:, 7] - 0.2 * X[:, 4]
    old = RLS2Selector(alpha=1e-2, max_features=2)
    assert clone(old).get_params()["max_features"] == 2  # round-trips like any parameter
    with pytest.warns(DeprecationWarning, match="use k="):
        old.fit(X, y)
    np.testing.assert_array_equal(old.get_support(indices=True), [2, 7])
    with pytest.raises(ValueError, match="not both"):
        RLS2Selector(k=2, max_features=2).fit(X, y)


# ----------------------------------------------------------------------------- errors
def test_errors_say_what_and_how_to_fix():
    X = np.random.default_rng(11).normal(size=(10, 2))
    with pytest.raises(ValueError, match=r"needs targets in \{-1, \+1\}.*RLS2Classifier"):
        RLS2Regressor(scaling="class_variance").fit(X, X[:, 0])
    with pytest.raises(ValueError, match=r"must return a finite array of shape \(10, 10\)"):
        RLS2Regressor([lambda A, B: A @ B[:1].T]).fit(X, X[:, 0])
    with pytest.raises(ValueError, match="one per basis kernel"):
        RLS2Regressor(scaling=[1.0, 2.0, 3.0]).fit(X, X[:, 0])
    with pytest.raises(ValueError, match=r"\(m, n_samples, n_samples\)"):
        rls2_path(X, X[:, 0], kernels="precomputed")


