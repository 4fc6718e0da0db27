"""The ranges in which the server accepts numbers, so that the learner's state stays finite.

Why bounds and not only finiteness: one accepted row is in the shared statistics of every user
for good (spec dinuzzo §3.2: ``A``, ``b`` sum over all users), and the operation log replays it at
every restart, so a row the learner cannot digest breaks every user's predictions until an admin
purges it.  ``{"y": [1e308], "w": [1e-320]}`` did exactly that: ``y / (λ w)`` overflows.

* ``X`` (inputs) in ``[-1e3, 1e3]``: the 79 window features are scaled to ``[-1, 1]``.  The RBF
  kernels compute ``‖x‖² + ‖x'‖² − 2 x·x'``, whose rounding error grows like ``‖x‖² · 1e-16``;
  at ``|x_i| ≤ 1e3`` and 79 features that is about 1e-8, below the smallest noise term
  ``λ w`` the weight range allows (1e-6 at λ = 1), so the task matrices stay positive definite.
  A feature of 1e154 overflowed ``‖x‖²`` to infinity.
* ``y`` (labels) in ``[-1e3, 1e3]``: predictions are linear in the labels (spec §3.2,
  ``(K + λW) c = y``), and through the shared part one user's labels move every user's
  predictions in proportion (labels of 1e6 at the smallest weight moved another user's by
  ~4e4 with the default learner); labels are classes (±1) or small regression targets.
* ``w`` (noise-variance scales, spec §3.1 ``w_i > 0``) in ``[1e-6, 1e6]``: ``λ w`` is the
  diagonal that keeps each update's Schur complement away from zero; a subnormal weight made
  it 0 (ZeroDivisionError in the repeat case, erratum E7's ``Δw``).
"""
from __future__ import annotations

import numpy as np

from ._engine import Rejected

__all__ = ["BOUNDS", "bounded_rows"]

# field: (low, high, what it is) -- the one place the ranges are written (README, OpenAPI read them)
BOUNDS = {
    "X": (-1e3, 1e3, "inputs"),
    "y": (-1e3, 1e3, "labels"),
    "w": (1e-6, 1e6, "weights"),
}


def _where(name: str, index: tuple) -> str:
    if name == "X":
        return f"X row {index[0]} feature {index[1]}"
    return f"{name} row {index[0]}"


def bounded_rows(name: str, values: list, n_features: int | None = None) -> np.ndarray:
    """``values`` (a list of numbers, or of rows for ``X``) as float64, or :class:`Rejected` (422)
    naming the field, the first row out of :data:`BOUNDS` and the allowed range.

    ``n_features`` (for ``X``) is the row length the learner takes.
    """
    if n_features is not None:
        for i, row in enumerate(values):
            if len(row) != n_features:
                raise Rejected(422, f"{name} row {i} has {len(row)} features; this server takes {n_features}")
    low, high, what = BOUNDS[name]
    allowed = f"{what} must be finite numbers in [{low:g}, {high:g}]"
    try:
        array = np.asarray(values, dtype=np.float64)
    except OverflowError:  # an integer beyond float64 (309 digits and more)
        flat = values if n_features is None else [v for row in values for v in row]
        first = next(i for i, v in enumerate(flat) if isinstance(v, int) and not -1e308 < v < 1e308)
        index = (first,) if n_features is None else divmod(first, n_features)
        raise Rejected(422, f"{_where(name, index)} is an integer too large for a float; {allowed}") from None
    outside = ~((array >= low) & (array <= high))  # NaN compares False: outside
    if outside.any():
        index = tuple(int(i) for i in np.argwhere(outside)[0])
        raise Rejected(422, f"{_where(name, index)} is {array[index]:g}; {allowed}")
    return array
