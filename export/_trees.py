"""A :class:`~stairsense.models.GatedTreesClassifier` head as standard ONNX ops, and its support gate.

ONNX has tree operators, but only in the ``ai.onnx.ml`` domain: ``TreeEnsembleRegressor`` stores a
mode string per node (about 560 bytes per 8-leaf tree from skl2onnx), and the compact
``TreeEnsemble`` of opset 5 needs ONNX Runtime 1.20 or later, while the exported graphs keep to
:data:`~stairsense.export._graph.ALLOWED_OPS` for the runtimes phones have. Trees of at most
``L`` leaves are evaluated instead as one batched matrix product (the "GEMM" strategy of
Nakandala et al., "A tensor compiler for unified machine learning prediction serving", OSDI 2020),
with every tree padded to ``L − 1`` interior nodes and ``L`` leaves:

* c[t, i] = 1 where window x goes to the true child of tree t's i-th node: x[f_ti] ≤ s_ti
  (a ``Gather`` of the window's features and one comparison);
* C[t, i, l] = +1 where leaf l lies below node i's true child, −1 below its false child, else 0;
  D[t, l] = the number of +1 entries of leaf l (its ancestors whose true child it follows);
* (c Cₜ)[l] counts the true-child ancestors that x satisfies minus the false-child ancestors it
  does not avoid, so it equals D[t, l] exactly for the one leaf x reaches and is smaller for every
  other (integers, exact in float32);
* F(x) = baseline + Σ_t Σ_l w[t, l] · [(c Cₜ)[l] ≥ D[t, l]].

Padded nodes have zero rows in C, padded leaves weight 0 and an all-zero column in C, whose count
0 ≥ D = 0 would reach it: harmless, as its weight is 0. C is not stored: with the leaves numbered
depth first, true subtree first, the leaves below a node's true child are one run [a, m) and those
below its false child the next, [m, b), so C[t, i, l] = [l ≥ a] − 2 [l ≥ m] + [l ≥ b] from three
int8 numbers per node, and D is computed from C (boosted trees of 8 leaves take a hundred or more
shapes, so a table per shape, 56 bytes each, would cost more). Stored per tree: those runs, the
feature index of each node (int8), its split (float32, as the model compares) and the leaf weights
(float32; float16 below fp32 precision): 72 bytes per 8-leaf tree at int8, against about 170 for
the opset-5 ``TreeEnsemble``. The gate is
:func:`~stairsense.export._compact.add_rbf_kernel`'s kernel row over the landmarks (int8 by
default), its maximum less τ; the score is min(F(x) − threshold, gate), STAIR where it is > 0,
the estimator's rule. A head with an ``onset_threshold`` also gives min(F(x) − onset_threshold,
gate), the same sum and gate with another constant.
"""
from __future__ import annotations

import copy

import numpy as np
import onnx

from ._compact import add_rbf_kernel, add_support_gate
from ._graph import GraphBuilder

__all__ = ["add_tree_decision", "tree_tensors"]


def _smallest_int(values: np.ndarray) -> np.ndarray:
    return values.astype(np.int8 if np.abs(values).max(initial=0) < 128 else np.int32)


def tree_tensors(trees) -> dict:
    """The padded GEMM tensors of a fitted ``GatedTreesClassifier`` (see the module docstring).

    Leaves are numbered depth first, a node's true subtree before its false one, so the leaves
    below each node's true child are one run of numbers and those below its false child the next.

    Returns
    -------
    dict with ``feature`` (T, L−1) int, ``split`` (T, L−1) float32, ``paths`` C (T, L−1, L) int8,
    ``ranges`` (T, L−1, 3) int (each node's first leaf, first leaf below its false child and one
    past its last leaf; L, L, L for a padded node), ``depth`` D (T, L) int (padded leaves 0) and
    ``weight`` (T, L) float32 (padded leaves 0).
    """
    trees.check_trees()  # the traversal below would loop on a corrupt file's cycle
    n_trees, n_leaves = trees.tree_roots_.size, int(trees.max_leaves)
    feature = np.zeros((n_trees, n_leaves - 1), np.int64)
    split = np.zeros((n_trees, n_leaves - 1), np.float32)
    paths = np.zeros((n_trees, n_leaves - 1, n_leaves), np.int8)
    depth = np.zeros((n_trees, n_leaves), np.int64)
    weight = np.zeros((n_trees, n_leaves), np.float32)
    for t, root in enumerate(trees.tree_roots_):
        stack = [(int(root), False, [])]  # (node, is a leaf, [(slot, +1 true / −1 false), ...] of its ancestors)
        n_slot = n_leaf = 0
        while stack:
            node, is_leaf, above = stack.pop()
            if (n_leaf if is_leaf else n_slot + 1) >= n_leaves:  # a crafted file may share nodes between trees
                raise ValueError(f"a tree of the model has more than its max_leaves = {n_leaves} leaves: the model is "
                                 "corrupt; retrain it")
            if is_leaf:
                for s, direction in above:
                    paths[t, s, n_leaf] = direction
                depth[t, n_leaf] = sum(direction > 0 for _, direction in above)
                weight[t, n_leaf] = trees.leaf_value_[node]
                n_leaf += 1
                continue
            feature[t, n_slot], split[t, n_slot] = trees.node_feature_[node], trees.node_split_[node]
            # pushed false first, so the true subtree is numbered first
            stack.append((int(trees.node_false_[node]), bool(trees.node_false_leaf_[node]), above + [(n_slot, -1)]))
            stack.append((int(trees.node_true_[node]), bool(trees.node_true_leaf_[node]), above + [(n_slot, 1)]))
            n_slot += 1
    used = paths != 0
    first = np.where(used.any(axis=2), used.argmax(axis=2), n_leaves)
    last = np.where(used.any(axis=2), n_leaves - used[..., ::-1].argmax(axis=2), n_leaves)
    middle = np.where(used.any(axis=2), (paths < 0).argmax(axis=2), n_leaves)
    return {"feature": feature, "split": split, "paths": paths, "ranges": np.stack([first, middle, last], axis=-1),
            "depth": depth, "weight": weight}


