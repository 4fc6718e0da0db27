"""The budget optimiser may choose the barometer (issue 24, "Energy").

A barometer configuration is scored only where its accuracy can be measured honestly: on recordings
that all carry air pressure, here people simulated with a phone barometer, where its
accelerometer-only twin is scored on the same people, folds and windows. Oracles: the Python
model's own decision (the barometer graph), the twin's windows and counts, the profile's numbers
written out (what the barometer adds to a twin's charge), and a brute-force search over every
candidate (the optimiser's choice).
"""
from __future__ import annotations

import numpy as np
import pytest

from stairsense.export.energy import logs_fingerprint, simulated_people
from stairsense.features import HEIGHT_NAMES, window_dataset
from stairsense.stream import PipelineConfig


@pytest.fixture(scope="module")
def people():
    return simulated_people(6, seed=0)


def test_simulated_people_are_reproducible_and_carry_pressure_and_subjects(people):
    again = simulated_people(7, seed=0)
    assert logs_fingerprint(again[:6]) == logs_fingerprint(people) != logs_fingerprint(simulated_people(6, seed=1))
    assert [log.meta["subject"] for log in again] == list(range(1, 8))
    assert all(log.pressure is not None and np.isfinite(log.pressure).all() and log.label is not None
               for log in people)
    with pytest.raises(ValueError, match="n_people must be a whole number >= 2"):
        simulated_people(1)


def test_a_barometer_graph_scores_windows_as_the_python_model_does(people):
    """The graph of a barometer model takes the window's samples, step context and height rows and
    gives the Python model's decision (float32 arithmetic); its cost is measured like any graph's."""
    import onnxruntime as ort

    from stairsense.export import build_onnx_model
    from stairsense.export.energy import inference_cost
    from stairsense.features import WindowRowStage
    from stairsense.models import StairstepModel, make_stairstep_pipeline
    from stairsense.stream import run_front_end

    config = PipelineConfig(rate_hz=30, orientation="mizell", barometer=True)
    data = window_dataset(people, config)
    # every fifth column: some of the step context's and of the height's, at offsets that differ in
    # each block (36 is no multiple of 5), so each host input's gather must pick its own columns
    allowed = np.arange(len(data.feature_names)) % 5 == 0
    model = StairstepModel.train(make_stairstep_pipeline(k="all", allowed=allowed), data.X, data.y, config=config,
                                 feature_names=data.feature_names)
    np.testing.assert_array_equal(model.pipeline[1].get_support(), allowed)
    assert 0 < allowed[-len(HEIGHT_NAMES):].sum() < len(HEIGHT_NAMES)
    proto, stored, _ = build_onnx_model(model, "fp32")
    assert [i.name for i in proto.graph.input] == ["samples", "step_context", "height"]
    result = run_front_end(people[0], config)
    rows = WindowRowStage(config, result.log.rate_hz).process(result)
    reference = model.decision_function(rows.features())
    session = ort.InferenceSession(proto.SerializeToString(), providers=["CPUExecutionProvider"])
    scores = [session.run(["score"], {"samples": rows.samples[a:b].astype(np.float32),
                                      "step_context": rows.step_context[w:w + 1].astype(np.float32),
                                      "height": rows.height[w:w + 1].astype(np.float32)})[0][0]
              for w, (a, b) in enumerate(zip(rows.offsets[:-1], rows.offsets[1:]))]
    assert len(rows) > 20 and np.isfinite(rows.height).all()
    np.testing.assert_allclose(scores, reference, atol=2e-3)
    np.testing.assert_allclose(stored(rows.features()), reference, atol=1e-6)
    selected = list(np.flatnonzero(model.pipeline[1].get_support()))
    cost = inference_cost(proto, 30, selected, data.feature_names, repeats=5)
    assert cost.macs > 0 and cost.features_us > 0
