"""Linear-kernel KOMD by a primal-dual interior-point method.

Spec donini-easymkl-komd-climbtheworld-admm §2.5 (addendum: Σ_r K_r = XXᵀ for rank-one feature
kernels, so EasyMKL's KOMD is min_{γ∈Γ̂} (1 − Λ)‖Xᵀ(y∘γ)‖² + Λ‖γ‖², Eq. 5.7 with K = XXᵀ).

Why a second-order method, and why this one. The first-order solvers' iteration counts follow the
conditioning: L-BFGS on the d-dimensional dual (``_simplex.solve_komd_linear_dual``) took 18 s at
Λ = 0.1 and did not converge in 47 s at Λ = 0.01 on the real window features (UCI HAPT,
7,925 × 79, strongly correlated columns), because the dual is piecewise quadratic with curvature
jumping by ~1/Λ each time an example enters or leaves the support. A semismooth Newton method on
that dual (tried first) still needed hundreds of steps at Λ = 0.01: from the uniform start the
support is every example, and the support shrinks by a few examples per step. A primal-dual
interior-point method is insensitive to both: Mehrotra's predictor-corrector converges in 15–30
iterations whatever Λ and the data. [D]

Each iteration solves the Newton system of the KKT conditions of min ½γᵀQγ, Aγ = 1, γ ≥ 0 with
Q = 2ΛI + 2(1 − Λ)ZZᵀ (Z = y∘X, A = the two class indicators). Eliminating the bound multipliers
leaves M = Δ + UUᵀ with Δ diagonal and U = √(2(1 − Λ))Z of rank d, inverted by the Woodbury
identity through one d×d Cholesky factor; the two equality multipliers come from a 2×2 system.
Cost per iteration O(l·d²); memory O(l·d), never an l×l matrix.

Certificate: for any γ, v = (1 − Λ)Zᵀγ is a point of the concave dual
g(v) = −‖v‖²/(1 − Λ) + min_{γ'∈Γ̂} [Λ‖γ'‖² + 2(Zv)ᵀγ'] (inner minimiser: one projection onto
Γ̂), and g(v) ≤ F* ≤ F(γ). The solver stops when F − g ≤ tol · F, and returns whichever of the
interior iterate and the projection γ(v) (exactly sparse) has the smaller objective.
"""
from __future__ import annotations

import numpy as np
from scipy.linalg import LinAlgError, cho_factor, cho_solve

from ._simplex import KOMDSolution, project_class_simplices, warn_unconverged

__all__ = ["solve_komd_linear_interior"]

# Fraction of the way to the boundary a step may go (keeps iterates strictly interior).
_STEP_TO_BOUNDARY = 0.99


