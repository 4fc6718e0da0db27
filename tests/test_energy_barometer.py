"""Energy model: the barometer in every device profile, a configuration that reads it (the sensor at
its rate, the height filter per sample, the height features per kept window), and the host's
per-step work outside the ONNX graph (the step context). Oracles are the profiles' own numbers
written out by hand (current × time, CPU time × active current) and the replayed window counts;
stage costs are injected, or timed with the clock replaced, except where a test says it checks a
real measurement."""
import json
from importlib import resources

import numpy as np
import pytest

from stairsense import PipelineConfig
from stairsense.cli import main
from stairsense.export.energy import (
    BAROMETER_HZ,
    OPTIONAL_STREAMS,
    STAGES,
    ActivityCounts,
    InferenceCost,
    StageCosts,
    Workload,
    estimate,
    load_profile,
    measure_stage_costs,
    measure_workload,
    profile_names,
)
from stairsense.stream import simulate


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


@pytest.mark.parametrize("name, per_hz_ma, max_hz", [("nexus-2012", 0.003, 20.0), ("pixel2-2017", 0.0247, 26.3)])
def test_barometer_current_scales_with_its_rate(name, per_hz_ma, max_hz):
    """The datasheets give an average current proportional to the sample rate (3 µA per sample/s
    for the BMP180 in the ultra-low-power mode tuna's driver leaves it in; 24.7 µA per Hz for the
    BMP280 at ultra high resolution), up to the fastest rate the phone reads it at (tuna's driver:
    one reading per 50 ms at most; the BMP280 table's last row: 26.3 Hz)."""
    barometer = load_profile(name).sensors["barometer"]
    for hz in (1.0, 2.5, 10.0, 20.0, 25.0, 40.0):
        assert barometer.at(hz) == pytest.approx(per_hz_ma * min(hz, max_hz), rel=2e-3), hz


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
def _tiny_workload(extra_streams=None, classified=300, step_context=5, step_context_us=150.0, barometer=False,
                   height_filter_ns=700.0, height_features_us=40.0):
    config = PipelineConfig(rate_hz=50, orientation="mizell", step_context=step_context, barometer=barometer).to_dict()
    counts = {"walking": ActivityCounts(seconds=200.0, samples=10000, opened=classified + 30, dropped=30,
                                        classified=classified)}
    stages = StageCosts(smoothing_ns=30.0, gravity_rotation_ns=70.0, segmentation_ns=20.0,
                        step_context_us=step_context_us, height_filter_ns=height_filter_ns,
                        height_features_us=height_features_us)
    inference = InferenceCost(window_samples=30, features_us=29.0, classifier_us=5.0, macs=0, elementwise=0)
    return Workload(config, counts, stages, inference, extra_streams=extra_streams or {})


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
    del old["stages"]["step_context_us"], old["extra_streams"]
    workload = Workload.from_dict(old)
    assert workload.stages.step_context_us is None and workload.extra_streams == {}
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


# --- pricing a barometer turned on beside a configuration -------------------------------------------
def test_charge_with_a_barometer_on_a_hub_phone_matches_a_hand_computation():
    """Pixel 2 profile, 50 Hz accelerometer-only (Mizell) front end plus a 5 Hz barometer, one hour
    of walking: every stage from the profile's numbers, written out here."""
    report = estimate(load_profile("pixel2-2017"), _tiny_workload({"barometer": 5.0}), {"walking": 3600.0})
    active, speed, event_s = 54.2, 3.0, 5e-6  # cpu.active_ma, cpu.speed_ratio, cpu.event_us
    windows_per_s = 300 / 200  # kept (= classified) windows per second of walking
    hand = {
        "sensors": 0.011,  # LIS3DH table at 50 Hz, for one hour
        "barometer": 5 * 0.0247 + 5 * event_s * active,  # BMP280 24.7 µA per Hz at 5 Hz, and its events to the app
        "wakeups": 50 / 300 * 5e-3 * active,  # FIFO of 300 samples drained at 50 Hz, 5 ms each at active current
        "events": 50 * event_s * active,  # accelerometer events, delivered to the app
        "smoothing": 50 * 30e-9 * speed * active,
        "gravity_rotation": 50 * 70e-9 * speed * active,
        "segmentation": 50 * 20e-9 * speed * active,
        "height_filter": 0.0,  # the configuration does not read the barometer
        "step_context": windows_per_s * 150e-6 * speed * active,
        "height_features": 0.0,
        "features": windows_per_s * 29e-6 * speed * active,
        "inference": windows_per_s * 5e-6 * speed * active,
    }
    assert set(hand) == set(STAGES)
    for stage in STAGES:
        assert report.stage_mah[stage] == pytest.approx(hand[stage], rel=1e-9), stage
    assert report.percent_per_day == pytest.approx(100 * sum(hand.values()) / 2700)
    assert any("barometer at 5 Hz" in note for note in report.notes)


