"""GatedTreesClassifier against its oracles: the booster it flattens, and the gate by brute force."""
import copy

import numpy as np
import pytest
from scipy.spatial.distance import cdist
from sklearn.datasets import make_classification
from sklearn.ensemble import HistGradientBoostingClassifier

from stairsense.models import GatedTreesClassifier


def booster_seed(random_state):
    # the first draw of the estimator's random state seeds the booster
    return np.random.RandomState(random_state).randint(np.iinfo(np.int32).max)


@pytest.mark.parametrize("n, max_leaves", [(600, 8), (600, 3), (30, 8)])
def test_flattened_trees_decide_as_the_booster(n, max_leaves):
    """n = 30 is too few for any split (20 examples per leaf): every tree is a constant, folded into
    the baseline, and the node arrays are empty."""
    X, y = make_classification(n, n_features=6, random_state=1)
    clf = GatedTreesClassifier(n_trees=40, max_leaves=max_leaves, support_quantile=None, random_state=0).fit(X, y)
    booster = HistGradientBoostingClassifier(max_iter=40, max_leaf_nodes=max_leaves, early_stopping=False,
                                             random_state=booster_seed(0)).fit(X, y == 1)
    X_new = np.random.default_rng(2).normal(scale=2.0, size=(500, 6))
    np.testing.assert_allclose(clf.tree_margin(X_new), booster.decision_function(X_new), rtol=1e-12, atol=1e-12)
    assert clf.tree_roots_.size == (0 if n == 30 else 40)
    n_interior = clf.node_feature_.size
    assert clf.leaf_value_.size == n_interior + clf.tree_roots_.size  # a binary tree: one leaf more than splits


def test_tree_margin_is_computed_block_by_block():
    X, y = make_classification(300, n_features=4, random_state=3)
    clf = GatedTreesClassifier(n_trees=10, support_quantile=None, random_state=0).fit(X, y)
    X_big = np.random.default_rng(4).normal(size=(9000, 4))  # more than one block of rows
    np.testing.assert_array_equal(clf.tree_margin(X_big)[-50:], clf.tree_margin(X_big[-50:]))


@pytest.mark.parametrize("quantile, scale", [(0.0, 1.0), (0.2, 0.9), (0.5, 0.5)])
def test_gate_by_brute_force(quantile, scale):
    X, y = make_classification(800, n_features=5, random_state=5)
    clf = GatedTreesClassifier(n_trees=20, n_landmarks=16, gamma=0.3, threshold=-0.4, support_quantile=quantile,
                               support_scale=scale, random_state=0).fit(X, y)
    Z = clf.support_vectors_
    assert Z.shape == (16, 5)
    nearest_train = np.exp(-0.3 * cdist(X[y == 1], Z, "sqeuclidean")).max(axis=1)
    edge = scale * np.quantile(nearest_train, quantile)
    assert clf.support_threshold_ == pytest.approx(edge, rel=1e-12)
    # every positive example at or beyond the quantile passes (up to the kernels' rounding)
    assert np.mean(nearest_train > clf.support_threshold_ - 1e-12) >= 1 - quantile
    X_new = np.random.default_rng(6).normal(scale=3.0, size=(400, 5))
    gate = np.exp(-0.3 * cdist(X_new, Z, "sqeuclidean")).max(axis=1) - clf.support_threshold_
    expected = np.minimum(clf.tree_margin(X_new) + 0.4, gate)
    np.testing.assert_allclose(clf.decision_function(X_new), expected, rtol=1e-10, atol=1e-12)
    np.testing.assert_array_equal(clf.predict(X_new), np.where(expected > 0, 1, 0))


def test_landmarks_are_positive_examples_measured_against_the_others_when_few():
    X, y = make_classification(200, n_features=3, n_informative=2, n_redundant=0, weights=[0.95], random_state=7)
    clf = GatedTreesClassifier(n_trees=5, n_landmarks=50, gamma=1.0, random_state=0).fit(X, y)
    positives = np.unique(X[y == 1], axis=0)
    np.testing.assert_array_equal(clf.support_vectors_, positives)
    K = np.exp(-cdist(positives, positives, "sqeuclidean"))
    np.fill_diagonal(K, 0.0)
    assert clf.support_threshold_ == pytest.approx(0.9 * K.max(axis=1).min(), rel=1e-12)


