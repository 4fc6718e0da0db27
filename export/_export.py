"""Export a trained stair-step classifier to one compact ONNX graph, checked against Python.

Spec donini-easymkl-komd-climbtheworld-admm §6 (first bullet: the KOMD-RBF model as standard ops
with the support set as constants, together with the [-1, 1] scaler and the feature subset),
§3.6 (the features) and §1.2 (the decision f(x) − θ ≥ 0 ⇒ STAIR).

The graph takes the standardized samples of ONE window, ``samples: [n, 3] float32`` (``[n, 6]``
for Mizell's vertical + horizontal streams), and outputs ``score: [1] float32`` (the KOMD decision)
and ``stair: [1] bool`` (score ≥ 0). Inside: the features EasyMKL kept (float64 statistics,
:mod:`._features_graph`), the scaler restricted to them with its clipping, a cast to float32 and
the RBF decision (:mod:`._compact`). A model with the trees head
(:class:`~stairsense.models.GatedTreesClassifier`, what ``train --barometer`` fits) has the trees
and their support gate in its place (:mod:`._trees`; ``stair`` is score > 0, the estimator's rule)
and is held to the decision agreement below at every precision. When the trees have an onset
threshold (``GatedTreesClassifier.onset_threshold``; ``train --barometer``'s do) the graph outputs
``onset_score: [1] float32`` too (> 0: the window reaches it, the trees' rule), which the step vote reads beside the
decision (:class:`~stairsense.models.StepVote`); its decisions are held to the same agreement.

A model whose feature names end with :data:`~stairsense.features.STEP_CONTEXT_NAMES` (a
configuration with ``step_context > 0``) has a second input ``step_context: [1, 36]
float32``: the window's step-shape and step-context features, which the host computes (they need
the kept windows before this one, which a one-window graph does not see; the phone's
``StepContext`` in android_stub/core). A model that reads the barometer (configuration
``barometer``, its names ending with :data:`~stairsense.features.HEIGHT_NAMES`) has one more,
``height: [1, 7] float32``: the height features, which need the barometer's stream and the kept
windows before this one as well (the phone's ``HeightFilter`` and ``HeightContext``). Such a
model needs air pressure, which its configuration in the metadata (``barometer: true``) tells the
phone. The graph casts each of these inputs to float64, gathers the columns the model kept and
appends them to its Table 12.1 features — the selected columns are in increasing order and the
blocks come last in this order (:func:`~stairsense.features.host_feature_columns`), so that is
the model's column order.

Every export runs the exported graph in ONNX Runtime on a validation set of windows and compares
it with the float64 Python pipeline on the same float32 samples; it raises
:class:`ExportParityError` and writes nothing if the check fails. Files are written to a temporary
name in the target folder and renamed, so a failed or interrupted export never leaves a half model.
"""
from __future__ import annotations

import os
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np
import onnx
from sklearn.feature_selection import SelectorMixin
from sklearn.preprocessing import MinMaxScaler
from sklearn.utils.validation import check_is_fitted

from stairsense.features import RATIO_CLIP, host_feature_columns
from stairsense.models import GatedTreesClassifier, KOMDClassifier, StairstepModel, load_model
from stairsense.models.stairstep import package_version
from stairsense.stream import atomic_write

from ._budget import smallest_passing_budget
from ._compact import PRECISIONS, RBFHead, add_rbf_decision, reduce_support, save_ort_format
from ._features_graph import FEATURE_FORMULAS, add_window_features, parse_feature_names
from ._graph import GraphBuilder
from ._metadata import write_metadata
from ._runtime import ONSET_OUTPUT, run_windows, session_options
from ._trees import add_tree_decision

__all__ = [
    "ExportParityError",
    "ExportReport",
    "build_onnx_model",
    "export_model",
    "support_budget",
    "validation_windows",
]

