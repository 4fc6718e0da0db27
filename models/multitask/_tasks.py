"""Task ids beside ``X``: the one check every multi-task estimator of this family makes."""
from __future__ import annotations

import numpy as np

__all__ = ["check_tasks"]


def check_tasks(tasks, n_samples: int, where: str):
    """``tasks`` as an array of one task id per row of ``X``, or ``None`` when none were given.

    Raises a ``ValueError`` naming ``where`` (``"Class.method"``) when the shape does not match.

    Examples
    --------
    >>> check_tasks([0, 0, 1], 3, "M.fit").tolist()
    [0, 0, 1]
    >>> check_tasks(None, 3, "M.fit") is None
    True
    """
    if tasks is None:
        return None
    tasks = np.asarray(tasks)
    if tasks.shape != (n_samples,):
        raise ValueError(
            f"{where}: expected `tasks` to hold one task id per row of X, shape ({n_samples},); got shape "
            f"{tasks.shape}. Pass an array of task ids aligned with X."
        )
    return tasks
