"""Task ids beside ``X``: the check and the binary decision rule the multi-task classifiers share."""
from __future__ import annotations

import numpy as np
from sklearn.metrics import accuracy_score

__all__ = ["check_tasks", "BinaryMultiTaskMixin"]


class BinaryMultiTaskMixin:
    """``predict``, ``score`` and the binary-only tag from one hook, ``decision_function(X, tasks)``.

    A row is ``classes_[1]`` when its task's decision is > 0, so the tie rule cannot drift
    between the multi-task classifiers (ADMM, OKL, MT-ONMKL). Put it before ``ClassifierMixin``.
    """

    def predict(self, X, tasks=None):
        """Labels from ``classes_``: ``classes_[1]`` where ``decision_function(X, tasks) > 0``."""
        positive = self.decision_function(X, tasks) > 0  # first: it raises NotFittedError before fit
        return self.classes_[positive.astype(int)]

    def score(self, X, y, tasks=None, sample_weight=None):
        """Mean accuracy of ``predict(X, tasks)`` (see ``ClassifierMixin.score``)."""
        return accuracy_score(y, self.predict(X, tasks), sample_weight=sample_weight)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        return tags


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