def add_tree_decision(g: GraphBuilder, x: str, trees, precision: str):
    """Add one window's score (``[1]``) of a fitted ``GatedTreesClassifier`` on its ``[k]`` float32
    features ``x``; return (score name, onset score name or None, the classifier as stored: its
    landmarks after rounding and, below fp32, its leaf values in float16). The onset score is the
    same min at ``onset_threshold`` (the classifier's ``onset_decision_function``), for a classifier
    that has one: the trees and the gate are computed once for both."""
    stored = copy.deepcopy(trees)
    leaf_dtype = np.float32 if precision == "fp32" else np.float16
    stored.leaf_value_ = trees.leaf_value_.astype(leaf_dtype).astype(np.float64)
    score = g.const(np.array([trees.baseline_ - trees.threshold], np.float32), "tree_baseline")
    if trees.tree_roots_.size:
        t = tree_tensors(trees)
        n_trees, n_leaves = t["weight"].shape
        # C from each node's leaf runs (3 small integers, where a table per tree would take L − 1
        # times L): C[i, l] = [l ≥ first] − 2 [l ≥ middle] + [l ≥ last], +1 on the true run, −1 on
        # the false one, 0 elsewhere. ONNX Runtime folds these constant nodes when it loads the model.
        ranges = g.op("Cast", g.const(_smallest_int(np.moveaxis(t["ranges"], -1, 0)[..., None]), "tree_ranges"),
                      to=onnx.TensorProto.FLOAT)  # (3, T, L − 1, 1)
        at_or_after = g.op("Cast", g.op("GreaterOrEqual", g.const(np.arange(n_leaves, dtype=np.float32)), ranges),
                           to=onnx.TensorProto.FLOAT)
        paths = g.op("ReduceSum", g.op("Mul", at_or_after, g.const(np.array([1, -2, 1], np.float32).reshape(3, 1, 1, 1))),
                     g.const(np.array([0], np.int64)), keepdims=0)
        depth = g.op("ReduceSum", g.op("Max", paths, g.const(np.float32(0.0))), g.const(np.array([1], np.int64)),
                     keepdims=0)  # D: each leaf's true-child ancestors, the +1 entries of its column of C
        indices = g.op("Cast", g.const(_smallest_int(t["feature"].ravel()), "tree_features"), to=onnx.TensorProto.INT64)
        goes_true = g.op("LessOrEqual", g.op("Gather", x, indices, axis=0), g.const(t["split"].ravel(), "tree_splits"))
        c = g.op("Reshape", g.op("Cast", goes_true, to=onnx.TensorProto.FLOAT),
                 g.const(np.array([n_trees, 1, n_leaves - 1], np.int64)))
        counts = g.op("Reshape", g.op("MatMul", c, paths), g.const(np.array([n_trees, n_leaves], np.int64)))
        reached = g.op("Cast", g.op("GreaterOrEqual", counts, depth), to=onnx.TensorProto.FLOAT)
        weight = g.const(t["weight"].astype(leaf_dtype), "tree_leaves")
        if leaf_dtype != np.float32:
            weight = g.op("Cast", weight, to=onnx.TensorProto.FLOAT)
        margin = g.op("ReduceSum", g.op("Reshape", g.op("Mul", reached, weight), g.const(np.array([-1], np.int64))),
                      g.const(np.array([0], np.int64)), keepdims=1)
        score = g.op("Add", margin, score, hint="score")
    else:  # no tree has a split: the score is the constant, broadcast to the window's [1]
        score = g.op("Add", g.op("Mul", g.op("ReduceSum", x, g.const(np.array([0], np.int64)), keepdims=1),
                                 g.const(np.float32(0.0))), score, hint="score")
    onset = None
    if trees.onset_threshold is not None:
        onset = g.op("Add", score, g.const(np.array([trees.threshold - trees.onset_threshold], np.float32)),
                     hint="onset_score")
    if trees.support_threshold_ is not None:
        kernel, stored.support_vectors_ = add_rbf_kernel(g, x, trees.support_vectors_, trees.gamma_, precision)
        gate = add_support_gate(g, kernel, trees.support_threshold_)
        score = g.op("Min", score, gate, hint="score")
        if onset is not None:
            onset = g.op("Min", onset, gate, hint="onset_score")
    return score, onset, stored
