"""Server-side solvers for regularized kernel machines (spec §1, Dinuzzo thesis ch. 2).

Both solvers minimise (spec §1.1, eq. 2.2)

    F(c) = sum_i C_i L(y_i, (Kc)_i) + c'Kc / 2

for the losses of ``stairsense.models.kernel_machines._losses`` and any of the kernel representations of
``stairsense.models.kernel_machines._kernel_access``:

* ``method="fp"``: the fixed-point (non-linear Jacobi) iteration ``c <- -J_alpha(alpha Kc - c)``
  of spec §1.4 (eq. 2.10), convergent for ``0 < alpha < 2/||K||_2`` (Thm 9);
* ``method="cd"``: coordinate descent (non-linear Gauss-Seidel, exact line search per
  coordinate) of spec §1.5 (Algorithms 1-2, Thm 11) with an essentially cyclic order.

Stopping rule (spec §1.4/§1.5 proposals, the thesis gives none): after iteration ``k``
(one fixed-point step, or one coordinate-descent sweep), stop when

    max_i |h_i| <= tol * max(1, max_i |c_i|),

where for the fixed point ``h = c^{k+1} - c^k`` and for coordinate descent ``h_i`` is the
most recent change of coordinate ``i`` (Algorithm 1's ``h``; every index is visited in the
first sweep, so no residual pass at ``c0`` is needed).  ``max_iter`` caps the iterations.

Erratum to spec §1.5 / thesis (A.3)-(A.4), found by the tests: a coordinate step is an exact
line search of the *dual* ``D(c) = sum_i f_i*(-c_i) + c'Kc/2`` (it makes
``-c_i in df_i((Kc)_i)``), so ``D`` drops by at least ``k_ii t^2/2`` per step.  The primal
``F(c)`` of (2.2) is *not* monotone along coordinate descent when K is not diagonal (the
thesis's step ``0 in <k_i, df(KA_i c) + A_i c>`` does not follow), so ``history["objective"]``
of ``method="cd"`` may rise between sweeps; it still converges to ``min F``.
"""
from __future__ import annotations

import numbers
import warnings
from dataclasses import dataclass, field

import numpy as np
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_random_state

from ._cd_compiled import sweep_dense, sweep_linear_csr, sweep_linear_dense
from ._kernel_access import LinearKernel, PrecomputedKernel, as_kernel_access
from ._losses import Loss

__all__ = ["KernelMachineSolution", "kernel_machine_objective", "solve_kernel_machine"]

_METHODS = ("fp", "cd")
_ORDERS = ("cyclic", "symmetric", "random")
# The forward-then-backward sweep was first called "aitken" (it is no Aitken acceleration).
_DEPRECATED_ORDERS = {"aitken": "symmetric"}
# Consecutive zero steps before coordinate descent leaves a coordinate out (shrinking).
_SHRINK_AFTER = 2


@dataclass
class KernelMachineSolution:
    """Result of ``solve_kernel_machine``.

    Attributes
    ----------
    coef : ndarray of shape (n_samples,)
        The expansion coefficients ``c`` of ``g(x) = sum_i c_i K(x_i, x)``.
    fitted : ndarray of shape (n_samples,)
        ``z = Kc``, the fitted values on the training samples (unique even when c is not, Lemma 12).
    weights : ndarray of shape (n_features,) or None
        ``w = X'c`` for a ``LinearKernel``, else None.
    objective : float
        ``F(c)`` at the returned ``c``.
    n_iter : int
        Fixed-point steps or coordinate-descent sweeps run.
    converged : bool
        Whether the stopping rule (module docstring) was met before ``max_iter``.
    history : dict of lists
        Per iteration: ``"max_change"`` (the ``max |h_i|`` of the stopping rule) and,
        when tracked, ``"objective"`` (``F`` after the iteration).
    """

    coef: np.ndarray
    fitted: np.ndarray
    weights: np.ndarray | None
    objective: float
    n_iter: int
    converged: bool
    history: dict = field(default_factory=dict)


def kernel_machine_objective(loss, y, C, c, z):
    """``F(c) = sum_i C_i L(y_i, z_i) + c'z/2`` with ``z = Kc`` (spec §1.1, eq. 2.2)."""
    return float(np.sum(loss.value(y, z, C)) + 0.5 * (c @ z))


