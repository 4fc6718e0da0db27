"""Gradient-boosted trees whose positive class is gated to where the training positives were.

The head of the barometer stair-step model (``TrainRecipe.head``; ``benchmarks/bench_barometer.py``
measures it beside KOMD). On the same window rows, boosted trees find stairs the KOMD RBF expansion
misses and call fewer level steps stairs; alone they also call stairs where no training window was
(a phone waved about before a walk), because a tree's leaf extends to infinity. The gate is the reject
option of :class:`~stairsense.models.NystroemKOMDClassifier` (its step 5), kept to the positive
class: the score is

    min(F(x) − threshold, max_j k(x, z_j) − τ)

with F the trees' log-odds, z_j ``n_landmarks`` k-means centres of the *positive* training
examples and τ ``support_scale`` times the ``support_quantile``-quantile of each positive
example's nearest-landmark similarity. KOMD's gate also holds its negative landmarks, since they
are its expansion anyway; here the landmarks exist only for the gate, and a window nearer a
negative landmark than any positive one is one the trees should not be trusted to call positive
either. Fewer landmarks also keep the exported file small: a landmark takes one byte per feature
at int8, an 8-leaf tree about 70 bytes (``stairsense.export._trees``).

The trees are scikit-learn's :class:`~sklearn.ensemble.HistGradientBoostingClassifier`, flattened
after the fit into plain arrays in the layout of ONNX's ``ai.onnx.ml.TreeEnsemble`` (opset 5):
interior nodes with a feature, a split and two children, each child an interior node or a leaf.
The decision is computed from those arrays, so what a model file stores is what decides, with no
scikit-learn object to pickle (``tests/test_gated_trees.py`` checks the arrays against the
booster's own decision). The splits are stored in float32 and compared with the window's features
rounded to float32, as the exported graph compares them; the graph computes those features to
within a float32 rounding of Python's, so a window on a split may go either way, and the export
holds the file to its decisions rather than to its scores.
"""
from __future__ import annotations

from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, _fit_context
from sklearn.cluster import KMeans
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted, validate_data

from ..mkl._komd import encode_binary_labels, rbf_kernel_inplace, resolve_rbf_gamma

__all__ = ["GatedTreesClassifier"]

#: Windows scored at once: the traversal holds one node index per window and tree.
_ROWS_PER_BLOCK = 4096


