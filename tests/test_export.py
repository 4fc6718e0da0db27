"""Tests of the ONNX export: feature graph, whole-model parity, compaction, metadata, loading.

Oracles: the Python feature extractor (window_features) for every graph feature; the float64
scikit-learn pipeline for the exported decision; scipy's cdist for the RBF head and scipy's lstsq
for the reduced-set coefficient refit.
"""
from __future__ import annotations

import dataclasses
import warnings

import numpy as np
import onnx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
import scipy.linalg
from scipy.spatial.distance import cdist

ort = pytest.importorskip("onnxruntime")

from stairsense import PipelineConfig  # noqa: E402
from stairsense.features import step_context_features, step_shape_features  # noqa: E402
from stairsense.features._window_features import FEATURE_NAMES, window_features  # noqa: E402
from stairsense.models.stairstep._model import StairstepModel, make_stairstep_pipeline  # noqa: E402
from stairsense.export._compact import RBFHead, reduce_support  # noqa: E402
from stairsense.export._export import ExportParityError, export_model, validation_windows  # noqa: E402
from stairsense.export._features_graph import window_features_model  # noqa: E402
from stairsense.export._graph import ALLOWED_OPS  # noqa: E402
from stairsense.export._runtime import OnnxModelError, OnnxStairModel, inspect_model  # noqa: E402

CONFIG = PipelineConfig(rate_hz=30)


def _session(model):
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    return ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])


def _hard_windows(rng):
    """Random windows plus the cases that break naive formulas: near-zero means, constant rows."""
    windows = [rng.normal(size=(n, 3)) * rng.uniform(0.1, 5) + rng.normal(size=3) * 3 for n in (2, 3, 7, 30, 61)]
    for scale in (1e-7, 1e-6, 3e-6):  # means straddling the safe-ratio ε = 1e-6, both signs
        w = rng.normal(size=(25, 3)) * 1e-3
        windows.append(w - w.mean(axis=0) + rng.choice([-1, 1], size=3) * scale)
    constant_x = rng.normal(size=(20, 3))
    # 0.1 and 9.81 are not binary fractions: their window mean rounds, so a "constant" row keeps a
    # variance of ~1e-33 that only the relative constant-row test sends to Corr = 0.
    constant_x[:, 0] = 0.1
    windows += [constant_x, np.full((30, 3), 9.81), np.zeros((6, 3)), np.array([[1.0, -1.0, 9.8]] * 4)]
    windows.append(np.column_stack([np.linspace(-1, 1, 15)] * 3))  # perfectly correlated rows
    return [w.astype(np.float32) for w in windows]


@pytest.mark.parametrize("feature", range(79), ids=lambda i: FEATURE_NAMES[i])
def test_each_feature_graph_matches_window_features(feature):
    rng = np.random.default_rng(feature)
    session = _session(window_features_model([feature]))
    for window in _hard_windows(rng):
        got = session.run(None, {"samples": window})[0]
        expected = window_features(window, [0, len(window)])[:, [feature]]
        np.testing.assert_allclose(got, expected, rtol=1e-9, atol=1e-12, err_msg=f"window of {len(window)} samples")


@settings(max_examples=40, deadline=None)
@given(arrays(np.float32, st.tuples(st.integers(2, 40), st.just(3)),
              elements=st.floats(-50, 50, allow_nan=False, width=32)))
def test_all_features_graph_matches_window_features_on_random_windows(window):
    got = _ALL_FEATURES.run(None, {"samples": window})[0]
    expected = window_features(window, [0, len(window)])
    # Relative Std ≤ 1e-10·max|row| decides "constant" for Corr; windows right at that knife edge
    # cannot be told apart by rounding, so they are excluded rather than given a loose tolerance.
    rows = np.column_stack([window, np.linalg.norm(window.astype(float), axis=1), window[:, :2].sum(1) / 2])
    edge = np.abs(rows.std(0) / np.maximum(np.abs(rows).max(0), 1e-300) - 1e-10) < 1e-12
    if not edge.any():
        np.testing.assert_allclose(got, expected, rtol=1e-8, atol=1e-10)


_ALL_FEATURES = _session(window_features_model())


