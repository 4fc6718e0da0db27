"""Three ways for the server-side solvers to reach the kernel matrix K (spec §1.4–1.7).

The solvers of spec §1.4 (fixed point) and §1.5 (coordinate descent) need only:
the diagonal ``k_ii``, the product ``z = Kc``, and, for coordinate descent, the value
``k_i' c`` of one coordinate plus a way to tell K that ``c_i`` changed.  Each class below
provides those for one representation:

* ``PrecomputedKernel``: a dense symmetric ``l x l`` matrix;
* ``RowOracleKernel``: a function returning one row, with a least-recently-used row cache
  (spec §1.5 "a row cache is recommended", §1.7 kernel caching);
* ``LinearKernel``: ``K = XX'`` never formed, the solver keeps ``w = X'c`` (spec §1.1
  eqs. 2.4–2.5 and Algorithm 2 with erratum E3), for dense or ``scipy.sparse`` X.
"""
from __future__ import annotations

from collections import OrderedDict

import numpy as np
import scipy.sparse as sp
from scipy.sparse.linalg import LinearOperator, eigsh

__all__ = ["PrecomputedKernel", "RowOracleKernel", "LinearKernel", "as_kernel_access"]


class _KernelAccess:
    """Shared part: spectral norm and the coordinate protocol on top of ``row``.

    Subclasses implement ``n_samples``, ``diagonal()``, ``matvec(c)`` and ``row(i)``.
    The coordinate protocol (``start``/``coordinate_value``/``coordinate_changed``) lets
    one reference coordinate-descent loop serve every representation: row-based kernels
    compute ``k_i' c`` from the row, the linear kernel from ``w = X'c``.
    """

    def spectral_norm(self):
        """``||K||_2`` = largest eigenvalue of the PSD matrix K (step size of Thm 9)."""
        n = self.n_samples
        if n == 1:
            return float(self.diagonal()[0])
        op = LinearOperator((n, n), matvec=self.matvec, dtype=float)
        # A fixed start vector keeps the result reproducible (eigsh starts at random).
        return float(eigsh(op, k=1, which="LA", v0=np.ones(n), return_eigenvectors=False)[0])

    def trace(self):
        """``tr(K)``, the cheap upper bound of ``||K||_2`` (spec §1.4)."""
        return float(np.sum(self.diagonal()))

    def start(self, c):
        """Begin a coordinate-descent run at ``c``; the state is what ``coordinate_value`` reads."""
        return None

    def coordinate_value(self, i, c, state):
        """``k_i' c``."""
        return float(self.row(i) @ c)

    def coordinate_changed(self, i, h, state):
        """``c_i`` moved by ``h``; row-based kernels keep no state to update."""


class PrecomputedKernel(_KernelAccess):
    """A dense, symmetric, positive semidefinite kernel matrix.

    Parameters
    ----------
    K : array-like of shape (n_samples, n_samples)
        The Gram matrix. Symmetry is checked; positive semidefiniteness is the caller's
        promise (checking it would cost an eigendecomposition).

    Examples
    --------
    >>> import numpy as np
    >>> PrecomputedKernel(np.array([[2.0, 1.0], [1.0, 2.0]])).matvec(np.array([1.0, 0.0]))
    array([2., 1.])
    """

    def __init__(self, K):
        K = np.ascontiguousarray(K, dtype=float)
        if K.ndim != 2 or K.shape[0] != K.shape[1]:
            raise ValueError(
                f"A precomputed kernel must be a square (n_samples, n_samples) matrix, got shape "
                f"{K.shape}. Pass the Gram matrix of the training samples."
            )
        if not np.all(np.isfinite(K)):
            raise ValueError("The precomputed kernel contains NaN or infinity; fix the kernel values.")
        if not np.allclose(K, K.T, rtol=1e-10, atol=1e-12 * max(1.0, np.abs(K).max(initial=0.0))):
            raise ValueError(
                "The precomputed kernel is not symmetric; a kernel matrix must satisfy K = K.T. "
                "Symmetrise it, e.g. (K + K.T) / 2, if the asymmetry is round-off."
            )
        self.K = K

    @property
    def n_samples(self):
        return self.K.shape[0]

    def diagonal(self):
        return np.diag(self.K).copy()

    def matvec(self, c):
        return self.K @ c

    def row(self, i):
        return self.K[i]