def test_the_gate_turns_off_far_windows_the_trees_call_positive():
    """A leaf extends to infinity: far from the data the trees still say positive somewhere; the gate
    says negative everywhere there, and changes nothing in the trees."""
    X, y = make_classification(600, n_features=4, random_state=8)
    gated = GatedTreesClassifier(n_trees=30, gamma=0.5, random_state=0).fit(X, y)
    directions = np.random.default_rng(9).normal(size=(200, 4))
    X_far = X.mean(axis=0) + 40 * directions / np.linalg.norm(directions, axis=1, keepdims=True)
    assert np.any(gated.tree_margin(X_far) > 0)
    assert np.all(gated.decision_function(X_far) < 0)
    ungated = GatedTreesClassifier(n_trees=30, gamma=0.5, support_quantile=None, random_state=0).fit(X, y)
    np.testing.assert_array_equal(ungated.tree_margin(X_far), gated.tree_margin(X_far))
    assert ungated.support_vectors_ is None and ungated.support_threshold_ is None


@pytest.mark.parametrize("corrupt", ["cycle", "leaf out of range", "feature out of range", "lengths"])
def test_corrupt_trees_are_refused_not_looped(corrupt):
    """A model file is read into the node arrays: a cycle (a child pointing back at its parent), an
    index past the leaves, a feature the model lacks or ragged arrays raise one clear error, from
    the Python decision and from the export's traversal alike."""
    from stairsense.export._trees import tree_tensors

    X, y = make_classification(300, n_features=4, random_state=10)
    clf = GatedTreesClassifier(n_trees=5, support_quantile=None, random_state=0).fit(X, y)
    inner = np.flatnonzero(~clf.node_true_leaf_)[0]
    if corrupt == "cycle":
        clf.node_true_[inner] = inner
    elif corrupt == "leaf out of range":
        clf.node_false_leaf_[0], clf.node_false_[0] = True, clf.leaf_value_.size
    elif corrupt == "feature out of range":
        clf.node_feature_[0] = 4
    else:
        clf.node_split_ = clf.node_split_[:-1]
    for call in (lambda: clf.predict(X), lambda: tree_tensors(clf)):
        with pytest.raises(ValueError, match="no valid trees.*retrain"):
            call()


def test_a_tree_larger_than_max_leaves_is_refused_by_the_export():
    """Arrays can be valid node by node and still hold a tree with more leaves than ``max_leaves``
    (a crafted file whose first tree's last leaf points at the next tree's root): the export's
    padded tensors have no room for it, so it refuses the file rather than index past them."""
    from stairsense.export._trees import tree_tensors

    X, y = make_classification(300, n_features=4, random_state=10)
    clf = GatedTreesClassifier(n_trees=5, max_leaves=4, support_quantile=None, random_state=0).fit(X, y)
    first_tree_nodes = np.arange(clf.tree_roots_[0], clf.tree_roots_[1])
    parent = first_tree_nodes[clf.node_false_leaf_[first_tree_nodes]][-1]
    clf.node_false_leaf_[parent], clf.node_false_[parent] = False, clf.tree_roots_[1]
    clf.check_trees()  # every index is in range and every child after its parent
    with pytest.raises(ValueError, match="more than its max_leaves = 4 leaves.*retrain"):
        tree_tensors(clf)


def test_the_onset_threshold_decides_as_the_same_trees_at_that_threshold():
    """Oracle: a copy of the fitted classifier with its threshold moved to the onset threshold."""
    X, y = make_classification(600, n_features=5, random_state=8)
    clf = GatedTreesClassifier(n_trees=20, n_landmarks=16, threshold=-0.5, onset_threshold=-1.5,
                               random_state=0).fit(X, y)
    lowered = copy.deepcopy(clf).set_params(threshold=-1.5, onset_threshold=None)
    X_new = np.random.default_rng(9).normal(scale=2.0, size=(9000, 5))  # more than one block of rows
    np.testing.assert_allclose(clf.onset_decision_function(X_new), lowered.decision_function(X_new), rtol=0, atol=0)
    labels, onset = clf.decisions(X_new)
    np.testing.assert_array_equal(labels, clf.predict(X_new))
    np.testing.assert_array_equal(onset, lowered.predict(X_new) == 1)
    assert (onset & (labels == 0)).any() and not (labels.astype(bool) & ~onset).any()


def test_without_an_onset_threshold_there_are_no_onset_candidates_and_a_higher_one_is_refused():
    X, y = make_classification(300, n_features=4, random_state=10)
    clf = GatedTreesClassifier(n_trees=5, random_state=0).fit(X, y)
    assert not clf.decisions(X)[1].any()
    with pytest.raises(ValueError, match="no onset_threshold"):
        clf.onset_decision_function(X)
    with pytest.raises(ValueError, match="must not exceed threshold"):
        GatedTreesClassifier(n_trees=5, threshold=-1.0, onset_threshold=0.0).fit(X, y)