#: fp32 parity: largest |ONNX score − Python score| accepted.
SCORE_TOLERANCE = 1e-4
#: fp16/int8 (and reduced-support) parity: least fraction of windows with the same STAIR decision.
MIN_AGREEMENT = 0.995
STAIR = 1
#: Training sources and subjects an exported file lists, each (the model file keeps them all): the
#: metadata counts against the file's size budget, and a trees head has no support set to prune to
#: make room.
MAX_EXPORTED_SOURCES = 8


class ExportParityError(ValueError):
    """The exported graph disagrees with the Python model beyond the tolerances; nothing was written.

    A ``ValueError``: asking for a budget the model cannot meet is bad input, so
    ``stairsense export`` prints this one line, naming the smallest budget that would pass, and exits 2.
    """


@dataclass
class ExportReport:
    """What :func:`export_model` wrote and how well it matches the Python model (``to_dict`` is JSON).

    ``head`` is "komd" or "trees"; for a trees head the support vectors are its gate's landmarks."""

    path: str
    precision: str
    size_bytes: int
    n_features: int
    head: str
    n_support_vectors: int
    n_support_vectors_trained: int
    parity: dict = field(default_factory=dict)
    ort_path: str | None = None
    ort_size_bytes: int | None = None

    def to_dict(self) -> dict:
        return asdict(self)


def _as_model(model_or_path) -> StairstepModel:
    if isinstance(model_or_path, StairstepModel):
        return model_or_path
    if isinstance(model_or_path, (str, os.PathLike)):
        return load_model(model_or_path)
    raise TypeError(
        f"export_model needs a StairstepModel or the path of a saved one, got {type(model_or_path).__name__}; "
        "wrap a fitted pipeline with StairstepModel.train (it records the configuration and feature names)"
    )


def _training_metadata(summary: dict) -> dict:
    """The model's training summary as an exported file records it: every key, but at most
    :data:`MAX_EXPORTED_SOURCES` of its sources and of its subjects, ``n_sources`` and ``n_subjects``
    counting them all where the lists were cut."""
    record = dict(summary)
    for key in ("sources", "subjects"):
        values = list(summary.get(key, []))
        if len(values) > MAX_EXPORTED_SOURCES:
            record[key], record[f"n_{key}"] = values[:MAX_EXPORTED_SOURCES], len(values)
    return record


def _unpack(model: StairstepModel):
    """(scaler, support mask, head) of a scale → select → KOMD (or gated trees) pipeline, or a clear refusal."""
    steps = [est for _, est in getattr(model.pipeline, "steps", [])]
    kinds = (MinMaxScaler, SelectorMixin, (KOMDClassifier, GatedTreesClassifier))
    if len(steps) != 3 or not all(isinstance(s, k) for s, k in zip(steps, kinds)):
        got = [type(s).__name__ for s in steps] or type(model.pipeline).__name__
        raise ValueError(
            f"only the stair-step pipeline MinMaxScaler → selector → KOMDClassifier(rbf) or GatedTreesClassifier can "
            f"be exported, got {got}; build it with make_stairstep_pipeline or TrainRecipe"
        )
    scaler, selector, classifier = steps
    for est in steps:
        check_is_fitted(est)
    if [int(c) for c in classifier.classes_] != [0, STAIR]:
        raise ValueError("the classifier must be trained on labels 0 = NO_STAIR, 1 = STAIR; got classes "
                         f"{classifier.classes_}")
    return scaler, np.flatnonzero(selector.get_support()), classifier


def _n_points(head) -> int:
    """Support vectors of a KOMD head (trained or stored), or landmarks of a trees head's gate."""
    if isinstance(head, GatedTreesClassifier):
        return 0 if head.support_vectors_ is None else int(head.support_vectors_.shape[0])
    return int(np.size(getattr(head, "dual_coef_", getattr(head, "dual_coef", None))))


