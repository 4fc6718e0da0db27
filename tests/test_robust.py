"""Issue 9: budgeted KOMD, heading-invariant features, evaluating a model file, Oxford negatives.

Oracles: exact KOMD on the explicit Nyström kernel (precomputed) for the budgeted classifier, and
the ungated classifier with brute-force (scipy) similarities for its support gate; a
rotation of the samples about the vertical axis for the invariance claim; hand-counted windows
for the file evaluation.
"""
from __future__ import annotations

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.spatial.distance import cdist
from sklearn.base import clone
from sklearn.datasets import make_moons

from stairsense.cli import main
from stairsense.features import FEATURE_NAMES, window_features
from stairsense.models import KOMDClassifier
from stairsense.models.mkl import NystroemKOMDClassifier, rbf_kernel_inplace
from stairsense.models.stairstep import RestrictedSelector, heading_invariant_mask


@pytest.fixture(scope="module")
def moons():
    return make_moons(300, noise=0.2, random_state=1)


def test_nystroem_komd_is_komd_on_the_nystroem_kernel(moons):
    """Oracle: KOMDClassifier(kernel='precomputed') on K̃ = k(X, Z) K_ZZ⁺ k(Z, X) with the same Z."""
    X, y = moons
    clf = NystroemKOMDClassifier(n_landmarks=25, lam=0.05, gamma=1.5, rcond=1e-10, random_state=0).fit(X, y)
    Z = clf.support_vectors_
    assert Z.shape == (25, 2) and clf.dual_coef_.shape == (25,)
    C = rbf_kernel_inplace(X, Z, 1.5)
    K_zz = rbf_kernel_inplace(Z, Z, 1.5)
    K_nys = C @ np.linalg.pinv(K_zz, rcond=1e-10, hermitian=True) @ C.T
    oracle = KOMDClassifier(lam=0.05, kernel="precomputed").fit(K_nys, y)
    X_test = np.random.default_rng(0).uniform(-1.5, 2.5, (200, 2))
    K_test = rbf_kernel_inplace(X_test, Z, 1.5) @ np.linalg.pinv(K_zz, rcond=1e-10, hermitian=True) @ C.T
    np.testing.assert_allclose(clf.decision_function(X_test), oracle.decision_function(K_test), atol=1e-6)
    assert clf.score(X, y) > 0.9


def test_nystroem_komd_with_a_budget_above_the_data_is_exact_komd(moons):
    X, y = moons[0][:80], moons[1][:80]
    budget = NystroemKOMDClassifier(n_landmarks=200, lam=0.1, gamma=1.0, rcond=1e-12).fit(X, y)
    exact = KOMDClassifier(lam=0.1, gamma=1.0).fit(X, y)
    X_test = np.random.default_rng(1).uniform(-1, 2, (50, 2))
    np.testing.assert_allclose(budget.decision_function(X_test), exact.decision_function(X_test), atol=1e-5)


def _nearest_landmark(X, clf):
    """Brute force: each row's largest RBF similarity to the landmarks (scipy's distances)."""
    return np.exp(-clf.gamma_ * cdist(X, clf.support_vectors_, "sqeuclidean")).max(axis=1)


@pytest.mark.parametrize("quantile, scale", [(0.0, 1.0), (0.05, 1.0), (0.0, 0.9)])
def test_the_support_gate_is_the_minimum_of_the_score_and_the_nearest_landmark(moons, quantile, scale):
    """Oracle: the ungated classifier (same landmarks and coefficients) and brute-force similarities."""
    X, y = moons
    gated = NystroemKOMDClassifier(n_landmarks=25, lam=0.05, gamma=1.5, support_quantile=quantile,
                                   support_scale=scale, random_state=0).fit(X, y)
    plain = clone(gated).set_params(support_quantile=None).fit(X, y)
    np.testing.assert_array_equal(gated.dual_coef_, plain.dual_coef_)
    threshold = scale * np.quantile(_nearest_landmark(X[y == 1], gated), quantile)
    assert gated.support_threshold_ == pytest.approx(threshold, abs=1e-12) and plain.support_threshold_ is None
    X_test = np.random.default_rng(2).uniform(-6, 7, (2000, 2))  # the moons and far beyond them
    nearest = _nearest_landmark(X_test, gated)
    np.testing.assert_allclose(gated.decision_function(X_test),
                               np.minimum(plain.decision_function(X_test), nearest - threshold), atol=1e-12)
    beyond = nearest < threshold
    # Beyond the support the gate decides the negative class where the expansion alone said positive.
    assert (gated.predict(X_test[beyond]) == 0).all() and (plain.predict(X_test[beyond]) == 1).any()
    np.testing.assert_array_equal(gated.predict(X_test[~beyond]), plain.predict(X_test[~beyond]))
    # At quantile 0 no positive training example is beyond it.
    if quantile == 0.0:
        assert _nearest_landmark(X[y == 1], gated).min() >= threshold


