"""Output kernel learning (spec okl-and-neighborhood-mtmkl part A) against independent oracles.

The oracles are written here densely from the spec's formulas (vectorised Kronecker systems,
objective (2) in (C, L), scipy's L-BFGS on J(A, B), scikit-learn's KernelRidge), never through the
package's matrix-free code.
"""
import numpy as np
import pytest
from scipy.optimize import minimize
from sklearn.kernel_ridge import KernelRidge
from sklearn.metrics.pairwise import rbf_kernel

from stairsense.models.multitask import (
    MaskedOutputs,
    OutputKernelClassifier,
    OutputKernelRegressor,
    okl_a_step,
    okl_b_step,
    okl_lambda_max,
    okl_objective,
    okl_path,
    okl_solve,
)


def problem(n_rows=8, n_tasks=4, density=0.6, weighted=False, seed=0):
    """Inputs on a line, low-rank task structure, a random observation mask (every task observed)."""
    rng = np.random.default_rng(seed)
    x = np.sort(rng.uniform(-1, 1, size=(n_rows, 1)), axis=0)
    K = rbf_kernel(x, gamma=2.0)
    truth = np.sin(3 * x) @ rng.normal(size=(1, n_tasks)) + np.cos(2 * x) @ rng.normal(size=(1, n_tasks))
    Y = truth + 0.1 * rng.normal(size=truth.shape)
    mask = rng.random((n_rows, n_tasks)) < density
    mask[rng.integers(n_rows, size=n_tasks), np.arange(n_tasks)] = True
    W = np.where(mask, rng.uniform(0.5, 2.0, size=mask.shape) if weighted else 1.0, 0.0)
    rows, cols = np.nonzero(W)
    obs = MaskedOutputs.from_entries(rows, cols, Y[rows, cols], W[rows, cols], shape=W.shape)
    # Y is returned with zeros where unobserved (spec A1: Y = W ⊙ Y for a binary mask).
    return K, np.linalg.cholesky(K + 1e-10 * np.eye(n_rows)), W, np.where(mask, Y, 0.0), obs


def dense_J(A, B, K, W, Y, lam):
    """J(A, B) of spec eq. (4), dense."""
    R = Y - K @ A @ B.T
    return np.sum(W * R**2) / (2 * lam) + np.sum(A * (K @ A)) / 2 + np.sum(B**2) / 2


def test_masked_outputs_merge_replicates_into_weights():
    Y = MaskedOutputs.from_entries([2, 0, 2], [1, 0, 1], [1.0, 4.0, 2.0], [1.0, 1.0, 3.0])
    assert Y.rows.tolist() == [0, 2] and Y.cols.tolist() == [0, 1]
    assert Y.values.tolist() == [4.0, 1.75] and Y.weights.tolist() == [1.0, 4.0]


@pytest.mark.parametrize("preconditioner", ["kronecker", "jacobi"])
@pytest.mark.parametrize("weighted", [False, True])
def test_a_step_equals_dense_solve_of_the_vectorised_system(weighted, preconditioner):
    K, F, W, Y, obs = problem(weighted=weighted)
    lam, rng = 0.3, np.random.default_rng(1)
    B = rng.normal(size=(W.shape[1], 2))
    n = K.shape[0]
    # Spec A3: L_A = (B^T ⊗ I) W_D (B ⊗ K) + lam I (non-symmetric), rhs vec((W ⊙ Y) B), vec = columns.
    L_A = np.kron(B.T, np.eye(n)) @ np.diag(W.ravel(order="F")) @ np.kron(B, K) + lam * np.eye(n * 2)
    assert not np.allclose(L_A, L_A.T)
    A_dense = np.linalg.solve(L_A, ((W * Y) @ B).ravel(order="F")).reshape((n, 2), order="F")
    A_F, n_cg = okl_a_step(F, B, obs, lam, tol=1e-13, preconditioner=preconditioner)
    assert n_cg > 0
    np.testing.assert_allclose(A_F, F.T @ A_dense, rtol=1e-8, atol=1e-10)
    # Recovery (b) of spec A3 equals the dense A.
    A = obs.matrix(obs.weights * (obs.values - np.einsum("kp,kp->k", (F @ A_F)[obs.rows], B[obs.cols]))) @ B / lam
    np.testing.assert_allclose(A, A_dense, rtol=1e-7, atol=1e-9)


