"""Linear-kernel KOMD by an interior-point method, and the one-vs-rest EasyMKL selector (issue 10, item 7)."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import minimize
from sklearn.datasets import make_classification
from sklearn.exceptions import ConvergenceWarning

from stairsense.models.mkl._easymkl import EasyMKLSelector
from stairsense.models.mkl._komd_interior import solve_komd_linear_interior
from stairsense.models.mkl._simplex import solve_komd_linear_dual


def correlated_features(seed, n=60, d=8):
    """Columns mixed through a random matrix with decaying spectrum, like the window features
    (ratios and moments of the same signal): the case where L-BFGS on the dual crawled."""
    X, y = make_classification(n, d, n_informative=3, n_redundant=2, random_state=seed)
    rng = np.random.default_rng(seed)
    mixing = rng.normal(size=(d, d)) * np.logspace(0, -3, d)
    return X @ mixing + 0.01 * rng.normal(size=(n, d)), np.where(y == 1, 1.0, -1.0)


def qp_oracle(X, y, lam):
    """KOMD (Eq. 5.7 with K = XXᵀ) by SLSQP over γ with the two simplex constraints: a generic solver."""
    positive = y > 0
    Z = X * y[:, None]

    def objective(gamma):
        w = Z.T @ gamma
        return (1 - lam) * w @ w + lam * gamma @ gamma, 2 * (1 - lam) * Z @ w + 2 * lam * gamma

    start = np.where(positive, 1 / positive.sum(), 1 / (~positive).sum())
    constraints = [{"type": "eq", "fun": lambda g, m=m: g[m].sum() - 1, "jac": lambda g, m=m: m.astype(float)}
                   for m in (positive, ~positive)]
    result = minimize(objective, start, jac=True, method="SLSQP", bounds=[(0, None)] * len(y),
                      constraints=constraints, options={"ftol": 1e-15, "maxiter": 2000})
    # Status 8 ("positive directional derivative for linesearch"): no descent left at ftol 1e-15, the
    # precision limit; seeds 39 and 765 end there at the optimum (the comparisons below check it).
    assert result.success or result.status == 8, result.message
    return result.x, result.fun


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 10_000), lam=st.sampled_from([0.5, 0.1, 0.01, 0.001]))
def test_interior_point_reaches_the_generic_qp_optimum(seed, lam):
    X, y = correlated_features(seed)
    solution = solve_komd_linear_interior(X, y, lam, tol=1e-10)
    gamma, optimum = qp_oracle(X, y, lam)
    assert solution.objective == pytest.approx(optimum, rel=1e-7, abs=1e-12)
    assert solution.objective - solution.gap <= optimum * (1 + 1e-9) + 1e-15  # the gap certifies a lower bound
    # Strong convexity (modulus 2Λ): ‖Δγ‖² ≤ objective error / Λ.
    np.testing.assert_allclose(solution.gamma, gamma, atol=max(1e-5, np.sqrt(1e-7 * optimum / lam)))
    for members in (y > 0, y < 0):
        assert solution.gamma[members].sum() == pytest.approx(1.0) and (solution.gamma >= 0).all()


def test_iterations_do_not_grow_as_lambda_shrinks():
    """The reason for a second-order method: L-BFGS on the dual needed ever more steps as Λ → 0."""
    X, y = correlated_features(1, n=3000, d=40)
    for lam in (0.1, 0.01, 0.001, 1e-4):
        solution = solve_komd_linear_interior(X, y, lam, tol=1e-9)
        assert solution.gap <= 1e-9 * solution.objective and solution.n_iter <= 40


def test_lambda_one_is_the_closed_form():
    X, y = correlated_features(3)
    solution = solve_komd_linear_interior(X, y, 1.0)
    assert np.allclose(solution.gamma, np.where(y > 0, 1 / (y > 0).sum(), 1 / (y < 0).sum()))


@pytest.mark.parametrize("lam", [0.0, -0.1, 1.5])
def test_lambdas_outside_the_domain_are_refused(lam):
    X, y = correlated_features(4)
    with pytest.raises(ValueError, match="lam"):
        solve_komd_linear_interior(X, y, lam)


def test_the_selector_hands_ill_conditioned_problems_to_the_interior_point():
    """L-BFGS gets 100 iterations; on correlated columns at small Λ it needs more, and the selector's
    γ must still be the KOMD optimum (within its tolerance)."""
    X, y = correlated_features(5, n=3000, d=60)  # d = 40 is now solved by L-BFGS in 92 iterations
    Z = X / np.sqrt(np.mean(X**2, axis=0))
    selector = EasyMKLSelector(lam=0.001, tol=1e-8).fit(X, y)
    reference = solve_komd_linear_interior(Z, y, 0.001, tol=1e-12)
    w = Z.T @ (y * selector.gamma_dist_)
    objective = 0.999 * w @ w + 0.001 * selector.gamma_dist_ @ selector.gamma_dist_
    assert objective == pytest.approx(reference.objective, rel=1e-7)
    assert selector.duality_gap_ <= 1e-8 * objective
    with pytest.warns(ConvergenceWarning):  # the case really needs the hand-over
        assert solve_komd_linear_dual(Z, y, 0.001, tol=1e-8, max_iter=100).gap > 1e-8 * objective


# --- one-vs-rest selector --------------------------------------------------------------------------


def test_multiclass_scores_are_the_mean_of_the_one_vs_rest_selectors():
    X, y = make_classification(300, 10, n_informative=5, n_classes=4, n_clusters_per_class=1, random_state=0)
    labels = np.array(["up", "down", "flat", "lift"])[y]
    for norm in ("l1", "l2"):
        selector = EasyMKLSelector(k=4, weight_norm=norm, tol=1e-10).fit(X, labels)
        assert selector.classes_.tolist() == ["down", "flat", "lift", "up"]
        # Oracle: four independent binary selectors, class c (as label 1) against the rest.
        rows = np.array([EasyMKLSelector(k=4, weight_norm=norm, tol=1e-10).fit(X, labels == c).scores_
                         for c in selector.classes_])
        np.testing.assert_allclose(selector.class_scores_, rows, rtol=1e-6, atol=1e-12)
        mean = rows.mean(axis=0)
        expected = mean / (mean.sum() if norm == "l1" else np.linalg.norm(mean))
        np.testing.assert_allclose(selector.scores_, expected, rtol=1e-6, atol=1e-12)
        np.testing.assert_allclose(selector.weights_, selector.scores_ / selector.trace_scales_)
        assert selector.separation_.shape == (4, 10) and selector.gamma_dist_.shape == (4, 300)
        assert selector.transform(X).shape == (300, 4)


def test_two_classes_solve_once_and_both_one_vs_rest_rows_agree():
    X, y = make_classification(200, 6, random_state=1)
    selector = EasyMKLSelector(k=3).fit(X, y)
    flipped = EasyMKLSelector(k=3).fit(X, 1 - y)  # class 0 against the rest: y's sign flipped
    np.testing.assert_allclose(flipped.scores_, selector.scores_, rtol=1e-6)
    np.testing.assert_array_equal(selector.class_scores_[0], selector.class_scores_[1])
    assert selector.separation_.shape == (6,) and selector.gamma_dist_.shape == (200,)


def test_a_single_class_is_refused():
    with pytest.raises(ValueError, match="at least 2 classes"):
        EasyMKLSelector().fit(np.ones((5, 2)), np.zeros(5))