def build_onnx_model(model: StairstepModel, precision: str = "fp32", *, max_support_vectors: int | None = None):
    """The window → (score, stair) ONNX graph of ``model``, without metadata or checks.

    Parameters
    ----------
    model : StairstepModel
    precision : {"fp32", "fp16", "int8"}
        Storage of the support set (see :mod:`stairsense.export._compact`).
    max_support_vectors : int, optional
        Keep only this many support vectors (:func:`~stairsense.export._compact.reduce_support`).

    Returns
    -------
    onnx_model : onnx.ModelProto
        Inputs ``samples`` and, for a model with step-context features, ``step_context``; for a
        model that reads the barometer, ``height``.
    stored : callable
        ``stored(X)`` → float64 scores of the model as stored (reduced and rounded), on the full
        (N, 79·B [+ 36] [+ 5]) feature matrix: the graph's reference up to float32 arithmetic.
    stored_head : RBFHead or GatedTreesClassifier
        The support vectors and coefficients as stored; for a trees head, a copy of it with its
        gate's landmarks as stored.
    """
    if precision not in PRECISIONS:
        raise ValueError(f"precision must be one of {PRECISIONS}, got {precision!r}")
    scaler, selected, classifier = _unpack(model)
    host = host_feature_columns(model.feature_names)
    if bool(host["height"]) != model.config.barometer:
        # The phone computes the height features exactly when the configuration reads the barometer.
        raise ValueError(f"the model's configuration has barometer={model.config.barometer} but its feature names "
                         f"{'end with' if host['height'] else 'lack'} the 7 height features, so no phone could feed it; "
                         "train it on window_dataset features of its configuration")
    n_table = len(model.feature_names) - sum(host.values())
    table_names = model.feature_names[:n_table]
    n_blocks, parsed = parse_feature_names(table_names)
    g = GraphBuilder()
    samples = g.input("samples", np.float32, ["n", 3 * n_blocks])
    low, high = scaler.feature_range
    scale, offset = scaler.scale_[selected], scaler.min_[selected]
    # A clipping scaler fitted on clipped ratios maps ±1e3 outside [low, high] (it is increasing),
    # so its clip implies the ratio clip: skip the latter (two nodes per window).
    ratio = np.array([i < n_table and FEATURE_FORMULAS[parsed[i][1]][0] == "ratio" for i in selected])
    implied = scaler.clip and bool(np.all(scale[ratio] > 0) and np.all(-RATIO_CLIP * scale[ratio] + offset[ratio] <= low)
                                   and np.all(RATIO_CLIP * scale[ratio] + offset[ratio] >= high))
    in_table = selected[selected < n_table]
    parts = [add_window_features(g, samples, table_names, in_table, clip_ratios=not implied)] if in_table.size else []
    start = n_table
    for name, width in host.items():
        if not width:
            continue
        # One window per run, so [1, width]; its selected columns follow those before (selected is sorted).
        # The input is declared even when none is selected: the phone's contract follows the configuration.
        rows = g.input(name, np.float32, [1, width])
        in_block = selected[(selected >= start) & (selected < start + width)] - start
        if in_block.size:
            flat = g.op("Cast", g.op("Reshape", rows, g.const(np.array([-1], np.int64))), to=onnx.TensorProto.DOUBLE)
            parts.append(g.op("Gather", flat, g.const(in_block.astype(np.int64), f"{name}_columns"), axis=0))
        start += width
    features = parts[0] if len(parts) == 1 else g.op("Concat", *parts, axis=0, hint="features")
    trees = isinstance(classifier, GatedTreesClassifier)
    if trees and max_support_vectors is not None:
        raise ValueError("a trees head has no support set to reduce (its size is fixed by training); export it whole, "
                         "or retrain with fewer trees")
    head = classifier if trees else reduce_support(RBFHead.from_komd(classifier), max_support_vectors)
    # KOMD: the scaler's output is multiplied by √β here, folded into its constants (see add_rbf_decision);
    # the trees compare the scaled features themselves.
    root = 1.0 if trees else np.sqrt(head.gamma)
    scaled = g.op("Add", g.op("Mul", features, g.const(scale * root, "scale")), g.const(offset * root, "offset"))
    if scaler.clip:
        scaled = g.op("Clip", scaled, g.const(np.float64(low * root)), g.const(np.float64(high * root)))
    x = g.op("Cast", scaled, to=onnx.TensorProto.FLOAT, hint="scaled")
    onset = None
    if trees:
        score, onset, stored_head = add_tree_decision(g, x, head, precision)
    else:
        score, stored_head = add_rbf_decision(g, x, head, precision, x_times_sqrt_gamma=True)
    score = g.rename(score, "score")
    # each head's own rule at a tie: KOMD's f − θ ≥ 0, scikit-learn's > 0 for the trees
    g.rename(g.op("Greater" if trees else "GreaterOrEqual", score, g.const(np.float32(0.0))), "stair")
    outputs = {"score": (np.float32, [1]), "stair": (np.bool_, [1])}
    if onset is not None:
        g.rename(onset, ONSET_OUTPUT)
        outputs[ONSET_OUTPUT] = (np.float32, [1])
    onnx_model = g.model(outputs, name="stairsense_stairstep")

    def stored(X):
        return stored_head.decision_function(scaler.transform(np.asarray(X, np.float64))[:, selected])

    return onnx_model, stored, stored_head


