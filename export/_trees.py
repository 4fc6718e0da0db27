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
0 ≥ D = 0 would reach it: harmless, as its weight is 0. C depends on a tree's shape only, and
boosted trees of 8 leaves come in few shapes, so each shape is stored once (int8) and gathered per
tree; D is computed from C. Stored per tree: the feature index of each node (int8), its split
(float32, as the model compares) and the leaf weights (float32; float16 below fp32 precision):
about 70 bytes per 8-leaf tree, against about 170 for the opset-5 ``TreeEnsemble``. The gate is
:func:`~stairsense.export._compact.add_rbf_kernel`'s kernel row over the landmarks (int8 by
default), its maximum less τ; the score is min(F(x) − threshold, gate), STAIR where it is > 0,
the estimator's rule.
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

    Returns
    -------
    dict with ``feature`` (T, L−1) int, ``split`` (T, L−1) float32, ``paths`` C (T, L−1, L) int8,
    ``depth`` D (T, L) int (padded leaves 0) and ``weight`` (T, L) float32 (padded leaves 0).
    """
    trees.check_trees()  # the traversal below would loop on a corrupt file's cycle
    n_trees, n_leaves = trees.tree_roots_.size, int(trees.max_leaves)
    feature = np.zeros((n_trees, n_leaves - 1), np.int64)
    split = np.zeros((n_trees, n_leaves - 1), np.float32)
    paths = np.zeros((n_trees, n_leaves - 1, n_leaves), np.int8)
    depth = np.zeros((n_trees, n_leaves), np.int64)
    weight = np.zeros((n_trees, n_leaves), np.float32)
    for t, root in enumerate(trees.tree_roots_):
        slots: dict[int, int] = {}  # interior node → its slot in the tree
        stack = [(int(root), [])]  # (node, [(slot, +1 true / −1 false), ...] of its ancestors)
        n_leaf = 0
        while stack:
            node, above = stack.pop()
            slot = slots.setdefault(node, len(slots))
            feature[t, slot], split[t, slot] = trees.node_feature_[node], trees.node_split_[node]
            for child, is_leaf, sign in ((trees.node_true_[node], trees.node_true_leaf_[node], 1),
                                         (trees.node_false_[node], trees.node_false_leaf_[node], -1)):
                path = above + [(slot, sign)]
                if not is_leaf:
                    stack.append((int(child), path))
                    continue
                for s, direction in path:
                    paths[t, s, n_leaf] = direction
                depth[t, n_leaf] = sum(direction > 0 for _, direction in path)
                weight[t, n_leaf] = trees.leaf_value_[child]
                n_leaf += 1
    return {"feature": feature, "split": split, "paths": paths, "depth": depth, "weight": weight}


def add_tree_decision(g: GraphBuilder, x: str, trees, precision: str):
    """Add one window's score (``[1]``) of a fitted ``GatedTreesClassifier`` on its ``[k]`` float32
    features ``x``; return (score name, the classifier as stored: its landmarks after rounding and,
    below fp32, its leaf values in float16)."""
    stored = copy.deepcopy(trees)
    leaf_dtype = np.float32 if precision == "fp32" else np.float16
    stored.leaf_value_ = trees.leaf_value_.astype(leaf_dtype).astype(np.float64)
    score = g.const(np.array([trees.baseline_ - trees.threshold], np.float32), "tree_baseline")
    if trees.tree_roots_.size:
        t = tree_tensors(trees)
        n_trees, n_leaves = t["weight"].shape
        # Trees of one shape share C and D: store each shape once and gather it per tree
        # (ONNX Runtime folds the gather of constants when it loads the model).
        shapes, shape_of = np.unique(t["paths"].reshape(n_trees, -1), axis=0, return_inverse=True)
        paths = g.op("Gather", g.op("Cast", g.const(shapes.reshape(-1, n_leaves - 1, n_leaves), "tree_shapes"),
                                    to=onnx.TensorProto.FLOAT),
                     g.op("Cast", g.const(_smallest_int(shape_of.ravel()), "tree_shape_of"), to=onnx.TensorProto.INT64),
                     axis=0)
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
    if trees.support_threshold_ is not None:
        kernel, stored.support_vectors_ = add_rbf_kernel(g, x, trees.support_vectors_, trees.gamma_, precision)
        score = g.op("Min", score, add_support_gate(g, kernel, trees.support_threshold_), hint="score")
    return score, stored
