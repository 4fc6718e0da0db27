"""Per-task w-step solvers of the ADMM multi-task learner.

Both solvers minimise the decoupled per-task subproblem of the ADMM w-step
(spec ``donini-easymkl-komd-climbtheworld-admm.md`` §4.3 step (1), thesis Eq. 13.8)::

    min_w  sum_i max(0, 1 - y_i <w, x_i>)  +  (c / 2) ||w||^2  +  <q, w>

with ``c = rho1 + eta`` and ``q = y_t - eta * z_t`` (the ADMM dual and
consensus vectors of the task). Keeping the subproblem in this neutral form
lets both solvers be tested on their own against a generic optimiser.

- :func:`solve_task_dual` is exact up to a dual-gradient tolerance: it solves
  the box-constrained dual by coordinate descent. The tests of the ADMM learner
  use it.
- :func:`solve_task_sgd` is Algorithm 4 of the thesis (spec §4.4): projected
  SGD for strongly convex functions with suffix averaging.
"""

import numba
import numpy as np

__all__ = ["solve_task_dual", "solve_task_sgd", "task_objective"]


def task_objective(w, X, y, q, c):
    """Primal objective of the per-task w-step subproblem (spec §4.3 (1)).

    Parameters
    ----------
    w : ndarray of shape (n_features,)
        Candidate weight vector.
    X : ndarray of shape (n_samples, n_features)
        Task samples.
    y : ndarray of shape (n_samples,)
        Labels in {-1, +1}.
    q : ndarray of shape (n_features,)
        Linear term ``y_t - eta * z_t``.
    c : float
        Quadratic weight ``rho1 + eta`` (> 0).

    Returns
    -------
    float
        ``sum(hinge) + c/2 ||w||^2 + <q, w>``.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[1.0, 0.0], [0.0, 1.0]]); y = np.array([1.0, -1.0])
    >>> float(task_objective(np.zeros(2), X, y, np.zeros(2), 1.0))
    2.0
    """
    margins = y * (X @ w)
    return np.maximum(0.0, 1.0 - margins).sum() + 0.5 * c * (w @ w) + q @ w


@numba.njit(cache=True, nogil=True)
def _dual_coordinate_descent(Xy, sq_norms, q, c, dual, tol, max_sweeps):  # pragma: no cover - compiled
    """Cyclic dual coordinate descent (Hsieh et al. 2008) on the box dual; updates ``dual`` in place.

    Keeps ``w = (Xy^T a - q) / c`` in step with the duals so each coordinate
    costs two d-vector operations. Stops when the largest projected gradient
    of a sweep is at most ``tol``. Returns ``w``.
    """
    m, d = Xy.shape
    w = (Xy.T @ dual - q) / c
    for _ in range(max_sweeps):
        worst = 0.0
        for i in range(m):
            grad = Xy[i] @ w - 1.0
            if sq_norms[i] == 0.0:
                # A zero row never moves w, and its gradient is -1: the optimum is a = 1.
                dual[i] = 1.0
                continue
            if dual[i] <= 0.0:
                projected = min(grad, 0.0)
            elif dual[i] >= 1.0:
                projected = max(grad, 0.0)
            else:
                projected = grad
            if projected != 0.0:
                worst = max(worst, abs(projected))
                new = min(max(dual[i] - grad * c / sq_norms[i], 0.0), 1.0)
                w += (new - dual[i]) / c * Xy[i]
                dual[i] = new
        if worst <= tol:
            break
    return w


