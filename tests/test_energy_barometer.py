"""Energy model: the barometer in every device profile, and the host's per-step work outside the
ONNX graph (the step context). Oracles are the profiles' own numbers written out by hand; every
stage cost is injected, never timed."""
import json
from importlib import resources

import numpy as np
import pytest

from stairsense import PipelineConfig
from stairsense.cli import main
from stairsense.export.energy import (
    ActivityCounts,
    InferenceCost,
    StageCosts,
    Workload,
    estimate,
    load_profile,
    measure_stage_costs,
    profile_names,
)


def _raw(name):
    return json.loads(resources.files("stairsense.export.energy").joinpath("profiles", f"{name}.json").read_text())


def _write(tmp_path, data, name="phone.json"):
    path = tmp_path / name
    path.write_text(json.dumps(data))
    return path


# --- the barometer in the profiles ------------------------------------------------------------------
def test_every_shipped_profile_prices_or_refuses_the_barometer_with_a_source():
    for name in profile_names():
        profile = load_profile(name)
        assert ("barometer" in profile.sensors) != ("barometer" in profile.absent), name
        why = profile.sensors["barometer"].source if "barometer" in profile.sensors else profile.absent["barometer"]
        assert why.strip(), name
    assert "barometer" in load_profile("nexus-2012").sensors and "barometer" in load_profile("pixel2-2017").sensors
    assert load_profile("nexus-one-2010").absent.keys() == {"barometer"}


def test_cli_profiles_show_the_barometer_or_its_absence(capsys):
    assert main(["energy", "profiles", "--json"]) == 0
    for profile in json.loads(capsys.readouterr().out):
        barometer = profile["sensors"].get("barometer")
        assert (barometer is None) == ("barometer" in profile["absent_sensors"]), profile["name"]
        assert (barometer["source"] if barometer else profile["absent_sensors"]["barometer"]).strip()
    assert main(["energy", "profiles"]) == 0
    listing = capsys.readouterr().out
    assert "barometer 0.247 mA@10Hz" in listing and "no barometer" in listing


@pytest.mark.parametrize("name, per_hz_ma", [("nexus-2012", 0.005), ("pixel2-2017", 0.0247)])
def test_barometer_current_scales_with_its_rate(name, per_hz_ma):
    """The datasheets give an average current proportional to the sample rate (5 µA per sample/s
    for the BMP180 in standard mode; 24.7 µA per Hz for the BMP280 at ultra high resolution)."""
    barometer = load_profile(name).sensors["barometer"]
    for hz in (1.0, 2.5, 10.0, 25.0):
        assert barometer.at(hz) == pytest.approx(per_hz_ma * hz, rel=2e-3), hz


@pytest.mark.parametrize("mutate, message", [
    (lambda d: d["sensors"].update(barometer={"absent": " "}), "'sensors.barometer.absent' must say where"),
    (lambda d: d["sensors"]["barometer"].update(absent="none"), "must hold exactly 'current_ma' (or 'absent'"),
    (lambda d: d["sensors"].pop("barometer"), "missing key 'sensors.barometer'; a sensor the phone does not have is"),
])
def test_bad_barometer_entry_gets_one_line(tmp_path, mutate, message):
    data = _raw("nexus-2012")
    mutate(data)
    path = _write(tmp_path, data)
    with pytest.raises(ValueError) as err:
        load_profile(path)
    assert message in str(err.value) and str(path) in str(err.value) and "\n" not in str(err.value)


def test_a_virtual_sensor_that_needs_an_absent_sensor_is_refused(tmp_path):
    data = _raw("nexus-2012")
    data["sensors"]["gyroscope"] = {"absent": "a phone without a gyroscope"}
    profile = load_profile(_write(tmp_path, data))
    assert profile.hardware_for(["accelerometer"]) == {"accelerometer"}
    with pytest.raises(ValueError, match="has no gyroscope"):
        profile.hardware_for(["accelerometer", "rotation_vector"])


