"""Server-side solvers (spec §1.4-1.5) and their estimators against independent oracles."""
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import minimize, minimize_scalar
from sklearn.exceptions import ConvergenceWarning

from stairsense.models.kernel_machines._kernel_access import LinearKernel, PrecomputedKernel, RowOracleKernel
from stairsense.models.kernel_machines._estimators import KernelMachineClassifier, KernelMachineRegressor
from stairsense.models.kernel_machines._solver import _sweep_order, kernel_machine_objective, solve_kernel_machine
from stairsense.models.kernel_machines._losses import LOSS_NAMES, Loss

PARAMS = {"epsilon": 0.2, "delta": 0.5}
ORDERS = ["cyclic", "symmetric", "random"]


def _problem(n=30, seed=0, loss="hinge"):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    K = np.exp(-0.5 * ((X[:, None] - X[None]) ** 2).sum(-1))  # RBF on distinct points: positive definite
    target = np.sin(X[:, 0]) + 0.3 * rng.normal(size=n)
    y = np.where(target >= 0, 1.0, -1.0) if Loss(loss).is_margin else target
    return X, K, y


def _solve(K, y, loss, **kw):
    kw = {"C": 2.0, "tol": 1e-11, "max_iter": 100_000, "random_state": 0, **PARAMS, **kw}
    return solve_kernel_machine(K, y, loss, **kw)


@pytest.mark.parametrize("method", ["cd", "fp"])
@pytest.mark.parametrize("order", ORDERS)
def test_square_loss_equals_closed_form_with_sample_weights(method, order):
    # RLS row of spec §1.3: c = (K + diag(1/C_i))^-1 y.
    _, K, y = _problem(loss="square")
    weights = np.random.default_rng(3).uniform(0.5, 2.0, y.shape[0])
    sol = _solve(K, y, "square", method=method, order=order, sample_weight=weights, alpha="spectral")
    expected = np.linalg.solve(K + np.diag(1.0 / (2.0 * weights)), y)
    np.testing.assert_allclose(sol.coef, expected, atol=1e-8)
    np.testing.assert_allclose(sol.fitted, K @ expected, atol=1e-8)


@pytest.mark.parametrize("order", ORDERS)
@pytest.mark.parametrize("loss", LOSS_NAMES)
def test_fixed_point_and_coordinate_descent_agree_on_the_objective(loss, order):
    _, K, y = _problem(n=20, loss=loss)
    cd = _solve(K, y, loss, order=order, tol=1e-10)
    fp = _solve(K, y, loss, method="fp", alpha="spectral", tol=1e-10)
    assert cd.converged and fp.converged
    assert cd.objective == pytest.approx(fp.objective, rel=1e-7)
    np.testing.assert_allclose(cd.fitted, fp.fitted, atol=1e-5)


def test_hinge_matches_generic_solver_on_the_dual_box_qp():
    # No-bias SVM dual: max_a sum a - a'(YKY)a/2, 0 <= a <= C; strong duality gives F* = dual*, c = y*a.
    _, K, y = _problem()
    C = 2.0
    Q = y[:, None] * K * y[None, :]
    res = minimize(
        lambda a: 0.5 * a @ Q @ a - a.sum(), np.zeros(y.shape[0]), jac=lambda a: Q @ a - 1.0,
        bounds=[(0.0, C)] * y.shape[0], method="L-BFGS-B", options={"ftol": 1e-15, "gtol": 1e-12, "maxiter": 10_000},
    )
    sol = _solve(K, y, "hinge", C=C)
    assert sol.objective == pytest.approx(-res.fun, rel=1e-7)
    np.testing.assert_allclose(sol.coef, y * res.x, atol=1e-4)


def _conjugate(loss, y, C, s):
    """f*(s) = sup_z s z - C L(y, z), by a bounded 1-D search (independent of the solver's formulas)."""
    res = minimize_scalar(
        lambda z: -(s * z - float(loss.value(np.array([y]), np.array([z]), C)[0])),
        bounds=(-200.0, 200.0), method="bounded", options={"xatol": 1e-11},
    )
    return -res.fun


