"""The KOMD RBF decision as ONNX ops, with compact storage of the support set (spec §6, §1.2).

Spec §6: f(x) = Σ_i y_i γ_i exp(−β‖x − x_i‖²) − θ, exported as MatMul/Reduce/Exp nodes with the
support set as constant tensors; its size is #support vectors × #features. The decision is
computed as

    f(x) = exp(x̃·W + c − ‖x̃‖²) · a + b,   x̃ = √β·x,  W = 2√β·Xsvᵀ,  c_i = −β‖x_i‖²,  a = yγ,  b = −θ,

the expansion of β‖x − x_i‖², with √β folded into the scaler before it. Compaction changes only
how W is *stored*; arithmetic stays float32 and a, c stay float32 (m numbers each, against m·k
for W):

``fp32``  W as a float32 initializer.
``fp16``  W as a float16 initializer followed by one ``Cast`` to float32.
``int8``  W as int8 with an asymmetric scale and zero point per feature (``DequantizeLinear``
          along axis 0; weight-only: the window's features are never quantized, unlike
          ``quantize_dynamic``). Per feature, because the support vectors of a feature often
          span a fraction of [-1, 1]; the feature's range is widened to contain 0, as the int8
          zero point must represent it.

KOMD scores are small differences of large kernel sums (on UCI HAPT the median |f − θ| is 3.5e-4
while f itself is ~0.3), so rounding the support vectors alone flipped 1.4 % of int8 decisions
and storing a in float16 another 1.5 %. Whenever the stored support vectors differ from the
trained ones (fp16, int8, fewer vectors), the coefficients are therefore *refitted*: the
reduced-set method (Schölkopf et al., "Input space versus feature space in kernel-based
methods", IEEE TNN 1999) chooses a′ minimising Σ_j (f′(x_j) − f(x_j))² + λ‖a′ − a‖² over the
trained support vectors x_j, a small ridge least-squares problem, and θ is kept. Measured on UCI
HAPT: int8 decisions agree on 99.9 % of held-out windows (98.6 % without the refit).

:func:`reduce_support` keeps only the largest γ_i (each class keeps at least one) and refits the
coefficients the same way, trading accuracy for size; the benchmarks report the cost.
"""
from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from stairsense.models.mkl import rbf_kernel_inplace

from ._graph import GraphBuilder

__all__ = ["PRECISIONS", "RBFHead", "add_rbf_decision", "add_rbf_kernel", "add_support_gate", "reduce_support",
           "save_ort_format"]

PRECISIONS = ("fp32", "fp16", "int8")


@dataclass(frozen=True)
class RBFHead:
    """The numbers of a KOMD RBF decision: support vectors, coefficients a = yγ, intercept −θ, β."""

    support_vectors: np.ndarray  # (m, k)
    dual_coef: np.ndarray  # (m,)
    intercept: float
    gamma: float
    # τ of NystroemKOMDClassifier's support gate: the score is min(f(x), max_i k(x, x_i) − τ)
    support_threshold: float | None = None

    @classmethod
    def from_komd(cls, komd) -> "RBFHead":
        if getattr(komd, "kernel", None) != "rbf":
            raise ValueError(
                f"only RBF KOMD models can be exported (spec §6), got kernel={getattr(komd, 'kernel', None)!r}; "
                "retrain with KOMDClassifier(kernel='rbf')"
            )
        return cls(np.asarray(komd.support_vectors_, np.float64), np.asarray(komd.dual_coef_, np.float64),
                   float(komd.intercept_), float(komd.gamma_), getattr(komd, "support_threshold_", None))

    def decision_function(self, X) -> np.ndarray:
        """float64 reference: Σ_i a_i exp(−β‖x − x_i‖²) + b, gated by the support if it has a threshold."""
        K = rbf_kernel_inplace(np.asarray(X, np.float64), self.support_vectors, self.gamma)
        scores = K @ self.dual_coef + self.intercept
        return scores if self.support_threshold is None else np.minimum(scores, K.max(axis=1) - self.support_threshold)

    def refit_to(self, reference: "RBFHead", ridge: float = 1e-6) -> "RBFHead":
        """Coefficients for these support vectors that reproduce ``reference`` on its support vectors.

        Reduced-set fit: a′ = a + δ, δ = argmin ‖K′(a + δ) − K a_ref‖² + λ‖δ‖² with
        K′ = K(X_ref, X_self), K = K(X_ref, X_ref) and λ = ``ridge`` · trace(K′ᵀK′) / m (scale-free,
        only guards a singular K′ᵀK′). The intercept and support threshold are ``reference``'s.
        """
        K_new = rbf_kernel_inplace(reference.support_vectors, self.support_vectors, self.gamma)
        target = rbf_kernel_inplace(reference.support_vectors, reference.support_vectors, self.gamma) @ reference.dual_coef
        gram = K_new.T @ K_new
        lam = ridge * np.trace(gram) / gram.shape[0]
        gram[np.diag_indices_from(gram)] += lam
        delta = np.linalg.solve(gram, K_new.T @ (target - K_new @ self.dual_coef))
        return RBFHead(self.support_vectors, self.dual_coef + delta, reference.intercept, self.gamma,
                       reference.support_threshold)


