"""The window features of Table 12.1 as ONNX operators, computing only the ones a model keeps.

Spec donini-easymkl-komd-climbtheworld-admm §3.6 (the 79 features and resolutions 1–7) and §6
(export the feature subset with the model). The formulas and conventions are those of
:mod:`stairsense.features._window_features`: rows S_1..S_5 = x, y, z, ‖v‖₂, (x + y)/2; ddof 0;
the corrected two-pass variance Σd² − (Σd)²/n around the window mean; the safe ratio
den' = sign(den)·max(|den|, 1e-6) with sign(0) = +1, clipped to ±1e3; Corr = 0 when a row is
constant (Std ≤ 1e-10 · max|row|) and clipped to [-1, 1].

Every feature is a safe ratio num / den' of two entries of one *table of statistics* (a direct
statistic has den = 1, which the safe ratio passes through exactly; only true ratios are clipped).
The graph builds each needed *group* of the table once (means, the 5×5 covariance from one
``Gemm``, extremes, correlations, …), concatenates the groups, and then needs two ``Gather`` and
one safe division for all selected features, in the model's column order. Groups no selected
feature reads are not in the graph at all. Fewer nodes is the point: ONNX Runtime's per-node
overhead, not arithmetic, dominates on windows of tens of samples.

Statistics run in float64 inside the graph (the input is float32 samples): gravity-free means sit
near 0 and feed ratios, where float32 sums would change the features by whole percents.
"""
from __future__ import annotations

import itertools
from typing import Sequence

import numpy as np

from stairsense.features import (
    CONSTANT_ROW_RTOL,
    FEATURE_NAMES,
    N_FEATURES,
    RATIO_CLIP,
    RATIO_EPS,
    feature_names,
)

from ._graph import GraphBuilder

__all__ = ["FEATURE_FORMULAS", "add_window_features", "parse_feature_names", "window_features_model"]

_PAIRS = tuple(itertools.combinations(range(5), 2))
_STAT_BLOCKS = ("mean", "std", "var", "range")


def _formulas(corrected_68_69: bool) -> dict[str, tuple]:
    """Name → ``("direct", key)`` or ``("ratio", numerator_key, denominator_key)``.

    A key is ``(group, index)``: groups ``mean``/``std``/``var``/``range``/``max``/``min`` are
    per row, ``corr`` per pair of :data:`_PAIRS`, ``ma``/``sma``/``hdisp`` are scalars (index 0).
    Built in Table 12.1 order from the spec, then zipped with the names of ``feature_names``.
    """
    per_row = [("direct", (stat, r)) for stat in _STAT_BLOCKS for r in range(5)]
    ratios = [("ratio", (stat, j), (stat, h)) for stat in _STAT_BLOCKS for h, j in _PAIRS]
    dispersion_den = "var" if corrected_68_69 else "std"
    mixed = [
        ("ratio", ("max", 2), ("max", 4)),
        ("ratio", ("min", 2), ("min", 4)),
        ("direct", ("ma", 0)),
        ("direct", ("sma", 0)),
        *(("ratio", ("var", r), ("var", 3)) for r in range(3)),
        ("ratio", ("hdisp", 0), (dispersion_den, 2)),
        ("ratio", ("hdisp", 0), (dispersion_den, 3)),
    ]
    corr = [("direct", ("corr", p)) for p in range(len(_PAIRS))]
    formulas = per_row + ratios + mixed + corr
    assert len(formulas) == N_FEATURES
    return dict(zip(feature_names(corrected_68_69=corrected_68_69), formulas))


#: Formula of every feature name, literal and corrected forms of 68–69 (spec §3.6 resolution 5).
FEATURE_FORMULAS: dict[str, tuple] = {**_formulas(True), **_formulas(False)}
_CORRECTED_NAMES = feature_names(corrected_68_69=True)
_CORRECTED_ONLY = frozenset(_CORRECTED_NAMES) - frozenset(FEATURE_NAMES)