@pytest.mark.parametrize("loss", LOSS_NAMES)
def test_every_coordinate_step_decreases_the_dual_by_kii_t2_over_2(loss):
    # Spec §1.5 states F(c_new) <= F(c) - k_ii t^2/2 (thesis A.4).  That holds for the dual
    # D(c) = sum_i f_i*(-c_i) + c'Kc/2, which each step minimises exactly along c_i; the primal
    # F(c) = f(Kc) + c'Kc/2 can rise (thesis A.3 is wrong off the diagonal; see the report).
    _, K, y = _problem(n=12, loss=loss)
    lossf = Loss(loss, **PARAMS)
    trace = [np.zeros(y.shape[0])]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        _solve(K, y, loss, tol=1e-6, max_iter=8, callback=lambda c: trace.append(c.copy()))
    assert len(trace) > 12 * 5
    for before, after in zip(trace[:-1], trace[1:]):
        moved = np.flatnonzero(after != before)
        assert moved.size <= 1
        if moved.size:
            i = moved[0]
            t = after[i] - before[i]
            gain = (
                _conjugate(lossf, y[i], 2.0, -before[i]) - _conjugate(lossf, y[i], 2.0, -after[i])
                + 0.5 * (before @ K @ before - after @ K @ after)
            )
            assert gain >= K[i, i] * t**2 / 2 - 1e-7


def test_the_primal_objective_is_not_monotone_under_coordinate_descent():
    # Counter-example to the printed A.4: on this RBF problem a hinge CD step raises F.
    _, K, y = _problem(n=15, loss="hinge")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        objective = _solve(K, y, "hinge", max_iter=5, order="cyclic", callback=None).history["objective"]
    lossf, Cv, trace = Loss("hinge"), np.full(15, 2.0), [np.zeros(15)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        _solve(K, y, "hinge", max_iter=5, order="cyclic", callback=lambda c: trace.append(c.copy()))
    values = [kernel_machine_objective(lossf, y, Cv, c, K @ c) for c in trace]
    assert np.max(np.diff(values)) > 1e-3 and len(objective) == 5


@pytest.mark.parametrize("alpha", ["trace", "spectral"])
@pytest.mark.parametrize("loss", LOSS_NAMES)
def test_fixed_point_iterates_are_fejer_monotone(loss, alpha):
    # Spec §1.4 (A.2): ||c+ - c*||^2 <= ||c - c*||^2 - beta ||v||^2, v = range(K) part of c - c* (all of it: K is PD).
    _, K, y = _problem(n=15, loss=loss)
    c_star = _solve(K, y, loss, tol=1e-13).coef
    trace = [np.zeros(y.shape[0])]
    step = 1.0 / np.trace(K) if alpha == "trace" else 1.0 / np.linalg.eigvalsh(K)[-1]
    _solve(K, y, loss, method="fp", alpha=alpha, tol=0.0, max_iter=200, callback=lambda c: trace.append(c.copy()))
    lam = np.linalg.eigvalsh(K)
    beta = np.min(step * lam * (2 - step * lam))
    dist = [np.sum((c - c_star) ** 2) for c in trace]
    for k in range(len(trace) - 1):
        assert dist[k + 1] <= dist[k] - beta * dist[k] + 1e-9


@pytest.mark.parametrize("loss", LOSS_NAMES)
@pytest.mark.parametrize("representation", ["dense", "linear", "linear_sparse"])
def test_compiled_sweeps_equal_the_numpy_reference(loss, representation):
    X, K, y = _problem(n=25, loss=loss)
    X = np.where(np.abs(X) > 0.5, X, 0.0)  # some zeros, so the sparse path skips entries
    kernel = {"dense": X @ X.T, "linear": LinearKernel(X), "linear_sparse": LinearKernel(sp.csr_matrix(X))}[representation]
    kw = {"tol": 1e-9, "max_iter": 300, "order": "random"}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        fast, ref = _solve(kernel, y, loss, **kw), _solve(kernel, y, loss, compiled=False, **kw)
    assert fast.n_iter == ref.n_iter
    np.testing.assert_allclose(fast.coef, ref.coef, atol=1e-10)


@settings(max_examples=25, deadline=None)
@given(
    n=st.integers(2, 12), m=st.integers(1, 5), seed=st.integers(0, 2**16),
    loss=st.sampled_from(LOSS_NAMES), order=st.sampled_from(ORDERS),
)
def test_linear_kernel_equals_its_gram_matrix_and_row_oracle(n, m, seed, loss, order):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, m)) * (rng.random((n, m)) < 0.7)
    y = rng.choice([-1.0, 1.0], n) if Loss(loss).is_margin else rng.normal(size=n)
    K = X @ X.T
    kw = {"tol": 1e-9, "max_iter": 200, "order": order, "shrinking": False}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        linear = _solve(LinearKernel(sp.csr_matrix(X)), y, loss, **kw)
        gram = _solve(K, y, loss, **kw)
        oracle = _solve(RowOracleKernel(lambda i: K[i], np.diag(K), cache_rows=3), y, loss, **kw)
    # Same order and the same exact coordinate steps: only round-off differs.
    np.testing.assert_allclose(linear.coef, gram.coef, atol=1e-8)
    np.testing.assert_allclose(oracle.coef, gram.coef, atol=1e-8)
    np.testing.assert_allclose(linear.weights, X.T @ linear.coef, atol=1e-10)