def test_kronecker_preconditioner_needs_fewer_cg_iterations_than_jacobi():
    # Spec A3 A-step on a sparse, skewed mask: both preconditioners must give the dense solution;
    # the Kronecker one (complete-data eigenvectors, mask replaced by its rank-one fit) in fewer steps.
    K, F, W, Y, obs = problem(n_rows=40, n_tasks=15, density=0.25, seed=11)
    lam, B = 0.05, np.random.default_rng(12).normal(size=(15, 3))
    n = K.shape[0]
    L_F = np.kron(F.T, B.T) @ np.diag(W.ravel()) @ np.kron(F, B) + lam * np.eye(n * 3)  # row-major vec
    dense = np.linalg.solve(L_F, (F.T @ (W * Y) @ B).ravel()).reshape(n, 3)
    solutions = {name: okl_a_step(F, B, obs, lam, tol=1e-12, max_cg=1000, preconditioner=name)
                 for name in ("kronecker", "jacobi")}
    for A_F, _ in solutions.values():
        np.testing.assert_allclose(A_F, dense, rtol=1e-7, atol=1e-9)
    assert solutions["kronecker"][1] < solutions["jacobi"][1] / 2
    with pytest.raises(ValueError, match="preconditioner"):
        okl_a_step(F, B, obs, lam, preconditioner="ilu")


def test_b_step_rows_are_weighted_ridge_regressions_in_both_forms():
    K, F, W, Y, obs = problem(n_rows=6, n_tasks=3, weighted=True)
    E = np.random.default_rng(2).normal(size=(6, 8))  # p = 8 > rows per task: push-through form
    for p in (2, 8):
        B = okl_b_step(E[:, :p], obs, 0.4)
        for j in range(3):
            w = W[:, j]
            expected = np.linalg.solve(E[:, :p].T @ (w[:, None] * E[:, :p]) + 0.4 * np.eye(p), E[:, :p].T @ (w * Y[:, j]))
            np.testing.assert_allclose(B[j], expected, rtol=1e-9, atol=1e-12)


def test_objective_equals_the_function_space_form_2():
    K, F, W, Y, obs = problem()
    rng = np.random.default_rng(3)
    A, B = rng.normal(size=(8, 2)), rng.normal(size=(4, 2))
    C, L = A @ np.linalg.pinv(B), B @ B.T  # spec A2: J(A, B) = objective (2) at (A B^+, B B^T)
    form_2 = np.sum(W * (Y - K @ C @ L) ** 2) / (2 * 0.7) + np.sum(C * (K @ C @ L)) / 2 + np.trace(L) / 2
    assert okl_objective(F, F.T @ A, B, obs, 0.7) == pytest.approx(form_2, rel=1e-10)
    assert okl_objective(F, F.T @ A, B, obs, 0.7) == pytest.approx(dense_J(A, B, K, W, Y, 0.7), rel=1e-10)


@pytest.mark.parametrize("solver", ["bcd", "lbfgs"])
@pytest.mark.parametrize("rank", [3, 2])
def test_solvers_reach_the_minimum_found_by_scipy(rank, solver):
    K, F, W, Y, obs = problem(n_rows=6, n_tasks=3, weighted=True)
    lam, (n, m) = 0.5, W.shape

    def value_and_grad(v):
        A, B = v[: n * rank].reshape(n, rank), v[n * rank:].reshape(m, rank)
        R = W * (K @ A @ B.T - Y)
        grad_A = K @ (R @ B / lam + A)
        grad_B = R.T @ K @ A / lam + B
        return dense_J(A, B, K, W, Y, lam), np.concatenate([grad_A.ravel(), grad_B.ravel()])

    rng = np.random.default_rng(4)
    best = min(
        minimize(value_and_grad, rng.normal(size=(n + m) * rank), jac=True, method="L-BFGS-B",
                 options={"gtol": 1e-10, "ftol": 1e-15, "maxiter": 20000}).fun
        for _ in range(2)
    )
    # J is not jointly convex for p < m (spec A2): both solvers take the best of a few random starts.
    fits = [okl_solve(F, obs, lam, rng.normal(size=(m, rank)), solver=solver, max_iter=20000, tol=1e-10,
                      cg_tol=1e-10, random_state=0) for _ in range(2)]
    assert min(fit.objective for fit in fits) == pytest.approx(best, rel=1e-6)
    for fit in fits:
        assert np.all(np.diff(fit.objectives) <= 1e-12 * fit.objectives[0])  # every iteration decreases J