def parse_feature_names(names: Sequence[str]) -> tuple[int, list[tuple[int, str]]]:
    """Split model input names into sample blocks: ``(n_blocks, [(block, base_name), ...])``.

    A model on one standardized stream has the 79 names of Table 12.1; Mizell's orientation
    gives two streams (vertical, horizontal) whose names carry a prefix, 158 in all
    (``stairsense.features.feature_names_for``). Block b reads sample columns 3b..3b+2.

    Examples
    --------
    >>> n_blocks, parsed = parse_feature_names(["vertical_" + n for n in FEATURE_NAMES]
    ...                                        + ["horizontal_" + n for n in FEATURE_NAMES])
    >>> n_blocks, parsed[84]
    (2, (1, 'std_x'))
    """
    names = list(names)
    if not names or len(names) % N_FEATURES:
        raise ValueError(
            f"an exportable model takes 79 window features per standardized stream (Table 12.1); got "
            f"{len(names)} feature names. Train it on stairsense.window_dataset features"
        )
    parsed = []
    for i, name in enumerate(names):
        base = next((b for b in (FEATURE_NAMES[i % N_FEATURES], _CORRECTED_NAMES[i % N_FEATURES])
                     if name == b or name.endswith("_" + b)), None)
        if base is None:
            raise ValueError(
                f"feature {i} is named {name!r}, expected (a prefixed) {FEATURE_NAMES[i % N_FEATURES]!r}: "
                "the ONNX graph can only compute the Table 12.1 features in their canonical order"
            )
        parsed.append((i // N_FEATURES, base))
    return len(names) // N_FEATURES, parsed


# Rows are kept internally as [x, y, z, horiz, norm]: the first four are one MatMul of the samples.
_INTERNAL_ROW = {0: 0, 1: 1, 2: 2, 3: 4, 4: 3}
_ROW_MIX = np.array([[1.0, 0.0, 0.0, 0.5], [0.0, 1.0, 0.0, 0.5], [0.0, 0.0, 1.0, 0.0]])
_SCALAR_GROUPS = ("ma", "sma", "hdisp", "one")


class _BlockStatistics:
    """Lazily built statistic groups of one 3-column block of samples, all float64.

    Node count is what costs time here (ONNX Runtime spends ~0.3 µs per node on a window of 30
    samples, far more than the arithmetic), so the second moments of all five rows come from one
    ``Gemm`` (DᵀD of the centred rows) and the correlations from one outer product.
    """

    def __init__(self, g: GraphBuilder, xyz: str, corrected_68_69: bool):
        self.g = g
        self.xyz = xyz
        self.corrected = corrected_68_69
        self._groups: dict[str, str] = {}
        self._axis0 = g.const(np.array([0], np.int64), "axis0")
        self._axis1 = g.const(np.array([1], np.int64), "axis1")

    def group(self, name: str) -> str:
        if name not in self._groups:
            self._groups[name] = getattr(self, "_" + name)()
        return self._groups[name]

    # Rows, centring, second moments ------------------------------------------------------------
    def _rows(self):
        g = self.g
        mixed = g.op("MatMul", self.xyz, g.const(_ROW_MIX, "row_mix"))  # x, y, z, (x + y)/2, exactly
        norm = g.op("ReduceL2", self.xyz, self._axis1, keepdims=1, hint="norm")
        return g.op("Concat", mixed, norm, axis=1, hint="rows")

    def _n(self):
        return self.g.op("Cast", self.g.op("Shape", self.xyz, start=0, end=1), to=11, hint="n")

    def _cov(self):
        """5×5 population covariance DᵀD/n of the rows centred twice: D = (S − m) − mean(S − m).

        Centring again by the mean residual is the corrected two-pass algorithm of the Python
        features (Chan, Golub & LeVeque) in graph form: it removes the error of the rounded mean,
        which on a constant row whose mean rounds (a norm of 9.81-valued samples) would otherwise
        leave Std ≈ 2e-15 and a ratio over a constant row of 1e-9 instead of 0. DᵀD is a sum of
        squares on the diagonal, so variances are never negative.
        """
        g = self.g
        centred = g.op("Sub", self.group("rows"), self.group("mean"))
        centred = g.op("Sub", centred, g.op("ReduceMean", centred, self._axis0, keepdims=1), hint="centred")
        return g.op("Div", g.op("Gemm", centred, centred, transA=1), self.group("n"), hint="cov")

    # Statistic groups: vectors over the five (internal) rows, or one value ----------------------
    def _mean(self):
        return self.g.op("ReduceMean", self.group("rows"), self._axis0, keepdims=0, hint="mean")

    def _var(self):
        g = self.g
        flat = g.op("Reshape", self.group("cov"), g.const(np.array([-1], np.int64)))
        return g.op("Gather", flat, g.const(np.arange(0, 25, 6, dtype=np.int64), "diagonal"), axis=0, hint="var")

    def _std(self):
        return self.g.op("Sqrt", self.group("var"), hint="std")

    def _max(self):
        return self.g.op("ReduceMax", self.group("rows"), self._axis0, keepdims=0, hint="max")

    def _min(self):
        return self.g.op("ReduceMin", self.group("rows"), self._axis0, keepdims=0, hint="min")

    def _range(self):
        return self.g.op("Sub", self.group("max"), self.group("min"), hint="range")

    def _ma(self):
        g = self.g
        mean_xyz = g.op("Slice", self.group("mean"), g.const(np.array([0], np.int64)), g.const(np.array([3], np.int64)),
                        self._axis0)
        return g.op("ReduceL2", mean_xyz, self._axis0, keepdims=1, hint="ma")

    def _sma(self):
        g = self.g
        return g.op("Div", g.op("ReduceL1", self.xyz, keepdims=0), self.group("n"), hint="sma")

    def _hdisp(self):
        """(Std_1 + Std_2)² literally (resolution 5), or Var_1 + Var_2 when corrected."""
        g = self.g
        first_two = g.const(np.array([[1.0], [1.0], [0.0], [0.0], [0.0]]), "sum_x_y")
        if self.corrected:
            return g.op("MatMul", self.group("var"), first_two, hint="hdisp")
        total = g.op("MatMul", self.group("std"), first_two)
        return g.op("Mul", total, total, hint="hdisp")

    def _corr(self):
        """All 25 Pearson correlations (row-major 5×5), 0 where either row is constant."""
        g = self.g
        std = self.group("std")
        scale = g.op("ReduceMax", g.op("Abs", self.group("rows")), self._axis0, keepdims=0)
        varying = g.op("Greater", std, g.op("Mul", scale, g.const(np.float64(CONSTANT_ROW_RTOL))))
        std_varying = g.op("Reshape", g.op("Where", varying, std, g.const(np.float64(0.0))),
                           g.const(np.array([1, 5], np.int64)))
        # Outer product: positive exactly where both rows vary; elsewhere Corr is 0 (resolution 3).
        std_product = g.op("Gemm", std_varying, std_varying, transA=1)
        both_vary = g.op("Greater", std_product, g.const(np.float64(0.0)))
        corr = g.op("Clip", g.op("Div", self.group("cov"), std_product), g.const(np.float64(-1.0)),
                    g.const(np.float64(1.0)))
        corr = g.op("Where", both_vary, corr, g.const(np.float64(0.0)))
        return g.op("Reshape", corr, g.const(np.array([-1], np.int64)), hint="corr")

    def _one(self):
        """The denominator of direct features, so every feature is one safe ratio."""
        return self.g.const(np.ones(1), "one")


def _table_index(group: str, index: int) -> int:
    """Position of a statistic inside its group's vector."""
    if group == "corr":
        h, j = _PAIRS[index]
        return 5 * _INTERNAL_ROW[h] + _INTERNAL_ROW[j]
    return 0 if group in _SCALAR_GROUPS else _INTERNAL_ROW[index]


def add_window_features(g: GraphBuilder, samples: str, feature_names_in: Sequence[str],
                        selected: Sequence[int], *, clip_ratios: bool = True) -> str:
    """Add the selected features of one window to ``g``; return the ``[k]`` float64 output.

    Every feature becomes num / safe(den) over one table of statistics: a direct statistic has
    den = 1 (exact), a ratio its denominator statistic; ratios alone are clipped to ±1e3.

    Parameters
    ----------
    g : GraphBuilder
    samples : str
        Name of the ``[n, 3·B]`` float32 input: the standardized samples of one window, one block
        of 3 columns per standardized stream.
    feature_names_in : sequence of str
        All input feature names of the model (79 per block, see :func:`parse_feature_names`).
    selected : sequence of int
        Indices into ``feature_names_in`` of the features to compute, in output order.
    clip_ratios : bool, default=True
        Clip ratios to ±1e3. A caller whose next step is a clipping min-max scaler fitted on
        clipped ratios passes False: the scaler's clip then implies this one (the scaler is
        increasing and maps ±1e3 outside its output range).

    Returns
    -------
    str
        Name of the ``[len(selected)]`` float64 tensor of features.
    """
    n_blocks, parsed = parse_feature_names(feature_names_in)
    selected = [int(i) for i in selected]
    if not selected or min(selected) < 0 or max(selected) >= len(parsed):
        raise ValueError(f"selected must be non-empty indices into the {len(parsed)} features, got {selected[:10]}")
    samples64 = g.op("Cast", samples, to=11, hint="samples64")
    numerators, denominators, is_ratio = [], [], []
    for i in selected:
        block, base = parsed[i]
        formula = FEATURE_FORMULAS[base]
        numerators.append((block, *formula[1]))
        denominators.append((block, *formula[2]) if formula[0] == "ratio" else (block, "one", 0))
        is_ratio.append(formula[0] == "ratio")
    # The table: each needed (block, group) vector once, concatenated.
    table_parts, offsets, width = [], {}, 0
    for block in sorted({key[0] for key in numerators + denominators}):
        corrected = any(parsed[i][1] in _CORRECTED_ONLY for i in selected if parsed[i][0] == block)
        xyz = samples64 if n_blocks == 1 else g.op(
            "Slice", samples64, g.const(np.array([3 * block], np.int64)), g.const(np.array([3 * block + 3], np.int64)),
            g.const(np.array([1], np.int64)), hint="xyz")
        stats = _BlockStatistics(g, xyz, corrected)
        for group in sorted({key[1] for key in numerators + denominators if key[0] == block}):
            table_parts.append(stats.group(group))
            offsets[(block, group)] = width
            width += 25 if group == "corr" else (1 if group in _SCALAR_GROUPS else 5)
    table = table_parts[0] if len(table_parts) == 1 else g.op("Concat", *table_parts, axis=0, hint="stat_table")

    def gather(keys):
        positions = np.array([offsets[(b, grp)] + _table_index(grp, idx) for b, grp, idx in keys], np.int64)
        return g.op("Gather", table, g.const(positions), axis=0)

    features = gather(numerators)
    if any(is_ratio):
        # Safe ratio (resolution 4): den' = sign(den)·max(|den|, ε) with sign(0) = +1.
        den = gather(denominators)
        safe = g.op("Where", g.op("GreaterOrEqual", den, g.const(np.float64(0.0))),
                    g.op("Max", den, g.const(np.float64(RATIO_EPS))), g.op("Min", den, g.const(np.float64(-RATIO_EPS))))
        features = g.op("Div", features, safe)
        if clip_ratios:
            bound = np.where(is_ratio, RATIO_CLIP, np.inf)
            features = g.op("Max", g.op("Min", features, g.const(bound, "ratio_high")), g.const(-bound, "ratio_low"))
    return features


def window_features_model(selected: Sequence[int] | None = None, feature_names_in: Sequence[str] = FEATURE_NAMES):
    """A standalone ONNX model: one window's samples ``[n, 3·B]`` float32 → ``[1, k]`` float64 features.

    The building block of the exported classifier, exposed so the graph formulas can be checked
    feature by feature against :func:`stairsense.features._window_features.window_features`.

    Parameters
    ----------
    selected : sequence of int, optional
        Indices of the features to compute (default: all, in order).
    feature_names_in : sequence of str
        Input feature names (79 per block).

    Returns
    -------
    onnx.ModelProto
        Input ``samples``, output ``features``.

    Examples
    --------
    >>> import numpy as np, onnxruntime as ort
    >>> from stairsense.features._window_features import window_features
    >>> rng = np.random.default_rng(0)
    >>> window = rng.normal(size=(12, 3)).astype(np.float32)
    >>> model = window_features_model([6, 69])
    >>> sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    >>> onnx_features = sess.run(None, {"samples": window})[0]
    >>> python_features = window_features(window, [0, 12])[:, [6, 69]]
    >>> bool(np.allclose(onnx_features, python_features, rtol=1e-12, atol=1e-12))
    True
    """
    n_blocks, _ = parse_feature_names(feature_names_in)
    selected = range(len(feature_names_in)) if selected is None else selected
    g = GraphBuilder()
    samples = g.input("samples", np.float32, ["n", 3 * n_blocks])
    features = add_window_features(g, samples, feature_names_in, selected)
    g.rename(g.op("Reshape", features, g.const(np.array([1, -1], np.int64))), "features")
    return g.model({"features": (np.float64, [1, len(selected)])}, name="stairsense_window_features")