def test_row_cache_reuses_rows():
    _, K, y = _problem(n=10)
    oracle = RowOracleKernel(lambda i: K[i], np.diag(K), cache_rows=10)
    _solve(oracle, y, "hinge", tol=1e-6, track_objective=False)
    assert oracle.misses == 10 and oracle.hits > 10


def test_stopping_rule_stops_at_the_first_sweep_that_meets_it():
    # C < 1 bounds |c| by C < 1, so the rule reads max|h| <= tol; no earlier sweep may meet it.
    _, K, y = _problem()
    sol = _solve(K, y, "hinge", C=0.5, tol=1e-5, shrinking=False)
    changes = np.array(sol.history["max_change"])
    assert sol.converged and changes[-1] <= 1e-5 and np.all(changes[:-1] > 1e-5)
    assert len(sol.history["objective"]) == sol.n_iter


def test_max_iter_reached_warns_and_reports_not_converged():
    _, K, y = _problem()
    with pytest.warns(ConvergenceWarning, match="max_iter=2"):
        sol = _solve(K, y, "absolute", max_iter=2)
    assert not sol.converged and sol.n_iter == 2


def test_warm_start_from_the_solution_needs_one_sweep():
    _, K, y = _problem()
    first = _solve(K, y, "squared_hinge", tol=1e-10)
    again = _solve(K, y, "squared_hinge", tol=1e-10, c0=first.coef)
    assert again.n_iter == 1 and again.objective == pytest.approx(first.objective, rel=1e-12)


def test_zero_weight_and_zero_row_samples_drop_out():
    X, K, y = _problem(loss="square")
    weights = np.ones(y.shape[0]); weights[:5] = 0.0
    weighted = _solve(K, y, "square", sample_weight=weights)
    removed = _solve(K[5:, 5:], y[5:], "square")
    np.testing.assert_allclose(weighted.coef[5:], removed.coef, atol=1e-9)
    Xz = X.copy(); Xz[0] = 0.0  # k_00 = 0: dropped before CD (spec §1.1)
    sol = _solve(LinearKernel(Xz), y, "square", c0=np.ones(y.shape[0]))
    assert sol.coef[0] == 0.0 and sol.converged


