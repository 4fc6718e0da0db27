import numpy as np
import pytest

from stairsense import PipelineConfig
from stairsense.stream import SensorLog, StepTruth


def _log(n=5):
    return SensorLog(t_ns=np.arange(n) * 20_000_000, acc=np.zeros((n, 3)))


def test_log_rejects_backwards_time_naming_the_sample_and_repair():
    with pytest.raises(ValueError, match=r"sample 2 .*repair='sort'"):
        SensorLog(t_ns=[0, 10, 5], acc=np.zeros((3, 3)))


def test_log_rejects_nan_naming_the_stream():
    acc = np.zeros((3, 3))
    acc[1, 2] = np.nan
    with pytest.raises(ValueError, match=r"acc has a non-finite value at sample 1"):
        SensorLog(t_ns=[0, 1, 2], acc=acc)


def test_log_rejects_misaligned_optional_stream():
    with pytest.raises(ValueError, match=r"rotvec must have shape \(3, 4\)"):
        SensorLog(t_ns=[0, 1, 2], acc=np.zeros((3, 3)), rotvec=np.zeros((2, 4)))


def test_pressure_is_one_value_per_sample_and_slices_with_the_log():
    log = SensorLog(t_ns=[0, 1, 2], acc=np.zeros((3, 3)), pressure=[1000.0, 1000.5, 1001.0])
    assert log.pressure.dtype == np.float64 and log.slice(1, 3).pressure.tolist() == [1000.5, 1001.0]
    with pytest.raises(ValueError, match=r"pressure must have shape \(3,\)"):
        SensorLog(t_ns=[0, 1, 2], acc=np.zeros((3, 3)), pressure=np.zeros((3, 1)))
    with pytest.raises(ValueError, match=r"pressure has a non-finite value at sample 2"):
        SensorLog(t_ns=[0, 1, 2], acc=np.zeros((3, 3)), pressure=[1000.0, 1000.0, np.nan])


def test_slice_keeps_steps_inside_span():
    log = SensorLog(t_ns=np.arange(10) * 10, acc=np.zeros((10, 3)), steps=StepTruth([5, 35, 95], [1, 1, 2]))
    part = log.slice(2, 5)
    assert part.t_ns.tolist() == [20, 30, 40]
    assert part.steps.t_ns.tolist() == [35]


def test_rate_and_duration():
    log = _log(51)
    assert log.rate_hz == pytest.approx(50.0)
    assert log.duration_s == pytest.approx(1.0)


def test_config_round_trip_and_validation(tmp_path):
    cfg = PipelineConfig(rate_hz=30, smoothing="count")
    path = tmp_path / "c.json"
    path.write_text(cfg.to_json())
    assert PipelineConfig.from_file(path) == cfg
    with pytest.raises(ValueError, match="orientation must be one of"):
        PipelineConfig(orientation="compass")
    path.write_text('{"rate": 30}')
    with pytest.raises(ValueError, match=r"c.json: unknown PipelineConfig keys \['rate'\]"):
        PipelineConfig.from_file(path)


def test_every_orientation_is_accepted_everywhere_one_is_named():
    """The orientation methods are one constant: the configuration, the standardizer, every
    command-line choice and the energy model's sensor sets all take each of them."""
    from stairsense.cli import build_parser
    from stairsense.export.energy import streams_for
    from stairsense.stream import ORIENTATION_METHODS, ORIENTATIONS

    assert ORIENTATIONS == ("auto", *ORIENTATION_METHODS)
    parser = build_parser()
    for method in ORIENTATIONS:
        assert PipelineConfig(orientation=method).orientation == method
        for command in (["replay", "x.csv"], ["train", "d", "--out", "m"], ["evaluate", "d"]):
            assert parser.parse_args([*command, "--orientation", method]).orientation == method
    for method in ORIENTATION_METHODS:
        assert streams_for(method)
        assert parser.parse_args(["energy", "--orientation", method]).orientation == method
    assert parser.parse_args(["energy", "optimise", "--data", "d", "--budget", "1", "--orientations", *ORIENTATION_METHODS]).orientations == list(
        ORIENTATION_METHODS)
    with pytest.raises(ValueError, match="orientation"):
        PipelineConfig(orientation="compass")


def test_agree_takes_the_models_configuration_and_the_callers_read_options():
    trained = PipelineConfig(rate_hz=30, orientation="rotvec", step_context=0)
    assert trained.agree({}) == trained
    assert trained.agree({"rate_hz": 30.0, "max_gap_s": 2.0}) == trained.replace(max_gap_s=2.0)
    assert trained.agree(trained.replace(max_gap_s=2.0)) == trained.replace(max_gap_s=2.0)
    with pytest.raises(ValueError, match=r"another front end \(rate_hz: model 30, given 50; orientation: model "
                                         r"'rotvec', given 'ahrs'\).*leave those settings out"):
        trained.agree({"rate_hz": 50, "orientation": "ahrs", "max_gap_s": 2.0})
    with pytest.raises(ValueError, match=r"step_context: model 0, given 5"):
        trained.agree(PipelineConfig(rate_hz=30, orientation="rotvec"))