def test_the_support_gate_of_exact_komd_measures_each_example_against_the_others(moons):
    X, y = moons[0][:80], moons[1][:80]
    gated = NystroemKOMDClassifier(n_landmarks=200, lam=0.1, gamma=1.0, support_quantile=0.0).fit(X, y)
    similarity = np.exp(-cdist(X[y == 1], X, "sqeuclidean"))
    similarity[np.arange(similarity.shape[0]), np.flatnonzero(y == 1)] = 0.0
    assert gated.support_threshold_ == pytest.approx(similarity.max(axis=1).min(), abs=1e-12)
    assert gated.support_threshold_ < 1.0


def test_heading_invariant_features_do_not_change_when_the_phone_turns():
    """Rotating every sample about Up (another heading) leaves exactly the listed features unchanged."""
    rng = np.random.default_rng(3)
    samples = rng.normal(size=(400, 3)) * [1.0, 0.4, 2.0] + [0.3, -0.2, 0.1]
    offsets = np.arange(0, 401, 40)
    angle = 1.1
    c, s = np.cos(angle), np.sin(angle)
    turned = samples @ np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]]).T
    before, after = window_features(samples, offsets), window_features(turned, offsets)
    mask = heading_invariant_mask(FEATURE_NAMES)
    np.testing.assert_allclose(after[:, mask], before[:, mask], rtol=1e-9, atol=1e-12)
    changed = ~np.isclose(after, before, rtol=1e-6, atol=1e-9).all(axis=0)
    assert changed[~mask].all()  # every other feature depends on the heading


def test_restricted_selector_keeps_only_allowed_columns():
    from stairsense.models import EasyMKLSelector

    rng = np.random.default_rng(0)
    X = rng.normal(size=(120, 6))
    y = (X[:, 0] + 0.2 * rng.normal(size=120) > 0).astype(int)  # column 0 is the informative one
    allowed = np.array([False, True, True, True, False, True])
    sel = RestrictedSelector(EasyMKLSelector(k=2), allowed).fit(X, y)
    support = sel.get_support()
    assert support.sum() == 2 and not (support & ~allowed).any()
    assert RestrictedSelector(EasyMKLSelector(k=10), allowed).fit(X, y).get_support().tolist() == allowed.tolist()


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 10**6), st.integers(1, 6), st.lists(st.booleans(), min_size=8, max_size=8))
def test_required_columns_are_kept_beside_the_top_k_of_the_others(seed, k, required):
    """Oracle: the support is the required columns plus the top k EasyMKL ranks when fitted on
    the other columns alone (a plain EasyMKLSelector on that sub-matrix)."""
    from stairsense.models import EasyMKLSelector

    rng = np.random.default_rng(seed)
    X = rng.normal(size=(80, 8))
    y = (X[:, 0] - X[:, 5] + 0.5 * rng.normal(size=80) > 0).astype(int)
    required = np.asarray(required)
    support = RestrictedSelector(EasyMKLSelector(k=k), required=required).fit(X, y).get_support()
    expected = required.copy()
    others = np.flatnonzero(~required)
    if others.size > k:
        expected[others] = EasyMKLSelector(k=k).fit(X[:, others], y).get_support()
    else:
        expected[others] = True
    assert support.tolist() == expected.tolist()


def test_a_barometer_recipe_keeps_the_height_features():
    """train's pipeline keeps the 7 height features whatever EasyMKL makes of them, beside its k."""
    from stairsense.features import HEIGHT_NAMES
    from stairsense.models import TRAIN_DEFAULTS

    rng = np.random.default_rng(1)
    names = [f"f{i}" for i in range(12)] + list(HEIGHT_NAMES)
    X = rng.normal(size=(200, len(names)))
    y = (X[:, 0] + X[:, 1] > 0).astype(int)  # the height columns are noise
    recipe = TRAIN_DEFAULTS.replace(k=3, n_landmarks=20)
    support = recipe.pipeline(names).fit(X, y).named_steps["select"].get_support()
    assert support[-len(HEIGHT_NAMES):].all() and support[:12].sum() == 3
    assert recipe.pipeline(names[:12]).fit(X[:, :12], y).named_steps["select"].get_support().sum() == 3