def support_budget(model, max_bytes: int, precision: str = "int8") -> int | None:
    """The most support vectors whose ``precision`` graph fits in ``max_bytes``, or ``None`` when
    the whole support set already fits.

    Bisection on :func:`build_onnx_model`'s serialised size, which grows with the support set;
    metadata adds a few hundred bytes more, so leave headroom in ``max_bytes``.

    Raises
    ------
    ValueError
        When even one support vector does not fit.
    """
    model = _as_model(model)

    def size(n):
        return len(build_onnx_model(model, precision, max_support_vectors=n)[0].SerializeToString())

    head = _unpack(model)[2]
    if size(None) <= max_bytes:
        return None
    if isinstance(head, GatedTreesClassifier):
        raise ValueError(f"the trees head takes {size(None)} bytes at {precision}, over the {max_bytes}-byte budget, "
                         "and has no support set to cut: raise the budget or retrain with fewer trees")
    total = len(head.dual_coef_)
    smallest = 2  # one support vector per class
    if size(smallest) > max_bytes:
        raise ValueError(f"even {smallest} support vectors take {size(smallest)} bytes at {precision}, over the "
                         f"{max_bytes}-byte budget")
    lo, hi = smallest, total  # size(lo) fits, size(hi) does not
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if size(mid) <= max_bytes else (lo, mid)
    return lo


def validation_windows(validation, config) -> tuple:
    """Standardized samples, window offsets and the rows the host computes, to check an export on:
    the positional arguments of a stair-step model's ``predict_windows``.

    ``validation`` is ``(samples, offsets)``, ``(samples, offsets, step_context)`` or, for a
    configuration with ``barometer``, ``(samples, offsets, step_context, height)``; a ``SensorLog``
    or a list of them (each run through the front end and the window-row stage with ``config``,
    kept windows only, as training does; with ``barometer`` they must record air pressure); or
    ``None``: a 4-minute simulated log (seed 0), which covers walking, stairs and standing (with a
    simulated barometer for a configuration with ``barometer``).

    Returns
    -------
    samples : ndarray of shape (N, 3·B), float32
    offsets : ndarray of shape (W + 1,)
    step_context : ndarray of shape (W, 36) or None
        The :data:`~stairsense.features.STEP_CONTEXT_NAMES` features of each window: computed for
        logs when ``config.step_context > 0``, as given in a tuple, else None.
    height : ndarray of shape (W, 7) or None
        Only for a configuration with ``barometer``: the :data:`~stairsense.features.HEIGHT_NAMES`
        features of each window, computed for logs, as given in a 4-tuple, else None.

    Raises
    ------
    ValueError
        When height rows are given for a configuration without ``barometer``.
    """
    from stairsense.features import WindowRowStage
    from stairsense.stream import Barometer, SensorLog, run_front_end, simulate

    def given(rows):
        return None if rows is None else np.asarray(rows, np.float64)

    if isinstance(validation, tuple) and len(validation) in (2, 3, 4):
        samples, offsets, *rows = validation
        rows += [None] * (2 - len(rows))
        step_context, height = given(rows[0]), given(rows[1])
        if height is not None and not config.barometer:
            raise ValueError("validation gives height rows, but the configuration reads no barometer (barometer=False); "
                             "pass (samples, offsets, step_context)")
        windows = np.asarray(samples, np.float32), np.asarray(offsets, np.intp), step_context
        return (*windows, height) if config.barometer else windows
    if validation is None:
        logs = [simulate(minutes=4, seed=0, barometer=Barometer() if config.barometer else None)]
    else:
        logs = [validation] if isinstance(validation, SensorLog) else list(validation)
    parts, offsets, total, contexts, heights = [], [0], 0, [], []
    for log in logs:
        if not isinstance(log, SensorLog):
            raise TypeError(f"validation must be (samples, offsets), a SensorLog or a list of them; got {type(log).__name__}")
        result = run_front_end(log, config)
        rows = WindowRowStage(config, result.log.rate_hz).process(result)
        parts.append(rows.samples)
        offsets.extend(total + rows.offsets[1:])
        total += rows.samples.shape[0]
        if rows.step_context is not None:
            contexts.append(rows.step_context)
        if rows.height is not None:
            heights.append(rows.height)
    windows = (np.concatenate(parts).astype(np.float32), np.asarray(offsets, np.intp),
               np.vstack(contexts) if contexts else None)
    return (*windows, np.vstack(heights) if heights else None) if config.barometer else windows


