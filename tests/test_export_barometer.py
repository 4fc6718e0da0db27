"""Export of a model that reads the barometer (issue 24, "Export and phone"): the graph's input ``height``.

Oracles: the float64 scikit-learn model on feature rows built without the export's code (the
Table 12.1 features by ``window_features`` of the float32 samples, beside the step-context and
height rows of the training featurisation, ``stairsense.features.WindowRowStage``, run on a
simulated building walk with air pressure); ONNX Runtime runs the exported file; the simulator's
labels say the walk has stair steps.
"""
from __future__ import annotations

import dataclasses
import warnings

import numpy as np
import pytest

pytest.importorskip("onnxruntime")

from stairsense import PipelineConfig, window_dataset  # noqa: E402
from stairsense.export import (  # noqa: E402
    OnnxModelError,
    OnnxStairModel,
    build_onnx_model,
    export_model,
    validation_windows,
)
from stairsense.features import HEIGHT_NAMES, STEP_CONTEXT_NAMES, WindowRowStage, window_features  # noqa: E402
from stairsense.models import StairstepModel, make_stairstep_pipeline  # noqa: E402
from stairsense.pipeline import replay  # noqa: E402
from stairsense.stream import Barometer, Person, building_walk, run_front_end, simulate  # noqa: E402

CONFIG = PipelineConfig(rate_hz=30, barometer=True)
N_TABLE = 79


def _walk(seed, legs=None):
    rng = np.random.default_rng(seed)
    schedule, person = building_walk(Person.draw(rng), rng, legs)
    return simulate(schedule=schedule, seed=seed, person=person, barometer=Barometer(), rate_hz=50)


def _train(config):
    data = window_dataset([_walk(s) for s in range(8)], config)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # EasyMKL's convergence note on a small set
        return StairstepModel.train(make_stairstep_pipeline(k=20, random_state=0), data.X, data.y, config=config,
                                    feature_names=data.feature_names)


@pytest.fixture(scope="module")
def model():
    return _train(CONFIG)


@pytest.fixture(scope="module")
def heldout():
    """A held-out person's walk up two floors by stairs, down one by lift and one by stairs."""
    return _walk(50, [("stairs", 2), ("lift", -1), ("stairs", -1)])


@pytest.fixture(scope="module")
def rows(heldout):
    result = run_front_end(heldout, CONFIG)
    return WindowRowStage(CONFIG, result.log.rate_hz, labelled=True).process(result)


def _python_scores(model, rows):
    samples = rows.samples.astype(np.float32).astype(np.float64)  # what the graph reads
    return model.decision_function(np.hstack([window_features(samples, rows.offsets), rows.step_context,
                                              rows.height]))


def test_the_model_uses_height_columns(model, rows):
    selected = np.flatnonzero(model.pipeline[-2].get_support())
    assert (selected >= N_TABLE + len(STEP_CONTEXT_NAMES)).any(), "the height input should matter"
    assert (rows.label == 1).sum() > 20 and (rows.label == 0).sum() > 20


@pytest.mark.parametrize("precision", ["fp32", "int8"])
def test_onnx_decides_like_the_python_model(model, heldout, rows, tmp_path, precision):
    report = export_model(model, tmp_path / "baro.onnx", precision=precision, validation=heldout)
    onnx_model = OnnxStairModel(report.path, config=CONFIG)
    scores = onnx_model.decision_windows(rows.samples, rows.offsets, rows.step_context, rows.height)
    python = _python_scores(model, rows)
    assert scores.size == python.size == len(rows) and 0 < (python >= 0).sum() < python.size
    if precision == "fp32":
        np.testing.assert_allclose(scores, python, rtol=0, atol=1e-5)
        np.testing.assert_array_equal(scores >= 0, python >= 0)
    else:
        assert np.mean((scores >= 0) == (python >= 0)) >= 0.995
    # The phone's call: predict_windows with the rows' keyword arguments, as replay makes it.
    np.testing.assert_array_equal(onnx_model.predict_windows(rows.samples, rows.offsets, **rows.model_inputs()),
                                  np.where(scores >= 0, 1, 0))


def test_the_graph_takes_height_and_the_metadata_says_the_model_needs_pressure(model, tmp_path):
    graph = build_onnx_model(model)[0]
    assert [i.name for i in graph.graph.input] == ["samples", "step_context", "height"]
    report = export_model(model, tmp_path / "baro.onnx")  # the default validation: a simulated log with pressure
    onnx_model = OnnxStairModel(report.path)
    assert onnx_model.n_height == len(HEIGHT_NAMES) and onnx_model.n_step_context == len(STEP_CONTEXT_NAMES)
    assert onnx_model.config.barometer and onnx_model.metadata["config"]["barometer"] is True
    assert onnx_model.metadata["input_feature_names"][-len(HEIGHT_NAMES):] == list(HEIGHT_NAMES)
    assert report.parity["n_windows"] > 100


