"""The window features of Table 12.1 as ONNX operators, computing only the ones a model keeps.

Spec donini-easymkl-komd-climbtheworld-admm §3.6 (the 79 features and resolutions 1–7) and §6
(export the feature subset with the model). The formulas and conventions are those of
:mod:`stairsense.features._window_features`: rows S_1..S_5 = x, y, z, ‖v‖₂, (x + y)/2; ddof 0;
the corrected two-pass variance Σd² − (Σd)²/n around the window mean; the safe ratio
den' = sign(den)·max(|den|, 1e-6) with sign(0) = +1, clipped to ±1e3; Corr = 0 when a row is
constant (Std ≤ 1e-10 · max|row|) and clipped to [-1, 1].

Every feature is either one *statistic* of the window or a safe ratio of two. The graph computes
each needed *group* of statistics (means, variances, extremes, the needed covariances, …) once as
a vector over the five rows, concatenates them into one table, and then gathers: one ``Gather``
for the direct features, two ``Gather`` and one safe division for all ratios. Groups no selected
feature needs are not in the graph at all.

Statistics run in float64 inside the graph (the input is float32 samples): gravity-free means sit
near 0 and feed ratios, where float32 sums would change the features by whole percents.
"""
from __future__ import annotations

import itertools
from typing import Sequence

import numpy as np

