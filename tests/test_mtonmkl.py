"""MT-ONMKL (spec okl-and-neighborhood-mtmkl part B) against direct computations and scikit-learn's SVC.

The B2 quantities are checked against the explicit ``V`` (stacked vectorised base kernels) and the
dense ``Sigma`` of eq. (16), built here; never through the package's coefficient-space shortcuts.
"""
import numpy as np
import pytest
from scipy.optimize import minimize
from sklearn.svm import SVC

from stairsense.models.multitask import (
    MTONMKLClassifier,
    base_kernels,
    kernel_alignment_matrix,
    neighborhood_step,
    task_expansion,
    task_weights,
    theta_step,
)


def tasks_data(n_tasks=3, n=12, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n_tasks * n, 3))
    tasks = np.repeat(np.arange(n_tasks), n)
    tilt = rng.normal(scale=0.5, size=(n_tasks, 3)) + np.array([1.0, 0.0, 0.0])
    y = np.where(np.einsum("ij,ij->i", X, tilt[tasks]) + 0.3 * rng.normal(size=len(X)) > 0, 1, -1)
    return X, y, tasks


def explicit_V(task_kernels):
    """V = [V_1; ...; V_T], V_t = [Ṽ_t, Ṽ_t ⊗ e_t'] with Ṽ_t = [vec K_t^1 ... vec K_t^M] (B2), m-major λ."""
    M, T = task_kernels[0].shape[0], len(task_kernels)
    blocks = []
    for t, K in enumerate(task_kernels):
        Vt = K.reshape(M, -1).T
        lam = np.zeros((Vt.shape[0], M * T))
        lam[:, np.arange(M) * T + t] = Vt
        blocks.append(np.hstack([Vt, lam]))
    return np.vstack(blocks)


def test_base_kernels_are_normalised_and_psd():
    X = np.random.default_rng(1).normal(size=(15, 4))
    K = base_kernels(X)
    assert K.shape == (10, 15, 15)
    np.testing.assert_allclose(np.einsum("mii->mi", K), 1.0)
    assert min(np.linalg.eigvalsh(k).min() for k in K) > -1e-10
    np.testing.assert_allclose(base_kernels(X, X[:4]), K[:, :, :4])


def test_b2_quantities_match_a_direct_computation():
    X, y, tasks = tasks_data(n=6)
    task_kernels = [base_kernels(X[tasks == t]) for t in range(3)]
    M, T = 10, 3
    V = explicit_V(task_kernels)
    A, d = kernel_alignment_matrix(task_kernels)
    np.testing.assert_allclose(A, V.T @ V, rtol=1e-12, atol=1e-12)
    # H1: A is singular: mu^m minus the sum of the lambda_t^m is in its null space, for each m.
    # (The widest Gaussians are nearly constant on a few points, so the numerical rank is lower still.)
    for m in range(M):
        null = np.zeros(M * (T + 1))
        null[m], null[M + m * T:M + (m + 1) * T] = 1.0, -1.0
        assert np.linalg.norm(A @ null) < 1e-10 * np.linalg.norm(A)
    np.testing.assert_allclose(d, V.T @ np.concatenate([np.eye(6).ravel()] * T))  # d = V' vec(I): traces
    rng = np.random.default_rng(2)
    theta, gamma = rng.uniform(size=M * (T + 1)), rng.normal(size=M * (T + 1))
    K_hat = [np.tensordot(w, K, axes=1) for w, K in zip(task_weights(gamma, M, T), task_kernels)]
    v_hat = np.concatenate([k.ravel() for k in K_hat])
    b = 2 * V.T @ v_hat
    np.testing.assert_allclose(b, 2 * A @ gamma, rtol=1e-10)  # b = 2 V' v_hat = 2 A gamma
    c = sum(np.sum(k * k) for k in K_hat)
    K_theta = [np.tensordot(w, K, axes=1) for w, K in zip(task_weights(theta, M, T), task_kernels)]
    np.testing.assert_allclose(V @ theta, np.concatenate([k.ravel() for k in K_theta]))
    frobenius = sum(np.sum((k - kh) ** 2) for k, kh in zip(K_theta, K_hat))
    assert theta @ A @ theta - theta @ b + c == pytest.approx(frobenius, rel=1e-9)
    # With A^+, tr(V A^+ V') = rank(A) (B2, derived).
    assert np.trace(V @ np.linalg.pinv(A, rcond=1e-10) @ V.T) == pytest.approx(np.linalg.matrix_rank(A, rtol=1e-10),
                                                                                rel=1e-6)
    assert np.allclose(task_expansion(M, T) @ theta, task_weights(theta, M, T))