def test_replay_with_the_exported_file_counts_as_the_trained_model(model, heldout, tmp_path):
    path = export_model(model, tmp_path / "baro.onnx", precision="fp32", validation=heldout).path
    python, onnx = (replay(heldout, CONFIG, model=m) for m in (model, OnnxStairModel(path)))
    assert python.model == onnx.model == "with barometer"
    for key in ("stair_steps", "stair_steps_up", "stair_steps_down", "floors_ascended", "floors_descended",
                "metres_climbed", "metres_descended"):
        assert getattr(onnx, key) == getattr(python, key), key
    assert 0 < python.stair_steps < python.kept and python.floors_ascended > 0


def test_an_export_with_another_number_of_height_features_is_refused_on_load(model, heldout, tmp_path, monkeypatch):
    """A file from a version that computed fewer height features cannot be fed by this one: refused
    on load, saying why and what to do, rather than at the first window."""
    import stairsense.features as features

    path = export_model(model, tmp_path / "baro.onnx", validation=heldout).path
    monkeypatch.setattr(features, "HEIGHT_NAMES", features.HEIGHT_NAMES[:5])
    with pytest.raises(OnnxModelError, match=r"takes 7 height features per window where this stairsense computes 5 "
                                             r"\(an export from an older version\); train the model again"):
        OnnxStairModel(path)


def test_missing_or_misshapen_height_is_a_clear_error(model, heldout, rows, tmp_path):
    samples, offsets, context, height = validation_windows(heldout, CONFIG)
    np.testing.assert_array_equal(height, rows.height)
    path = export_model(model, tmp_path / "baro.onnx", validation=(samples, offsets, context, height)).path
    onnx_model = OnnxStairModel(path)
    with pytest.raises(ValueError, match=r"takes 7 height features per window: pass height=\(W, 7\) rows") as err:
        onnx_model.predict_windows(samples, offsets, context)
    assert "\n" not in str(err.value)
    with pytest.raises(ValueError, match=r"height must have shape \(\d+, 7\), one row per window"):
        onnx_model.predict_windows(samples, offsets, context, height[1:])
    with pytest.raises(ValueError, match="need their height rows"):
        export_model(model, tmp_path / "other.onnx", validation=(samples, offsets, context))
    without_pressure = dataclasses.replace(heldout, pressure=None, meta={**heldout.meta, "path": "walk.csv"})
    with pytest.raises(ValueError, match=r"walk\.csv: .*no air pressure"):
        export_model(model, tmp_path / "other.onnx", validation=without_pressure)
    assert not (tmp_path / "other.onnx").exists()


def test_an_accelerometer_only_model_takes_no_height(tmp_path, heldout):
    config = CONFIG.replace(barometer=False)
    model = _train(config)
    assert [i.name for i in build_onnx_model(model)[0].graph.input] == ["samples", "step_context"]
    windows = validation_windows(heldout, config)  # the log has pressure; this model ignores it
    assert len(windows) == 3
    onnx_model = OnnxStairModel(export_model(model, tmp_path / "acc.onnx", validation=heldout).path)
    assert onnx_model.n_height == 0 and not onnx_model.config.barometer
    with pytest.raises(ValueError, match=r"takes no height features \(its configuration has barometer=False\)"):
        onnx_model.decision_windows(*windows, np.zeros((windows[1].size - 1, 5)))
    with pytest.raises(ValueError, match="reads no barometer"):
        validation_windows((*windows, np.zeros((windows[1].size - 1, 5))), config)


def test_a_model_whose_features_disagree_with_its_configuration_is_not_exported(model):
    odd = StairstepModel(model.pipeline, CONFIG.replace(barometer=False), model.feature_names, model.summary)
    with pytest.raises(ValueError, match="barometer=False but its feature names end with the 7 height features"):
        build_onnx_model(odd)


def test_a_graph_that_disagrees_with_its_configuration_is_refused(model, heldout, tmp_path):
    """The phone computes the inputs its configuration names; a file whose graph wants others is refused."""
    import onnx

    from stairsense.export._metadata import read_metadata, write_metadata

    path = export_model(model, tmp_path / "baro.onnx", validation=heldout).path
    proto = onnx.load(path)
    meta = read_metadata(proto)
    kept = {k: v for k, v in meta.items() if k not in ("format", "format_version", "content_sha256")}
    onnx.save(write_metadata(proto, {**kept, "config": {**meta["config"], "barometer": False}}), tmp_path / "bad.onnx")
    with pytest.raises(OnnxModelError, match=r"bad\.onnx: its configuration has barometer=False but the graph has a "
                                             r"'height' input"):
        OnnxStairModel(tmp_path / "bad.onnx")