def _check_targets(loss, y, n):
    y = np.asarray(y, dtype=float)
    if y.shape != (n,):
        raise ValueError(f"y must have shape ({n},), one target per kernel row; got {y.shape}.")
    if not np.all(np.isfinite(y)):
        raise ValueError("y contains NaN or infinity; remove or impute those samples.")
    if loss.is_margin and not np.all(np.abs(y) == 1):
        bad = np.unique(y[np.abs(y) != 1])[:5]
        raise ValueError(
            f"The {loss.name} loss needs labels in {{-1, +1}}; found {bad.tolist()}. "
            "Encode the two classes as -1 and +1 (the estimators do this for you)."
        )
    return np.ascontiguousarray(y)


def _per_sample_C(C, sample_weight, n):
    if not (isinstance(C, numbers.Real) and np.isfinite(C) and C > 0):
        raise ValueError(f"C must be a finite number > 0, got {C!r}. It weighs the loss against c'Kc/2.")
    if sample_weight is None:
        return np.full(n, float(C))
    sample_weight = np.asarray(sample_weight, dtype=float)
    if sample_weight.shape != (n,) or not np.all(np.isfinite(sample_weight)) or np.any(sample_weight < 0):
        raise ValueError(
            f"sample_weight must be {n} finite non-negative numbers (one per sample); got shape "
            f"{sample_weight.shape}. Per-sample weights multiply C (spec §1.3 notes)."
        )
    return np.ascontiguousarray(float(C) * sample_weight)


def _fp_step_size(alpha, access):
    """Step size of the fixed-point iteration, checked against Thm 9 (``alpha < 2/||K||_2``)."""
    if isinstance(alpha, str):
        if alpha == "trace":
            return 1.0 / access.trace()
        if alpha == "spectral":
            return 1.0 / access.spectral_norm()
        raise ValueError(f"alpha must be 'trace', 'spectral' or a number > 0, got {alpha!r}.")
    norm = access.spectral_norm()
    if not (isinstance(alpha, numbers.Real) and 0 < alpha < 2.0 / norm):
        raise ValueError(
            f"alpha={alpha!r} breaks the step-size rule of Thm 9: need 0 < alpha < 2/||K||_2 = "
            f"{2.0 / norm:.6g}. Use alpha='spectral' (1/||K||_2) or 'trace' (1/tr K)."
        )
    return float(alpha)


def _sweep_order(order, indices, sweep, rng):
    """Index order of one sweep over ``indices``; every rule is essentially cyclic (spec §1.5, T <= 2l)."""
    if order == "cyclic":
        return indices
    if order == "symmetric":
        return indices if sweep % 2 == 0 else indices[-2::-1]
    return rng.permutation(indices)


def _reference_sweep(access, loss, y, C, diag, c, state, idx, h, callback):
    """Pure-numpy coordinate steps (Algorithm 1/2); the oracle for the compiled sweeps."""
    for i in idx:
        v = access.coordinate_value(i, c, state) / diag[i] - c[i]
        new = loss.neg_resolvent(np.array([v]), y[i : i + 1], C[i : i + 1], 1.0 / diag[i])[0]
        h[i] = new - c[i]
        c[i] = new
        if h[i] != 0.0:
            access.coordinate_changed(i, h[i], state)
        if callback is not None:
            callback(c)


def _compiled_sweep(access, loss, y, C, diag, c, state, idx, h):
    """Dispatch one sweep to the numba loop of the kernel's representation."""
    args = (diag, y, C, c)
    tail = (idx, loss.code, loss.epsilon, loss.delta, h)
    if isinstance(access, PrecomputedKernel):
        sweep_dense(access.K, *args, *tail)
    elif access.is_sparse:
        X = access.X
        sweep_linear_csr(X.indptr, X.indices, X.data, *args, state, *tail)
    else:
        sweep_linear_dense(access.X, *args, state, *tail)


