"""Evaluation protocols (spec §3.7): split correctness via spy estimators, metrics vs hand counts."""
from __future__ import annotations

import numpy as np
import pytest
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.metrics import precision_recall_fscore_support

from stairsense.models.stairstep._evaluation import (
    CVResult,
    default_grid,
    evaluate_protocol,
    make_classifier,
    stair_scores,
)

SUBJECT, TRUTH = 0, 1  # spy columns: the window's subject, and its label (a cheat the spy may use)


class Spy(ClassifierMixin, BaseEstimator):
    """Fails any fit/predict pair that shares a subject; ``good`` predicts the truth, else all STAIR."""

    def __init__(self, good=True, check_subjects=True):
        self.good = good
        self.check_subjects = check_subjects

    def fit(self, X, y):
        self.train_subjects_ = set(X[:, SUBJECT].tolist())
        self.classes_ = np.unique(y)
        return self

    def predict(self, X):
        leaked = self.train_subjects_ & set(X[:, SUBJECT].tolist())
        if self.check_subjects and leaked:
            raise AssertionError(f"subjects {sorted(leaked)} are in both the training and the test windows")
        return X[:, TRUTH].astype(int) if self.good else np.ones(len(X), dtype=int)


def _spy_data(n_subjects=7, per_subject=30, seed=0):
    rng = np.random.default_rng(seed)
    groups = np.repeat(np.arange(n_subjects), per_subject)
    y = (rng.random(groups.size) < 0.3).astype(int)
    y[::per_subject] = 1  # every subject has a STAIR window
    return np.column_stack([groups, y]).astype(float), y, groups


@pytest.mark.parametrize("n_outer", [None, 3])
def test_loso_never_shares_a_subject_between_train_and_test(n_outer):
    X, y, groups = _spy_data()
    result = evaluate_protocol(Spy(), X, y, groups=groups, protocol="loso", n_outer=n_outer, n_inner=3,
                               param_grid={"good": [False, True]})
    held_out = sorted(s for fold in result.test_groups for s in fold)
    assert held_out == list(range(7))  # every subject tested exactly once
    assert len(result.counts) == (7 if n_outer is None else 3)
    assert all(p == {"good": True} for p in result.best_params)  # inner selection found the truthful spy


def test_nested_cv_is_not_grouped_and_is_stratified():
    X, y, groups = _spy_data()
    with pytest.raises(AssertionError, match="both the training and the test"):
        evaluate_protocol(Spy(), X, y, protocol="nested-cv", n_outer=5, n_inner=3)
    result = evaluate_protocol(Spy(good=False, check_subjects=False), X, y, protocol="nested-cv", n_outer=5)
    tp, fp, fn = result.counts.T  # all-STAIR predictions: tp + fp = fold size, tp = STAIR windows in it
    assert fn.sum() == 0 and (tp + fp).sum() == y.size
    assert tp.max() - tp.min() <= 1 and (tp + fp).max() - (tp + fp).min() <= 1


def test_both_f1_conventions_match_a_hand_computation():
    counts = np.array([[8, 2, 8], [9, 1, 0], [0, 0, 4]])  # (tp, fp, fn): P 0.8/0.9/0, R 0.5/1/0
    s = CVResult("loso", counts).summary()
    p, r = (0.8 + 0.9 + 0) / 3, (0.5 + 1 + 0) / 3
    f1s = [2 * 0.8 * 0.5 / 1.3, 2 * 0.9 / 1.9, 0.0]
    assert s["precision_mean"] == pytest.approx(p) and s["recall_mean"] == pytest.approx(r)
    assert s["f1_of_means"] == pytest.approx(2 * p * r / (p + r))
    assert s["f1_mean"] == pytest.approx(np.mean(f1s)) and s["f1_std"] == pytest.approx(np.std(f1s))
    assert s["f1_pooled"] == pytest.approx(2 * 17 / (2 * 17 + 3 + 12))
    assert s["f1_of_means"] != pytest.approx(s["f1_mean"])  # the conventions really differ here