from stairsense.features._window_features import (
    CONSTANT_ROW_RTOL,
    FEATURE_NAMES,
    N_FEATURES,
    RATIO_CLIP,
    RATIO_EPS,
    ROW_NAMES,
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
    (``stairsense.pipeline.feature_names_for``). Block b reads sample columns 3b..3b+2.

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
            f"{len(names)} feature names. Train it on stairsense.pipeline.window_dataset features"
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


class _BlockStatistics:
    """Lazily built statistic groups of one 3-column block of samples, all float64."""

    def __init__(self, g: GraphBuilder, samples64: str, block: int, corrected_68_69: bool):
        self.g = g
        self.corrected = corrected_68_69
        cols = g.op("Slice", samples64, g.const(np.array([3 * block], np.int64)),
                    g.const(np.array([3 * block + 3], np.int64)), g.const(np.array([1], np.int64)), hint="xyz")
        self.xyz = cols
        self._groups: dict[str, str] = {}
        self._axis0 = g.const(np.array([0], np.int64), "axis0")
        self._axis1 = g.const(np.array([1], np.int64), "axis1")

    def _reduce(self, op, value, axis):
        return self.g.op(op, value, axis, keepdims=0)

    def group(self, name: str) -> str:
        if name not in self._groups:
            self._groups[name] = getattr(self, "_" + name)()
        return self._groups[name]

    # Rows and counts -------------------------------------------------------------------------
    def _rows(self):
        g = self.g
        norm = g.op("Sqrt", g.op("ReduceSumSquare", self.xyz, self._axis1, keepdims=1), hint="norm")
        xy = g.op("Slice", self.xyz, g.const(np.array([0], np.int64)), g.const(np.array([2], np.int64)),
                  self._axis1)
        horiz = g.op("Div", g.op("ReduceSum", xy, self._axis1, keepdims=1), g.const(np.float64(2.0)), hint="horiz")
        return g.op("Concat", self.xyz, norm, horiz, axis=1, hint="rows")

    def _n(self):
        g = self.g
        shape = g.op("Shape", self.xyz)
        return g.op("Cast", g.op("Gather", shape, g.const(np.int64(0)), axis=0), to=11, hint="n")

    def _centred(self):
        return self.g.op("Sub", self.group("rows"), self.group("mean"), hint="centred")

    def _sums(self):
        return self._reduce("ReduceSum", self.group("centred"), self._axis0)

    # Statistic groups (vectors over the five rows unless noted) -------------------------------
    def _mean(self):
        return self._reduce("ReduceMean", self.group("rows"), self._axis0)

    def _var(self):
        # Corrected two-pass variance; rounding can leave a constant row at -1e-33, hence Max(., 0).
        g = self.g
        n, sums = self.group("n"), self.group("sums")
        second = self._reduce("ReduceSumSquare", self.group("centred"), self._axis0)
        excess = g.op("Div", g.op("Mul", sums, sums), n)
        return g.op("Div", g.op("Max", g.op("Sub", second, excess), g.const(np.float64(0.0))), n, hint="var")

    def _std(self):
        return self.g.op("Sqrt", self.group("var"), hint="std")

    def _max(self):
        return self._reduce("ReduceMax", self.group("rows"), self._axis0)

    def _min(self):
        return self._reduce("ReduceMin", self.group("rows"), self._axis0)

    def _range(self):
        return self.g.op("Sub", self.group("max"), self.group("min"), hint="range")

    def _ma(self):
        g = self.g
        mean_xyz = g.op("Slice", self.group("mean"), g.const(np.array([0], np.int64)),
                        g.const(np.array([3], np.int64)), self._axis0)
        return g.op("Sqrt", g.op("ReduceSumSquare", mean_xyz, self._axis0, keepdims=1), hint="ma")

    def _sma(self):
        g = self.g
        per_sample = g.op("ReduceSum", g.op("Abs", self.xyz), self._axis1, keepdims=0)
        return g.op("ReduceMean", per_sample, self._axis0, keepdims=1, hint="sma")

    def _hdisp(self):
        """(Std_1 + Std_2)² literally (resolution 5), or Var_1 + Var_2 when corrected."""
        g = self.g
        two = g.const(np.array([0, 1], np.int64))
        if self.corrected:
            return g.op("ReduceSum", g.op("Gather", self.group("var"), two, axis=0), self._axis0, keepdims=1)
        total = g.op("ReduceSum", g.op("Gather", self.group("std"), two, axis=0), self._axis0, keepdims=1)
        return g.op("Mul", total, total, hint="hdisp")

    def correlations(self, pairs: Sequence[int]) -> str:
        """Pearson Corr of the given pairs (indices into ``_PAIRS``), 0 where a row is constant."""
        g = self.g
        h = g.const(np.array([_PAIRS[p][0] for p in pairs], np.int64), "pair_h")
        j = g.const(np.array([_PAIRS[p][1] for p in pairs], np.int64), "pair_j")
        centred, sums, n = self.group("centred"), self.group("sums"), self.group("n")
        products = g.op("Mul", g.op("Gather", centred, h, axis=1), g.op("Gather", centred, j, axis=1))
        comoment = self._reduce("ReduceSum", products, self._axis0)
        excess = g.op("Div", g.op("Mul", g.op("Gather", sums, h, axis=0), g.op("Gather", sums, j, axis=0)), n)
        cov = g.op("Div", g.op("Sub", comoment, excess), n, hint="cov")
        std = self.group("std")
        scale = g.op("Max", g.op("Abs", self.group("min")), g.op("Abs", self.group("max")))
        varying = g.op("Greater", std, g.op("Mul", scale, g.const(np.float64(CONSTANT_ROW_RTOL))))
        both = g.op("And", g.op("Gather", varying, h, axis=0), g.op("Gather", varying, j, axis=0))
        std_product = g.op("Where", both, g.op("Mul", g.op("Gather", std, h, axis=0), g.op("Gather", std, j, axis=0)),
                           g.const(np.float64(1.0)))
        corr = g.op("Clip", g.op("Div", cov, std_product), g.const(np.float64(-1.0)), g.const(np.float64(1.0)))
        return g.op("Where", both, corr, g.const(np.float64(0.0)), hint="corr")


def _safe_ratio(g: GraphBuilder, num: str, den: str) -> str:
    """num / (sign(den)·max(|den|, ε)) with sign(0) = +1, clipped to ±1e3 (resolution 4)."""
    sign = g.op("Where", g.op("GreaterOrEqual", den, g.const(np.float64(0.0))),
                g.const(np.float64(1.0)), g.const(np.float64(-1.0)))
    safe_den = g.op("Mul", sign, g.op("Max", g.op("Abs", den), g.const(np.float64(RATIO_EPS))))
    return g.op("Clip", g.op("Div", num, safe_den), g.const(np.float64(-RATIO_CLIP)),
                g.const(np.float64(RATIO_CLIP)), hint="ratio")


def add_window_features(g: GraphBuilder, samples: str, feature_names_in: Sequence[str],
                        selected: Sequence[int]) -> str:
    """Add the selected features of one window to ``g``; return the ``[1, k]`` float64 output.

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

    Returns
    -------
    str
        Name of the ``[1, len(selected)]`` float64 tensor of features.
    """
    n_blocks, parsed = parse_feature_names(feature_names_in)
    selected = [int(i) for i in selected]
    if not selected or min(selected) < 0 or max(selected) >= len(parsed):
        raise ValueError(f"selected must be non-empty indices into the {len(parsed)} features, got {selected[:10]}")
    samples64 = g.op("Cast", samples, to=11, hint="samples64")
    # Statistic table: one entry per (block, group, index) some selected feature reads.
    keys: list[tuple] = []
    for i in selected:
        block, base = parsed[i]
        formula = FEATURE_FORMULAS[base]
        keys.extend((block, *key) for key in formula[1:])
    table_parts, position = [], {}
    for block in sorted({k[0] for k in keys}):
        corrected = any(parsed[i][1] in _CORRECTED_ONLY for i in selected if parsed[i][0] == block)
        stats = _BlockStatistics(g, samples64, block, corrected)
        wanted = sorted({k[1:] for k in keys if k[0] == block})
        pairs = sorted(idx for grp, idx in wanted if grp == "corr")
        for grp in sorted({grp for grp, _ in wanted}):
            vector = stats.correlations(pairs) if grp == "corr" else stats.group(grp)
            width = len(pairs) if grp == "corr" else (1 if grp in ("ma", "sma", "hdisp") else 5)
            offset = sum(position_width for _, position_width in table_parts)
            table_parts.append((vector, width))
            for idx in (pairs if grp == "corr" else range(width)):
                position[(block, grp, idx)] = offset + (pairs.index(idx) if grp == "corr" else idx)
    table = g.op("Concat", *[v for v, _ in table_parts], axis=0, hint="stat_table")
    direct = [(out, position[(parsed[i][0], *FEATURE_FORMULAS[parsed[i][1]][1])])
              for out, i in enumerate(selected) if FEATURE_FORMULAS[parsed[i][1]][0] == "direct"]
    ratio = [(out, position[(parsed[i][0], *FEATURE_FORMULAS[parsed[i][1]][1])],
              position[(parsed[i][0], *FEATURE_FORMULAS[parsed[i][1]][2])])
             for out, i in enumerate(selected) if FEATURE_FORMULAS[parsed[i][1]][0] == "ratio"]
    parts, order = [], []
    if direct:
        parts.append(g.op("Gather", table, g.const(np.array([p for _, p in direct], np.int64)), axis=0))
        order += [out for out, _ in direct]
    if ratio:
        num = g.op("Gather", table, g.const(np.array([p for _, p, _ in ratio], np.int64)), axis=0)
        den = g.op("Gather", table, g.const(np.array([q for _, _, q in ratio], np.int64)), axis=0)
        parts.append(_safe_ratio(g, num, den))
        order += [out for out, _, _ in ratio]
    features = parts[0] if len(parts) == 1 else g.op("Concat", *parts, axis=0)
    if order != sorted(order):
        # Restore the model's column order: output position → position in [direct..., ratio...].
        features = g.op("Gather", features, g.const(np.argsort(order).astype(np.int64)), axis=0)
    return g.op("Reshape", features, g.const(np.array([1, -1], np.int64)), hint="features")


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
    g.rename(features, "features")
    return g.model({"features": (np.float64, [1, len(selected)])}, name="stairsense_window_features")