def test_a_barometer_adds_its_current_and_events_and_nothing_else():
    """Galaxy Nexus (no hub): a 10 Hz barometer adds the BMP180's 3 µA per sample/s and 10 events/s
    through the HAL; every other stage is unchanged."""
    nexus, day = load_profile("nexus-2012"), {"walking": 7200.0}
    without = estimate(nexus, _tiny_workload(), day)
    with_barometer = estimate(nexus, _tiny_workload({"barometer": 10.0}), day)
    hours = 2.0
    added = {"barometer": 10 * 0.003 * hours + 10 * 3600 * hours * 60e-6 * 120.0 / 3600}
    for stage in STAGES:
        difference = with_barometer.stage_mah[stage] - without.stage_mah[stage]
        assert difference == pytest.approx(added.get(stage, 0.0), rel=1e-9, abs=1e-12), stage


def test_pricing_a_barometer_on_a_phone_without_one_is_refused():
    nexus_one = load_profile("nexus-one-2010")
    with pytest.raises(ValueError) as err:
        estimate(nexus_one, _tiny_workload({"barometer": 10.0}), {"walking": 3600.0})
    text = str(err.value)
    assert "nexus-one-2010" in text and "has no barometer" in text and "\n" not in text
    # without the barometer the same phone prices the configuration
    assert estimate(nexus_one, _tiny_workload(), {"walking": 3600.0}).total_mah > 0


