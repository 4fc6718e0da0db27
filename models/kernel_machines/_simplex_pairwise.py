"""Least squares over the probability simplex by pairwise (SMO-like) coordinate steps.

This is the d-subproblem of RLS2 (spec dinuzzo-solvers-rls2-client-server-mtl.md §2.3,
"d-subproblem solver: SMO pairwise"): ``min_{d in simplex} ||V d - u||^2``.
"""

import warnings

import numpy as np
from sklearn.exceptions import ConvergenceWarning

__all__ = ["simplex_least_squares"]


def simplex_least_squares(V, u, *, d_init=None, tol=1e-10, max_iter=None):
    """Minimise ``||V d - u||^2`` over the simplex ``{d >= 0, sum(d) = 1}``.

    Pairwise (SMO-like) descent of spec §2.3: each step moves mass from the
    supported coordinate with the largest gradient to the coordinate with the
    smallest gradient, by the exact line minimiser clipped to the mass
    available. When that smallest-gradient coordinate is already supported, an
    exact solve on the support's face replaces the pairwise step (an active-set
    finish, [proposal] in the spec's terms: the thesis only says "SMO-like with
    shrinking"). It stops when the simplex KKT gap ``max_{d_k>0} g_k - min_k g_k``
    falls below ``tol`` times the problem's scale.

    Parameters
    ----------
    V : array-like of shape (n_rows, m)
        Design matrix; in RLS2 its columns are ``K^k c``.
    u : array-like of shape (n_rows,)
        Target; in RLS2 ``y - lambda c / 2``.
    d_init : array-like of shape (m,), default=None
        Feasible starting point (warm start). ``None`` starts at the vertex
        with the smallest gradient, i.e. the best single column.
    tol : float, default=1e-10
        Relative KKT-gap tolerance. The gap is compared with
        ``tol * max(|2 V^T u|_inf, 2 max_k ||V_k||^2)``, so it is invariant
        to rescaling V and u together.
    max_iter : int, default=None
        Cap on pairwise steps; ``None`` means ``100 * m + 1000``. Reaching it
        raises a ``ConvergenceWarning``.

    Returns
    -------
    d : ndarray of shape (m,)
        The minimiser; exactly zero outside its support.

    Notes
    -----
    The problem is ``d^T G d - 2 b^T d`` with ``G = V^T V`` and ``b = V^T u``;
    the gradient ``g = 2 (G d - b)`` is updated in O(m) per step, so after
    forming G (O(n_rows m^2)) the cost does not depend on n_rows. A zero
    curvature along ``e_i - e_j`` means the objective is linear on that edge
    and the whole mass ``d_j`` moves.

    Examples
    --------
    >>> import numpy as np
    >>> V = np.eye(3)
    >>> simplex_least_squares(V, np.array([0.7, 0.5, -1.0])).round(6)
    array([0.6, 0.4, 0. ])
    """
    V = np.asarray(V, dtype=float)
    u = np.asarray(u, dtype=float)
    if V.ndim != 2 or u.shape != (V.shape[0],):
        raise ValueError(
            f"simplex_least_squares expects V of shape (n_rows, m) and u of shape (n_rows,); "
            f"got V {V.shape} and u {u.shape}. Pass one target value per row of V."
        )
    m = V.shape[1]
    G = V.T @ V
    b = V.T @ u
    if d_init is None:
        d = np.zeros(m)
        d[np.argmin(np.diag(G) - 2.0 * b)] = 1.0
    else:
        d = np.array(d_init, dtype=float)
        if d.shape != (m,) or np.any(d < 0) or not np.isclose(d.sum(), 1.0):
            raise ValueError(
                f"d_init must be a point of the simplex with {m} entries (non-negative, summing "
                f"to 1); got shape {d.shape}, min {d.min() if d.size else 'n/a'}, sum "
                f"{d.sum() if d.size else 'n/a'}. Pass a previous solution or None."
            )
        d /= d.sum()
    scale = max(2.0 * np.abs(b).max(initial=0.0), 2.0 * np.diag(G).max(initial=0.0))
    threshold = tol * scale
    if max_iter is None:
        max_iter = 100 * m + 1000
    g = 2.0 * (G @ d - b)
    for _ in range(max_iter):
        receiver = int(np.argmin(g))
        supported = np.flatnonzero(d > 0)
        giver = int(supported[np.argmax(g[supported])])
        gap = g[giver] - g[receiver]
        if gap <= threshold:
            break
        if d[receiver] > 0 and _face_step(G, b, d, supported):
            g = 2.0 * (G @ d - b)
            continue
        curvature = G[receiver, receiver] + G[giver, giver] - 2.0 * G[receiver, giver]
        step = d[giver] if curvature <= 0 else min(d[giver], gap / (2.0 * curvature))
        d[receiver] += step
        if step == d[giver]:
            # Set exactly zero so the support (the selected kernels) is exact.
            d[giver] = 0.0
        else:
            d[giver] -= step
        g += 2.0 * step * (G[:, receiver] - G[:, giver])
    else:
        warnings.warn(
            f"simplex_least_squares stopped after max_iter={max_iter} pairwise steps with KKT gap "
            f"{gap:.3g} > {threshold:.3g}; raise max_iter or tol.",
            ConvergenceWarning,
            stacklevel=2,
        )
    return d


def _face_step(G, b, d, supported):
    """Move d towards the minimiser on the affine hull of its support; True if it decreased.

    Pairwise steps zig-zag when many coordinates are supported and G is ill-conditioned
    (thousands of steps on 100 binary features). Once the best receiver is already
    supported, no coordinate needs to enter, so an exact equality-constrained solve on the
    support finishes the face: go to its minimiser, or as far as feasibility allows, which
    drops the first coordinate that reaches zero (an active-set step). A step that does not
    decrease the objective (singular or round-off) is undone and the caller falls back to
    a pairwise step.
    """
    size = supported.size
    kkt = np.zeros((size + 1, size + 1))
    kkt[:size, :size] = 2.0 * G[np.ix_(supported, supported)]
    kkt[:size, size] = kkt[size, :size] = 1.0
    rhs = np.append(2.0 * b[supported], 1.0)
    target = np.linalg.lstsq(kkt, rhs, rcond=None)[0][:size]
    direction = target - d[supported]
    shrinking = direction < 0
    fraction = min(1.0, np.min(-d[supported][shrinking] / direction[shrinking], initial=1.0))
    before = d @ G @ d - 2.0 * b @ d
    old = d[supported].copy()
    new = np.maximum(old + fraction * direction, 0.0)
    if fraction < 1.0:
        new[np.argmin(np.where(shrinking, -old / np.where(shrinking, direction, -1.0), np.inf))] = 0.0
    d[supported] = new / new.sum()
    if d @ G @ d - 2.0 * b @ d < before:
        return True
    d[supported] = old
    return False