def test_mizell_blocks_read_their_own_columns():
    names = [f"vertical_{n}" for n in FEATURE_NAMES] + [f"horizontal_{n}" for n in FEATURE_NAMES]
    selected = [0, 21, 75, 79 + 5, 79 + 60, 79 + 78]
    rng = np.random.default_rng(3)
    window = rng.normal(size=(17, 6)).astype(np.float32)
    got = _session(window_features_model(selected, names)).run(None, {"samples": window})[0]
    python = np.hstack([window_features(window[:, :3], [0, 17]), window_features(window[:, 3:], [0, 17])])
    np.testing.assert_allclose(got, python[:, selected], rtol=1e-10)


def test_feature_graph_prunes_unneeded_statistics():
    means_only = window_features_model([0, 1, 2])
    ops = {n.op_type for n in means_only.graph.node}
    # The five rows (including the norm) are always built; no extremes, ratios or correlations.
    assert not ops & {"ReduceMax", "ReduceMin", "Where", "Clip", "GreaterOrEqual"}, ops
    assert len(means_only.graph.node) < len(window_features_model().graph.node) / 3


# ------------------------------------------------------------------------------------------------
# Whole model


@pytest.fixture(scope="module")
def model():
    from stairsense import window_dataset
    from stairsense.stream.simulate._simulate import simulate

    data = window_dataset([simulate(minutes=3, seed=s) for s in (1, 2)], CONFIG)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # EasyMKL's convergence note on a small set
        return StairstepModel.train(make_stairstep_pipeline(k=20, random_state=0), data.X, data.y, config=CONFIG,
                                    feature_names=data.feature_names)


@pytest.fixture(scope="module")
def windows(model):
    from stairsense.stream.simulate._simulate import simulate

    return validation_windows(simulate(minutes=3, seed=7), model.config)


@pytest.fixture(scope="module")
def exported(model, windows, tmp_path_factory):
    folder = tmp_path_factory.mktemp("export")
    return {p: export_model(model, folder / f"stairs_{p}.onnx", precision=p, ort=True, validation=windows)
            for p in ("fp32", "fp16", "int8")}


def _python_scores(model, windows):
    """The Python model on the windows' Table 12.1 features and their step-context rows (CONFIG has
    step_context = 5, the default: the graph's second input)."""
    samples, offsets, context = windows
    return model.decision_function(np.hstack([window_features(samples.astype(np.float64), offsets), context]))


@pytest.mark.parametrize("precision", ["fp32", "fp16", "int8"])
@pytest.mark.parametrize("ort_format", [False, True], ids=["onnx", "ort"])
def test_runtime_matches_python_model(model, windows, exported, precision, ort_format):
    report = exported[precision]
    path = report.ort_path if ort_format else report.path
    onnx_model = OnnxStairModel(path, config=CONFIG)
    scores = onnx_model.decision_windows(*windows)
    python = _python_scores(model, windows)
    assert scores.size == python.size > 100
    if precision == "fp32":
        assert np.max(np.abs(scores - python)) <= 1e-4
    assert np.mean((scores >= 0) == (python >= 0)) >= 0.995
    # The replay-level statement: same number of STAIR windows (steps) as the Python model.
    labels = onnx_model.predict_windows(*windows)
    assert abs(int(labels.sum()) - int((python >= 0).sum())) <= 0.005 * python.size


def test_extreme_windows_match_python_through_the_whole_model(model, exported):
    """Near-zero means, constant rows and huge ratios: exercises the folded ratio/scaler clip."""
    windows = _hard_windows(np.random.default_rng(11)) + [
        np.random.default_rng(12).normal(size=(40, 3)).astype(np.float32) * 60]
    samples = np.concatenate(windows)
    offsets = np.concatenate([[0], np.cumsum([len(w) for w in windows])])
    # Their step-context rows, as consecutive steps of one run (z = vertical, h = horizontal magnitude).
    z, h = samples[:, 2].astype(np.float64), np.hypot(samples[:, 0], samples[:, 1]).astype(np.float64)
    times = offsets * 10**9 // 30
    context = step_context_features(step_shape_features(z, h, offsets, 1 / 30), times[:-1], times[1:])
    scores = OnnxStairModel(exported["fp32"].path).decision_windows(samples, offsets, context)
    python = model.decision_function(np.hstack([window_features(samples, offsets), context]))
    np.testing.assert_allclose(scores, python, atol=1e-4)