def test_cli_refuses_the_barometer_on_a_phone_without_one_before_replaying(monkeypatch, capsys):
    import stairsense.export.energy as energy

    def no_replay(*args, **kwargs):
        raise AssertionError("the profile should have been refused before any replay")

    monkeypatch.setattr(energy, "measure_workload", no_replay)
    assert main(["energy", "--profile", "nexus-one-2010", "--rate", "30", "--orientation", "mizell",
                 "--barometer", "10"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "nexus-one-2010" in err and "has no barometer" in err


def test_cli_prices_the_barometer_as_its_current_and_events(capsys):
    """``stairsense energy --barometer 10`` on the Pixel 2 profile: against the same run without it,
    the barometer stage is the datasheet's 0.247 mA for the day and 10 events/s, and nothing else moves."""
    argv = ["energy", "--profile", "pixel2-2017", "--rate", "30", "--orientation", "mizell", "--json"]
    assert main(argv) == 0
    without = json.loads(capsys.readouterr().out)["reports"]["configuration"]
    assert main(argv + ["--barometer", "10"]) == 0
    report = json.loads(capsys.readouterr().out)["reports"]["configuration"]
    assert report["workload"]["extra_streams"] == {"barometer": 10.0}
    hours = sum(report["day_s"].values()) / 3600
    assert report["stage_mah"]["barometer"] == pytest.approx(0.247 * hours + 10 * 3600 * hours * 5e-6 * 54.2 / 3600,
                                                             rel=1e-9)
    assert report["side_streams"] == {"barometer": 10.0} and without["stage_mah"]["barometer"] == 0.0
    for stage in ("sensors", "events", "height_filter", "height_features"):
        assert report["stage_mah"][stage] == without["stage_mah"][stage], stage
    assert main(argv + ["--barometer", "0"]) == 2
    assert "barometer's sampling rate must be" in capsys.readouterr().err


@pytest.mark.parametrize("extra, message", [
    ({"thermometer": 1.0}, "not one a configuration can turn on"),
    ({"barometer": 0.0}, "must be a number of Hz > 0"),
    ({"barometer": float("nan")}, "must be a number of Hz > 0"),
    ({"barometer": True}, "must be a number of Hz > 0"),
])
def test_bad_extra_stream_is_refused(extra, message):
    assert OPTIONAL_STREAMS == ("barometer",)
    with pytest.raises(ValueError, match=message):
        _tiny_workload(extra)


def test_workload_round_trips_the_barometer_and_the_step_context_cost():
    workload = _tiny_workload({"barometer": 12.5})
    again = Workload.from_dict(json.loads(json.dumps(workload.to_dict())))
    assert again.extra_streams == {"barometer": 12.5} and again.stages.step_context_us == 150.0
    assert again.to_dict() == workload.to_dict()


def test_replayed_workload_prices_the_step_context_per_kept_window():
    """Through a real replay: the step-context stage is the injected µs × the kept windows the
    replay counted, and the barometer travels with the workload into the report."""
    config = PipelineConfig(rate_hz=30, orientation="mizell", step_context=5)
    log = simulate(minutes=2, rate_hz=30, seed=5)

    def stage_costs(cfg):
        return StageCosts(0.0, 0.0, 0.0, step_context_us=200.0)

    workload = measure_workload(log, config, stage_costs=stage_costs, extra_streams={"barometer": 4.0})
    kept = sum(c.classified for c in workload.counts.values())
    seconds = sum(c.seconds for c in workload.counts.values())
    assert kept > 0
    nexus = load_profile("nexus-2012")
    report = estimate(nexus, workload, {name: c.seconds for name, c in workload.counts.items()})
    assert report.stage_mah["step_context"] == pytest.approx(kept * 200e-6 * 20.0 * 120.0 / 3600, rel=1e-9)
    assert report.workload["extra_streams"] == {"barometer": 4.0}
    assert report.stage_mah["sensors"] == pytest.approx(0.139 * seconds / 3600, rel=1e-9)
    assert report.stage_mah["barometer"] == pytest.approx((4 * 0.003 + 4 * 60e-6 * 120.0) * seconds / 3600, rel=1e-9)


def test_ramps_are_walking_and_rides_are_idle_in_the_day_model():
    """A ramp is walked with level-gait steps; in a lift or on an escalator the person stands."""
    import numpy as np

    from stairsense.export.energy._workload import activity_class
    from stairsense.stream import Activity

    codes = np.array([Activity.RAMP_UP, Activity.RAMP_DOWN, Activity.LIFT_UP, Activity.LIFT_DOWN,
                      Activity.ESCALATOR_UP, Activity.ESCALATOR_DOWN, Activity.WALKING_UPSTAIRS, Activity.STANDING])
    assert activity_class(codes).tolist() == ["walking", "walking", "idle", "idle", "idle", "idle", "stairs", "idle"]


# --- a configuration that reads the barometer (barometer=True) ---------------------------------------
@pytest.mark.parametrize("name, barometer_ma, event_us, active_ma, speed", [
    ("nexus-2012", 10 * 0.003, 60.0, 120.0, 20.0),   # BMP180, ultra low power, 3 µA per sample/s
    ("pixel2-2017", 10 * 0.0247, 5.0, 54.2, 3.0),    # BMP280 class, 24.7 µA per Hz
])
def test_a_barometer_configuration_adds_the_sensor_the_height_filter_and_the_height_features(
        name, barometer_ma, event_us, active_ma, speed):
    """Against its accelerometer-only twin, a configuration that reads the barometer adds exactly
    three lines: the barometer at the rate its height filter assumes (10 Hz) with its events, the
    filter on every sample and the height features on every kept window; closed forms from the
    profile's numbers, two hours of walking at 50 Hz with 1.5 kept windows per second."""
    profile, day, hours = load_profile(name), {"walking": 7200.0}, 2.0
    twin = estimate(profile, _tiny_workload(), day)
    report = estimate(profile, _tiny_workload(barometer=True), day)
    assert BAROMETER_HZ == 10.0 and report.side_streams == {"barometer": 10.0} and twin.side_streams == {}
    seconds = hours * 3600
    added = {
        "barometer": barometer_ma * hours + 10 * seconds * event_us * 1e-6 * active_ma / 3600,
        "height_filter": 50 * seconds * 700e-9 * speed * active_ma / 3600,  # 700 ns per sample on the desktop
        "height_features": 1.5 * seconds * 40e-6 * speed * active_ma / 3600,  # 40 µs per kept window
    }
    for stage in STAGES:
        difference = report.stage_mah[stage] - twin.stage_mah[stage]
        assert difference == pytest.approx(added.get(stage, 0.0), rel=1e-9, abs=1e-12), stage
        assert twin.stage_mah[stage] == 0.0 or stage not in added, stage
    assert any("barometer at 10 Hz: read by the pipeline" in note for note in report.notes)


def test_the_workload_sets_the_rate_of_the_barometer_a_configuration_reads():
    """``extra_streams`` gives the read barometer its rate (the phone runs one barometer, priced once)."""
    nexus, day = load_profile("nexus-2012"), {"walking": 3600.0}
    at_4 = estimate(nexus, _tiny_workload({"barometer": 4.0}, barometer=True), day)
    at_10 = estimate(nexus, _tiny_workload(barometer=True), day)
    assert at_4.side_streams == {"barometer": 4.0}
    assert at_10.stage_mah["barometer"] - at_4.stage_mah["barometer"] == pytest.approx(
        6 * 0.003 + 6 * 3600 * 60e-6 * 120.0 / 3600, rel=1e-9)
    assert {s: at_4.stage_mah[s] for s in STAGES if s != "barometer"} == {
        s: at_10.stage_mah[s] for s in STAGES if s != "barometer"}
    assert any("barometer at 4 Hz: read by the pipeline" in note for note in at_4.notes)


def test_a_barometer_configuration_on_a_phone_without_one_is_refused():
    with pytest.raises(ValueError) as err:
        estimate(load_profile("nexus-one-2010"), _tiny_workload(barometer=True), {"walking": 3600.0})
    text = str(err.value)
    assert "nexus-one-2010" in text and "has no barometer" in text and "\n" not in text


@pytest.mark.parametrize("missing, message", [("height_filter_ns", "no height-filter cost per sample"),
                                              ("height_features_us", "no height-feature cost per kept window")])
def test_unmeasured_height_costs_are_refused_not_free(missing, message):
    """A workload recorded before the height work was priced cannot price a barometer
    configuration; an accelerometer-only one needs neither figure."""
    nexus, day = load_profile("nexus-2012"), {"walking": 3600.0}
    with pytest.raises(ValueError, match=message):
        estimate(nexus, _tiny_workload(barometer=True, **{missing: None}), day)
    assert estimate(nexus, _tiny_workload(**{missing: None}), day).total_mah > 0


def test_stage_cost_measurement_times_the_height_filter_per_sample_and_the_height_features_per_window(monkeypatch):
    """With the clock replaced by 1 s per timed pass, the height filter's figure is 1 s over the
    samples it filtered and the height features' 1 s over the windows it pushed; both are 0 for
    a configuration without the barometer, whose other figures do not move."""
    import stairsense.export.energy._workload as workload_module

    filtered, pushed = [], []

    class CountingFilter(workload_module.HeightFilter):
        def process(self, t_ns, vertical, pressure):
            filtered.append(len(t_ns))
            assert np.isfinite(pressure).all()  # the bench log's barometer, at every sample
            return super().process(t_ns, vertical, pressure)

    class CountingContext(workload_module.HeightContext):
        def push(self, *args):
            pushed.append(1)
            return super().push(*args)

    def one_second_each(key, fn, repeats):
        fn()
        return 1.0

    monkeypatch.setattr(workload_module, "HeightFilter", CountingFilter)
    monkeypatch.setattr(workload_module, "HeightContext", CountingContext)
    monkeypatch.setattr(workload_module, "_stage_time", one_second_each)
    config = PipelineConfig(rate_hz=20, orientation="mizell", step_context=5)
    with_barometer = measure_stage_costs(config.replace(barometer=True), repeats=1)
    assert filtered and len(set(filtered)) == 1 and len(pushed) > 0
    assert with_barometer.height_filter_ns == pytest.approx(1e9 / filtered[0])
    assert with_barometer.height_features_us == pytest.approx(1e6 / len(pushed))
    filtered.clear(), pushed.clear()
    without = measure_stage_costs(config, repeats=1)
    assert (without.height_filter_ns, without.height_features_us) == (0.0, 0.0) and not filtered and not pushed
    assert (without.smoothing_ns, without.gravity_rotation_ns, without.segmentation_ns, without.step_context_us) == (
        with_barometer.smoothing_ns, with_barometer.gravity_rotation_ns, with_barometer.segmentation_ns,
        with_barometer.step_context_us)


def test_measured_height_costs_are_real_timings():
    """On this machine: the Python reference's filter takes between 50 ns and 50 µs per sample
    and the height features between 0.5 µs and 5 ms per kept window (a check that real work was
    timed, not a benchmark)."""
    costs = measure_stage_costs(PipelineConfig(rate_hz=30, orientation="mizell", barometer=True), repeats=1)
    assert 50 < costs.height_filter_ns < 50_000 and 0.5 < costs.height_features_us < 5_000


def test_workload_round_trips_the_height_costs():
    workload = _tiny_workload(barometer=True)
    again = Workload.from_dict(json.loads(json.dumps(workload.to_dict())))
    assert (again.stages.height_filter_ns, again.stages.height_features_us) == (700.0, 40.0)
    assert again.side_streams() == {"barometer": BAROMETER_HZ} and again.to_dict() == workload.to_dict()


def _barometer_config_file(tmp_path):
    path = tmp_path / "baro.json"
    path.write_text(json.dumps({"pipeline": {"rate_hz": 30, "orientation": "mizell", "barometer": True}}))
    return str(path)


def test_cli_prices_a_barometer_configuration_line_by_line(tmp_path, capsys):
    """``stairsense energy --config`` with ``barometer: true`` on the Pixel 2 profile: the JSON has
    the barometer, height-filter and height-feature lines, each the closed form of the figures the
    report carries; the text breakdown names them and the plot is written."""
    plot = tmp_path / "e.png"
    argv = ["energy", "--config", _barometer_config_file(tmp_path), "--profile", "pixel2-2017", "--plot", str(plot)]
    assert main(argv + ["--json"]) == 0
    report = json.loads(capsys.readouterr().out)["reports"]["configuration"]
    stages, counts = report["workload"]["stages"], report["workload"]["counts"]
    seconds = sum(report["day_s"].values())
    active, speed = 54.2, 3.0
    kept = sum(counts[a]["classified"] / counts[a]["seconds"] * s for a, s in report["day_s"].items())
    assert report["side_streams"] == {"barometer": 10.0}
    assert report["stage_mah"]["barometer"] == pytest.approx(
        (0.247 + 10 * 5e-6 * active) * seconds / 3600, rel=1e-9)
    assert stages["height_filter_ns"] > 0 and stages["height_features_us"] > 0 and kept > 0
    assert report["stage_mah"]["height_filter"] == pytest.approx(
        30 * seconds * stages["height_filter_ns"] * 1e-9 * speed * active / 3600, rel=1e-9)
    assert report["stage_mah"]["height_features"] == pytest.approx(
        kept * stages["height_features_us"] * 1e-6 * speed * active / 3600, rel=1e-9)
    assert plot.stat().st_size > 0
    assert main(argv) == 0
    text = capsys.readouterr().out
    assert "barometer at 10 Hz" in text
    assert all(any(line.startswith(stage) for line in text.splitlines())
               for stage in ("barometer", "height_filter", "height_features"))


def test_cli_refuses_a_barometer_configuration_on_a_phone_without_one_before_replaying(tmp_path, monkeypatch,
                                                                                      capsys):
    import stairsense.export.energy as energy

    def no_replay(*args, **kwargs):
        raise AssertionError("the profile should have been refused before any replay")

    monkeypatch.setattr(energy, "measure_workload", no_replay)
    assert main(["energy", "--config", _barometer_config_file(tmp_path), "--profile", "nexus-one-2010"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "nexus-one-2010" in err and "has no barometer" in err