def test_order_aitken_is_a_deprecated_name_of_symmetric():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(30, 4)); y = np.sign(X[:, 0] + 0.1)
    new = solve_kernel_machine(X @ X.T, y, "hinge", order="symmetric", tol=1e-8)
    with pytest.warns(DeprecationWarning, match="use order='symmetric'"):
        old = solve_kernel_machine(X @ X.T, y, "hinge", order="aitken", tol=1e-8)
    np.testing.assert_array_equal(old.coef, new.coef)
    params = dict(kernel="linear", loss="squared_hinge", C=0.1)
    estimator = KernelMachineClassifier(order="aitken", **params)
    with pytest.warns(DeprecationWarning, match="use order='symmetric'"):
        estimator.fit(X, y)
    reference = KernelMachineClassifier(order="symmetric", **params).fit(X, y)
    np.testing.assert_array_equal(estimator.dual_coef_, reference.dual_coef_)


def test_sweep_orders_are_essentially_cyclic():
    idx = np.arange(5)
    assert list(_sweep_order("cyclic", idx, 3, None)) == [0, 1, 2, 3, 4]
    assert list(_sweep_order("symmetric", idx, 0, None)) == [0, 1, 2, 3, 4]
    assert list(_sweep_order("symmetric", idx, 1, None)) == [3, 2, 1, 0]
    perm = _sweep_order("random", idx, 0, np.random.default_rng(0))
    assert sorted(perm) == [0, 1, 2, 3, 4]


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"loss": "hinge", "y": np.linspace(-1, 1, 30)}, r"labels in \{-1, \+1\}"),
        ({"method": "fp", "alpha": 10.0}, "step-size rule of Thm 9"),
        ({"c0": np.zeros(3)}, r"c0 must have shape \(30,\)"),
        ({"C": -1.0}, "C must be a finite number > 0"),
        ({"sample_weight": -np.ones(30)}, "sample_weight must be 30 finite non-negative"),
        ({"order": "zigzag"}, "order must be one of"),
    ],
)
def test_bad_solver_input_is_named(kwargs, match):
    _, K, y = _problem()
    kwargs = {"y": y, **kwargs}
    with pytest.raises(ValueError, match=match):
        solve_kernel_machine(K, kwargs.pop("y"), kwargs.pop("loss", "square"), **kwargs)


def test_asymmetric_precomputed_kernel_is_refused():
    with pytest.raises(ValueError, match="not symmetric"):
        PrecomputedKernel(np.array([[1.0, 0.5], [0.0, 1.0]]))


# The solvers stop on the relative duality gap; estimator-level equalities below need it near zero.
_TIGHT = {"tol": 1e-12, "max_iter": 200_000, "random_state": 0}


def test_linear_estimator_equals_the_solver_with_a_constant_column():
    X, _, y = _problem(loss="hinge")
    clf = KernelMachineClassifier(kernel="linear", intercept_scaling=2.0, **_TIGHT).fit(X, y)
    sol = _solve(LinearKernel(np.hstack([X, np.full((30, 1), 2.0)])), y, "hinge", C=1.0)
    np.testing.assert_allclose(np.r_[clf.coef_[0], clf.intercept_[0] / 2.0], sol.weights, atol=1e-8)


def test_estimator_warm_start_reuses_the_previous_coefficients():
    X, _, y = _problem(loss="square")
    reg = KernelMachineRegressor(warm_start=True, C=5.0, **_TIGHT).fit(X, y)
    cold = reg.n_iter_[0]
    reg.fit(X, y)
    assert reg.n_iter_[0] <= 2 < cold  # a fresh random order may need one more sweep


def test_precomputed_kernel_estimator_equals_rbf():
    X, K, y = _problem(loss="hinge")
    rbf = KernelMachineClassifier(gamma=0.5, **_TIGHT).fit(X, y)
    pre = KernelMachineClassifier(kernel="precomputed", **_TIGHT).fit(K, y)
    np.testing.assert_allclose(pre.decision_function(K), rbf.decision_function(X), atol=1e-8)
