"""Compiled coordinate-descent sweeps (spec §1.5, Algorithms 1 and 2) for the three kernels.

One call runs the coordinate steps of one sweep in the given index order and writes the
change ``h_i`` of every visited coordinate into ``h``.  The Python driver in
``stairsense.models.kernel_machines._solver`` chooses the orders, checks the stopping rule and
records the history; ``_kernel_machines._reference_sweep`` is the pure-numpy twin that the
tests compare these loops against.  Indices with ``k_ii = 0`` must not be in ``order``
(spec §1.1: such an example has a zero row and column and is dropped).
"""
from __future__ import annotations

import numba

from ._losses import neg_resolvent_scalar

__all__ = ["sweep_dense", "sweep_linear_dense", "sweep_linear_csr"]


@numba.njit(cache=True, nogil=True)
def sweep_dense(K, diag, y, C, c, order, code, epsilon, delta, h):
    """Algorithm 1 on a dense kernel matrix: ``c_i <- S_i(k_i'c / k_ii - c_i)``."""
    n = c.shape[0]
    for i in order:
        kii = diag[i]
        z = 0.0
        for j in range(n):
            z += K[i, j] * c[j]
        new = neg_resolvent_scalar(code, z / kii - c[i], y[i], C[i], 1.0 / kii, epsilon, delta)
        h[i] = new - c[i]
        c[i] = new


@numba.njit(cache=True, nogil=True)
def sweep_linear_dense(X, diag, y, C, c, w, order, code, epsilon, delta, h):
    """Algorithm 2 (erratum E3) on dense X, keeping ``w = X'c`` up to date."""
    m = X.shape[1]
    for i in order:
        qii = diag[i]
        z = 0.0
        for j in range(m):
            z += X[i, j] * w[j]
        new = neg_resolvent_scalar(code, z / qii - c[i], y[i], C[i], 1.0 / qii, epsilon, delta)
        step = new - c[i]
        h[i] = step
        if step != 0.0:
            c[i] = new
            for j in range(m):
                w[j] += step * X[i, j]


@numba.njit(cache=True, nogil=True)
def sweep_linear_csr(indptr, indices, data, diag, y, C, c, w, order, code, epsilon, delta, h):
    """Algorithm 2 (erratum E3) on CSR X: ``O(nnz(x_i))`` per step, the w update skipped when ``h_i = 0``."""
    for i in order:
        qii = diag[i]
        start, stop = indptr[i], indptr[i + 1]
        z = 0.0
        for p in range(start, stop):
            z += data[p] * w[indices[p]]
        new = neg_resolvent_scalar(code, z / qii - c[i], y[i], C[i], 1.0 / qii, epsilon, delta)
        step = new - c[i]
        h[i] = step
        if step != 0.0:
            c[i] = new
            for p in range(start, stop):
                w[indices[p]] += step * data[p]