class RowOracleKernel(_KernelAccess):
    """A kernel given by a function that returns one row, with an LRU row cache.

    Parameters
    ----------
    row_function : callable
        ``row_function(i)`` returns row ``i`` of K as an array of shape ``(n_samples,)``.
    diagonal : array-like of shape (n_samples,)
        ``k_ii`` for every sample (cheap for most kernels, e.g. all ones for RBF).
    cache_rows : int, default=256
        How many rows to keep; the least recently used row is evicted first.

    Attributes
    ----------
    hits, misses : int
        Cache statistics since construction.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.array([[0.0], [1.0], [3.0]])
    >>> oracle = RowOracleKernel(lambda i: np.exp(-(X[i, 0] - X[:, 0]) ** 2), np.ones(3), cache_rows=2)
    >>> _ = oracle.row(0); _ = oracle.row(0)
    >>> oracle.hits, oracle.misses
    (1, 1)
    """

    def __init__(self, row_function, diagonal, cache_rows=256):
        if not callable(row_function):
            raise TypeError(f"row_function must be callable as row_function(i), got {type(row_function).__name__}.")
        diagonal = np.asarray(diagonal, dtype=float)
        if diagonal.ndim != 1 or not np.all(np.isfinite(diagonal)) or np.any(diagonal < 0):
            raise ValueError(
                "diagonal must be a 1-D array of the finite, non-negative k_ii of a PSD kernel; "
                f"got shape {diagonal.shape}."
            )
        if int(cache_rows) < 1:
            raise ValueError(f"cache_rows must be at least 1, got {cache_rows!r}.")
        self.row_function = row_function
        self._diagonal = diagonal
        self.cache_rows = int(cache_rows)
        self._cache = OrderedDict()
        self.hits = 0
        self.misses = 0

    @property
    def n_samples(self):
        return self._diagonal.shape[0]

    def diagonal(self):
        return self._diagonal.copy()

    def row(self, i):
        cached = self._cache.get(i)
        if cached is not None:
            self.hits += 1
            self._cache.move_to_end(i)
            return cached
        self.misses += 1
        row = np.asarray(self.row_function(i), dtype=float)
        if row.shape != (self.n_samples,):
            raise ValueError(
                f"row_function({i}) returned shape {row.shape}; expected ({self.n_samples},), "
                "one kernel value per training sample."
            )
        self._cache[i] = row
        if len(self._cache) > self.cache_rows:
            self._cache.popitem(last=False)
        return row

    def matvec(self, c):
        # K symmetric: Kc = sum_j c_j k_j, so only rows with c_j != 0 are needed (spec §1.4).
        z = np.zeros(self.n_samples)
        for j in np.flatnonzero(c):
            z += c[j] * self.row(j)
        return z


class LinearKernel(_KernelAccess):
    """The linear kernel ``K = XX'`` of dense or sparse data, never formed.

    Parameters
    ----------
    X : array-like or scipy.sparse matrix of shape (n_samples, n_features)
        Sparse input is converted to CSR once (rows are what coordinate descent reads).

    Examples
    --------
    >>> import numpy as np
    >>> LinearKernel(np.array([[1.0, 2.0], [0.0, 1.0]])).diagonal()
    array([5., 1.])
    """

    def __init__(self, X):
        if sp.issparse(X):
            X = sp.csr_matrix(X, dtype=float)
            X.sum_duplicates()
            data = X.data
        else:
            X = np.ascontiguousarray(X, dtype=float)
            if X.ndim != 2:
                raise ValueError(f"X must be 2-D (n_samples, n_features), got shape {X.shape}.")
            data = X
        if not np.all(np.isfinite(data)):
            raise ValueError("X contains NaN or infinity; clean or impute the data first.")
        self.X = X

    @property
    def n_samples(self):
        return self.X.shape[0]

    @property
    def is_sparse(self):
        return sp.issparse(self.X)

    def diagonal(self):
        if self.is_sparse:
            return np.asarray(self.X.multiply(self.X).sum(axis=1)).ravel()
        return np.einsum("ij,ij->i", self.X, self.X)

    def weights(self, c):
        """``w = X'c`` (spec §1.1, eq. 2.5)."""
        return np.asarray(self.X.T @ c).ravel()

    def matvec(self, c):
        return np.asarray(self.X @ self.weights(c)).ravel()

    def row(self, i):
        xi = self.X[i]
        return np.asarray(self.X @ xi.T).ravel() if self.is_sparse else self.X @ xi

    def start(self, c):
        return self.weights(c)

    def coordinate_value(self, i, c, state):
        xi = self.X[i]
        if self.is_sparse:
            return float(xi.data @ state[xi.indices])
        return float(xi @ state)

    def coordinate_changed(self, i, h, state):
        # Algorithm 2 (erratum E3): w += h x_i, applied at once.
        xi = self.X[i]
        if self.is_sparse:
            state[xi.indices] += h * xi.data
        else:
            state += h * xi


def as_kernel_access(kernel):
    """Accept a kernel access object as is; wrap a square array as ``PrecomputedKernel``."""
    if isinstance(kernel, _KernelAccess):
        return kernel
    if sp.issparse(kernel):
        raise TypeError(
            "A sparse matrix is ambiguous as a kernel: wrap data as LinearKernel(X) for K = XX', "
            "or pass a dense precomputed Gram matrix."
        )
    return PrecomputedKernel(kernel)
