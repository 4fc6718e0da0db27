"""ADMM variance-regularised multi-task learning (spec donini §4) against independent oracles."""

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import minimize
from sklearn.base import clone
from sklearn.exceptions import ConvergenceWarning
from sklearn.svm import LinearSVC

from stairsense.models.multitask import compare_mtl_pooled_independent, synthetic_users
from stairsense.models.multitask._admm_mtl import (
    ADMMMultiTaskClassifier,
    _balanced_blocks,
    _balanced_penalty,
    consensus_z_step,
    variance_regularization_weights,
    variance_regularized_objective,
)
from stairsense.models.multitask._task_solvers import solve_task_dual, solve_task_sgd, task_objective

TIGHT = dict(abs_tol=1e-7, rel_tol=1e-7, max_iter=2000, fit_intercept=False)


def make_tasks(n_tasks=3, n_per_task=10, n_features=3, seed=0):
    """Small related linear tasks: a shared direction plus a per-task tilt, with label noise."""
    rng = np.random.default_rng(seed)
    shared = rng.normal(size=n_features)
    X = rng.normal(size=(n_tasks * n_per_task, n_features))
    tasks = np.repeat(np.arange(n_tasks), n_per_task)
    W = shared + 0.7 * rng.normal(size=(n_tasks, n_features))
    y = np.sign(np.einsum("ij,ij->i", X, W[tasks]) + 0.5 * rng.normal(size=len(tasks)))
    return X, y, tasks


def stacked_slsqp(X, y, tasks, rho1, rho2):
    """Oracle: Eq. 13.4 solved by scipy's SLSQP on the stacked weights plus hinge slacks.

    The hinge is non-smooth, so it is written with slacks xi >= 0, xi >= 1 - y <w_t, x>;
    the objective sum(xi) + rho1 ||W||^2 + rho2 ||W - mean||^2 is then a smooth QP.
    """
    n_tasks, n_features, n = tasks.max() + 1, X.shape[1], len(y)
    n_w = n_tasks * n_features

    def objective(v):
        W, xi = v[:n_w].reshape(n_tasks, n_features), v[n_w:]
        spread = W - W.mean(axis=0)
        grad_W = 2 * rho1 * W + 2 * rho2 * spread
        value = xi.sum() + rho1 * np.sum(W * W) + rho2 * np.sum(spread * spread)
        return value, np.concatenate([grad_W.ravel(), np.ones(n)])

    # Margin constraint rows: xi_i + y_i <w_{t_i}, x_i> - 1 >= 0.
    A = np.zeros((n, n_w + n))
    for i in range(n):
        A[i, tasks[i] * n_features : (tasks[i] + 1) * n_features] = y[i] * X[i]
        A[i, n_w + i] = 1.0
    constraints = [{"type": "ineq", "fun": lambda v: A @ v - 1.0, "jac": lambda v: A}]
    bounds = [(None, None)] * n_w + [(0.0, None)] * n
    start = np.concatenate([np.zeros(n_w), np.ones(n)])
    result = minimize(
        objective, start, jac=True, method="SLSQP", bounds=bounds, constraints=constraints,
        options={"ftol": 1e-13, "maxiter": 2000},
    )
    assert result.success, result.message
    return result.x[:n_w].reshape(n_tasks, n_features)


def evgeniou_pontil_svm(X, y, tasks, lambda1, lambda2):
    """Oracle: Eq. 13.3 as ONE liblinear SVM on the feature map of Eq. 13.11 (Prop. 13.5.1 proof).

    phi(x, t) = (x / sqrt(mu), 0, .., x in block t, .., 0), mu = T lambda2 / lambda1,
    C = T / (2 lambda1). Returns the per-task weights and w_0.
    """
    n_tasks, d = tasks.max() + 1, X.shape[1]
    mu = n_tasks * lambda2 / lambda1
    phi = np.zeros((len(y), (n_tasks + 1) * d))
    phi[:, :d] = X / np.sqrt(mu)
    for i, t in enumerate(tasks):
        phi[i, (t + 1) * d : (t + 2) * d] = X[i]
    svm = LinearSVC(C=n_tasks / (2 * lambda1), loss="hinge", fit_intercept=False, tol=1e-8, max_iter=10**5)
    theta = svm.fit(phi, y).coef_.ravel()
    w0 = theta[:d] / np.sqrt(mu)
    return w0 + theta[d:].reshape(n_tasks, d), w0