@pytest.mark.parametrize("solver", ["bcd", "lbfgs"])
def test_path_is_monotone_and_starts_at_lambda_max(solver):
    K, F, W, Y, obs = problem(n_rows=6, n_tasks=4, density=0.8)
    lam_max = okl_lambda_max(F, obs)
    assert lam_max == pytest.approx(np.linalg.norm(F.T @ (W * Y), 2))
    lambdas = lam_max * np.geomspace(1.0, 3e-2, 6)
    fits = okl_path(F, obs, np.concatenate([[1.05 * lam_max], lambdas]), rank=4, solver=solver, max_iter=1000,
                    max_iter_warm=1000, tol=1e-11, cg_tol=1e-11, random_state=0)
    assert np.abs(F @ fits[0].A_F @ fits[0].B.T).max() < 1e-6  # above lam_max the origin is the optimum
    assert np.abs(F @ fits[2].A_F @ fits[2].B.T).max() > 1e-3  # below it is not
    loss, penalty = [], []
    for fit in fits:
        residual = obs.values - np.einsum("kp,kp->k", (F @ fit.A_F)[obs.rows], fit.B[obs.cols])
        loss.append(np.sum(obs.weights * residual**2))
        penalty.append((np.sum(fit.A_F**2) + np.sum(fit.B**2)) / 2)
        assert np.all(np.diff(fit.objectives) <= 1e-12 * fit.objectives[0])
    # Descending lam gives the loss more weight: at exact optima the fit error cannot rise and the
    # regulariser cannot fall (the standard two-point argument on the regularisation path).
    assert np.all(np.diff(loss) <= 1e-7 * loss[0])
    assert np.all(np.diff(penalty) >= -1e-7 * max(penalty))


def test_rank_of_output_kernel_is_bounded_by_rank_of_input_kernel():
    rng = np.random.default_rng(5)
    X = rng.normal(size=(40, 2))
    tasks = np.repeat(np.arange(5), 8)
    y = np.einsum("ij,ij->i", X, rng.normal(size=(5, 2))[tasks]) + 0.1 * rng.normal(size=40)
    model = OutputKernelRegressor(alpha=0.05, rank=5, kernel="linear", max_iter=300, tol=1e-10,
                                  random_state=0).fit(X, y, tasks)
    singular = np.linalg.svd(model.output_kernel_, compute_uv=False)
    assert singular[2] < 1e-8 * singular[0]  # spec G9: rank(L) <= rank(K) = 2


def test_independent_and_pooled_baselines_are_kernel_ridge():
    K, F, W, Y, obs = problem(weighted=True)
    lam, m = 0.2, W.shape[1]
    independent = okl_solve(F, obs, lam, np.eye(m), fixed_B=True, cg_tol=1e-13)
    G = F @ independent.A_F @ np.eye(m).T
    for j in range(m):
        seen = W[:, j] > 0
        krr = KernelRidge(alpha=lam, kernel="precomputed").fit(K[np.ix_(seen, seen)], Y[seen, j],
                                                               sample_weight=W[seen, j])
        np.testing.assert_allclose(G[:, j], krr.predict(K[:, seen]), rtol=0, atol=2e-5)
    pooled = okl_solve(F, obs, lam, np.ones((m, 1)), fixed_B=True, cg_tol=1e-13)
    krr = KernelRidge(alpha=lam, kernel="precomputed").fit(K[np.ix_(obs.rows, obs.rows)], obs.values,
                                                           sample_weight=obs.weights)
    np.testing.assert_allclose((F @ pooled.A_F).ravel(), krr.predict(K[:, obs.rows]), rtol=0, atol=2e-5)


def test_estimator_shares_rows_between_tasks_and_folds_in_new_tasks():
    rng = np.random.default_rng(6)
    X = np.repeat(rng.uniform(-1, 1, size=(15, 1)), 3, axis=0)  # every input seen by all three tasks
    tasks = np.tile([0, 1, 2], 15)
    y = np.sin(3 * X[:, 0]) * np.array([1.0, 0.8, -1.0])[tasks]
    model = OutputKernelRegressor(alpha=0.01, rank=2, max_iter=500, tol=1e-12, random_state=0).fit(X, y, tasks)
    assert model.feature_map_.n_components == 15
    L = model.output_kernel_
    assert L[0, 1] > 0 > L[0, 2]
    # Fold-in of task 1 on its own rows is its exact B-step row, i.e. the fitted b_1 at convergence.
    b_1 = model.task_coef_[1].copy()
    model.fold_in(X[tasks == 1], y[tasks == 1], np.full(15, 1))
    np.testing.assert_allclose(model.task_coef_[1], b_1, rtol=1e-5, atol=1e-7)
    model.fold_in(X[:4], y[:4], np.full(4, 9))
    assert model.tasks_.tolist() == [0, 1, 2, 9] and model.output_kernel_.shape == (4, 4)