def _session(model_bytes_or_path):
    import onnxruntime as ort

    options = session_options(threads=1)
    source = model_bytes_or_path if isinstance(model_bytes_or_path, bytes) else str(model_bytes_or_path)
    return ort.InferenceSession(source, options, providers=["CPUExecutionProvider"])


def _onnx_scores(session, samples, offsets, inputs, outputs=("score",)) -> np.ndarray:
    return run_windows(session, samples, offsets, inputs, outputs).astype(np.float64)


# What to pass when validation windows lack the rows a host-computed input of the model needs.
_MISSING_ROWS = {
    "step_context": "validation windows for a step-context model need their step-context rows: pass "
                    "(samples, offsets, step_context) or SensorLogs (the context is computed from each log's kept windows)",
    "height": "validation windows for a model that reads the barometer need their height rows: pass "
              "(samples, offsets, step_context, height) or SensorLogs with air pressure (the height features are "
              "computed from each log's pressure and kept windows)",
}


def _decides(scores, trees: bool) -> np.ndarray:
    """Where a head decides STAIR (or, for ``onset_score``, an onset): the trees' rule is
    scikit-learn's score > 0, KOMD's f − θ ≥ 0 (the graph's ``stair`` output applies the same)."""
    return scores > 0 if trees else scores >= 0


def _parity(scores, reference, stored, *, exact_reference: bool, score_tol, min_agreement, trees: bool,
            hint=None) -> dict:
    """Compare ONNX scores with the Python model; raise ExportParityError when out of tolerance."""
    decided, expected = _decides(scores, trees), _decides(reference, trees)
    report = {
        "n_windows": int(scores.size),
        "max_abs_diff_vs_stored": float(np.max(np.abs(scores - stored))),
        "median_abs_diff_vs_stored": float(np.median(np.abs(scores - stored))),
        "max_abs_diff_vs_python": float(np.max(np.abs(scores - reference))),
        "decision_agreement": float(np.mean(decided == expected)),
        "python_stair_windows": int(np.sum(expected)),
        "onnx_stair_windows": int(np.sum(decided)),
    }
    failures = []
    gap = report["max_abs_diff_vs_python" if exact_reference else "max_abs_diff_vs_stored"]
    if gap > score_tol:
        failures.append(f"scores differ by up to {gap:.3g} > {score_tol:g}")
    if not exact_reference and report["decision_agreement"] < min_agreement:
        failures.append(f"STAIR decisions agree on {report['decision_agreement']:.2%} of windows < {min_agreement:.2%}")
    if failures:
        raise ExportParityError(
            f"the exported graph does not match the Python model on {scores.size} validation windows: "
            f"{'; '.join(failures)}. Nothing was written; {hint or 'try a higher precision or more support vectors'}"
        )
    return report