def reduce_support(head: RBFHead, max_support_vectors: int | None) -> RBFHead:
    """Keep the ``max_support_vectors`` largest γ_i and refit their coefficients to ``head``.

    Each class keeps at least one vector; the coefficients are refitted with
    :meth:`RBFHead.refit_to` (renormalising γ per class instead flipped 85 % of the decisions on
    UCI HAPT at half the vectors). ``None`` or a number ≥ m returns ``head`` itself.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> head = RBFHead(rng.uniform(-1, 1, (40, 3)), np.r_[np.full(20, 0.05), np.full(20, -0.05)], 0.0, 1.0)
    >>> small = reduce_support(head, 20)
    >>> X = rng.uniform(-1, 1, (200, 3))
    >>> error = np.abs(small.decision_function(X) - head.decision_function(X)).max()
    >>> small.dual_coef.size, bool(error < 0.1 * np.abs(head.decision_function(X)).max())
    (20, True)
    """
    m = head.dual_coef.size
    if max_support_vectors is None or max_support_vectors >= m:
        return head
    if max_support_vectors < 2:
        raise ValueError(f"max_support_vectors must keep at least one vector per class (≥ 2), got {max_support_vectors}")
    order = np.argsort(-np.abs(head.dual_coef), kind="stable")
    positive = head.dual_coef > 0
    kept = list(dict.fromkeys([order[positive[order]][0], order[~positive[order]][0], *order]))[:max_support_vectors]
    idx = np.sort(np.array(kept))
    return dataclasses.replace(head, support_vectors=head.support_vectors[idx], dual_coef=head.dual_coef[idx]).refit_to(head)


def _stored_weights(g: GraphBuilder, W: np.ndarray, precision: str) -> tuple[str, np.ndarray]:
    """Add W (float64) as a ``precision`` initializer and return (float32 tensor name, dequantized W)."""
    if precision == "fp32":
        stored = W.astype(np.float32)
        return g.const(stored, "sv_weights"), stored.astype(np.float64)
    if precision == "fp16":
        stored = W.astype(np.float16)
        return g.op("Cast", g.const(stored, "sv_weights_fp16"), to=1), stored.astype(np.float64)
    if precision == "int8":
        # Row r of W is feature r: map its [min, max] onto the 255 int8 levels, widened to contain 0
        # because DequantizeLinear's zero point is an int8 itself. A row whose support vectors all
        # sat on one side of 0 (step-context features such as ctx_cv_step_z_skew do) otherwise got
        # its zero point clipped, which shifted the whole row (a 40-landmark step-context model of
        # tests/test_robust.py: 98.9 % agreement before, 99.8 % after).
        low, high = np.minimum(W.min(axis=1), 0.0), np.maximum(W.max(axis=1), 0.0)
        scale = (np.maximum(high - low, np.finfo(np.float32).tiny) / 255.0).astype(np.float32)
        zero_point = np.clip(np.round(-128.0 - low / scale), -128, 127)
        quantized = np.clip(np.round(W / scale[:, None]) + zero_point[:, None], -128, 127).astype(np.int8)
        name = g.op("DequantizeLinear", g.const(quantized, "sv_weights_int8"), g.const(scale, "sv_scale"),
                    g.const(zero_point.astype(np.int8), "sv_zero_point"), axis=0)
        dequantized = (quantized.astype(np.float64) - zero_point[:, None]) * scale.astype(np.float64)[:, None]
        return name, dequantized
    raise ValueError(f"precision must be one of {PRECISIONS}, got {precision!r}")