def test_literal_k_hat_step_is_the_dense_solution_of_eq_16():
    X, y, tasks = tasks_data(n_tasks=2, n=5)
    # Spread points so that all ten kernels differ numerically (V well conditioned, its projector exact).
    task_kernels = [base_kernels(20 * X[tasks == t]) for t in range(2)]
    V = explicit_V(task_kernels)
    A, d = kernel_alignment_matrix(task_kernels)
    eta, beta = 20.0, 1.0
    theta = np.random.default_rng(3).uniform(size=V.shape[1])
    A_pinv = np.linalg.pinv(A, rtol=1e-10, hermitian=True)
    Sigma = (eta - 4 * beta) * np.eye(V.shape[0]) + (beta / 2) * V @ np.linalg.pinv(V)
    a = 0.5 * (eta * V @ theta - beta * V @ A_pinv @ d)
    v_hat = np.linalg.solve(Sigma, a)
    np.testing.assert_allclose(v_hat, a / (eta - 3.5 * beta), rtol=1e-8, atol=1e-10)
    gamma = neighborhood_step(theta, A_pinv @ d, eta, beta, "literal")
    np.testing.assert_allclose(V @ gamma, v_hat, rtol=1e-8, atol=1e-10)


def test_theta_step_matches_a_generic_bounded_solver():
    rng = np.random.default_rng(4)
    R = rng.normal(size=(6, 8))
    A, r = R.T @ R, rng.normal(size=8) * 3
    theta = theta_step(A, r, ridge=1e-3)
    oracle = minimize(lambda v: v @ (A + 1e-3 * np.eye(8)) @ v - v @ r, np.ones(8), method="L-BFGS-B",
                      bounds=[(0, None)] * 8, options={"ftol": 1e-15, "gtol": 1e-12}).x
    np.testing.assert_allclose(theta, oracle, atol=1e-5)
    budget = 0.5 * theta.sum()
    budgeted = theta_step(A, r, ridge=1e-3, budget=budget)
    constrained = minimize(lambda v: v @ (A + 1e-3 * np.eye(8)) @ v - v @ r, np.full(8, budget / 8), method="SLSQP",
                           bounds=[(0, None)] * 8, constraints=[{"type": "ineq", "fun": lambda v: budget - v.sum()}],
                           options={"ftol": 1e-14, "maxiter": 1000}).x
    np.testing.assert_allclose(budgeted, constrained, atol=1e-5)
    assert budgeted.sum() <= budget + 1e-8 and np.all(budgeted >= 0)


def svm_dual_value(K, y, signed):
    """SVM dual objective alpha'1 - 1/2 (Y alpha)' K (Y alpha) with Y alpha = signed."""
    return np.sum(np.abs(signed)) - 0.5 * signed @ K @ signed


def test_each_block_step_moves_the_saddle_objective_the_right_way():
    """Consistent variant, objective (12) with -2c in coefficient space:

    Phi(alpha, theta, gamma) = sum_t SVM-dual_t + (eta/2)(theta - gamma)'A(theta - gamma) + beta d'gamma.
    The alpha-step maximises it (checked against scipy on the SVM dual); the theta- and K-hat steps
    minimise it, so each lowers it.
    """
    X, y, tasks = tasks_data()
    C, eta, beta = 1.0, 16.0, 0.5
    task_kernels = [base_kernels(X[tasks == t]) for t in range(3)]
    M, T = 10, 3
    A, d = kernel_alignment_matrix(task_kernels)
    A_pinv_d = np.linalg.pinv(A) @ d
    theta = np.concatenate([np.full(M, 0.1), np.zeros(M * T)])
    gamma = neighborhood_step(theta, A_pinv_d, eta, beta, "consistent")
    model = MTONMKLClassifier(C=C, eta=eta, beta=beta)
    signs = [y[tasks == t].astype(float) for t in range(T)]

    def phi(duals, theta, gamma):
        kernels = [np.tensordot(w, K, axes=1) for w, K in zip(task_weights(theta, M, T), task_kernels)]
        svm = sum(svm_dual_value(K, s, dl) for K, s, (dl, _) in zip(kernels, signs, duals))
        return svm + eta / 2 * (theta - gamma) @ A @ (theta - gamma) + beta * d @ gamma

    zero = [(np.zeros(len(s)), 0.0) for s in signs]
    for _ in range(3):
        duals, Q = model._svm_step(task_kernels, signs, task_weights(theta, M, T))
        # alpha-step: LIBSVM's alpha maximises the dual; scipy's SLSQP on the same box QP agrees.
        for K, s, (dl, _) in zip([np.tensordot(w, K, axes=1) for w, K in zip(task_weights(theta, M, T), task_kernels)],
                                 signs, duals):
            res = minimize(lambda a: -(a.sum() - 0.5 * (a * s) @ K @ (a * s)), np.zeros(len(s)), method="SLSQP",
                           bounds=[(0, C)] * len(s), constraints=[{"type": "eq", "fun": lambda a: a @ s}],
                           options={"ftol": 1e-12, "maxiter": 1000})
            assert svm_dual_value(K, s, dl) == pytest.approx(-res.fun, rel=1e-4)
        assert phi(duals, theta, gamma) >= phi(zero, theta, gamma) - 1e-9
        before = phi(duals, theta, gamma)
        q = np.einsum("tmi,tm->i", task_expansion(M, T), Q)
        theta = theta_step(A, 2 * A @ gamma + (2 / eta) * q, ridge=1e-12)
        after_theta = phi(duals, theta, gamma)
        gamma = neighborhood_step(theta, A_pinv_d, eta, beta, "consistent")
        after_gamma = phi(duals, theta, gamma)
        assert after_theta <= before + 1e-8 * abs(before)
        assert after_gamma <= after_theta + 1e-8 * abs(after_theta)