def solve_komd_linear_interior(X, y, lam, *, tol=1e-6, max_iter=100) -> KOMDSolution:
    """Solve linear-kernel KOMD (Eq. 5.7 with K = XXᵀ) by a primal-dual interior-point method.

    Parameters
    ----------
    X : ndarray of shape (l, d)
    y : array-like of shape (l,)
        Labels in {−1, +1}, both present.
    lam : float
        Λ ∈ (0, 1]; at Λ = 0 the dual certificate is undefined (use projected gradient there).
    tol : float, default=1e-6
        Relative duality-gap tolerance: stop when F(γ) − g(v) ≤ tol · F(γ).
    max_iter : int, default=100
        Interior-point iterations cap (a ConvergenceWarning is emitted when reached).

    Returns
    -------
    KOMDSolution
        γ, its objective F(γ), the certified gap F(γ) − g(v) ≥ F(γ) − F*, and the iterations.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.0], [1.0], [3.0], [4.0]]); y = np.array([-1, -1, 1, 1])
    >>> sol = solve_komd_linear_interior(X, y, 0.9, tol=1e-12)  # F(b) = 0.1(4 − 2b)² + 1.8(b² + (1 − b)²): b = 0.65
    >>> np.round(sol.gamma, 6).tolist(), bool(sol.gap <= 1e-12 * sol.objective)
    ([0.35, 0.65, 0.65, 0.35], True)
    """
    X = np.asarray(X, dtype=float)
    y = np.asarray(y, dtype=float)
    if not 0.0 < lam <= 1.0:
        raise ValueError(f"solve_komd_linear_interior needs lam (Λ) in (0, 1], got {lam!r}; use projected "
                         "gradient at 0")
    positive = y > 0
    if not np.isin(y, (-1.0, 1.0)).all() or positive.all() or not positive.any():
        raise ValueError("solve_komd_linear_interior expects labels in {-1, +1} with both classes present")
    Z = X * y[:, None]
    A = np.vstack([positive, ~positive]).astype(float)
    gamma = A.T @ (1.0 / A.sum(axis=1))  # uniform per class: feasible, interior, the Λ = 1 optimum

    def objective(g):
        w = Z.T @ g
        return (1.0 - lam) * float(w @ w) + lam * float(g @ g)

    if lam == 1.0:
        return KOMDSolution(gamma=gamma, objective=objective(gamma), gap=0.0, n_iter=0)

    def certified(g):
        """(best γ, its objective, gap): the iterate or the dual point's projection γ(v)."""
        v = (1.0 - lam) * (Z.T @ g)
        c = Z @ v
        projected = project_class_simplices(-c / lam, positive)
        lower = -float(v @ v) / (1.0 - lam) + 2.0 * float(c @ projected) + lam * float(projected @ projected)
        best = min((g, projected), key=objective)
        value = objective(best)
        return best, value, max(value - lower, 0.0)

    U = np.sqrt(2.0 * (1.0 - lam)) * Z
    n, d = Z.shape
    bound_multiplier = np.ones(n)  # s ≥ 0, complementary to γ ≥ 0
    class_multiplier = np.zeros(2)  # of the two sum-to-one constraints
    best, value, gap = certified(gamma)
    n_iter = 0
    while gap > tol * value and n_iter < max_iter:
        n_iter += 1
        try:
            step = _newton_direction(gamma, bound_multiplier, class_multiplier, lam, U, A)
        except LinAlgError:  # rounding made M indefinite: the iterate is as good as this precision allows
            break
        gamma, class_multiplier, bound_multiplier = step
        best, value, gap = certified(gamma)
    if gap > tol * value:
        warn_unconverged("interior point", n_iter, gap, value, tol)
    return KOMDSolution(gamma=best, objective=value, gap=gap, n_iter=n_iter)


def _newton_direction(gamma, s, mu, lam, U, A):
    """One Mehrotra predictor-corrector step; returns the new (γ, μ, s)."""
    n = gamma.size
    dual_residual = 2.0 * lam * gamma + U @ (U.T @ gamma) - A.T @ mu - s
    primal_residual = A @ gamma - 1.0
    delta = 2.0 * lam + s / gamma
    scaled = U / delta[:, None]
    factor = cho_factor(np.eye(U.shape[1]) + U.T @ scaled)

    def solve_m(rhs):  # (Δ + UUᵀ)⁻¹ by Woodbury
        rhs = rhs / (delta if rhs.ndim == 1 else delta[:, None])
        return rhs - scaled @ cho_solve(factor, U.T @ rhs)

    m_a = solve_m(A.T)
    schur = A @ m_a

    def direction(complementarity):
        r = -dual_residual - complementarity / gamma
        m_r = solve_m(r)
        d_mu = np.linalg.solve(schur, -primal_residual - A @ m_r)
        d_gamma = m_r + m_a @ d_mu
        return d_gamma, d_mu, (-complementarity - s * d_gamma) / gamma

    def longest(x, dx):
        shrinking = dx < 0
        return min(1.0, float(np.min(-x[shrinking] / dx[shrinking]))) if shrinking.any() else 1.0

    mean_gap = float(gamma @ s) / n
    d_gamma, _, d_s = direction(gamma * s)  # predictor (affine scaling)
    alpha_p, alpha_d = longest(gamma, d_gamma), longest(s, d_s)
    affine_gap = float((gamma + alpha_p * d_gamma) @ (s + alpha_d * d_s)) / n
    centring = (affine_gap / mean_gap) ** 3
    d_gamma, d_mu, d_s = direction(gamma * s + d_gamma * d_s - centring * mean_gap)  # corrector
    alpha_p = _STEP_TO_BOUNDARY * longest(gamma, d_gamma)
    alpha_d = _STEP_TO_BOUNDARY * longest(s, d_s)
    return gamma + alpha_p * d_gamma, mu + alpha_d * d_mu, s + alpha_d * d_s