@pytest.mark.parametrize("seed", range(5))
def test_stair_scores_agree_with_sklearn(seed):
    rng = np.random.default_rng(seed)
    truth, pred = rng.integers(0, 2, 50), rng.integers(0, 2, 50)
    counts = [np.sum((pred == 1) & (truth == 1)), np.sum((pred == 1) & (truth == 0)),
              np.sum((pred == 0) & (truth == 1))]
    expected = precision_recall_fscore_support(truth, pred, pos_label=1, average="binary", zero_division=0)[:3]
    assert stair_scores(counts) == pytest.approx(expected)


def test_outer_metrics_equal_a_manual_loop():
    """The protocol's per-fold scores equal refitting the chosen model by hand on each outer split."""
    from sklearn.datasets import make_classification
    from sklearn.model_selection import LeaveOneGroupOut

    X, y = make_classification(180, 5, random_state=1)
    groups = np.repeat(np.arange(6), 30)
    est = make_classifier("knn")
    result = evaluate_protocol(est, X, y, groups=groups, protocol="loso", n_outer=None,
                               param_grid={"clf__n_neighbors": [5]})
    manual = []
    for train, test in LeaveOneGroupOut().split(X, y, groups):
        pred = est.set_params(clf__n_neighbors=5).fit(X[train], y[train]).predict(X[test])
        manual.append(precision_recall_fscore_support(y[test], pred, average="binary", zero_division=0)[:3])
    np.testing.assert_allclose(result.per_fold, manual)


def test_dask_client_gives_the_serial_result():
    distributed = pytest.importorskip("dask.distributed")
    X, y, groups = _spy_data(n_subjects=5, per_subject=20)
    kwargs = dict(groups=groups, protocol="loso", n_inner=2, param_grid={"good": [False, True]})
    serial = evaluate_protocol(Spy(), X, y, **kwargs)
    with distributed.Client(processes=False, n_workers=1, threads_per_worker=2, dashboard_address=None) as client:
        on_dask = evaluate_protocol(Spy(), X, y, client=client, **kwargs)
    np.testing.assert_array_equal(serial.counts, on_dask.counts)
    np.testing.assert_array_equal(serial.inner_f1, on_dask.inner_f1)


@pytest.mark.parametrize("kwargs, match", [
    (dict(protocol="loso"), "needs groups"),
    (dict(protocol="kfold"), "unknown protocol"),
    (dict(protocol="loso", groups=np.zeros(20)), "at least 2 subjects"),
    (dict(protocol="nested-cv", pos_label=7), "no window of the positive"),
    (dict(protocol="nested-cv", param_grid={"good": True}), r"param_grid\['good'\] must be a non-empty list"),
])
def test_bad_input_is_named(kwargs, match):
    X, y, _ = _spy_data(n_subjects=2, per_subject=10)
    with pytest.raises(ValueError, match=match):
        evaluate_protocol(Spy(), X, y, **kwargs)


@pytest.mark.parametrize("name", ["dt", "knn", "komd"])
def test_every_classifier_has_grids_naming_its_parameters(name):
    params = make_classifier(name).get_params()
    for size in ("small", "full"):
        assert set(default_grid(name, size)) <= set(params)
    assert len(default_grid(name, "full")) >= len(default_grid(name, "small"))


def test_unknown_classifier_and_grid_are_named():
    with pytest.raises(ValueError, match="unknown classifier 'svm'"):
        make_classifier("svm")
    with pytest.raises(ValueError, match="unknown grid size"):
        default_grid("knn", "huge")


@pytest.mark.parametrize("seed", range(3))
def test_stair_counts_and_scores_match_scikit_learn(seed):
    """The one STAIR scoring (cross-validation, ``evaluate --model`` and the budget optimiser)."""
    from stairsense.models import stair_counts

    rng = np.random.default_rng(seed)
    truth, pred = rng.random(200) < 0.3, rng.random(200) < 0.4
    p, r, f1, _ = precision_recall_fscore_support(truth, pred, average="binary", zero_division=0)
    assert stair_scores(stair_counts(pred, truth)) == pytest.approx((p, r, f1))
    assert stair_scores(stair_counts(np.zeros(5, bool), np.zeros(5, bool))) == (0.0, 0.0, 0.0)