class GatedTreesClassifier(ClassifierMixin, BaseEstimator):
    """Boosted trees for a binary problem, positive only within the positive class's support.

    Parameters
    ----------
    n_trees : int ≥ 1, default=100
        Boosting rounds (one tree each; early stopping off, so the size is known before the fit).
    max_leaves : int ≥ 2, default=8
    learning_rate : float > 0, default=0.1
    threshold : float, default=0.0
        Log-odds from which the trees say positive (0: probability ½).
    onset_threshold : float ≤ threshold or None, default=None
        A second, lower log-odds threshold (the gate unchanged) that :meth:`predict_onset` decides
        at: the stair-step vote calls a window there STAIR where the next window of its run is
        STAIR (:class:`~stairsense.models.StepVote`, a flight's onset). None: no such threshold.
    n_landmarks : int ≥ 1, default=128
        k-means centres of the positive class for the gate; with fewer distinct positive examples,
        those examples, each then measured against the others.
    gamma : float > 0 or "scale", default="scale"
        RBF width of the gate's similarity.
    support_quantile : float in [0, 1) or None, default=0.0
        None turns the gate off.
    support_scale : float in (0, 1], default=0.9
        Moves the gate's edge out (as in :class:`~stairsense.models.NystroemKOMDClassifier`):
        the training examples sit nearer the landmarks placed on them than new examples do.
    random_state : int, RandomState or None, default=None
        Seeds the booster's binning subsample and the k-means initialisation.

    Attributes
    ----------
    classes_ : ndarray of shape (2,)
    baseline_ : float
        The booster's initial log-odds plus the value of any tree that is a single leaf.
    tree_roots_ : ndarray of shape (n_trees_kept,)
        Index of each tree's root in the node arrays.
    node_feature_, node_split_ : ndarray of shape (n_nodes,)
        An interior node sends x to its true child where ``x[node_feature_] <= node_split_``, both
        in float32 (``node_split_`` is the booster's split rounded to float32).
    node_true_, node_false_ : ndarray of shape (n_nodes,)
        The children: an index into the node arrays, or into ``leaf_value_`` where
        ``node_true_leaf_`` / ``node_false_leaf_`` says the child is a leaf.
    node_true_leaf_, node_false_leaf_ : ndarray of shape (n_nodes,), bool
    leaf_value_ : ndarray of shape (n_leaves,)
        Each leaf's log-odds contribution.
    support_vectors_ : ndarray of shape (m, n_features) or None
        The gate's landmarks (None without the gate).
    gamma_ : float
    support_threshold_ : float or None
        τ.

    Examples
    --------
    >>> from sklearn.datasets import make_moons
    >>> X, y = make_moons(400, noise=0.15, random_state=0)
    >>> clf = GatedTreesClassifier(n_trees=30, n_landmarks=20, random_state=0).fit(X, y)
    >>> clf.support_vectors_.shape, float(clf.score(X, y)) > 0.9
    ((20, 2), True)
    """

    _parameter_constraints: dict = {
        "n_trees": [Interval(Integral, 1, None, closed="left")],
        "max_leaves": [Interval(Integral, 2, None, closed="left")],
        "learning_rate": [Interval(Real, 0, None, closed="neither")],
        "threshold": [Real],
        "onset_threshold": [Real, None],
        "n_landmarks": [Interval(Integral, 1, None, closed="left")],
        "gamma": [StrOptions({"scale"}), Interval(Real, 0, None, closed="neither")],
        "support_quantile": [Interval(Real, 0, 1, closed="left"), None],
        "support_scale": [Interval(Real, 0, 1, closed="right")],
        "random_state": ["random_state"],
    }

    def __init__(self, n_trees=100, max_leaves=8, learning_rate=0.1, threshold=0.0, onset_threshold=None,
                 n_landmarks=128, gamma="scale", support_quantile=0.0, support_scale=0.9, random_state=None):
        self.n_trees = n_trees
        self.max_leaves = max_leaves
        self.learning_rate = learning_rate
        self.threshold = threshold
        self.onset_threshold = onset_threshold
        self.n_landmarks = n_landmarks
        self.gamma = gamma
        self.support_quantile = support_quantile
        self.support_scale = support_scale
        self.random_state = random_state

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = False
        return tags

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y):
        """Boost the trees, flatten them, and place the gate on the positive examples.

        Parameters
        ----------
        X : array-like of shape (l, n_features)
        y : array-like of shape (l,)
            Exactly two classes; ``classes_[1]`` is the positive one.

        Returns
        -------
        self : GatedTreesClassifier
        """
        if self.onset_threshold is not None and self.onset_threshold > self.threshold:
            raise ValueError(f"onset_threshold ({self.onset_threshold}) must not exceed threshold ({self.threshold}): "
                             "it adds windows below the decision threshold")
        X, y = validate_data(self, X, y, dtype=np.float64)
        self.classes_, y_signed = encode_binary_labels(y, type(self).__name__)
        rng = check_random_state(self.random_state)
        positive = y_signed > 0
        booster = HistGradientBoostingClassifier(
            max_iter=self.n_trees, max_leaf_nodes=self.max_leaves, learning_rate=self.learning_rate,
            early_stopping=False, random_state=rng.randint(np.iinfo(np.int32).max))
        # Boosted on the float32 values it will compare: a split between two values that are one
        # float32 number (float64 noise of one feature) would decide on rounding alone, and the
        # phone, which sends float32 rows, rounds differently from a float64 host.
        booster.fit(X.astype(np.float32).astype(np.float64), positive)
        self._flatten(booster)
        self.gamma_ = resolve_rbf_gamma(self.gamma, X)
        self.support_vectors_ = self.support_threshold_ = None
        if self.support_quantile is not None:
            self._place_gate(X[positive], rng)
        return self

    def _flatten(self, booster):
        """The booster's trees as the TreeEnsemble arrays (see the class attributes).

        Reads the fitted predictors' node tables, which scikit-learn does not document; the test
        against ``booster.decision_function`` catches a change of their layout.
        """
        baseline = float(np.ravel(booster._baseline_prediction)[0])
        roots, feature, split, children, leaf_flags, leaf_value = [], [], [], [], [], []
        for (predictor,) in booster._predictors:
            nodes = predictor.nodes
            is_leaf = nodes["is_leaf"].astype(bool)
            if is_leaf[0]:  # a tree without a split adds a constant
                baseline += float(nodes["value"][0])
                continue
            interior, leaves = np.flatnonzero(~is_leaf), np.flatnonzero(is_leaf)
            index = np.empty(len(nodes), dtype=np.int64)
            index[interior] = len(feature) + np.arange(interior.size)
            index[leaves] = len(leaf_value) + np.arange(leaves.size)
            roots.append(index[0])
            feature.extend(nodes["feature_idx"][interior])
            split.extend(nodes["num_threshold"][interior])
            pairs = np.stack([nodes["left"][interior], nodes["right"][interior]], axis=1)
            children.extend(index[pairs])
            leaf_flags.extend(is_leaf[pairs])
            leaf_value.extend(nodes["value"][leaves])
        children = np.asarray(children, dtype=np.int64).reshape(-1, 2)
        leaf_flags = np.asarray(leaf_flags, dtype=bool).reshape(-1, 2)
        self.baseline_ = baseline
        self.tree_roots_ = np.asarray(roots, dtype=np.int64)
        self.node_feature_ = np.asarray(feature, dtype=np.int64)
        self.node_split_ = np.asarray(split, dtype=np.float32)
        self.node_true_, self.node_false_ = children[:, 0], children[:, 1]
        self.node_true_leaf_, self.node_false_leaf_ = leaf_flags[:, 0], leaf_flags[:, 1]
        self.leaf_value_ = np.asarray(leaf_value, dtype=np.float64)

    def _place_gate(self, X_positive, rng):
        points = np.unique(X_positive, axis=0)
        if points.shape[0] <= self.n_landmarks:
            # every distinct positive example is a landmark: each is measured against the others
            Z = points
            nearest_K = rbf_kernel_inplace(points, Z, self.gamma_)
            np.fill_diagonal(nearest_K, 0.0)
        else:
            km = KMeans(n_clusters=self.n_landmarks, n_init=1, max_iter=100,
                        random_state=rng.randint(np.iinfo(np.int32).max))
            Z = km.fit(points).cluster_centers_
            nearest_K = rbf_kernel_inplace(X_positive, Z, self.gamma_)
        edge = self.support_scale * np.quantile(nearest_K.max(axis=1), self.support_quantile)
        self.support_vectors_ = Z
        # One ulp below, so the example at the quantile passes (the decision is score > 0).
        self.support_threshold_ = float(np.nextafter(edge, -np.inf))

    def check_trees(self):
        """Raise ``ValueError`` unless the node arrays form trees: every index in range, every
        feature one the model was fitted on, and every interior child after its parent (as
        :meth:`fit` numbers them), so no path can loop. A model file is read into these arrays,
        and a corrupt or crafted one would otherwise send a traversal round a cycle for ever.
        """
        check_is_fitted(self)
        n_nodes, n_leaves = self.node_feature_.shape[0], self.leaf_value_.shape[0]
        problems = []
        arrays = (self.node_split_, self.node_true_, self.node_false_, self.node_true_leaf_, self.node_false_leaf_)
        if any(np.shape(a) != (n_nodes,) for a in arrays):
            problems.append("node arrays of different lengths")
        else:
            if np.any((self.node_feature_ < 0) | (self.node_feature_ >= self.n_features_in_)):
                problems.append("a split on a feature the model does not have")
            if np.any((self.tree_roots_ < 0) | (self.tree_roots_ >= n_nodes)):
                problems.append("a root outside the nodes")
            for child, is_leaf in ((self.node_true_, self.node_true_leaf_), (self.node_false_, self.node_false_leaf_)):
                if np.any(np.where(is_leaf, (child < 0) | (child >= n_leaves),
                                   (child <= np.arange(n_nodes)) | (child >= n_nodes))):
                    problems.append("a child outside the nodes or leaves, or before its parent")
                    break
        if problems:
            raise ValueError(f"{type(self).__name__} holds no valid trees ({'; '.join(problems)}): the model is "
                             "corrupt; retrain it")

    def tree_margin(self, X):
        """The trees' log-odds F(x) (no threshold, no gate).

        Parameters
        ----------
        X : array-like of shape (n, n_features)

        Returns
        -------
        margin : ndarray of shape (n,)
        """
        self.check_trees()
        X = validate_data(self, X, dtype=np.float64, reset=False)
        return np.concatenate([self._block_margin(X[s:s + _ROWS_PER_BLOCK])
                               for s in range(0, X.shape[0], _ROWS_PER_BLOCK)] or [np.empty(0)])

    def _block_margin(self, block):
        """F of at most ``_ROWS_PER_BLOCK`` validated rows: every tree walked at once, one level a step."""
        block = block.astype(np.float32)
        node = np.tile(self.tree_roots_, (block.shape[0], 1))
        done = np.zeros(node.shape, dtype=bool)
        rows = np.arange(block.shape[0])[:, None].repeat(node.shape[1], axis=1)
        while not done.all():
            active = ~done
            at, r = node[active], rows[active]
            go_true = block[r, self.node_feature_[at]] <= self.node_split_[at]
            node[active] = np.where(go_true, self.node_true_[at], self.node_false_[at])
            done[active] = np.where(go_true, self.node_true_leaf_[at], self.node_false_leaf_[at])
        return self.baseline_ + self.leaf_value_[node].sum(axis=1)

    def decision_function(self, X):
        """``min(F(x) − threshold, max_j k(x, z_j) − τ)``; > 0 means ``classes_[1]``.

        Parameters
        ----------
        X : array-like of shape (n, n_features)

        Returns
        -------
        scores : ndarray of shape (n,)
        """
        return self._scores(X, self.threshold)[0]

    def onset_decision_function(self, X):
        """The decision at ``onset_threshold``: ``min(F(x) − onset_threshold, max_j k(x, z_j) − τ)``,
        > 0 at a flight's onset candidate.

        Parameters
        ----------
        X : array-like of shape (n, n_features)

        Returns
        -------
        scores : ndarray of shape (n,)
        """
        if self.onset_threshold is None:
            raise ValueError(f"this {type(self).__name__} has no onset_threshold")
        return self._scores(X, self.onset_threshold)[0]

    def decisions(self, X):
        """:meth:`predict` and the onset candidates (``onset_decision_function > 0``; all False
        without ``onset_threshold``), walking the trees once.

        Returns
        -------
        labels : ndarray of shape (n,)
        onset : ndarray of shape (n,), bool
        """
        thresholds = (self.threshold,) if self.onset_threshold is None else (self.threshold, self.onset_threshold)
        scores = self._scores(X, *thresholds)
        onset = scores[1] > 0 if len(scores) > 1 else np.zeros(scores[0].shape, dtype=bool)
        return self.classes_[(scores[0] > 0).astype(int)], onset

    def _scores(self, X, *thresholds):
        """The decision at each threshold, from one walk of the trees and one gate."""
        self.check_trees()
        X = validate_data(self, X, dtype=np.float64, reset=False)
        scores = [[] for _ in thresholds]
        for s in range(0, X.shape[0], _ROWS_PER_BLOCK):
            block = X[s:s + _ROWS_PER_BLOCK]
            margin = self._block_margin(block)
            gate = None
            if self.support_threshold_ is not None:
                gate = rbf_kernel_inplace(block, self.support_vectors_, self.gamma_).max(axis=1) - self.support_threshold_
            for out, threshold in zip(scores, thresholds):
                out.append(margin - threshold if gate is None else np.minimum(margin - threshold, gate))
        return [np.concatenate(out or [np.empty(0)]) for out in scores]

    def predict(self, X):
        """``classes_[1]`` where the decision is > 0, else ``classes_[0]`` (scikit-learn's convention:
        balanced trees without a split have margin 0 and say ``classes_[0]``).

        Parameters
        ----------
        X : array-like of shape (n, n_features)

        Returns
        -------
        labels : ndarray of shape (n,)
        """
        positive = self.decision_function(X) > 0
        return self.classes_[positive.astype(int)]