@pytest.fixture(scope="module")
def sim_logs(tmp_path_factory):
    folder = tmp_path_factory.mktemp("robust")
    paths = []
    for seed in (11, 12, 13):
        path = folder / f"p{seed}.csv.gz"
        assert main(["simulate", "--minutes", "2", "--seed", str(seed), "--out", str(path)]) == 0
        paths.append(path)
    return folder, paths


def test_train_budget_export_and_evaluate_the_onnx_file(sim_logs, capsys):
    pytest.importorskip("onnxruntime")
    folder, (a, b, held_out) = sim_logs
    model, onnx = folder / "m.model", folder / "m.onnx"
    assert main(["train", str(a), str(b), "--landmarks", "40", "--out", str(model), "--json"]) == 0
    assert main(["export", str(model), "--out", str(onnx), "--json"]) == 0
    capsys.readouterr()
    results = []
    for m in (model, onnx):
        assert main(["evaluate", str(held_out), "--model", str(m), "--json"]) == 0
        results.append(json.loads(capsys.readouterr().out))
    python, exported = results
    assert exported["overall"]["windows"] == python["overall"]["windows"] > 50
    assert abs(exported["overall"]["f1"] - python["overall"]["f1"]) <= 0.01
    assert set(exported["false_stair_rate"]) and 0 <= exported["overall"]["recall"] <= 1


def test_train_reads_an_oxford_recording_as_level_walking(data_dir):
    from stairsense._recordings import load_labelled_logs

    folder = sorted((data_dir / "oxford-stepcounter" / "optimisation" / "data").glob("Samsung_Dario_*"))[0]
    (log,) = load_labelled_logs([folder])
    assert log.label is not None and set(np.unique(log.label)) == {1}  # WALKING: NO_STAIR windows
    assert log.meta["placement"] and log.meta["path"] == str(folder)


def test_held_out_decisions_reproduce_the_fold_counts():
    from stairsense.models import evaluate_protocol, make_classifier

    X, y = make_moons(240, noise=0.3, random_state=2)
    groups = np.repeat(np.arange(6), 40)
    res = evaluate_protocol(make_classifier("knn"), X, y, groups=groups, protocol="loso", n_inner=3)
    assert (res.held_out_stair >= 0).all()  # leave-one-subject-out tests every window once
    for counts, subjects in zip(res.counts, res.test_groups):
        test = np.isin(groups, subjects)
        pred, truth = res.held_out_stair[test] == 1, y[test] == 1
        assert counts.tolist() == [np.sum(pred & truth), np.sum(pred & ~truth), np.sum(~pred & truth)]


def test_evaluate_reports_false_stair_rate_per_placement(sim_logs, data_dir, capsys):
    _, paths = sim_logs
    oxford = sorted((data_dir / "oxford-stepcounter" / "optimisation" / "data").glob("Samsung_Dario_Hard_FrontPocket_*"))[0]
    capsys.readouterr()
    assert main(["evaluate", *map(str, paths), str(oxford), "--classifier", "dt", "--rate", "30", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    # Oxford's placement from its folder name, the simulator's from the log's metadata.
    assert "frontpocket" in result["false_stair_rate"] and len(result["false_stair_rate"]) >= 2
    assert all(0 <= r <= 1 for r in result["false_stair_rate"].values())


def test_export_refuses_a_truncated_model_with_one_line_and_exit_2(sim_logs, capsys):
    pytest.importorskip("onnxruntime")
    folder, (a, b, _) = sim_logs
    model, onnx = folder / "exact.model", folder / "cut.onnx"
    assert main(["train", str(a), str(b), "--landmarks", "0", "--out", str(model), "--json"]) == 0
    capsys.readouterr()
    assert main(["export", str(model), "--out", str(onnx), "--max-support-vectors", "4"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Nothing was written" in err and "--max-kb" in err and "--landmarks" in err
    assert not onnx.exists()