@pytest.mark.parametrize("weights", ["learned", "uniform", "independent", "mtmkl"])
def test_predictor_is_svc_on_the_learned_task_kernel(weights):
    X, y, tasks = tasks_data()
    model = MTONMKLClassifier(C=2.0, weights=weights, max_iter=20).fit(X, y, tasks)
    if weights == "independent":
        assert np.all(model.theta_[:10] == 0)
    if weights == "mtmkl":
        assert model.theta_.sum() <= 1 + 1e-8
    if weights == "uniform":
        np.testing.assert_allclose(model.task_weights_, 0.1)
    X_new = np.random.default_rng(5).normal(size=(7, 3))
    for t in range(3):
        rows = tasks == t
        K = np.tensordot(model.task_weights_[t], base_kernels(X[rows]), axes=1)
        K_new = np.tensordot(model.task_weights_[t], base_kernels(X_new, X[rows]), axes=1)
        svc = SVC(C=2.0, kernel="precomputed", tol=1e-6).fit(K, y[rows])
        np.testing.assert_allclose(model.decision_function(X_new, np.full(7, t)), svc.decision_function(K_new),
                                   rtol=1e-6, atol=1e-6)


def test_literal_variant_refuses_unstable_settings_and_converges_when_stable():
    X, y, tasks = tasks_data()
    with pytest.raises(ValueError, match="eta > 7 beta"):
        MTONMKLClassifier(variant="literal", eta=5.0, beta=1.0).fit(X, y, tasks)
    model = MTONMKLClassifier(variant="literal", eta=20.0, beta=1.0, max_iter=200).fit(X, y, tasks)
    assert model.theta_changes_[-1] <= 1e-4 and np.isfinite(model.theta_).all()


def test_fold_in_gives_a_new_task_an_svm_on_the_population_kernel():
    X, y, tasks = tasks_data()
    model = MTONMKLClassifier(max_iter=10).fit(X[tasks < 2], y[tasks < 2], tasks[tasks < 2])
    population = model.task_weights_.mean(axis=0)
    before = model.decision_function(X[:5], np.zeros(5, dtype=int))
    model.fold_in(X[tasks == 2], y[tasks == 2], tasks[tasks == 2])
    assert model.tasks_.tolist() == [0, 1, 2]
    np.testing.assert_allclose(model.decision_function(X[:5], np.zeros(5, dtype=int)), before)
    K = np.tensordot(population, base_kernels(X[tasks == 2]), axes=1)
    svc = SVC(C=1.0, kernel="precomputed", tol=1e-6).fit(K, y[tasks == 2])
    np.testing.assert_allclose(model.decision_function(X[:5], np.full(5, 2)),
                               svc.decision_function(np.tensordot(population, base_kernels(X[:5], X[tasks == 2]), axes=1)),
                               rtol=1e-6, atol=1e-6)


def test_unseen_task_is_refused():
    X, y, tasks = tasks_data()
    model = MTONMKLClassifier(max_iter=3).fit(X, y, tasks)
    with pytest.raises(ValueError, match="not seen in fit"):
        model.predict(X[:2], [7, 7])




def test_consistent_variant_decouples_into_independent_task_mkl():
    """With the -2c regulariser every term depends on theta_t = mu + lambda_t alone (derived from B7 H3):
    sum_t SVM-dual_t(K_t(theta_t)) + beta sum_t tr K_t(theta_t), and the proximal term sum_t ||K_t - K_hat_t||^2.
    So mu only re-parametrises and the iterates equal ITL's (mu = 0) from the same start."""
    X, y, tasks = tasks_data()
    shared = MTONMKLClassifier(C=3.0, beta=0.5, max_iter=15).fit(X, y, tasks)
    independent = MTONMKLClassifier(C=3.0, beta=0.5, max_iter=15, weights="independent").fit(X, y, tasks)
    # Equal up to the tiny ridge of the theta-QP, which acts on (mu, lambda), not on theta_t.
    np.testing.assert_allclose(shared.task_weights_, independent.task_weights_, rtol=1e-3, atol=1e-5)
