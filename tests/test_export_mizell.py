"""Export of a Mizell model: its windows have two 3-column blocks (vertical, horizontal) and 158
features; the export's parity check must featurise both blocks (the energy optimiser can choose
Mizell, and `stairsense export --config best.json` must then work)."""
import numpy as np

from stairsense import PipelineConfig, window_dataset
from stairsense.export import OnnxStairModel, export_model
from stairsense.models import StairstepModel, make_stairstep_pipeline
from stairsense.stream import simulate


def test_mizell_model_exports_with_parity(tmp_path):
    config = PipelineConfig(rate_hz=30, orientation="mizell")
    data = window_dataset([simulate(minutes=3, rate_hz=30, seed=70 + s) for s in range(1)], config)
    assert data.X.shape[1] == 158 + 36  # two Table 12.1 blocks, then the step context (default 5)
    model = StairstepModel.train(make_stairstep_pipeline(k=10), data.X, data.y, config=config,
                                 feature_names=data.feature_names)
    report = export_model(model, tmp_path / "mizell.onnx", validation=simulate(minutes=1, rate_hz=30, seed=5))
    assert report.parity["decision_agreement"] == 1.0
    onnx_model = OnnxStairModel(tmp_path / "mizell.onnx", config=config)
    assert onnx_model.n_columns == 6 and onnx_model.n_step_context == 36
    log = simulate(minutes=1, rate_hz=30, seed=6)
    from stairsense.features import WindowRowStage
    from stairsense.stream import run_front_end

    result = run_front_end(log, config)
    rows = WindowRowStage(config, result.log.rate_hz).process(result)  # z = Mizell's vertical, h = ‖horizontal‖
    expected = model.predict(rows.features())
    got = onnx_model.predict_windows(rows.samples, rows.offsets, step_context=rows.step_context)
    np.testing.assert_array_equal(got, expected)
    np.testing.assert_array_equal(model.predict_windows(rows.samples, rows.offsets, step_context=rows.step_context),
                                  expected)