def test_unseen_task_uses_the_mean_task_factor():
    rng = np.random.default_rng(7)
    X, tasks = rng.normal(size=(30, 2)), np.repeat([3, 5], 15)
    model = OutputKernelRegressor(alpha=0.1, rank=2, kernel="linear", random_state=0).fit(X, X[:, 0], tasks)
    mean_factor = model.feature_map_.transform(X[:3]) @ model.input_coef_ @ model.task_coef_.mean(axis=0)
    np.testing.assert_allclose(model.predict(X[:3], [4, 4, 4]), mean_factor)
    np.testing.assert_allclose(model.predict(X[:3]), mean_factor)


@pytest.mark.parametrize("estimator", [OutputKernelRegressor, OutputKernelClassifier])
def test_precomputed_gram_predicts_as_the_named_kernel(estimator):
    """kernel="precomputed" on rbf_kernel's Gram = kernel="rbf": the factor K = F F^T (spec A3,
    option 3) is the same up to a rotation, so both fits reach the same J and predict alike. The
    inputs repeat a row (A1: one row of the output matrix) and one weight is 0 (the row drops, its
    column stays). Predictions agree to the solver's stop, not to rounding: a relative objective gap
    of ~1e-12 leaves the predictions free to move by ~sqrt(1e-12) = 1e-6 (observed: 5e-6)."""
    rng = np.random.default_rng(0)
    X, tasks = rng.uniform(-1, 1, size=(45, 2)), np.repeat([0, 1, 2], 15)
    X[10] = X[3]
    signal = np.sin(3 * X[:, 0]) * np.array([1.0, 1.0, -1.0])[tasks] + 0.1 * rng.normal(size=45)
    y = signal if estimator is OutputKernelRegressor else np.where(signal > 0, "up", "flat")
    weights = rng.uniform(0.5, 2.0, size=45)
    weights[5] = 0.0
    X_new, tasks_new = rng.uniform(-1, 1, size=(12, 2)), rng.integers(0, 4, size=12)  # task 3 is unseen
    params = dict(alpha=0.05, rank=2, tol=1e-12, cg_tol=1e-10, max_iter=500, random_state=0)
    named = estimator(kernel="rbf", gamma=1.5, **params).fit(X, y, tasks, sample_weight=weights)
    gram = estimator(kernel="precomputed", **params).fit(rbf_kernel(X, gamma=1.5), y, tasks, sample_weight=weights)
    K_new = rbf_kernel(X_new, X, gamma=1.5)
    predict = "predict" if estimator is OutputKernelRegressor else "decision_function"
    np.testing.assert_allclose(getattr(gram, predict)(K_new, tasks_new), getattr(named, predict)(X_new, tasks_new),
                               rtol=0, atol=2e-5)
    assert gram.objective_ == pytest.approx(named.objective_, rel=1e-9)
    named.fold_in(X_new, y[:12], np.full(12, 7))
    gram.fold_in(K_new, y[:12], np.full(12, 7))
    np.testing.assert_allclose(getattr(gram, predict)(K_new, np.full(12, 7)),
                               getattr(named, predict)(X_new, np.full(12, 7)), rtol=0, atol=2e-5)


def test_precomputed_gram_must_be_square():
    with pytest.raises(ValueError, match=r"square Gram matrix .* got shape \(4, 3\)"):
        OutputKernelRegressor(kernel="precomputed").fit(np.eye(4, 3), np.ones(4))


def test_bad_tasks_are_refused_with_a_reason():
    X = np.zeros((4, 1))
    with pytest.raises(ValueError, match="one task id per row"):
        OutputKernelRegressor().fit(X, np.ones(4), tasks=[0, 1])
    with pytest.raises(ValueError, match="Only binary classification"):
        OutputKernelClassifier().fit(X, [0, 1, 2, 2])


def test_inexact_a_steps_keep_the_objective_decreasing():
    K, F, W, Y, obs = problem(n_rows=10, n_tasks=5, weighted=True)
    fit = okl_solve(F, obs, 0.1, np.random.default_rng(8).normal(size=(5, 3)), solver="bcd", max_iter=200, tol=1e-12,
                    max_cg=2)
    assert fit.n_cg <= 2 * fit.n_iter
    assert np.all(np.diff(fit.objectives) <= 1e-12 * fit.objectives[0])
    exact = okl_solve(F, obs, 0.1, np.random.default_rng(8).normal(size=(5, 3)), solver="bcd", max_iter=2000,
                      tol=1e-12)
    assert fit.objective == pytest.approx(exact.objective, rel=1e-3)