def add_rbf_kernel(g: GraphBuilder, x: str, support_vectors: np.ndarray, gamma: float, precision: str, *,
                   batch: bool = False, x_times_sqrt_gamma: bool = False) -> tuple[str, np.ndarray]:
    """Add the kernel row exp(−β‖x − x_i‖²) over ``support_vectors`` stored at ``precision``.

    Returns the kernel's name (``[m]``, or ``[N, m]`` with ``batch``) and the support vectors as
    stored (after fp16/int8 rounding). ``x`` and ``x_times_sqrt_gamma`` as in :func:`add_rbf_decision`.
    """
    root = np.sqrt(gamma)
    W, W_stored = _stored_weights(g, 2.0 * root * support_vectors.T, precision)
    stored = W_stored.T / (2.0 * root)
    c = g.const((-gamma * (stored ** 2).sum(axis=1)).astype(np.float32), "sv_norms")
    if not x_times_sqrt_gamma:
        x = g.op("Mul", x, g.const(np.float32(root)))
    x_norm = g.op("ReduceSumSquare", x, g.const(np.array([1 if batch else 0], np.int64)), keepdims=1)
    # Rounding can make −β‖x − x_i‖² slightly positive; exp then exceeds 1 by ~1e-7, harmless,
    # so the graph skips the clamp at 0 that rbf_kernel_inplace applies.
    return g.op("Exp", g.op("Sub", g.op("Add", g.op("MatMul", x, W), c), x_norm), hint="kernel"), stored


def add_rbf_decision(g: GraphBuilder, x: str, head: RBFHead, precision: str, *, batch: bool = False,
                     x_times_sqrt_gamma: bool = False):
    """Add the decision f(x); return (score name, stored head).

    ``x`` is one window's ``[k]`` float32 features (score ``[1]``) or, with ``batch=True``, an
    ``[N, k]`` matrix (score ``[N]``). With ``x_times_sqrt_gamma`` the caller has already
    multiplied x by √β (folded into its scaler, one node less per window); the graph is then
    f = exp(x̃·W̃ + c − ‖x̃‖²)·a + b with x̃ = √β·x and W̃ = 2√β·Xsvᵀ, the same expansion.

    The returned head holds the support vectors *as stored* (after fp16/int8 rounding) and the
    coefficients refitted to them: the float64 model the graph computes up to float32 arithmetic.
    """
    kernel, support_vectors = add_rbf_kernel(g, x, head.support_vectors, head.gamma, precision, batch=batch,
                                             x_times_sqrt_gamma=x_times_sqrt_gamma)
    stored = dataclasses.replace(head, support_vectors=support_vectors)
    if precision != "fp32":
        stored = stored.refit_to(head)
    coef = g.const(stored.dual_coef.astype(np.float32).reshape(-1, 1), "dual_coef")
    score = g.op("Add", g.op("MatMul", kernel, coef), g.const(np.float32(stored.intercept)), hint="score")
    if stored.support_threshold is not None:
        score = g.op("Min", score, add_support_gate(g, kernel, stored.support_threshold), hint="score")
    if batch:
        score = g.op("Reshape", score, g.const(np.array([-1], np.int64)), hint="score")
    return score, stored


def add_support_gate(g: GraphBuilder, kernel: str, threshold: float) -> str:
    """max_i k(x, x_i) − τ over a kernel row from :func:`add_rbf_kernel` (``[1]``, or ``[N, 1]``)."""
    nearest = g.op("ReduceMax", kernel, g.const(np.array([-1], np.int64)), keepdims=1)
    return g.op("Sub", nearest, g.const(np.float32(threshold)), hint="gate")


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
