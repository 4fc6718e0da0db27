"""scikit-learn and river estimators on the online multi-task learner (spec dinuzzo §3)."""
import numpy as np
import pytest
from river import evaluate, metrics
from river.checks import yield_checks

from stairsense.models.multitask import (
    OnlineMultiTaskClassifier,
    OnlineMultiTaskLearner,
    OnlineMultiTaskRegressor,
    RiverMultiTaskClassifier,
    RiverMultiTaskRegressor,
)


def rbf(A, B, gamma):
    return np.exp(-gamma * ((A[:, None, :] - B[None, :, :]) ** 2).sum(-1))


def test_batch_fit_equals_dense_solve():
    """fit(X, y, tasks, sample_weight) = the minimiser of spec §3.2 with w = 1/sample_weight."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(50, 3))
    tasks = rng.integers(0, 4, size=50)
    y = rng.normal(size=50)
    sw = rng.uniform(0.5, 2.0, size=50)
    alpha, lam, g = 0.3, 0.05, 1 / 3
    spec = {"name": "rbf", "gamma": g}
    model = OnlineMultiTaskRegressor(alpha=alpha, lam=lam, task_kernel=spec, shared_kernel=spec)
    model.fit(X, y, tasks, sample_weight=sw)
    K = alpha * rbf(X, X, g) + (1 - alpha) * (tasks[:, None] == tasks[None, :]) * rbf(X, X, g)
    c = np.linalg.solve(K + lam * np.diag(1 / sw), y)
    Xq, tq = rng.normal(size=(9, 3)), np.array([0, 1, 2, 3, 7, 7, 0, 1, 2])
    expected = (alpha * rbf(Xq, X, g) + (1 - alpha) * (tq[:, None] == tasks[None, :]) * rbf(Xq, X, g)) @ c
    np.testing.assert_allclose(model.predict(Xq, tq), expected, rtol=0, atol=1e-9)


def test_classifier_is_sign_of_regression_on_pm1():
    rng = np.random.default_rng(1)
    X, tasks = rng.normal(size=(40, 2)), np.repeat(["a", "b"], 20)
    y = np.where(X[:, 0] > 0, "up", "flat")
    clf = OnlineMultiTaskClassifier(alpha=0.5, lam=0.1).fit(X, y, tasks)
    reg = OnlineMultiTaskRegressor(alpha=0.5, lam=0.1).fit(X, np.where(y == "up", 1.0, -1.0), tasks)
    np.testing.assert_allclose(clf.decision_function(X, tasks), reg.predict(X, tasks), rtol=0, atol=1e-12)
    assert list(clf.classes_) == ["flat", "up"]
    with pytest.raises(ValueError, match="Only binary classification"):
        OnlineMultiTaskClassifier().fit(X, np.arange(40) % 3, tasks)
    with pytest.raises(ValueError, match="one task id per row"):
        clf.predict(X, tasks[:3])


def _stream(n=120, seed=0):
    rng = np.random.default_rng(seed)
    for i in range(n):
        u = int(rng.integers(3))
        a, b = rng.normal(size=2)
        yield {"user": u, "a": float(a), "b": float(b)}, float(np.sin(a) + 0.5 * u * b)


def test_progressive_validation_is_predict_then_update():
    """progressive_val_score on the river regressor = predicting with the learner, then updating it."""
    rff = {"name": "rff", "n_features_in": 2, "n_components": 128, "gamma": 0.5, "seed": 0}
    model = RiverMultiTaskRegressor(alpha=0.4, lam=0.1)  # defaults: RBF task kernel, RFF shared part
    metric = evaluate.progressive_val_score(list(_stream()), model, metrics.MAE())
    learner = OnlineMultiTaskLearner(0.4, 0.1, {"name": "rbf", "gamma": 0.5}, feature_map=rff)
    errors = []
    for x, y in _stream():
        v = np.array([x["a"], x["b"]])
        errors.append(abs(y - (learner.predict(x["user"], v[None, :])[0] if learner.n_inputs else 0.0)))
        learner.update(x["user"], v, y)
    assert metric.get() == pytest.approx(np.mean(errors), abs=1e-12)


def test_river_feature_mismatch_is_a_clear_error():
    model = RiverMultiTaskClassifier()
    model.learn_one({"user": "ann", "a": 1.0, "b": 2.0}, True)
    assert model.predict_one({"b": 2.0, "a": 1.0, "user": "ann"}) is True  # key order irrelevant
    with pytest.raises(ValueError, match=r"missing \['b'\], unexpected \['c'\]"):
        model.learn_one({"user": "ann", "a": 1.0, "c": 2.0}, False)
    with pytest.raises(ValueError, match="bool labels"):
        model.learn_one({"user": "ann", "a": 1.0, "b": 2.0}, "stairs")


@pytest.mark.parametrize("model", [RiverMultiTaskRegressor(), RiverMultiTaskClassifier()], ids=lambda m: type(m).__name__)
def test_river_checks(model):
    """river's estimator checks, except the ones listed (with reasons) in ``_unit_test_skips``."""
    skips = model._unit_test_skips()
    ran = 0
    for check in yield_checks(model):
        if check.__name__ in skips:
            continue
        check(model.clone())
        ran += 1
    assert ran > 10