# --- closed-form z-step -----------------------------------------------------------------


@settings(max_examples=40, deadline=None)
@given(
    n_tasks=st.integers(1, 6),
    n_features=st.integers(1, 4),
    rho1=st.floats(0.0, 3.0),
    rho2=st.floats(0.0, 3.0),
    eta=st.floats(0.05, 3.0),
    seed=st.integers(0, 2**16),
)
def test_z_step_solves_the_stacked_linear_system(n_tasks, n_features, rho1, rho2, eta, seed):
    """Spec §4.3 (2): z = (2 rho2 D'D + (rho1+eta) I)^-1 b with D the centring projector (Eq. 13.9)."""
    B = np.random.default_rng(seed).normal(size=(n_tasks, n_features))
    D = np.eye(n_tasks * n_features) - np.kron(np.ones((n_tasks, n_tasks)) / n_tasks, np.eye(n_features))
    system = 2 * rho2 * D.T @ D + (rho1 + eta) * np.eye(n_tasks * n_features)
    expected = np.linalg.solve(system, B.ravel()).reshape(n_tasks, n_features)
    np.testing.assert_allclose(consensus_z_step(B, rho1, rho2, eta), expected, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize(
    "lambda1, lambda2, n_tasks",
    [(1.0, 1.0, 2), (0.3, 2.0, 5), (4.0, 0.5, 7)],
)
def test_rho_mapping_makes_13_3_and_13_4_agree(lambda1, lambda2, n_tasks):
    """Spec §4.1: minimising Eq. 13.3 over w_0 (at w_0 = l1/(l1+l2) mean w) gives Eq. 13.4."""
    W = np.random.default_rng(1).normal(size=(n_tasks, 3))
    w0 = lambda1 / (lambda1 + lambda2) * W.mean(axis=0)
    penalty_13_3 = lambda1 / n_tasks * np.sum((W - w0) ** 2) + lambda2 * w0 @ w0
    rho1, rho2 = variance_regularization_weights(lambda1, lambda2, n_tasks)
    X, y = np.zeros((0, 3)), np.zeros(0)  # no data: only the regularisers remain
    penalty_13_4 = variance_regularized_objective(W, X, y, np.zeros(0, dtype=int), rho1, rho2)
    assert penalty_13_4 == pytest.approx(penalty_13_3, rel=1e-12)


# --- per-task solvers -------------------------------------------------------------------


def subproblem_slsqp(X, y, q, c):
    """Oracle for Eq. 13.8: hinge with slacks, solved by SLSQP."""
    m, d = X.shape
    A = np.hstack([X * y[:, None], np.eye(m)])
    result = minimize(
        lambda v: (v[d:].sum() + 0.5 * c * v[:d] @ v[:d] + q @ v[:d], np.concatenate([c * v[:d] + q, np.ones(m)])),
        np.concatenate([np.zeros(d), np.ones(m)]),
        jac=True, method="SLSQP", bounds=[(None, None)] * d + [(0, None)] * m,
        constraints=[{"type": "ineq", "fun": lambda v: A @ v - 1.0, "jac": lambda v: A}],
        options={"ftol": 1e-13, "maxiter": 1000},
    )
    return result.x[:d]


@pytest.mark.parametrize("m, d, c", [(12, 3, 0.7), (25, 6, 3.0), (4, 8, 1.0)])
def test_dual_task_solver_matches_slsqp(m, d, c):
    rng = np.random.default_rng(m)
    X, y, q = rng.normal(size=(m, d)), np.sign(rng.normal(size=m)), rng.normal(size=d)
    w, dual = solve_task_dual(X, y, q, c)
    np.testing.assert_allclose(w, subproblem_slsqp(X, y, q, c), atol=1e-6)
    assert np.all((dual >= 0) & (dual <= 1))
    # Warm start from the solution stays at the solution.
    np.testing.assert_allclose(solve_task_dual(X, y, q, c, dual_init=dual)[0], w, atol=1e-8)


def test_sgd_task_solver_approaches_the_optimum():
    """Algorithm 4's rate O(1/(gamma n)) (spec §4.4): the objective gap shrinks with n."""
    rng = np.random.default_rng(3)
    X, q = rng.normal(size=(40, 4)), 0.3 * rng.normal(size=4)
    y = np.sign(X[:, 0] + 0.3 * rng.normal(size=40))
    c = 2.0
    best = task_objective(solve_task_dual(X, y, q, c)[0], X, y, q, c)
    gaps = [
        np.median([task_objective(solve_task_sgd(X, y, q, c, n_steps=n, radius=50.0, seed=s), X, y, q, c) - best
                   for s in range(5)])
        for n in (100, 20_000)
    ]
    assert gaps[1] < 0.02 * abs(best) and gaps[1] < gaps[0] / 5


def test_sgd_is_reproducible_from_its_seed():
    X, y, tasks = make_tasks()
    fit = lambda rs: ADMMMultiTaskClassifier(solver="sgd", max_iter=5, random_state=rs).fit(X, y, tasks).coef_
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        np.testing.assert_array_equal(fit(4), fit(4))
        assert not np.allclose(fit(4), fit(5))


# --- the ADMM learner -------------------------------------------------------------------


@pytest.mark.parametrize(
    "lambda1, lambda2, penalty",
    [
        (1.0, 1.0, {}),
        (0.2, 3.0, {}),
        (5.0, 0.5, {}),
        # Residual balancing from a badly chosen start must still reach the same optimum.
        (1.0, 1.0, dict(eta=50.0, eta_scaling="none", adapt_eta=True)),
    ],
)
def test_admm_matches_generic_solver_of_13_4(lambda1, lambda2, penalty):
    """Oracle: the stacked Eq. 13.4 solved by scipy.optimize.minimize (SLSQP)."""
    X, y, tasks = make_tasks(n_tasks=4, n_per_task=8)
    model = ADMMMultiTaskClassifier(lambda1=lambda1, lambda2=lambda2, **penalty, **TIGHT).fit(X, y, tasks)
    rho1, rho2 = variance_regularization_weights(lambda1, lambda2, 4)
    oracle = stacked_slsqp(X, y, tasks, rho1, rho2)
    np.testing.assert_allclose(model.coef_, oracle, atol=2e-5)
    assert model.n_iter_ < TIGHT["max_iter"]


def test_admm_and_shared_model_match_the_evgeniou_pontil_svm():
    """Oracle: Eq. 13.3 as one liblinear SVM (Eq. 13.11); checks coef_ and cold-start w_0."""
    X, y, tasks = make_tasks(n_tasks=5, n_per_task=12, seed=2)
    model = ADMMMultiTaskClassifier(lambda1=0.8, lambda2=1.5, **TIGHT).fit(X, y, tasks)
    W, w0 = evgeniou_pontil_svm(X, y, tasks, 0.8, 1.5)
    np.testing.assert_allclose(model.coef_, W, atol=1e-4)
    np.testing.assert_allclose(model.shared_coef_, w0, atol=1e-4)


@pytest.mark.parametrize("extreme", ["independent", "pooled"])
def test_sharing_extremes_are_plain_svms(extreme):
    """Spec §4.1: alpha = 1 (lambda2 = inf) gives per-task SVMs, alpha = 0 (lambda1 = inf) one SVM."""
    X, y, tasks = make_tasks(n_tasks=3, n_per_task=15, seed=4)
    lam = 0.6
    if extreme == "independent":
        model = ADMMMultiTaskClassifier(lambda1=lam, lambda2=np.inf, **TIGHT).fit(X, y, tasks)
        expected = np.vstack([
            LinearSVC(C=3 / (2 * lam), loss="hinge", fit_intercept=False, tol=1e-8, max_iter=10**5)
            .fit(X[tasks == t], y[tasks == t]).coef_ for t in range(3)
        ])
        np.testing.assert_allclose(model.shared_coef_, 0.0)
    else:
        model = ADMMMultiTaskClassifier(lambda1=np.inf, lambda2=lam, **TIGHT).fit(X, y, tasks)
        pooled = LinearSVC(C=1 / (2 * lam), loss="hinge", fit_intercept=False, tol=1e-8, max_iter=10**5).fit(X, y)
        expected = np.repeat(pooled.coef_, 3, axis=0)
        np.testing.assert_allclose(model.shared_coef_, pooled.coef_.ravel(), atol=1e-4)
    np.testing.assert_allclose(model.coef_, expected, atol=1e-4)


def test_eta_changes_the_path_not_the_solution():
    X, y, tasks = make_tasks(seed=5)
    fits = [ADMMMultiTaskClassifier(eta=eta, **TIGHT).fit(X, y, tasks) for eta in (0.3, 3.0)]
    np.testing.assert_allclose(fits[0].coef_, fits[1].coef_, atol=1e-5)
    assert fits[0].n_iter_ != fits[1].n_iter_


@pytest.mark.parametrize("eta_scaling, expected", [("tasks", 2.0 / 3), ("none", 2.0)])
def test_eta_scaling_and_callback(eta_scaling, expected):
    """The penalty used is eta/T under "tasks"; the callback sees each z-iterate and can stop the fit."""
    X, y, tasks = make_tasks(seed=6)
    seen = []
    model = ADMMMultiTaskClassifier(eta=2.0, eta_scaling=eta_scaling, fit_intercept=False)
    model.fit(X, y, tasks, callback=lambda k, Z: seen.append((k, Z.copy())) or k == 3)
    assert model.eta_ == pytest.approx(expected)
    assert model.n_iter_ == 3 and [k for k, _ in seen] == [1, 2, 3]
    np.testing.assert_array_equal(seen[-1][1], model.coef_)


def test_balanced_penalty_moves_towards_the_larger_residual():
    """Boyd §3.4.1: a dominant primal residual raises eta, a dominant dual one lowers it."""
    assert _balanced_penalty(1.0, 11.0, 1.0) == 2.0
    assert _balanced_penalty(1.0, 1.0, 11.0) == 0.5
    assert _balanced_penalty(1.0, 9.0, 1.0) == 1.0


def test_objective_of_one_shared_model():
    """rho2 = inf (alpha = 0): equal rows cost no variance penalty, unequal rows are infeasible."""
    X, y, tasks = make_tasks(n_tasks=2)
    W = np.ones((2, 3))
    pooled = variance_regularized_objective(W, X, y, tasks, 0.5, np.inf)
    assert pooled == pytest.approx(variance_regularized_objective(W, X, y, tasks, 0.5, 0.0))
    W[1, 0] = 2.0
    assert variance_regularized_objective(W, X, y, tasks, 0.5, np.inf) == np.inf


def test_boyd_stopping_and_residual_history():
    X, y, tasks = make_tasks(seed=6)
    loose, tight = (ADMMMultiTaskClassifier(abs_tol=tol, rel_tol=tol).fit(X, y, tasks) for tol in (1e-3, 1e-7))
    assert loose.n_iter_ == len(loose.primal_residuals_) == len(loose.dual_residuals_)
    assert loose.n_iter_ < tight.n_iter_ < 200
    assert tight.primal_residuals_[-1] < 1e-5 and tight.dual_residuals_[-1] < 1e-5
    with pytest.warns(ConvergenceWarning, match="max_iter=2"):
        ADMMMultiTaskClassifier(max_iter=2).fit(X, y, tasks)


def test_predict_uses_task_models_and_cold_start_for_unseen_tasks():
    X, y, tasks = make_tasks(n_tasks=3, seed=7)
    labels = np.where(y > 0, "stairs", "flat")
    ids = np.array(["ann", "bob", "cy"])[tasks]
    model = ADMMMultiTaskClassifier(lambda1=1.0, lambda2=1.0).fit(X, labels, ids)
    assert model.tasks_.tolist() == ["ann", "bob", "cy"]
    scores = model.decision_function(X, ids)
    expected = np.einsum("ij,ij->i", X, model.coef_[tasks]) + model.intercept_[tasks]
    np.testing.assert_allclose(scores, expected)
    cold = X @ model.shared_coef_ + model.shared_intercept_
    np.testing.assert_allclose(model.decision_function(X, np.full(len(X), "zed")), cold)
    np.testing.assert_allclose(model.decision_function(X), cold)
    assert set(model.predict(X, ids)) <= {"flat", "stairs"}
    assert model.score(X, labels, ids) > 0.7


@pytest.mark.parametrize(
    "change, message",
    [
        (dict(tasks=np.zeros(3)), "one task id per row"),
        (dict(y=np.arange(30) % 3), "Only binary classification is supported"),
        (dict(params=dict(lambda1=np.inf, lambda2=np.inf)), "both inf"),
        (dict(params=dict(solver="newton")), "solver"),
    ],
)
def test_bad_input_is_refused_with_a_reason(change, message):
    X, y, tasks = make_tasks()
    model = ADMMMultiTaskClassifier(**change.get("params", {}))
    with pytest.raises(ValueError, match=message):
        model.fit(X, change.get("y", y), change.get("tasks", tasks))


def test_clone_keeps_params():
    model = ADMMMultiTaskClassifier(lambda1=0.2, solver="sgd", random_state=3)
    assert clone(model).get_params() == model.get_params()


@settings(max_examples=30, deadline=None)
@given(sizes=st.lists(st.integers(0, 50), min_size=1, max_size=40), n_blocks=st.integers(1, 8))
def test_balanced_blocks_partition_the_tasks(sizes, n_blocks):
    groups = _balanced_blocks(sizes, n_blocks)
    assert sorted(t for g in groups for t in g) == list(range(len(sizes)))
    assert len(groups) <= n_blocks
    loads = [sum(sizes[t] + 1 for t in g) for g in groups]
    assert max(loads) - min(loads) <= max(sizes) + 1  # LPT: spread at most one task


# --- Dask -------------------------------------------------------------------------------


def test_dask_cluster_gives_the_serial_solution():
    """Per-task solves as Dask tasks on a real 2-process LocalCluster equal the serial run."""
    dask = pytest.importorskip("dask")
    distributed = pytest.importorskip("dask.distributed")
    X, y, tasks = make_tasks(n_tasks=5, n_per_task=8, n_features=3, seed=8)
    tasks[:16] = 0  # one bigger task so the blocks are uneven
    # A few iterations suffice: equality must hold iterate by iterate, converged or not.
    # adapt_eta checks that a penalty changed between iterations reaches the workers.
    params = [dict(solver="dual", max_iter=4, adapt_eta=True), dict(solver="sgd", sgd_epochs=2, max_iter=2, random_state=0)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        serial = [ADMMMultiTaskClassifier(**p).fit(X, y, tasks) for p in params]
        # Forked workers inherit the imported modules (numba, sklearn): a spawned worker
        # re-imports them, which costs most of this test's time on a loaded machine.
        with dask.config.set({"distributed.worker.multiprocessing-method": "fork"}), distributed.LocalCluster(
            n_workers=2, processes=True, threads_per_worker=1, dashboard_address=None
        ) as cluster, distributed.Client(cluster) as client:
            on_dask = [ADMMMultiTaskClassifier(**p).fit(X, y, tasks, client=client) for p in params]
    for s, d in zip(serial, on_dask):
        assert s.n_iter_ == d.n_iter_
        np.testing.assert_allclose(d.coef_, s.coef_, rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(d.shared_coef_, s.shared_coef_, rtol=1e-9, atol=1e-12)


# --- users as tasks ---------------------------------------------------------------------


def test_compare_mtl_pooled_independent_on_synthetic_users():
    """Related users with personal tilts: MTL beats the pooled model and is at least near independent."""
    X, y, tasks = synthetic_users(n_users=12, n_per_user=40, n_features=6, spread=1.0, seed=0)
    table = compare_mtl_pooled_independent(X, y, tasks, n_folds=3, random_state=0)
    mtl = "multi-task (ADMM, alpha=0.5)"
    assert set(table) == {mtl, "pooled (one SVM)", "independent (SVM per user)"}
    f1 = {k: v["f1_mean"] for k, v in table.items()}
    assert all(0.0 <= v <= 1.0 for v in f1.values())
    assert f1[mtl] > f1["pooled (one SVM)"]
