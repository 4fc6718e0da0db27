"""Task ids beside ``X``, binary labels: the checks and the decision rule the multi-task classifiers share."""
from __future__ import annotations

import numpy as np
from sklearn.metrics import accuracy_score
from sklearn.utils.multiclass import type_of_target

__all__ = ["check_tasks", "binary_classes", "BinaryMultiTaskMixin"]


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


def binary_classes(y, owner: str) -> np.ndarray:
    """The two sorted labels of ``y``; ``classes[1]`` is the positive class.

    Refuses anything else with a ``ValueError`` that names ``owner`` and, in the words
    scikit-learn's estimator checks look for, the problem: "1 class", or the target type
    ("continuous", "multiclass") after "Only binary classification is supported".

    Examples
    --------
    >>> binary_classes(["up", "flat", "up"], "M").tolist()
    ['flat', 'up']
    >>> binary_classes([0.5, 1.5, 2.25], "M")
    Traceback (most recent call last):
    ...
    ValueError: Only binary classification is supported. The type of the target is continuous. ...
    """
    kind = type_of_target(y, input_name="y", raise_unknown=True)
    classes = np.unique(y)
    if len(classes) == 1:
        raise ValueError(f"{owner} needs 2 classes in y, got 1 class ({classes[0]!r}); add rows of the other class.")
    if kind != "binary":
        raise ValueError(f"Only binary classification is supported. The type of the target is {kind}. "
                         f"Binarise y first (e.g. stairs vs. not stairs) before fitting {owner}.")
    return classes
