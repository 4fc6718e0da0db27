"""The KOMD RBF decision as ONNX ops, with compact storage of the support set (spec §6, §1.2).

Spec §6: f(x) = Σ_i y_i γ_i exp(−β‖x − x_i‖²) − θ, exported as MatMul/Reduce/Exp nodes with the
support set as constant tensors; its size is #support vectors × #features. The decision is
computed as

    f(x) = exp(min(x·W + c − β‖x‖², 0)) · a + b,   W = 2β·Xsvᵀ,  c_i = −β‖x_i‖²,  a = yγ,  b = −θ,

the expansion of ‖x − x_i‖² with the distance floored at 0 against rounding (as
:func:`stairsense.models._komd.rbf_kernel_inplace` does). Compaction changes only how W and a are
*stored*; arithmetic stays float32:

``fp32``  W and a as float32 initializers.
``fp16``  W and a as float16 initializers, each followed by one ``Cast`` to float32.
``int8``  W as int8 with an asymmetric scale and zero point per feature (``DequantizeLinear``
          along axis 0; weight-only: the window's features are never quantized, unlike
          ``quantize_dynamic``), a as float16. Per feature, because the support vectors of a
          feature often span a fraction of [-1, 1]; one symmetric scale cost 1 % of decisions.

In every precision c and the threshold θ = ½ Σ_i γ_i f(x_i) (spec §1.2) are recomputed in float64
from the *stored* support vectors, so the compact model is exactly a KOMD machine on slightly moved
support vectors rather than an inconsistent mixture; float32 arithmetic is its only other error.
Re-deriving θ matters: the scores of a KOMD model are small (median |f − θ| ≈ 3e-3 on simulated
windows), and keeping the old θ for moved support vectors flipped 0.5–1 % of int8 decisions.

:func:`reduce_support` optionally keeps only the largest γ_i of each class (renormalised to the
class's total), trading accuracy for size; the benchmarks report the cost.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from stairsense.models._komd import rbf_kernel_inplace

from ._graph import GraphBuilder

__all__ = ["PRECISIONS", "RBFHead", "add_rbf_decision", "reduce_support", "save_ort_format"]

PRECISIONS = ("fp32", "fp16", "int8")


@dataclass(frozen=True)
class RBFHead:
    """The numbers of a KOMD RBF decision: support vectors, coefficients a = yγ, intercept −θ, β."""

    support_vectors: np.ndarray  # (m, k)
    dual_coef: np.ndarray  # (m,)
    intercept: float
    gamma: float

    @classmethod
    def from_komd(cls, komd) -> "RBFHead":
        if getattr(komd, "kernel", None) != "rbf":
            raise ValueError(
                f"only RBF KOMD models can be exported (spec §6), got kernel={getattr(komd, 'kernel', None)!r}; "
                "retrain with KOMDClassifier(kernel='rbf')"
            )
        return cls(np.asarray(komd.support_vectors_, np.float64), np.asarray(komd.dual_coef_, np.float64),
                   float(komd.intercept_), float(komd.gamma_))

    def decision_function(self, X) -> np.ndarray:
        """float64 reference: Σ_i a_i exp(−β‖x − x_i‖²) + b."""
        X = np.asarray(X, np.float64)
        return rbf_kernel_inplace(X, self.support_vectors, self.gamma) @ self.dual_coef + self.intercept

    def with_komd_threshold(self) -> "RBFHead":
        """The same machine with b = −θ, θ = ½ Σ_i γ_i f(x_i) over its own support set (spec §1.2).

        Only support vectors have γ_i > 0, so θ needs nothing else of the training set.
        """
        f = rbf_kernel_inplace(self.support_vectors, self.support_vectors, self.gamma) @ self.dual_coef
        theta = 0.5 * np.abs(self.dual_coef) @ f
        return RBFHead(self.support_vectors, self.dual_coef, -float(theta), self.gamma)


def reduce_support(head: RBFHead, max_support_vectors: int | None) -> RBFHead:
    """Keep the ``max_support_vectors`` largest γ_i, split between the classes, renormalised.

    KOMD's γ is a distribution on each class (Σ_{i∈⊕} γ_i = Σ_{i∈⊖} γ_i = 1, spec §1.1); after
    dropping the smallest ones each class is rescaled to its old total, so the score keeps the
    shape of a difference of two kernel means; :func:`add_rbf_decision` re-derives θ. ``None`` or a
    number ≥ m keeps all.

    Examples
    --------
    >>> head = RBFHead(np.eye(4), np.array([0.7, 0.3, -0.9, -0.1]), -0.05, 1.0)
    >>> reduce_support(head, 2).dual_coef.tolist()
    [1.0, -1.0]
    """
    m = head.dual_coef.size
    if max_support_vectors is None or max_support_vectors >= m:
        return head
    if max_support_vectors < 2:
        raise ValueError(f"max_support_vectors must keep at least one vector per class (≥ 2), got {max_support_vectors}")
    order = np.argsort(-np.abs(head.dual_coef), kind="stable")
    positive = head.dual_coef > 0
    # Guarantee each class at least one vector, then fill by |γ| regardless of class.
    kept = set(order[positive[order]][:1]) | set(order[~positive[order]][:1])
    for i in order:
        if len(kept) >= max_support_vectors:
            break
        kept.add(i)
    idx = np.array(sorted(kept))
    coef = head.dual_coef[idx].copy()
    for sign in (1.0, -1.0):
        class_total = head.dual_coef[sign * head.dual_coef > 0].sum()
        coef[sign * coef > 0] *= class_total / coef[sign * coef > 0].sum()
    return RBFHead(head.support_vectors[idx], coef, head.intercept, head.gamma)


def _stored_weights(g: GraphBuilder, W: np.ndarray, precision: str) -> tuple[str, np.ndarray]:
    """Add W (float64) as a ``precision`` initializer and return (float32 tensor name, dequantized W)."""
    if precision == "fp32":
        stored = W.astype(np.float32)
        return g.const(stored, "sv_weights"), stored.astype(np.float64)
    if precision == "fp16":
        stored = W.astype(np.float16)
        return g.op("Cast", g.const(stored, "sv_weights_fp16"), to=1), stored.astype(np.float64)
    if precision == "int8":
        # Row r of W is feature r: map its [min, max] onto the 255 int8 levels.
        low, high = W.min(axis=1), W.max(axis=1)
        scale = (np.maximum(high - low, np.finfo(np.float32).tiny) / 255.0).astype(np.float32)
        zero_point = np.clip(np.round(-128.0 - low / scale), -128, 127)
        quantized = np.clip(np.round(W / scale[:, None]) + zero_point[:, None], -128, 127).astype(np.int8)
        name = g.op("DequantizeLinear", g.const(quantized, "sv_weights_int8"), g.const(scale, "sv_scale"),
                    g.const(zero_point.astype(np.int8), "sv_zero_point"), axis=0)
        dequantized = (quantized.astype(np.float64) - zero_point[:, None]) * scale.astype(np.float64)[:, None]
        return name, dequantized
    raise ValueError(f"precision must be one of {PRECISIONS}, got {precision!r}")


def add_rbf_decision(g: GraphBuilder, x: str, head: RBFHead, precision: str) -> tuple[str, RBFHead]:
    """Add the decision f(x) for a ``[1, k]`` float32 input; return (``[1]`` score name, stored head).

    The returned head holds the support vectors and coefficients *as stored* (after fp16/int8
    rounding) and the threshold re-derived from them: the float64 model the graph computes up to
    float32 arithmetic.
    """
    beta = head.gamma
    W, W_stored = _stored_weights(g, 2.0 * beta * head.support_vectors.T, precision)
    if precision == "fp32":
        coef_stored = head.dual_coef.astype(np.float32)
        coef = g.const(coef_stored.reshape(-1, 1), "dual_coef")
    else:
        coef_stored = head.dual_coef.astype(np.float16)
        coef = g.op("Cast", g.const(coef_stored.reshape(-1, 1), "dual_coef_fp16"), to=1)
    stored = RBFHead(W_stored.T / (2.0 * beta), coef_stored.astype(np.float64), head.intercept, beta)
    stored = stored.with_komd_threshold()
    c = g.const((-beta * (stored.support_vectors ** 2).sum(axis=1)).astype(np.float32).reshape(1, -1), "sv_norms")
    axis1 = g.const(np.array([1], np.int64))
    x_norm = g.op("Mul", g.op("ReduceSumSquare", x, axis1, keepdims=1), g.const(np.float32(-beta)))
    exponent = g.op("Add", g.op("Add", g.op("MatMul", x, W), c), x_norm)
    kernel = g.op("Exp", g.op("Min", exponent, g.const(np.float32(0.0))), hint="kernel")
    score = g.op("Add", g.op("MatMul", kernel, coef), g.const(np.float32(stored.intercept)))
    return g.op("Reshape", score, g.const(np.array([-1], np.int64)), hint="score"), stored


def save_ort_format(onnx_path: str | os.PathLike, ort_path: str | os.PathLike) -> Path:
    """Convert an ONNX file to ONNX Runtime's ORT format (the format of minimal mobile builds).

    Uses the session option ``session.save_model_format = ORT`` with graph optimisations off:
    the basic level constant-folds the ``Cast``/``DequantizeLinear`` of compacted weights back
    into float32 (measured: the fp16 file grew from 59 to 73 kB), and the extended and layout
    levels fuse nodes into contrib operators and layouts of the converting machine, which a
    phone's runtime need not have. The phone's session optimises at load time anyway.
    """
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    options.optimized_model_filepath = str(ort_path)
    options.add_session_config_entry("session.save_model_format", "ORT")
    ort.InferenceSession(str(onnx_path), options, providers=["CPUExecutionProvider"])
    return Path(ort_path)
