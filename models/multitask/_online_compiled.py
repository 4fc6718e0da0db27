"""Compiled per-triple step of the online multi-task learner (spec §3.4 Alg. 5, §3.7-2).

One call applies the *task part* of Alg. 5 to one task's private state and, when given, the
matching rank-one step of the shared statistics ``A``, ``b`` (see ``_online.py``).  It is one
numba function because an update touches only ℓ_j ≤ a few dozen numbers: with numpy, the
~1 µs overhead of each of the ~20 small array calls would dominate (the music benchmark
needs ≥ 50,000 updates/s).  The server (``OnlineMultiTaskLearner``) and the client
(``OnlineMultiTaskClient``) both call it, so they share one implementation of Cases 1–2 and
deletion; the tests compare both against a dense solve.
"""
from __future__ import annotations

import numba
import numpy as np

__all__ = ["task_step", "INSERT", "REPEAT", "REMOVE"]

INSERT, REPEAT, REMOVE = 0, 1, 2


@numba.njit(cache=True, nogil=True)
def task_step(R, h, yv, wv, ell, kind, p, s, krow, Kt, one_minus_alpha, y, w, lam, A, b, Phi):
    """Apply one triple (or a deletion) to a task; return ``(new_size, gamma, mu, u)``.

    Parameters
    ----------
    R, h, yv, wv : arrays with capacity ≥ ell + 1
        The task's ``R^j`` (ℓ×ℓ block used), input ids ``h^j``, merged outputs and weights.
    ell : int
        Current number of entries ℓ_j.
    kind : {INSERT, REPEAT, REMOVE}
        Case 2 (new input ``s`` for this task), Case 1 (repeat at position ``p``), or the
        deletion of position ``p`` (§3.7-2; the caller then drops row/column ``p``).
    krow : 1-d array
        For INSERT in feature-map mode: ``(1−α) K̃(x, [x_{h_1} … x_{h_ℓ}, x])``.  Empty in exact
        mode, where it is gathered from the task-kernel Gram ``Kt`` on the distinct inputs.
    y, w, lam : float
        The triple's output and weight, and λ.
    A, b : arrays
        Shared statistics to update (``A`` n×n indexed by input id in exact mode, r×r in
        feature-map mode); pass a 0×0 ``A`` to skip (a client).
    Phi : 2-d array
        Feature rows of the inputs (feature-map mode); 0×0 in exact mode.

    Notes
    -----
    Every case ends with ``R ← R + γ u uᵀ`` and ``R y`` moving by ``μ u`` (spec §3.4):
    Case 2: ``u = [R k̃; −1]``, ``γ = 1/(λw + k̃_x − k̃ᵀRk̃)`` (bordered inverse, Lemma 10);
    Case 1: ``u = R e_p``, ``γ = −1/((λΔw)⁻¹ + R_pp)`` with ``Δw = −w_old²/(w_old + w)``
    (erratum E7) and the output merged with the *new* weight (E8);
    deletion: ``u = R e_p``, ``γ = −1/R_pp``.  ``γ (u_i u_j)`` is the same float at (i, j) and
    (j, i), so R and A stay exactly symmetric.
    """
    if kind == INSERT:
        m = ell + 1
        k = np.empty(m)
        gather = krow.shape[0] == 0
        for i in range(ell):
            k[i] = one_minus_alpha * Kt[s, h[i]] if gather else krow[i]
        k[ell] = one_minus_alpha * Kt[s, s] if gather else krow[ell]
        u = np.empty(m)
        quad = 0.0
        for i in range(ell):
            acc = 0.0
            for j in range(ell):
                acc += R[i, j] * k[j]
            u[i] = acc
            quad += k[i] * acc
        u[ell] = -1.0
        gamma = 1.0 / (lam * w + k[ell] - quad)  # 1/Schur complement > 0
        h[ell] = s
        yv[ell] = y
        wv[ell] = w
        for i in range(m):
            R[ell, i] = 0.0
            R[i, ell] = 0.0
        dy = 0.0
    else:
        m = ell
        u = np.empty(m)
        for i in range(m):
            u[i] = R[i, p]
        if kind == REPEAT:
            w_old = wv[p]
            y_old = yv[p]
            w_new = w_old * w / (w_old + w)
            y_new = y_old + w_new * (y - y_old) / w
            delta_w = -w_old * w_old / (w_old + w)
            gamma = -1.0 / (1.0 / (lam * delta_w) + R[p, p])
            wv[p] = w_new
            yv[p] = y_new
            dy = y_new - y_old
        else:
            gamma = -1.0 / R[p, p]
            dy = 0.0
    uy = 0.0
    for i in range(m):
        uy += u[i] * yv[i]
    mu = dy + gamma * uy
    # Row by row over the whole square: γ (u_i u_j) is the same float for (i, j) and (j, i)
    # (the product commutes exactly), so R stays exactly symmetric, bit for bit as when each t
    # was written to both halves -- and the writes are contiguous (for A at r = 256 that loop,
    # writing a column for every row, took 82 µs per update; this one takes 8 µs).
    for i in range(m):
        for j in range(m):
            R[i, j] += gamma * (u[i] * u[j])
    if A.shape[0] > 0:
        if Phi.shape[0] == 0:
            # exact mode: ũ = P_jᵀ u lives on the task's input ids only.
            for i in range(m):
                hi = h[i]
                b[hi] += mu * u[i]
                for j in range(m):
                    A[hi, h[j]] += gamma * (u[i] * u[j])
        else:
            r = Phi.shape[1]
            v = np.zeros(r)
            for i in range(m):
                hi = h[i]
                for c in range(r):
                    v[c] += Phi[hi, c] * u[i]
            for c in range(r):
                b[c] += mu * v[c]
                for d in range(r):
                    A[c, d] += gamma * (v[c] * v[d])
    return m, gamma, mu, u
