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


def test_a_vote_turns_every_fold_s_decisions_into_what_is_counted():
    """Outer counts and held-out decisions equal voting a manual refit's predictions fold by fold,
    and the inner selection's test folds are voted too."""
    from sklearn.datasets import make_classification
    from sklearn.model_selection import LeaveOneGroupOut

    from stairsense.models import stair_counts, vote_decisions

    X, y = make_classification(180, 5, flip_y=0.2, random_state=2)
    groups = np.repeat(np.arange(6), 30)
    t = np.tile(np.arange(30), 6) * 10**9  # each subject one log of back-to-back 1 s windows
    voted_folds = []

    def vote(decided, test):
        voted_folds.append(test)
        return vote_decisions(decided.astype(int), t[test], t[test] + 10**9, 3, log_index=groups[test]) == 1

    est = make_classifier("knn")
    grid = {"clf__n_neighbors": [1, 5]}
    result = evaluate_protocol(est, X, y, groups=groups, protocol="loso", param_grid=grid, n_inner=2, vote=vote)
    assert len(voted_folds) == 6 * 2 * 2 + 6  # inner: folds × candidates × inner folds; then the outer folds
    held_out, counts = np.full(y.size, -1), []
    for (train, test), params in zip(LeaveOneGroupOut().split(X, y, groups), result.best_params):
        pred = est.set_params(**params).fit(X[train], y[train]).predict(X[test])
        voted = vote_decisions(pred, t[test], t[test] + 10**9, 3)
        held_out[test] = voted
        counts.append(stair_counts(voted == 1, y[test] == 1))
    np.testing.assert_array_equal(result.held_out_stair, held_out)
    np.testing.assert_array_equal(result.counts, counts)
    unvoted = evaluate_protocol(est, X, y, groups=groups, protocol="loso", param_grid=grid, n_inner=2)
    assert not np.array_equal(unvoted.held_out_stair, result.held_out_stair)  # the vote changed something


def test_make_classifier_keeps_required_columns_for_komd():
    from sklearn.datasets import make_classification

    X, y = make_classification(200, 8, n_informative=3, random_state=0)
    required = np.zeros(8, dtype=bool)
    required[[6, 7]] = True
    support = make_classifier("komd", k=2, required=required).fit(X, y).named_steps["select"].get_support()
    assert support[required].all() and support.sum() == 4


def test_evaluate_keeps_the_height_features_and_votes_each_held_out_log(tmp_path, monkeypatch):
    """``stairsense evaluate`` with a barometer: KOMD keeps the 7 height features beside k, as
    ``train`` does, and the held-out decisions are the unvoted run's voted per log as replay votes."""
    import stairsense._train as train
    from stairsense import PipelineConfig, recording_windows
    from stairsense.cli import main
    from stairsense.features import HEIGHT_NAMES
    from stairsense.models import vote_decisions

    paths = []
    for seed in (2, 13, 20):  # building walks with stairs (13 and 20 both up and down)
        paths.append(tmp_path / f"walk{seed}.csv.gz")
        assert main(["simulate", "--scenario", "building", "--barometer", "5", "--seed", str(seed),
                     "--out", str(paths[-1])]) == 0
    runs = []

    def spy(estimator, *args, **kwargs):
        runs.append((estimator, evaluate_protocol(estimator, *args, **kwargs)))
        return runs[-1][1]

    monkeypatch.setattr(train, "evaluate_protocol", spy)
    config = PipelineConfig(rate_hz=30, orientation="vertical", barometer=True)
    for steps in (1, 3):
        train.evaluate(paths, config.replace(vote_steps=steps), k=5, grid={"komd__lam": [0.1]})
    ds = recording_windows(paths, config).dataset
    (alone, unvoted), (estimator, voted) = runs
    np.testing.assert_array_equal(estimator.get_params()["select__required"], np.isin(ds.feature_names, HEIGHT_NAMES))
    assert sum(estimator.get_params()["select__required"]) == len(HEIGHT_NAMES)
    want = vote_decisions(unvoted.held_out_stair, ds.t_start_ns, ds.t_end_ns, 3, config.step_context_gap_s,
                          log_index=ds.log_index)
    np.testing.assert_array_equal(voted.held_out_stair, want)
    assert not np.array_equal(unvoted.held_out_stair, want)  # the vote changed something