def solve_task_dual(X, y, q, c, *, dual_init=None, tol=1e-9, max_sweeps=100_000):
    """Exact solver of the per-task subproblem through its box-constrained dual.

    Writing the hinge as ``max_{a in [0, 1]} a (1 - y <w, x>)`` and minimising
    over ``w`` gives ``w(a) = (X^T (a * y) - q) / c`` and the dual [D]::

        max_{a in [0, 1]^m}  sum(a) - ||X^T (a * y) - q||^2 / (2 c)

    whose gradient component ``i`` is ``1 - y_i <x_i, w(a)>``. There is no
    equality constraint because the formulation has no bias (spec §4.1), so the
    dual separates into one-dimensional box problems per coordinate: cyclic
    dual coordinate descent (liblinear's method, compiled with numba) solves
    each exactly and converges linearly; strong duality then makes ``w(a)``
    the primal optimum.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
        Task samples.
    y : ndarray of shape (n_samples,)
        Labels in {-1, +1}.
    q : ndarray of shape (n_features,)
        Linear term ``y_t - eta * z_t`` of the w-step.
    c : float
        Quadratic weight ``rho1 + eta`` (> 0).
    dual_init : ndarray of shape (n_samples,), default=None
        Starting dual point, e.g. the solution of the previous ADMM iteration,
        whose ``q`` differs little: this warm start cuts the sweeps several-fold.
        ``None`` starts from zeros. It is not modified.
    tol : float, default=1e-9
        Largest projected dual gradient allowed at the end.
    max_sweeps : int, default=100000
        Cap on passes over the samples.

    Returns
    -------
    w : ndarray of shape (n_features,)
        Minimiser of the per-task subproblem.
    dual : ndarray of shape (n_samples,)
        Dual solution in ``[0, 1]``, to warm-start the next call.

    Examples
    --------
    Without data the minimiser of ``c/2 ||w||^2 + <q, w>`` is ``-q / c``:

    >>> import numpy as np
    >>> w, _ = solve_task_dual(np.empty((0, 2)), np.empty(0), np.array([2.0, -4.0]), 2.0)
    >>> w.tolist()
    [-1.0, 2.0]
    """
    Xy = np.ascontiguousarray(X * y[:, None], dtype=np.float64)
    dual = np.zeros(X.shape[0]) if dual_init is None else np.array(dual_init, dtype=np.float64)
    w = _dual_coordinate_descent(
        Xy, np.einsum("ij,ij->i", Xy, Xy), np.asarray(q, dtype=np.float64), float(c), dual, tol, max_sweeps
    )
    return w, dual


def solve_task_sgd(X, y, q, c, *, n_steps, radius, seed):
    """Algorithm 4 of the thesis: projected SGD with suffix averaging (spec §4.4).

    Minimises ``F_t(w) = (1/m)[sum_i h(y_i <w, x_i>) + <q, w>] + (gamma/2)||w||^2``
    with ``gamma = c / m``, which is the per-task subproblem divided by ``m``.
    Step ``k`` (1-based) samples ``i`` uniformly with replacement, moves along
    ``u = gamma w + q/m - [y_i <w, x_i> < 1] y_i x_i`` with step ``1/(k gamma)``
    and projects onto the ball of radius ``radius``. The returned vector is the
    mean of the iterates of the second half (the thesis's ``(2/n) sum``), which
    is what gives the ``O(1/(gamma n))`` rate for strongly convex objectives.
    Spec errata row 27: the direction uses ``1/m_t``, not ``1/m``.

    Parameters
    ----------
    X : ndarray of shape (n_samples, n_features)
        Task samples (at least one row).
    y : ndarray of shape (n_samples,)
        Labels in {-1, +1}.
    q : ndarray of shape (n_features,)
        Linear term ``y_t - eta * z_t`` of the w-step.
    c : float
        Quadratic weight ``rho1 + eta`` (> 0).
    n_steps : int
        Number of SGD steps ``n`` (at least 2).
    radius : float
        Radius of the projection ball.
    seed : int or numpy.random.Generator
        Seed of the sampling of ``i``; a fixed seed gives the same result
        wherever the task runs (serial or on a Dask worker).

    Returns
    -------
    w : ndarray of shape (n_features,)
        Suffix-averaged iterate.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> X = rng.normal(size=(50, 3)); y = np.sign(X[:, 0])
    >>> w = solve_task_sgd(X, y, np.zeros(3), 1.0, n_steps=2000, radius=100.0, seed=0)
    >>> bool(w[0] > abs(w[1]) and w[0] > abs(w[2]))
    True
    """
    m = X.shape[0]
    gamma = c / m
    q_over_m = q / m
    picks = np.random.default_rng(seed).integers(0, m, size=n_steps)
    w = np.zeros(X.shape[1])
    tail_sum = np.zeros(X.shape[1])
    first_tail_step = n_steps // 2 + 1
    for k, i in enumerate(picks, start=1):
        direction = gamma * w + q_over_m
        if y[i] * (X[i] @ w) < 1.0:
            direction = direction - y[i] * X[i]
        w = w - direction / (k * gamma)
        norm = np.sqrt(w @ w)
        if norm > radius:
            w = w * (radius / norm)
        if k >= first_tail_step:
            tail_sum += w
    return tail_sum / (n_steps - first_tail_step + 1)