def export_model(model, out, precision: str = "fp32", ort: bool = False, validation=None, *,
                 max_support_vectors: int | None = None, score_tol: float = SCORE_TOLERANCE,
                 min_agreement: float | None = None) -> ExportReport:
    """Export a stair-step classifier to ``out`` (ONNX), check it against Python, and report.

    Parameters
    ----------
    model : StairstepModel or path
        A trained model or a file written by ``save_model``.
    out : str or Path
        The ``.onnx`` file to write. Its folder must exist.
    precision : {"fp32", "fp16", "int8"}, default="fp32"
        Storage of the support set; arithmetic is float32 in all three.
    ort : bool, default=False
        Also write ``out`` with suffix ``.ort`` in ONNX Runtime's ORT format (mobile minimal builds),
        checked like the ONNX file.
    validation : None, tuple, SensorLog or list of SensorLog
        Windows for the parity check: ``(samples, offsets[, step_context[, height]])`` or logs
        (see :func:`validation_windows`).
    max_support_vectors : int, optional
        Keep only this many support vectors (largest γ, coefficients refitted; see
        :func:`~stairsense.export._compact.reduce_support`). Held to ``min_agreement`` like any
        compaction: a model that needs more vectors than the budget allows is refused (train a
        compact model instead, ``make_stairstep_pipeline(n_landmarks=...)``).
    score_tol : float, default=1e-4
        fp32 full-support exports: largest accepted |ONNX − Python| score difference. Compacted
        or reduced exports must match *their stored weights* to this tolerance. Not applied to a
        trees head (held to ``min_agreement`` at every precision; see the comment in the code).
    min_agreement : float, optional
        Least fraction of validation windows with the Python model's STAIR decision (default
        0.995) for every export but a KOMD fp32 with the full support set (which must match scores).

    Returns
    -------
    ExportReport

    Raises
    ------
    ExportParityError
        If the check fails; no file is written or replaced. Its one-line message names the
        smallest support set (and file size) at ``precision`` that would agree, or a higher precision.

    Examples
    --------
    >>> import tempfile, numpy as np
    >>> from stairsense import PipelineConfig
    >>> from stairsense.features._window_features import FEATURE_NAMES, window_features
    >>> from stairsense.models import StairstepModel, make_stairstep_pipeline
    >>> rng = np.random.default_rng(0)
    >>> windows = [rng.normal(size=(20, 3)) * (1 + (i % 2)) for i in range(80)]
    >>> offsets = np.arange(81) * 20
    >>> samples = np.concatenate(windows).astype(np.float32)
    >>> X, y = window_features(samples, offsets), np.arange(80) % 2
    >>> model = StairstepModel.train(make_stairstep_pipeline(k=5, gamma=0.5), X, y,
    ...                              config=PipelineConfig(), feature_names=FEATURE_NAMES)
    >>> with tempfile.TemporaryDirectory() as d:
    ...     report = export_model(model, d + "/stairs.onnx", validation=(samples, offsets))
    >>> report.n_features, report.parity["max_abs_diff_vs_python"] < 1e-4
    (5, True)
    """
    model = _as_model(model)
    out = Path(out)
    if not out.parent.is_dir():
        raise FileNotFoundError(f"cannot write {out}: folder {out.parent} does not exist")
    onnx_model, stored, stored_head = build_onnx_model(model, precision, max_support_vectors=max_support_vectors)
    samples, offsets, *host_rows = validation_windows(validation, model.config)
    if offsets.size < 2:
        raise ValueError("the validation set has no windows; pass windows or a log with steps")
    inputs = {}
    for (name, width), rows in zip(host_feature_columns(model.feature_names).items(), (*host_rows, None)):
        if width and rows is None:
            raise ValueError(_MISSING_ROWS[name])
        inputs[name] = rows if width else None
    X = model.window_rows(samples, offsets, **inputs)
    reference = model.decision_function(X)
    trees = isinstance(stored_head, GatedTreesClassifier)
    head = "trees" if trees else "komd"
    n_stored, n_trained = _n_points(stored_head), _n_points(model.pipeline[-1])
    exact = precision == "fp32" and n_stored == n_trained and not trees
    outputs = ("score", ONSET_OUTPUT) if model.onset_threshold is not None else ("score",)
    ran = _onnx_scores(_session(onnx_model.SerializeToString()), samples, offsets, inputs, outputs)
    scores = ran[:, 0]
    # A reduced support set is held to the same agreement as any other compaction; a file
    # that decides differently from the evaluated model is refused, never written with a warning.
    min_agreement = MIN_AGREEMENT if min_agreement is None else min_agreement
    agreement = float(np.mean(_decides(scores, trees) == _decides(reference, trees)))
    hint = None
    if not exact and agreement < min_agreement:
        hint = ("try a higher precision (fp32 stores the gate's landmarks exactly)" if trees else
                smallest_passing_budget(build_onnx_model, model, X, reference, precision, min_agreement))
    # Trees are step functions of features the graph computes to within a float32 rounding of
    # Python's (the phone's rows are float32), so a window on a split may take the other branch
    # and its score jump by a leaf: what is held to the tolerance is the decision, as for any
    # compaction. The median score gap stays ~1e-7 and shows a wrong graph.
    parity = _parity(scores, reference, stored(X), exact_reference=exact, score_tol=np.inf if trees else score_tol,
                     min_agreement=min_agreement, trees=trees, hint=hint)
    if model.onset_threshold is not None:
        onset_reference = model.pipeline[-1].onset_decision_function(model.pipeline[:-1].transform(X))
        parity["onset_agreement"] = float(np.mean(_decides(ran[:, 1], True) == _decides(onset_reference, True)))
        if parity["onset_agreement"] < min_agreement:
            raise ExportParityError(
                f"the exported graph's onset decisions agree with the Python model's on {parity['onset_agreement']:.2%} "
                f"of {scores.size} validation windows < {min_agreement:.2%}. Nothing was written; {hint or 'try fp32'}")
    selected = model.pipeline[-2].get_support()
    write_metadata(onnx_model, {
        "config": model.config.to_dict(),
        "feature_names": [n for n, keep in zip(model.feature_names, selected) if keep],
        "input_feature_names": model.feature_names,
        "training": _training_metadata(model.summary),
        "version": package_version(),
        "precision": precision,
        "head": head,
        "compaction": {"precision": precision, "support_vectors": n_stored, "trained_support_vectors": n_trained},
        "parity": parity,
        **({"onset_threshold": float(model.onset_threshold)} if model.onset_threshold is not None else {}),
    })
    # The .ort twin is checked against the .onnx before either is renamed into place.
    with atomic_write(out) as tmp:
        onnx.save_model(onnx_model, tmp)
        if ort:
            with atomic_write(out.with_suffix(".ort")) as ort_tmp:
                save_ort_format(tmp, ort_tmp)
                ort_scores = _onnx_scores(_session(ort_tmp), samples, offsets, inputs, outputs)
                parity["ort_format_max_abs_diff_vs_onnx"] = float(np.max(np.abs(ort_scores - ran)))
                if parity["ort_format_max_abs_diff_vs_onnx"] > score_tol:
                    raise ExportParityError(
                        f"the ORT-format model differs from the ONNX model by "
                        f"{parity['ort_format_max_abs_diff_vs_onnx']:.3g} > {score_tol:g} on the validation windows; "
                        "nothing was written"
                    )
    return ExportReport(
        path=str(out), precision=precision, size_bytes=out.stat().st_size, n_features=int(selected.sum()),
        head=head, n_support_vectors=n_stored, n_support_vectors_trained=n_trained, parity=parity,
        ort_path=str(out.with_suffix(".ort")) if ort else None,
        ort_size_bytes=out.with_suffix(".ort").stat().st_size if ort else None,
    )
