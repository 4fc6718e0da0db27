"""Compiled coordinate-descent sweeps (spec §1.5, Algorithms 1 and 2) for the three kernels.

One call runs the coordinate steps of one sweep in the given index order and writes the
change ``h_i`` of every visited coordinate into ``h``.  The Python driver in
``stairsense.models._kernel_machines`` chooses the orders, checks the stopping rule and
records the history; ``_kernel_machines._reference_sweep`` is the pure-numpy twin that the
tests compare these loops against.  Indices with ``k_ii = 0`` must not be in ``order``
(spec §1.1: such an example has a zero row and column and is dropped).
"""
from __future__ import annotations

import numba

from ._losses import neg_resolvent_scalar

__all__ = ["sweep_dense", "sweep_linear_dense", "sweep_linear_csr"]


@numba.njit(cache=True, nogil=True)
def _coordinate_step(i, z, diag, y, C, c, code, epsilon, delta, h):
    """Move ``c_i`` to ``S_i(z / k_ii - c_i)`` given ``z = k_i'c``; record and return the change ``h_i``.

    The one step that the three sweeps share; they differ only in how they form ``z``
    and in the ``w = X'c`` they keep up to date afterwards.
    """
    kii = diag[i]
    new = neg_resolvent_scalar(code, z / kii - c[i], y[i], C[i], 1.0 / kii, epsilon, delta)
    step = new - c[i]
    h[i] = step
    c[i] = new
    return step


@numba.njit(cache=True, nogil=True)
def sweep_dense(K, diag, y, C, c, order, code, epsilon, delta, h):
    """Algorithm 1 on a dense kernel matrix: ``c_i <- S_i(k_i'c / k_ii - c_i)``."""
    n = c.shape[0]
    for i in order:
        z = 0.0
        for j in range(n):
            z += K[i, j] * c[j]
        _coordinate_step(i, z, diag, y, C, c, code, epsilon, delta, h)


@numba.njit(cache=True, nogil=True)
def sweep_linear_dense(X, diag, y, C, c, w, order, code, epsilon, delta, h):
    """Algorithm 2 (erratum E3) on dense X, keeping ``w = X'c`` up to date."""
    m = X.shape[1]
    for i in order:
        z = 0.0
        for j in range(m):
            z += X[i, j] * w[j]
        step = _coordinate_step(i, z, diag, y, C, c, code, epsilon, delta, h)
        if step != 0.0:
            for j in range(m):
                w[j] += step * X[i, j]


@numba.njit(cache=True, nogil=True)
def sweep_linear_csr(indptr, indices, data, diag, y, C, c, w, order, code, epsilon, delta, h):
    """Algorithm 2 (erratum E3) on CSR X: ``O(nnz(x_i))`` per step, the w update skipped when ``h_i = 0``."""
    for i in order:
        start, stop = indptr[i], indptr[i + 1]
        z = 0.0
        for p in range(start, stop):
            z += data[p] * w[indices[p]]
        step = _coordinate_step(i, z, diag, y, C, c, code, epsilon, delta, h)
        if step != 0.0:
            for p in range(start, stop):
                w[indices[p]] += step * data[p]
