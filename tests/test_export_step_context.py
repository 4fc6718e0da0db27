"""Export of a model with step-context features (issue 9): the graph's second input ``step_context``.

Oracles: the float64 scikit-learn model on the Table 12.1 features (``window_features``) next to
the step-context rows of the training featurisation (``stairsense.features.WindowRowStage``, which
is not the export's code); ONNX Runtime runs the exported file.
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest

pytest.importorskip("onnxruntime")

from stairsense import PipelineConfig, window_dataset  # noqa: E402
from stairsense.export import OnnxStairModel, build_onnx_model, export_model, inspect_model, validation_windows  # noqa: E402
from stairsense.features import FEATURE_NAMES, STEP_CONTEXT_NAMES, window_features  # noqa: E402
from stairsense.models import StairstepModel, make_stairstep_pipeline  # noqa: E402
from stairsense.features import WindowRowStage  # noqa: E402
from stairsense.stream import run_front_end, simulate  # noqa: E402

CONFIG = PipelineConfig(rate_hz=30, step_context=5)
N_TABLE = len(FEATURE_NAMES)


def _train(config, k=20, allowed=None):
    data = window_dataset([simulate(minutes=3, seed=s) for s in (1, 2)], config)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # EasyMKL's convergence note on a small set
        return StairstepModel.train(make_stairstep_pipeline(k=k, random_state=0, allowed=allowed), data.X, data.y,
                                    config=config, feature_names=data.feature_names)


@pytest.fixture(scope="module")
def model():
    return _train(CONFIG)


@pytest.fixture(scope="module")
def heldout():
    return validation_windows(simulate(minutes=3, seed=7), CONFIG)


def _python_scores(model, windows):
    samples, offsets, context = windows
    return model.decision_function(np.hstack([window_features(samples.astype(np.float64), offsets), context]))


def test_validation_rows_are_the_training_featurisation():
    """The export computes the rows itself (a lower layer); they must be the ones training saw."""
    log = simulate(minutes=2, seed=9)
    samples, offsets, context = validation_windows(log, CONFIG)
    result = run_front_end(log, CONFIG)
    expected = WindowRowStage(CONFIG, result.log.rate_hz).process(result).features()
    assert context.shape == (offsets.size - 1, len(STEP_CONTEXT_NAMES)) and context.shape[0] > 50
    np.testing.assert_array_equal(context, expected[:, N_TABLE:])
    np.testing.assert_allclose(window_features(samples.astype(np.float64), offsets), expected[:, :N_TABLE],
                               rtol=1e-5, atol=1e-5)  # float32 samples


@pytest.mark.parametrize("precision", ["fp32", "int8"])
def test_onnx_decides_like_the_python_model(model, heldout, tmp_path, precision):
    selected = np.flatnonzero(model.pipeline[-2].get_support())
    assert (selected >= N_TABLE).any() and (selected < N_TABLE).any(), "both kinds of column should be selected"
    report = export_model(model, tmp_path / "stairs.onnx", precision=precision, validation=heldout)
    scores = OnnxStairModel(report.path, config=CONFIG).decision_windows(*heldout)
    python = _python_scores(model, heldout)
    assert scores.size == python.size > 100 and 0 < (python >= 0).sum() < python.size
    assert np.mean((scores >= 0) == (python >= 0)) >= 0.995
    if precision == "fp32":
        np.testing.assert_allclose(scores, python, rtol=0, atol=1e-5)


def test_missing_or_misshapen_step_context_is_a_clear_error(model, heldout, tmp_path):
    samples, offsets, context = heldout
    path = export_model(model, tmp_path / "stairs.onnx", validation=heldout).path
    onnx_model = OnnxStairModel(path)
    assert onnx_model.n_step_context == 36
    with pytest.raises(ValueError, match=r"takes 36 step-context features per window: pass step_context=") as err:
        onnx_model.predict_windows(samples, offsets)
    assert "\n" not in str(err.value)
    with pytest.raises(ValueError, match=r"shape \(\d+, 36\), one row per window"):
        onnx_model.predict_windows(samples, offsets, context[1:])
    with pytest.raises(ValueError, match=r"need their step-context rows"):
        export_model(model, tmp_path / "other.onnx", validation=(samples, offsets))
    assert not (tmp_path / "other.onnx").exists()


def test_inspect_reports_the_step_context_input(model, heldout, tmp_path):
    info = inspect_model(export_model(model, tmp_path / "stairs.onnx", validation=heldout).path)
    assert [(i["name"], i["shape"]) for i in info["inputs"]] == [("samples", ["n", 3]), ("step_context", [1, 36])]
    assert info["metadata"]["config"]["step_context"] == 5  # what the phone reads to feed the input
    assert info["metadata"]["input_feature_names"][N_TABLE:] == list(STEP_CONTEXT_NAMES)


@pytest.mark.parametrize("kind", ["context_only", "table_only"])
def test_models_selecting_one_kind_of_column(heldout, tmp_path, kind):
    """Only step-context columns: no window statistics in the graph. Only Table 12.1 columns from a
    step-context model: the input is still declared (the phone's contract follows the configuration)."""
    names = list(FEATURE_NAMES) + list(STEP_CONTEXT_NAMES)
    allowed = np.array([(i >= N_TABLE) == (kind == "context_only") for i in range(len(names))])
    model = _train(CONFIG, k=6, allowed=allowed)
    graph = build_onnx_model(model)[0]
    assert [i.name for i in graph.graph.input] == ["samples", "step_context"]
    ops = {n.op_type for n in graph.graph.node}
    assert ("ReduceMean" in ops) == (kind == "table_only") and ("Gather" in ops)
    report = export_model(model, tmp_path / f"{kind}.onnx", validation=heldout)
    scores = OnnxStairModel(report.path).decision_windows(*heldout)
    np.testing.assert_allclose(scores, _python_scores(model, heldout), rtol=0, atol=1e-5)


def test_a_model_without_step_context_exports_as_before(tmp_path):
    config = CONFIG.replace(step_context=0)
    model = _train(config)
    assert model.feature_names == list(FEATURE_NAMES)
    graph = build_onnx_model(model)[0]
    assert [i.name for i in graph.graph.input] == ["samples"]
    samples, offsets, context = validation_windows(simulate(minutes=2, seed=7), config)
    assert context is None
    onnx_model = OnnxStairModel(export_model(model, tmp_path / "plain.onnx", validation=(samples, offsets)).path)
    assert onnx_model.n_step_context == 0
    python = model.decision_function(window_features(samples.astype(np.float64), offsets))
    np.testing.assert_allclose(onnx_model.decision_windows(samples, offsets), python, rtol=0, atol=1e-5)
    with pytest.raises(ValueError, match="takes no step-context features"):
        onnx_model.decision_windows(samples, offsets, np.zeros((offsets.size - 1, 36)))


def test_step_context_names_out_of_place_are_refused(model):
    from stairsense.features import step_context_columns

    names = list(model.feature_names)
    assert step_context_columns(names) == 36 and step_context_columns(FEATURE_NAMES) == 0
    with pytest.raises(ValueError, match="in order, after the Table 12.1 ones"):
        step_context_columns(names[:N_TABLE] + names[N_TABLE + 1:] + names[N_TABLE:N_TABLE + 1])


def test_a_file_exported_before_step_context_means_step_context_0(tmp_path):
    """Older exports carry no step_context key: they were 79-feature models, and load as such."""
    import onnx

    from stairsense.export._metadata import read_metadata, write_metadata

    config = CONFIG.replace(step_context=0)
    samples, offsets, _ = validation_windows(simulate(minutes=2, seed=7), config)
    path = export_model(_train(config), tmp_path / "new.onnx", validation=(samples, offsets)).path
    proto = onnx.load(path)
    meta = read_metadata(proto)
    old_config = {k: v for k, v in meta["config"].items() if not k.startswith("step_context")}
    onnx.save(write_metadata(proto, {**{k: v for k, v in meta.items() if k not in ("format", "format_version",
                                                                                    "content_sha256")},
                                     "config": old_config}), tmp_path / "old.onnx")
    old = OnnxStairModel(tmp_path / "old.onnx", config=config)  # no configuration mismatch
    assert old.config.step_context == 0 and old.n_step_context == 0
    np.testing.assert_array_equal(old.decision_windows(samples, offsets),
                                  OnnxStairModel(path).decision_windows(samples, offsets))


def test_the_trained_model_takes_windows_as_the_exported_one_does(model, heldout, tmp_path):
    """``StairstepModel.predict_windows`` is ``OnnxStairModel.predict_windows``'s call, computing the
    features itself: equal to ``predict`` on the feature rows."""
    samples, offsets, context = heldout
    X = np.hstack([window_features(samples.astype(np.float64), offsets), context])
    np.testing.assert_array_equal(model.predict_windows(samples, offsets, step_context=context), model.predict(X))
    np.testing.assert_array_equal(model.decision_windows(samples, offsets, context), model.decision_function(X))
    onnx_model = OnnxStairModel(export_model(model, tmp_path / "stairs.onnx", validation=heldout).path)
    assert np.mean(onnx_model.predict_windows(*heldout) == model.predict_windows(*heldout)) >= 0.995
    with pytest.raises(ValueError, match="36 step-context features per window"):
        model.predict_windows(samples, offsets)
    with pytest.raises(ValueError, match=r"step_context must have shape"):
        model.predict_windows(samples, offsets, context[1:])
    with pytest.raises(ValueError, match="3 columns per row"):
        model.predict_windows(np.hstack([samples, samples]), offsets, context)