def test_compaction_shrinks_the_file(exported):
    sizes = {p: r.size_bytes for p, r in exported.items()}
    assert sizes["int8"] < sizes["fp16"] < sizes["fp32"]
    sv = exported["fp32"].n_support_vectors * exported["fp32"].n_features
    assert sizes["fp32"] - sizes["fp16"] >= 2 * sv * 0.9  # 4 → 2 bytes per support-vector entry
    k = exported["int8"].n_features  # int8 adds a float32 scale and an int8 zero point per feature
    assert sizes["fp16"] - sizes["int8"] >= sv - 5 * k - 200  # 2 → 1 byte, minus node and metadata


@pytest.mark.parametrize("precision", ["fp32", "fp16", "int8"])
def test_only_standard_operators_and_weights_as_initializers(exported, precision):
    model = onnx.load(exported[precision].path)
    for node in model.graph.node:
        assert node.domain in ("", "ai.onnx.ml"), node
        assert node.op_type in ALLOWED_OPS, node.op_type
        assert all(a.type != onnx.AttributeProto.TENSOR for a in node.attribute), node
    weights = max(model.graph.initializer, key=lambda t: np.prod(t.dims))
    expected = {"fp32": onnx.TensorProto.FLOAT, "fp16": onnx.TensorProto.FLOAT16, "int8": onnx.TensorProto.INT8}
    assert weights.data_type == expected[precision]
    assert list(weights.dims) == [exported[precision].n_features, exported[precision].n_support_vectors]


def test_graph_stays_small(exported):
    """ONNX Runtime's per-node overhead (~0.4 µs) dominates a window's cost: 56 nodes today."""
    assert len(onnx.load(exported["int8"].path).graph.node) <= 60


def test_export_inputs_are_checked(model, tmp_path):
    from stairsense.models.stairstep._model import save_model

    saved = save_model(model, tmp_path / "m.ssm")
    report = export_model(saved, tmp_path / "from_file.onnx", precision="fp16")  # default validation log
    assert report.parity["n_windows"] > 100
    with pytest.raises(TypeError, match="StairstepModel"):
        export_model(model.pipeline, tmp_path / "x.onnx")
    with pytest.raises(FileNotFoundError, match="does not exist"):
        export_model(model, tmp_path / "missing" / "x.onnx")
    with pytest.raises(ValueError, match="precision must be one of"):
        export_model(model, tmp_path / "x.onnx", precision="int4")


def test_rbf_head_against_cdist(model):
    head = RBFHead.from_komd(model.pipeline[-1])
    X = np.random.default_rng(0).uniform(-1, 1, size=(5, head.support_vectors.shape[1]))
    kernel = np.exp(-head.gamma * cdist(X, head.support_vectors, "sqeuclidean"))
    np.testing.assert_allclose(head.decision_function(X), kernel @ head.dual_coef + head.intercept, atol=1e-12)
    np.testing.assert_allclose(head.decision_function(X), model.pipeline[-1].decision_function(X), atol=1e-12)