def solve_kernel_machine(
    kernel,
    y,
    loss="hinge",
    *,
    C=1.0,
    sample_weight=None,
    epsilon=0.1,
    delta=1.0,
    method="cd",
    order="random",
    alpha="trace",
    tol=1e-6,
    max_iter=1000,
    c0=None,
    random_state=None,
    shrinking=True,
    track_objective=True,
    compiled=True,
    callback=None,
):
    """Minimise ``f(Kc) + c'Kc/2`` by fixed point or coordinate descent (spec §1.4-1.5, §1.8).

    Parameters
    ----------
    kernel : ndarray of shape (n_samples, n_samples), PrecomputedKernel, RowOracleKernel or LinearKernel
        How to reach K. A plain array is a precomputed Gram matrix.
    y : array-like of shape (n_samples,)
        Targets; +-1 labels for the margin losses (hinge, squared_hinge, logistic).
    loss : str or Loss, default="hinge"
        A name of ``LOSS_NAMES`` (then ``epsilon``/``delta`` apply) or a ``Loss``.
    C : float, default=1.0
        Loss weight, ``f_i = C * sample_weight_i * L(y_i, .)``.
    sample_weight : array-like of shape (n_samples,), default=None
        Non-negative per-sample multipliers of C; a zero removes the sample.
    epsilon, delta : float
        Parameters of the epsilon-insensitive and Huber losses.
    method : {"cd", "fp"}, default="cd"
        Coordinate descent (needs a separable f, always the case here) or fixed point.
    order : {"random", "cyclic", "symmetric"}, default="random"
        Coordinate order per sweep (``method="cd"``): a fresh random permutation, 1..l, or
        the symmetric sweep, forward 1..l then backward l-1..1 on alternate sweeps.
        ``"aitken"``, its former name, still works but is deprecated.
    alpha : {"trace", "spectral"} or float, default="trace"
        Fixed-point step: ``1/tr K``, ``1/||K||_2``, or a number in ``(0, 2/||K||_2)`` (Thm 9).
    tol : float, default=1e-6
        Tolerance of the stopping rule in the module docstring.
    max_iter : int, default=1000
        Maximum fixed-point steps or coordinate-descent sweeps.
    c0 : array-like of shape (n_samples,), default=None
        Warm start (zeros if None).
    random_state : int, RandomState or None
        Seeds the random permutations of ``order="random"``.
    shrinking : bool, default=True
        Coordinate descent skips coordinates whose step was zero twice in a row, then
        confirms convergence with a full sweep (see ``_run_coordinate_descent``).
    track_objective : bool, default=True
        Record ``F`` after every iteration in ``history["objective"]`` (one extra ``Kc``).
    compiled : bool, default=True
        Run coordinate descent through the numba sweeps; False runs the pure-numpy
        reference loop (always used for a ``RowOracleKernel`` or with a ``callback``).
    callback : callable, default=None
        ``callback(c)`` after every fixed-point step and after every single coordinate
        step (so coordinate descent then runs the reference loop). For tests and monitoring.

    Returns
    -------
    KernelMachineSolution

    Examples
    --------
    Square loss has the closed form ``c = (K + I/C)^-1 y`` (spec §1.3, RLS):

    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(20, 3)); y = X @ [1.0, -2.0, 0.5]
    >>> sol = solve_kernel_machine(X @ X.T, y, "square", C=1.0, tol=1e-10, random_state=0)
    >>> bool(np.allclose(sol.coef, np.linalg.solve(X @ X.T + np.eye(20), y)))
    True
    >>> sol.converged
    True
    """
    access = as_kernel_access(kernel)
    n = access.n_samples
    if not isinstance(loss, Loss):
        loss = Loss(loss, epsilon=epsilon, delta=delta)
    y = _check_targets(loss, y, n)
    C_vec = _per_sample_C(C, sample_weight, n)
    order = _check_options(method, order, tol, max_iter)
    diag = np.ascontiguousarray(access.diagonal())
    c, active = _start_coef(c0, diag, n)

    history = {"max_change": []}
    if track_objective:
        history["objective"] = []
    if method == "fp":
        run = _run_fixed_point(access, loss, y, C_vec, c, _fp_step_size(alpha, access), tol, max_iter, history, callback)
    else:
        rng = check_random_state(random_state)
        use_compiled = compiled and callback is None and isinstance(access, (PrecomputedKernel, LinearKernel))
        run = _run_coordinate_descent(
            access, loss, y, C_vec, diag, c, active, order, rng, shrinking, tol, max_iter, history,
            use_compiled, callback,
        )
    n_iter, converged = run
    return _solution(access, loss, y, C_vec, c, n_iter, converged, history, method, tol, max_iter)


def _check_options(method, order, tol, max_iter):
    """Validate the solver options; the canonical name of ``order`` (deprecated names warn)."""
    if method not in _METHODS:
        raise ValueError(f"method must be one of {_METHODS}, got {method!r}.")
    if order in _DEPRECATED_ORDERS:
        warnings.warn(f"order={order!r} is deprecated (it is a forward-then-backward sweep, not Aitken "
                      f"acceleration); use order={_DEPRECATED_ORDERS[order]!r}.", DeprecationWarning, stacklevel=3)
        order = _DEPRECATED_ORDERS[order]
    if order not in _ORDERS:
        raise ValueError(f"order must be one of {_ORDERS}, got {order!r}.")
    if not (isinstance(tol, numbers.Real) and tol >= 0):
        raise ValueError(f"tol must be a number >= 0, got {tol!r}.")
    if not (isinstance(max_iter, numbers.Integral) and max_iter >= 1):
        raise ValueError(f"max_iter must be an integer >= 1, got {max_iter!r}.")
    return order