def test_a_profile_without_a_barometer_says_so_in_one_line():
    nexus_one = load_profile("nexus-one-2010")
    assert nexus_one.hardware_for(["accelerometer"]) == {"accelerometer"}
    with pytest.raises(ValueError) as err:
        nexus_one.hardware_for(["accelerometer", "barometer"])
    text = str(err.value)
    assert "nexus-one-2010" in text and "has no barometer" in text and "\n" not in text


# --- the step context: the host's work per kept window --------------------------------------------
def _tiny_workload(classified=300, step_context=5, step_context_us=150.0):
    config = PipelineConfig(rate_hz=50, orientation="mizell", step_context=step_context).to_dict()
    counts = {"walking": ActivityCounts(seconds=200.0, samples=10000, opened=classified + 30, dropped=30,
                                        classified=classified)}
    stages = StageCosts(smoothing_ns=30.0, gravity_rotation_ns=70.0, segmentation_ns=20.0,
                        step_context_us=step_context_us)
    inference = InferenceCost(window_samples=30, features_us=29.0, classifier_us=5.0, macs=0, elementwise=0)
    return Workload(config, counts, stages, inference)


def test_step_context_charge_scales_with_kept_windows():
    nexus, day = load_profile("nexus-2012"), {"walking": 3600.0}
    one, three = (estimate(nexus, _tiny_workload(classified=n), day).stage_mah["step_context"] for n in (100, 300))
    assert one == pytest.approx(100 / 200 * 3600 * 150e-6 * 20.0 * 120.0 / 3600, rel=1e-12)
    assert three == pytest.approx(3 * one, rel=1e-12)
    # a configuration without step context computes none, whatever the measured figure
    assert estimate(nexus, _tiny_workload(step_context=0), day).stage_mah["step_context"] == 0.0


def test_unmeasured_step_context_cost_is_refused_not_free():
    """A workload recorded before the step context was priced has no figure for it: pricing its
    kept windows must fail, not count them as free (and a front end without windows is fine)."""
    old = _tiny_workload().to_dict()
    del old["stages"]["step_context_us"]
    workload = Workload.from_dict(old)
    assert workload.stages.step_context_us is None
    with pytest.raises(ValueError, match="no step-context cost per kept window"):
        estimate(load_profile("nexus-2012"), workload, {"walking": 3600.0})
    idle = Workload(workload.config, {"idle": ActivityCounts(seconds=60.0, samples=3000)}, workload.stages, None)
    assert estimate(load_profile("nexus-2012"), idle, {"idle": 60.0}).stage_mah["step_context"] == 0.0


def test_stage_cost_measurement_divides_the_timed_work_by_the_windows_it_closes(monkeypatch):
    """``measure_stage_costs`` times one pass that closes every kept window of its reference stream
    (step signals, shape, context) and reports that time per window; with the clock replaced by a
    fixed 1 s per timed pass, the figure is 1 s over the number of windows the pass pushed."""
    import stairsense.export.energy._workload as workload_module

    pushed = []

    class CountingContext(workload_module.StepContext):
        def push(self, *args):
            pushed.append(1)
            return super().push(*args)

    def one_second_each(key, fn, repeats):
        fn()
        return 1.0

    monkeypatch.setattr(workload_module, "StepContext", CountingContext)
    monkeypatch.setattr(workload_module, "_stage_time", one_second_each)
    costs = measure_stage_costs(PipelineConfig(rate_hz=20, orientation="mizell", step_context=5), repeats=1)
    assert len(pushed) > 0
    assert costs.step_context_us == pytest.approx(1e6 / len(pushed))
    pushed.clear()
    none = measure_stage_costs(PipelineConfig(rate_hz=20, orientation="mizell", step_context=0), repeats=1)
    assert none.step_context_us == 0.0 and not pushed
    assert np.isfinite([none.smoothing_ns, none.gravity_rotation_ns, none.segmentation_ns]).all()