def test_a_support_gate_is_kept_through_reduction_and_refit(model):
    """Oracle: cdist. The gated head decides min(f(x), max_i k(x, x_i) − τ), also once reduced."""
    head = dataclasses.replace(RBFHead.from_komd(model.pipeline[-1]), support_threshold=0.5)
    X = np.random.default_rng(1).uniform(-1.5, 1.5, size=(400, head.support_vectors.shape[1]))
    for gated in (head, reduce_support(head, head.dual_coef.size // 2)):
        kernel = np.exp(-gated.gamma * cdist(X, gated.support_vectors, "sqeuclidean"))
        expected = np.minimum(kernel @ gated.dual_coef + gated.intercept, kernel.max(axis=1) - 0.5)
        assert gated.support_threshold == 0.5
        np.testing.assert_allclose(gated.decision_function(X), expected, atol=1e-12)


def test_refit_is_the_ridge_least_squares_solution(model):
    """Oracle: scipy's lstsq on the augmented system [K′; √λ I] δ = [K a − K′a₀; 0]."""
    head = RBFHead.from_komd(model.pipeline[-1])
    moved = RBFHead(head.support_vectors[::2] + 0.01, head.dual_coef[::2], 0.0, head.gamma)
    refit = moved.refit_to(head, ridge=1e-3)
    K_new = np.exp(-head.gamma * cdist(head.support_vectors, moved.support_vectors, "sqeuclidean"))
    K_ref = np.exp(-head.gamma * cdist(head.support_vectors, head.support_vectors, "sqeuclidean"))
    lam = 1e-3 * np.trace(K_new.T @ K_new) / moved.dual_coef.size
    A = np.vstack([K_new, np.sqrt(lam) * np.eye(moved.dual_coef.size)])
    b = np.concatenate([K_ref @ head.dual_coef - K_new @ moved.dual_coef, np.zeros(moved.dual_coef.size)])
    delta = scipy.linalg.lstsq(A, b)[0]
    np.testing.assert_allclose(refit.dual_coef, moved.dual_coef + delta, rtol=1e-6, atol=1e-9)
    assert refit.intercept == head.intercept


def test_reduce_support_keeps_the_largest_and_both_classes(model):
    head = RBFHead.from_komd(model.pipeline[-1])
    small = reduce_support(head, 10)
    assert small.dual_coef.size == 10 and reduce_support(head, None) is head
    kept = {tuple(v) for v in small.support_vectors}
    largest = np.argsort(-np.abs(head.dual_coef))[:8]
    assert all(tuple(head.support_vectors[i]) in kept for i in largest)
    positives = {tuple(v) for v in head.support_vectors[head.dual_coef > 0]}
    assert kept & positives and kept - positives


def test_failed_parity_raises_and_writes_nothing(model, windows, tmp_path):
    out = tmp_path / "stairs.onnx"
    with pytest.raises(ExportParityError, match="Nothing was written"):
        export_model(model, out, validation=windows, score_tol=0.0)
    with pytest.raises(ExportParityError, match="agree on"):
        export_model(model, out, precision="int8", ort=True, validation=windows, min_agreement=1.01)
    with pytest.raises(ExportParityError, match="agree on"):
        export_model(model, out, precision="int8", validation=windows, max_support_vectors=3, min_agreement=0.995)
    # Issue 9: a reduced support set is held to the same agreement by default, and the refusal is
    # a ValueError (one CLI line) naming the smallest support set that would agree.
    with pytest.raises(ValueError, match="smallest int8 export that agrees") as refused:
        export_model(model, out, precision="int8", validation=windows, max_support_vectors=3)
    assert isinstance(refused.value, ExportParityError) and "\n" not in str(refused.value)
    assert list(tmp_path.iterdir()) == []
    needed = int(str(refused.value).split(" keeps ")[1].split(" of ")[0])
    passed = export_model(model, out, precision="int8", validation=windows, max_support_vectors=needed)
    assert passed.parity["decision_agreement"] >= 0.995


def test_metadata_round_trip(model, exported):
    info = inspect_model(exported["int8"].path)
    meta = info["metadata"]
    assert meta["config"] == model.config.to_dict()
    selected = model.pipeline[-2].get_support()
    assert meta["feature_names"] == [n for n, keep in zip(model.feature_names, selected) if keep]
    assert meta["training"] == model.summary
    assert meta["precision"] == "int8" and meta["compaction"]["support_vectors"] == exported["int8"].n_support_vectors
    assert meta["parity"]["decision_agreement"] >= 0.995
    assert [(i["name"], i["shape"]) for i in info["inputs"]] == [("samples", ["n", 3]), ("step_context", [1, 36])]
    assert [o["name"] for o in info["outputs"]] == ["score", "stair"]
    assert info["operators"]["DequantizeLinear"] == 1
    assert inspect_model(exported["int8"].ort_path)["metadata"] == meta  # ORT format keeps it
    assert meta["head"] == exported["int8"].head == "komd"


def test_exported_metadata_lists_a_bounded_number_of_sources_and_subjects(model, windows, tmp_path):
    """A model trained on many files and people keeps them all; its exported file, whose metadata
    counts against the size budget, lists the first MAX_EXPORTED_SOURCES of each and counts the rest."""
    from stairsense.export._export import MAX_EXPORTED_SOURCES

    sources = [f"/data/recording_{i:03d}.csv.gz" for i in range(3 * MAX_EXPORTED_SOURCES)]
    subjects = [f"person-{i:04d}" for i in range(500)]
    many = StairstepModel(model.pipeline, model.config, model.feature_names,
                          {**model.summary, "sources": sources, "subjects": subjects})
    meta = inspect_model(export_model(many, tmp_path / "m.onnx", precision="int8", validation=windows).path)["metadata"]
    assert meta["training"] == {**model.summary, "sources": sources[:MAX_EXPORTED_SOURCES], "n_sources": len(sources),
                                "subjects": subjects[:MAX_EXPORTED_SOURCES], "n_subjects": len(subjects)}
    assert many.summary["sources"] == sources and many.summary["subjects"] == subjects  # the model is not changed
    few = StairstepModel(model.pipeline, model.config, model.feature_names, {**model.summary, "subjects": subjects[:3]})
    meta = inspect_model(export_model(few, tmp_path / "f.onnx", precision="int8", validation=windows).path)["metadata"]
    assert meta["training"]["subjects"] == subjects[:3] and "n_subjects" not in meta["training"]


def test_replay_configuration_mismatch_is_refused(exported):
    path = exported["fp32"].path
    with pytest.raises(OnnxModelError, match=r"rate_hz: model 30, given 50") as err:
        OnnxStairModel(path, config=CONFIG.replace(rate_hz=50, smooth_ms=200.0))
    assert "smooth_ms" in str(err.value) and str(path) in str(err.value)
    # Read-only settings (how a file is read) may differ and are taken from the caller.
    assert OnnxStairModel(path, config=CONFIG.replace(max_gap_s=1.0)).config.max_gap_s == 1.0


@pytest.mark.parametrize("damage, message", [
    (lambda data: data[: len(data) // 2], "not an ONNX model|truncated|corrupt"),
    (lambda data: data[:-7], "not an ONNX model|truncated|corrupt"),
    (lambda data: b"", "empty file"),
    (lambda data: b"t_ns,ax,ay,az\n0,1,2,3\n", "not an ONNX model|foreign"),
    (lambda data: np.random.default_rng(0).bytes(len(data)), "not an ONNX model|foreign|corrupt"),
])
def test_damaged_files_are_refused_naming_the_file(exported, tmp_path, damage, message):
    path = tmp_path / "bad.onnx"
    path.write_bytes(damage(open(exported["fp16"].path, "rb").read()))
    with pytest.raises(OnnxModelError, match=message) as err:
        OnnxStairModel(path)
    assert str(path) in str(err.value)


def test_flipped_weight_byte_is_detected(exported, tmp_path):
    model = onnx.load(exported["int8"].path)
    weights = max(model.graph.initializer, key=lambda t: np.prod(t.dims))
    raw = bytearray(weights.raw_data)
    raw[len(raw) // 2] ^= 0x01
    weights.raw_data = bytes(raw)
    path = tmp_path / "flipped.onnx"
    onnx.save_model(model, path)
    with pytest.raises(OnnxModelError, match="corrupt or modified"):
        OnnxStairModel(path)


def test_foreign_and_truncated_ort_models_are_refused(exported, tmp_path):
    foreign = tmp_path / "features.onnx"
    onnx.save_model(window_features_model([0]), foreign)
    with pytest.raises(OnnxModelError, match="foreign ONNX model"):
        OnnxStairModel(foreign)
    truncated = tmp_path / "cut.ort"
    truncated.write_bytes(open(exported["fp32"].ort_path, "rb").read()[:2000])
    with pytest.raises(OnnxModelError, match="cut.ort: ONNX Runtime cannot load"):
        OnnxStairModel(truncated)


def test_runtime_input_errors(exported):
    onnx_model = OnnxStairModel(exported["fp32"].path)
    with pytest.raises(TypeError, match="predict_windows"):
        onnx_model.predict(np.zeros((1, 79)))
    with pytest.raises(ValueError, match="3 columns"):
        onnx_model.predict_windows(np.zeros((10, 4)), [0, 10])
    with pytest.raises(ValueError, match="window 1 has 1 samples"):
        onnx_model.predict_windows(np.zeros((10, 3)), [0, 5, 6])
    with pytest.raises(ValueError, match="pass step_context="):
        onnx_model.predict_windows(np.zeros((10, 3)), [0, 5, 10])


def test_int8_rows_on_one_side_of_zero_keep_their_values():
    """A feature whose support vectors all lie away from 0 (step-context features do): every stored
    value within half a quantization step of the true one. Oracle: the grid's spacing."""
    from stairsense.export._compact import _stored_weights
    from stairsense.export._graph import GraphBuilder

    rng = np.random.default_rng(5)
    W = np.vstack([rng.uniform(-0.574, -0.406, 40), rng.uniform(0.4, 0.6, 40), rng.uniform(-1, 1, 40)])
    _, dequantized = _stored_weights(GraphBuilder(), W, "int8")
    step = (np.maximum(W.max(axis=1), 0) - np.minimum(W.min(axis=1), 0)) / 255
    assert np.all(np.abs(dequantized - W) <= step[:, None] * 0.5 * (1 + 1e-6))