def _start_coef(c0, diag, n):
    """The starting coefficients and the indices of the examples that can move (``k_ii > 0``)."""
    c = np.zeros(n) if c0 is None else np.array(c0, dtype=float)
    if c.shape != (n,):
        raise ValueError(f"c0 must have shape ({n},), one coefficient per sample; got {c.shape}.")
    # Spec §1.1: k_ii = 0 means a zero row and column; the example cannot influence Kc.
    c[diag <= 0] = 0.0
    return c, np.flatnonzero(diag > 0)


def _solution(access, loss, y, C_vec, c, n_iter, converged, history, method, tol, max_iter):
    """Warn when the solver stopped on ``max_iter``; package ``c`` with its fit and objective."""
    if not converged:
        warnings.warn(
            f"{method.upper()} solver did not meet tol={tol:g} within max_iter={max_iter} "
            f"(last max change {history['max_change'][-1]:.3g}). Increase max_iter or tol.",
            ConvergenceWarning,
            stacklevel=3,
        )
    weights = access.weights(c) if isinstance(access, LinearKernel) else None
    z = access.matvec(c)
    return KernelMachineSolution(
        coef=c,
        fitted=z,
        weights=weights,
        objective=kernel_machine_objective(loss, y, C_vec, c, z),
        n_iter=n_iter,
        converged=converged,
        history=history,
    )


def _stop(h_max, c, tol):
    return h_max <= tol * max(1.0, float(np.max(np.abs(c), initial=0.0)))


def _run_fixed_point(access, loss, y, C, c, alpha, tol, max_iter, history, callback):
    """Iteration (2.10): ``z = Kc``, ``v = alpha z - c``, ``c <- -J_alpha(v)`` (spec §1.4)."""
    z = access.matvec(c)
    for k in range(1, max_iter + 1):
        new = loss.neg_resolvent(alpha * z - c, y, C, alpha)
        h_max = float(np.max(np.abs(new - c), initial=0.0))
        c[:] = new
        z = access.matvec(c)
        history["max_change"].append(h_max)
        if "objective" in history:
            history["objective"].append(kernel_machine_objective(loss, y, C, c, z))
        if callback is not None:
            callback(c)
        if _stop(h_max, c, tol):
            return k, True
    return max_iter, False


def _run_coordinate_descent(
    access, loss, y, C, diag, c, active, order, rng, shrinking, tol, max_iter, history, use_compiled, callback
):
    """Sweeps of Algorithm 1/2 until the stopping rule holds (spec §1.5).

    Shrinking (a heuristic the thesis does not have, in the spirit of LIBLINEAR's): a
    coordinate whose step was exactly zero in ``_SHRINK_AFTER`` consecutive visits (a
    dual variable stuck at a bound of a hinge-type loss) is left out of later sweeps.
    Once the shrunk problem meets the stopping rule, one full sweep over every index
    decides: it either confirms the rule for all coordinates or restores them all.
    """
    state = access.start(c)
    # inf: a coordinate not visited yet has an unknown change, so it blocks the stop.
    h = np.full(c.shape[0], np.inf)
    h[diag <= 0] = 0.0
    still = np.zeros(c.shape[0], dtype=np.int64)
    working = active
    for k in range(1, max_iter + 1):
        idx = _sweep_order(order, working, k - 1, rng)
        if use_compiled:
            _compiled_sweep(access, loss, y, C, diag, c, state, idx, h)
        else:
            _reference_sweep(access, loss, y, C, diag, c, state, idx, h, callback)
        h_max = float(np.max(np.abs(h), initial=0.0))
        history["max_change"].append(h_max)
        if "objective" in history:
            history["objective"].append(kernel_machine_objective(loss, y, C, c, access.matvec(c)))
        if not _stop(h_max, c, tol):
            if shrinking:
                still[idx] = np.where(h[idx] == 0.0, still[idx] + 1, 0)
                working = active[still[active] < _SHRINK_AFTER]
            continue
        if working.shape[0] == active.shape[0]:
            return k, True
        # Verification sweep: the shrunk coordinates' h are stale zeros until revisited.
        h[active] = np.inf
        still[:] = 0
        working = active
    return max_iter, False
