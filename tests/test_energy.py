"""Energy simulator (issue 11): profiles, day descriptions, graph operation counts, the charge
model against a hand computation, the CLI's errors, and the four findings of seed 003 §12.7.2."""
import json

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from stairsense import PipelineConfig, window_dataset
from stairsense.cli import main
from stairsense.features import HEIGHT_NAMES
from stairsense.export import build_onnx_model
from stairsense.export.energy import (
    STAGES,
    ActivityCounts,
    InferenceCost,
    StageCosts,
    Workload,
    count_operations,
    estimate,
    load_profile,
    measure_workload,
    parse_day,
    profile_names,
)
from stairsense.models import StairstepModel, make_stairstep_pipeline
from stairsense.stream import Activity, simulate


# --- profiles -----------------------------------------------------------------------------------
def test_shipped_profiles_load_and_every_number_has_a_source():
    assert {"nexus-2012", "pixel2-2017", "nexus-one-2010"} <= set(profile_names())
    for name in profile_names():
        profile = load_profile(name)
        assert set(profile.values) <= set(profile.sources)
        assert all(s.strip() for s in profile.sources.values())
        assert all(sensor.source.strip() for sensor in profile.sensors.values())
        assert all(why.strip() for why in profile.absent.values())



def _raw(name):
    from importlib import resources

    return json.loads(resources.files("stairsense.export.energy").joinpath("profiles", f"{name}.json").read_text())


@pytest.mark.parametrize("mutate, message", [
    (lambda d: d["cpu"].update(turbo_ma={"value": 1, "source": "x"}), "unknown key 'cpu.turbo_ma'"),
    (lambda d: d["sensors"]["gyroscope"]["current_ma"].update(value=-6.1), "'sensors.gyroscope.current_ma.value' must be >= 0"),
    (lambda d: d["battery"].pop("capacity_mah"), "missing key 'battery.capacity_mah'"),
    (lambda d: d["cpu"]["awake_ma"].update(source=""), "'cpu.awake_ma.source' must say where"),
    (lambda d: d["virtual_sensors"]["rotation_vector"].update(requires=["thermometer"]), "rotation_vector.requires"),
    (lambda d: d.update(colour="red"), "unknown key 'colour'"),
])
def test_bad_profile_gets_one_line_naming_file_and_key(tmp_path, mutate, message):
    data = _raw("nexus-2012")
    mutate(data)
    path = tmp_path / "phone.json"
    path.write_text(json.dumps(data))
    with pytest.raises(ValueError) as err:
        load_profile(path)
    text = str(err.value)
    assert message in text and str(path) in text and "\n" not in text


def test_cli_bad_profile_and_unknown_name_exit_2(tmp_path, capsys):
    data = _raw("nexus-2012")
    data["sensors"]["accelerometer"]["current_ma"]["value"] = -1
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data))
    assert main(["energy", "--profile", str(path), "--rate", "30"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "sensors.accelerometer.current_ma.value" in err
    assert main(["energy", "--profile", "no-such-phone"]) == 2
    assert "shipped profiles are" in capsys.readouterr().err


def test_cli_foreign_onnx_exits_2(tmp_path, capsys):
    graph = helper.make_graph([helper.make_node("Identity", ["x"], ["y"])], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])])
    path = tmp_path / "foreign.onnx"
    onnx.save(helper.make_model(graph), path)
    assert main(["energy", "--model", str(path)]) == 2
    err = capsys.readouterr().err.strip()
    assert "foreign ONNX model" in err and err.count("\n") == 0


def test_cli_profiles_lists_them(capsys):
    assert main(["energy", "profiles", "--json"]) == 0
    names = [p["name"] for p in json.loads(capsys.readouterr().out)]
    assert names == profile_names()


def test_sensor_current_table_interpolates():
    sensor = load_profile("pixel2-2017").sensors["accelerometer"]
    assert sensor.at(25) == pytest.approx(0.006)
    assert sensor.at(37.5) == pytest.approx((0.006 + 0.011) / 2)
    assert sensor.at(1000) == pytest.approx(0.073)  # constant beyond the table


# --- day descriptions -----------------------------------------------------------------------------
def test_parse_day():
    assert parse_day("16h idle, 6h walking, 10m stairs") == {"idle": 57600, "walking": 21600, "stairs": 600}
    assert parse_day("90 s stairs, 1.5h idle") == {"stairs": 90, "idle": 5400}
    for bad in ("16h sleeping", "lots of walking", "25h idle", ""):
        with pytest.raises(ValueError, match="--day"):
            parse_day(bad)


# --- graph operation count vs an independent count ------------------------------------------------
def test_count_operations_matches_hand_count():
    n, k, m = 7, 3, 5
    W = np.arange(k * m, dtype=np.float32).reshape(k, m)
    nodes = [helper.make_node("MatMul", ["x", "W"], ["xw"]), helper.make_node("Exp", ["xw"], ["e"]),
             helper.make_node("ReduceSum", ["e", "axes"], ["s"], keepdims=1)]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", k])],
                              [helper.make_tensor_value_info("s", TensorProto.FLOAT, None)],
                              [numpy_helper.from_array(W, "W"), numpy_helper.from_array(np.array([0], np.int64), "axes")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    macs, elementwise, by_node = count_operations(model, n)
    assert macs == n * k * m
    assert by_node == {"MatMul": n * k * m, "Exp": n * m, "ReduceSum": n * m}
    assert elementwise == 2 * n * m


def test_count_operations_skips_what_the_runtime_folds_at_load():
    """A node of constants only (a cast of stored weights) runs once when ONNX Runtime loads the
    graph, not per window: the hand count above, with W stored in float16 and cast."""
    n, k, m = 7, 3, 5
    W = np.arange(k * m, dtype=np.float16).reshape(k, m)
    nodes = [helper.make_node("Cast", ["W16"], ["W"], to=TensorProto.FLOAT),
             helper.make_node("MatMul", ["x", "W"], ["xw"]), helper.make_node("Exp", ["xw"], ["e"])]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", k])],
                              [helper.make_tensor_value_info("e", TensorProto.FLOAT, None)],
                              [numpy_helper.from_array(W, "W16")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    assert count_operations(model, n) == (n * k * m, n * m, {"MatMul": n * k * m, "Exp": n * m})


# --- the charge model against a hand computation ---------------------------------------------------
def test_estimate_matches_hand_computation():
    profile = load_profile("nexus-2012")
    counts = {"walking": ActivityCounts(seconds=100.0, samples=3000, opened=200, dropped=20, classified=180)}
    stages = StageCosts(smoothing_ns=50.0, gravity_rotation_ns=100.0, segmentation_ns=40.0, step_context_us=120.0)
    inference = InferenceCost(window_samples=18, features_us=30.0, classifier_us=10.0, macs=0, elementwise=0)
    config = PipelineConfig(rate_hz=30, orientation="rotvec", step_context=5).to_dict()
    report = estimate(profile, Workload(config, counts, stages, inference), {"walking": 3600.0})
    active, speed = 120.0, 20.0
    hand = {
        "sensors": 0.139 + 6.1 + 4.0,  # mA for one hour: acc + gyro + compass (the rotation vector powers all three)
        "wakeups": 20.0,  # the wake lock held for the hour
        "events": 30 * 3600 * (2 * 60e-6 + 150e-6) * active / 3600,  # two streams + one MPL fusion per sample
        "smoothing": 30 * 3600 * 50e-9 * speed * active / 3600,
        "gravity_rotation": 30 * 3600 * 100e-9 * speed * active / 3600,
        "segmentation": 30 * 3600 * 40e-9 * speed * active / 3600,
        "step_context": 1.8 * 3600 * 120e-6 * speed * active / 3600,  # on the host, for every kept window
        "features": 1.8 * 3600 * 30e-6 * speed * active / 3600,  # 180 classified windows per 100 s
        "inference": 1.8 * 3600 * 10e-6 * speed * active / 3600,
        # an accelerometer-only configuration runs no barometer, height filter or height features
        "barometer": 0.0, "height_filter": 0.0, "height_features": 0.0,
    }
    assert set(hand) == set(STAGES)
    for stage in STAGES:
        assert report.stage_mah[stage] == pytest.approx(hand[stage], rel=1e-9), stage
    assert report.total_mah == pytest.approx(sum(hand.values()))
    assert report.percent_per_day == pytest.approx(100 * sum(hand.values()) / 1750)
    with pytest.raises(ValueError, match="'stairs' time"):
        estimate(profile, Workload(config, counts, stages, inference), {"stairs": 60.0})


# --- the four findings of §12.7.2, decided by the simulator -----------------------------------------
# The thesis's pipeline: its 79 Table 12.1 features, no step context (bench_energy.py pins the same);
# the findings are the thesis's, so the host's step-context work is not part of them.
THESIS = PipelineConfig(rate_hz=30, orientation="rotvec", smoothing="time", segmentation="pattern", step_context=0)
DAY = parse_day("16h idle, 6h walking, 10m stairs")


@pytest.fixture(scope="module")
def komd_graph():
    """A KOMD stair-step model trained on simulated people at 30 Hz, as the graph the phone runs."""
    logs = [simulate(minutes=4, rate_hz=30, seed=100 + s) for s in range(3)]
    data = window_dataset(logs, THESIS)
    model = StairstepModel.train(make_stairstep_pipeline(), data.X, data.y, config=THESIS,
                                 feature_names=data.feature_names)
    proto, _, _ = build_onnx_model(model, "fp32")
    selected = list(np.flatnonzero(model.pipeline[1].get_support()))
    return proto, selected, list(model.feature_names)


@pytest.fixture(scope="module")
def day_log():
    bouts = [(Activity.STANDING, 150), (Activity.WALKING, 150), (Activity.WALKING_UPSTAIRS, 40),
             (Activity.WALKING_DOWNSTAIRS, 40), (Activity.STANDING, 100), (Activity.WALKING, 100)]
    return simulate(rate_hz=30, seed=7, schedule=[(int(a), float(s)) for a, s in bouts])


@pytest.fixture(scope="module")
def nexus():
    return load_profile("nexus-2012")


# Desktop costs as benchmarks/bench_energy.py measured them (benchmarks/results/energy.md, "Desktop
# stage costs"), injected so that the findings follow from the model's arithmetic on the replayed
# window counts, which are exact, and not from how busy this machine is while the test runs.
SMOOTHING_NS = 36.4
GRAVITY_ROTATION_NS = {"rotvec": 67.4, "mizell": 73.0, "linear": 20.3}
SEGMENTATION_NS = {"pattern": 24.8, "sliding": 10.2}
FEATURES_US, CLASSIFIER_US = 29.0, 4.7
# Not in that page (its run predates the figure): measure_stage_costs on a simulated 30 Hz log on
# this machine, the Python reference's time per kept window.
STEP_CONTEXT_US = 150.0


def bench_stage_costs(config):
    smoothing = 0.0 if config.smoothing == "none" else SMOOTHING_NS
    return StageCosts(smoothing, GRAVITY_ROTATION_NS[config.orientation], SEGMENTATION_NS[config.segmentation],
                      STEP_CONTEXT_US if config.step_context > 0 else 0.0)


def bench_inference_cost(model, window_samples, selected, input_names):
    return InferenceCost(window_samples, FEATURES_US, CLASSIFIER_US, macs=0, elementwise=0)


def _charge(nexus, day_log, komd_graph, config):
    proto, selected, names = komd_graph
    workload = measure_workload(day_log, config, proto, selected=selected, input_names=names,
                                stage_costs=bench_stage_costs, inference_costs=bench_inference_cost)
    return estimate(nexus, workload, DAY)


def _cpu_mah(profile, active_seconds):
    return active_seconds * profile["cpu.speed_ratio"] * profile["cpu.active_ma"] / 3600.0


def _classified_per_day(report):
    counts = report.workload["counts"]
    return sum(counts[a]["classified"] / counts[a]["seconds"] * s for a, s in DAY.items())


PROCESSING = ("segmentation", "features", "inference")


def test_the_workload_prices_the_injected_costs(nexus, day_log, komd_graph):
    """Every CPU stage of a report is the injected cost × the replayed work, to rounding (with the
    step context on, the default since the thesis)."""
    config = THESIS.replace(step_context=5)
    report = _charge(nexus, day_log, komd_graph, config)
    samples = config.rate_hz * sum(DAY.values())
    classified = _classified_per_day(report)
    hand = {"smoothing": samples * SMOOTHING_NS * 1e-9, "gravity_rotation": samples * GRAVITY_ROTATION_NS["rotvec"] * 1e-9,
            "segmentation": samples * SEGMENTATION_NS["pattern"] * 1e-9,
            "step_context": classified * STEP_CONTEXT_US * 1e-6, "features": classified * FEATURES_US * 1e-6,
            "inference": classified * CLASSIFIER_US * 1e-6}
    assert classified > 0
    for stage, active_seconds in hand.items():
        assert report.stage_mah[stage] == pytest.approx(_cpu_mah(nexus, active_seconds), rel=1e-12), stage


@pytest.mark.xfail(strict=True, reason="the model does not give it: on a phone without a sensor hub the wake lock "
                   "(20 mA) and the fused sensors (10 mA) are ~96 % of the pipeline's charge, so classifying 4 windows/s "
                   "instead of ~1.5 adds ~1 % (it would take about 10 ms of phone CPU per window for 15 %)")
def test_finding_1_data_driven_windows_save_over_15_percent(nexus, day_log, komd_graph):
    pattern = _charge(nexus, day_log, komd_graph, THESIS)
    sliding = _charge(nexus, day_log, komd_graph, THESIS.replace(segmentation="sliding"))
    assert 1 - pattern.total_mah / sliding.total_mah > 0.15


def test_finding_1_what_the_model_gives(nexus, day_log, komd_graph):
    """The saving the windowing controls: the stages after segmentation shrink by far more than
    15 %, but they are a small part of the whole on this phone (see the xfail above)."""
    pattern = _charge(nexus, day_log, komd_graph, THESIS)
    sliding = _charge(nexus, day_log, komd_graph, THESIS.replace(segmentation="sliding"))
    processing = [sum(r.stage_mah[s] for s in PROCESSING) for r in (pattern, sliding)]
    for report, segmentation, charge in zip((pattern, sliding), ("pattern", "sliding"), processing):
        active_seconds = (THESIS.rate_hz * sum(DAY.values()) * SEGMENTATION_NS[segmentation] * 1e-9
                          + _classified_per_day(report) * (FEATURES_US + CLASSIFIER_US) * 1e-6)
        assert charge == pytest.approx(_cpu_mah(nexus, active_seconds), rel=1e-12)
    assert 1 - processing[0] / processing[1] > 0.15
    assert 0 < 1 - pattern.total_mah / sliding.total_mah < 0.15


def test_finding_2_smoothing_adds_under_1_percent(nexus, day_log, komd_graph):
    smoothed = _charge(nexus, day_log, komd_graph, THESIS)
    raw = _charge(nexus, day_log, komd_graph, THESIS.replace(smoothing="none"))
    smoothing = _cpu_mah(nexus, THESIS.rate_hz * sum(DAY.values()) * SMOOTHING_NS * 1e-9)
    assert smoothed.stage_mah["smoothing"] == pytest.approx(smoothing, rel=1e-12) and raw.stage_mah["smoothing"] == 0
    assert 0 < smoothing / raw.total_mah < 0.01  # the thesis measured about +0.26 %
    assert smoothed.stage_mah["sensors"] == raw.stage_mah["sensors"]


def test_finding_3_mizell_is_cheapest(nexus, day_log, komd_graph):
    ours = _charge(nexus, day_log, komd_graph, THESIS)
    mizell = _charge(nexus, day_log, komd_graph, THESIS.replace(orientation="mizell"))
    linear = _charge(nexus, day_log, komd_graph, THESIS.replace(orientation="linear"))
    assert mizell.total_mah < 0.8 * ours.total_mah
    assert mizell.total_mah < 0.8 * linear.total_mah


@pytest.mark.xfail(strict=True, reason="the model does not give it: the Galaxy Nexus HAL powers accelerometer, "
                   "gyroscope and compass for either virtual sensor and runs one MPL fusion per sample, and both "
                   "methods deliver two streams; what is left is the app's own gravity removal (and a few more "
                   "classified windows for Linear), which makes the thesis's method marginally dearer (~0.01 %)")
def test_finding_3_ours_cheaper_than_linear(nexus, day_log, komd_graph):
    ours = _charge(nexus, day_log, komd_graph, THESIS)
    linear = _charge(nexus, day_log, komd_graph, THESIS.replace(orientation="linear"))
    assert ours.total_mah < linear.total_mah


@pytest.mark.parametrize("rate_hz", [5.0, 16.7, 50.0])  # SENSOR_DELAY_NORMAL, _UI, _GAME
def test_finding_4_paller_nexus_one_wake_lock_sampling(rate_hz):
    """Continuous accelerometer sampling with a partial wake lock on a Nexus One: 1.5-4 % battery
    per hour measured (the source is in the profile); the model must land in that range ± 20 %."""
    profile = load_profile("nexus-one-2010")
    reference = profile.reference_measurements[0]
    config = PipelineConfig(rate_hz=rate_hz, orientation="mizell").to_dict()
    sampling_only = Workload(config, {"idle": ActivityCounts(seconds=3600.0, samples=int(3600 * rate_hz))},
                             StageCosts(0.0, 0.0, 0.0), None)
    report = estimate(profile, sampling_only, {"idle": 3600.0})
    per_hour = report.percent_per_day  # the "day" is one hour here
    assert 0.8 * reference["low"] <= per_hour <= 1.2 * reference["high"]


# --- the budget optimiser -------------------------------------------------------------------------
def test_pareto_front_and_budget_choice_against_brute_force():
    from stairsense.export.energy import Candidate, best_under, pareto_front

    rng = np.random.default_rng(3)
    config = PipelineConfig(rate_hz=30, orientation="rotvec").to_dict()
    candidates = [Candidate(config, k, "fp32", float(f), float(c), 0.0)
                  for k, (f, c) in enumerate(zip(rng.uniform(0.5, 0.9, 60), rng.uniform(0.1, 5, 60)))]
    front = pareto_front(candidates)
    dominated = {id(c) for c in candidates for d in candidates
                 if d.f1 >= c.f1 and d.percent_per_day <= c.percent_per_day and (d.f1, d.percent_per_day) != (c.f1, c.percent_per_day)}
    assert {id(c) for c in front} == {id(c) for c in candidates} - dominated
    best = best_under(candidates, 2.0)
    assert best.f1 == max(c.f1 for c in candidates if c.percent_per_day <= 2.0)
    with pytest.raises(ValueError, match="no configuration meets --budget 0.01%/day"):
        best_under(candidates, 0.01)


@pytest.fixture(scope="module")
def labelled_logs(tmp_path_factory):
    from stairsense.stream import write_log

    folder = tmp_path_factory.mktemp("labelled")
    return [str(write_log(simulate(minutes=2, rate_hz=30, seed=40 + s), folder / f"person{s}.csv.gz"))
            for s in range(3)]


def test_optimise_cli_writes_front_and_a_config_train_accepts(labelled_logs, tmp_path, capsys):
    cache, best, plot = tmp_path / "cache", tmp_path / "best.json", tmp_path / "front.png"
    argv = ["energy", "optimise", "--budget", "50%/day", "--data", *labelled_logs, "--rates", "30",
            "--orientations", "rotvec", "--segmentations", "pattern", "--smoothings", "none",
            "--k", "3", "10", "--precisions", "fp32", "int8", "--folds", "2", "--n-jobs", "1", "--cache", str(cache),
            "--out", str(best), "--plot", str(plot), "--json"]
    assert main(argv) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["configurations"] == 4 and result["cache"]["computed"] == 1
    assert plot.stat().st_size > 0
    chosen = json.loads(best.read_text())
    assert chosen["energy"]["percent_per_day"] <= 50 and chosen["train"]["k"] in (3, 10)
    assert main(argv) == 0  # warm: every front end from the cache, same answer
    again = json.loads(capsys.readouterr().out)
    assert again["cache"]["cached"] == 1 and again["best"] == result["best"]
    model = tmp_path / "m.model"
    assert main(["train", *labelled_logs, "--config", str(best), "--out", str(model), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["params"]["select__k"] == chosen["train"]["k"]
    from stairsense.models import load_model

    assert load_model(model).config.to_dict() == chosen["pipeline"]
    # A budget nothing meets: one line, exit 2.
    assert main(argv[:3] + ["0.0001%/day"] + argv[4:]) == 2
    err = capsys.readouterr().err.strip()
    assert "no configuration meets --budget" in err and err.count("\n") == 0


@pytest.mark.parametrize("n_landmarks, barometer", [(None, False), (40, False), (40, True)])
def test_fold_models_equal_pipelines_fitted_from_scratch(n_landmarks, barometer):
    """The optimiser fits the scaler (and, without a barometer, EasyMKL's ranking) once per fold and
    the rest per k; that must be the very model ``train``'s recipe fits from scratch (exact and
    Nyström KOMD; a barometer configuration keeps its height features beside the top k)."""
    from stairsense.export.energy._optimise import _fold_models
    from stairsense.models import TRAIN_DEFAULTS
    from stairsense.stream.simulate import Barometer

    config = THESIS.replace(barometer=True, step_context=5) if barometer else THESIS
    logs = [simulate(minutes=2, rate_hz=30, seed=60 + s, barometer=Barometer() if barometer else None) for s in range(2)]
    data = window_dataset(logs, config)
    for k, model in _fold_models(config, data.X, data.y, data.feature_names, [3, 10, 79], n_landmarks):
        recipe = TRAIN_DEFAULTS.replace(config=config, k=k, n_landmarks=n_landmarks)
        reference = recipe.fit(data.X, data.y, data.feature_names)
        np.testing.assert_array_equal(model.decision_function(data.X), reference.decision_function(data.X))
        kept = np.asarray(data.feature_names)[model.pipeline.named_steps["select"].get_support()]
        assert len(kept) == k + len(HEIGHT_NAMES) * barometer


@pytest.fixture(scope="module")
def people():
    return [simulate(minutes=2, rate_hz=50, seed=70 + s) for s in range(3)]


def test_shared_front_end_work_equals_each_configuration_on_its_own(people):
    """``front_end_data`` resamples once per rate and standardizes once per (rate, orientation,
    smoothing) for both segmentations; the windows, features, labels and replay counts must be
    exactly those of ``window_dataset`` and ``measure_logs_windows`` run per configuration."""
    from stairsense.export.energy import front_end_data
    from stairsense.export.energy import measure_logs_windows

    configs = [PipelineConfig(rate_hz=r, orientation=o, segmentation=g, smoothing=m)
               for r in (20.0, 50.0) for o in ("mizell", "linear") for g in ("pattern", "sliding") for m in ("time", "none")]
    for config, (data, counts, window) in zip(configs, front_end_data(people, configs)):
        reference = window_dataset(people, config)
        for field in ("X", "y", "groups", "direction", "log_index", "t_start_ns", "t_end_ns"):
            np.testing.assert_array_equal(getattr(data, field), getattr(reference, field))
        assert (data.feature_names, data.n_ambiguous, data.n_rejected) == (
            reference.feature_names, reference.n_ambiguous, reference.n_rejected)
        reference_counts, reference_window = measure_logs_windows(people, config)
        assert {k: vars(c) for k, c in counts.items()} == {k: vars(c) for k, c in reference_counts.items()}
        assert window == reference_window


def test_grouped_optimiser_gives_the_per_configuration_records(people, tmp_path):
    """The optimiser's path (front ends grouped by standardization, each group one job, results
    matched back to their cache keys in completion order) gives each configuration the F1, windows
    and counts that evaluating it on its own gives. One process here (worker start-up would add
    ~15 s to the suite); the benchmark's cold run is the 2-process run."""
    from stairsense._recordings import load_labelled_logs
    from stairsense.export.energy import Protocol, SearchSpace, evaluate_all, evaluate_front_end
    from stairsense.stream import read_log, write_log

    paths = [str(write_log(log, tmp_path / f"person{i}.csv.gz")) for i, log in enumerate(people)]
    space = SearchSpace(rates=(20.0,), orientations=("rotvec",), segmentations=("pattern", "sliding"),
                        smoothings=("time", "none"), feature_counts=(3, 10), precisions=("fp32", "int8"))
    protocol = Protocol(n_folds=3, max_train=200, n_landmarks=30)
    records, stats = evaluate_all(paths, space, tmp_path / "cache", load_labelled_logs, protocol=protocol, n_jobs=1,
                                  progress=False)
    assert stats["computed"] == 4 and stats["cpu_s"] > 0
    logs = [read_log(p) for p in paths]
    for config, record in zip(space.front_ends(), records):
        reference = evaluate_front_end(config, logs, space.feature_counts, space.precisions, protocol)
        assert record["config"] == reference["config"]
        assert record["f1"] == reference["f1"]
        assert (record["n_windows"], record["n_stair"], record["counts"]) == (
            reference["n_windows"], reference["n_stair"], reference["counts"])
        for k, by_precision in reference["inference"].items():
            for precision, cost in by_precision.items():
                assert record["inference"][k][precision]["macs"] == cost["macs"]


def test_cli_estimate_from_an_exported_model_and_log(komd_graph, tmp_path, capsys):
    """The issue's command: ``stairsense energy --model stairs.onnx --log walk.csv.gz --profile
    nexus-2012 --plot e.png`` prints the breakdown (here as JSON) and writes the plot."""
    from stairsense.export import export_model
    from stairsense.stream import write_log

    logs = [simulate(minutes=3, rate_hz=30, seed=100 + s) for s in range(2)]
    config = THESIS.replace(step_context=5)  # a graph that also takes the host's step context
    data = window_dataset(logs, config)
    model = StairstepModel.train(make_stairstep_pipeline(k=10), data.X, data.y, config=config,
                                 feature_names=data.feature_names)
    onnx_path = export_model(model, tmp_path / "stairs.onnx", validation=logs[0]).path
    log_path = write_log(simulate(minutes=2, rate_hz=30, seed=8), tmp_path / "walk.csv.gz")
    plot = tmp_path / "e.png"
    assert main(["energy", "--model", str(onnx_path), "--log", str(log_path), "--profile", "nexus-2012",
                 "--plot", str(plot), "--compare", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    reports = out["reports"]
    assert set(reports) == {"configuration", "sliding 500 ms/50 %", "no smoothing", "Mizell (acc only)",
                            "Linear (linacc + rotvec)"}
    main_report = reports["configuration"]
    assert main_report["config"]["orientation"] == "rotvec" and set(main_report["stage_mah"]) == set(STAGES)
    assert main_report["stage_mah"]["inference"] > 0 and plot.stat().st_size > 0
    assert sum(main_report["day_s"].values()) == pytest.approx(86400)  # the log's own mix over 24 h
    # The trained model's file is read by the same rule and priced by the graph its fp32 export runs.
    from stairsense.models import save_model

    model_path = save_model(model, tmp_path / "stairs.model")
    assert main(["energy", "--model", str(model_path), "--log", str(log_path), "--rate", "30", "--json"]) == 0
    trained = json.loads(capsys.readouterr().out)["reports"]["configuration"]
    assert trained["workload"]["inference"]["macs"] == main_report["workload"]["inference"]["macs"] > 0
    assert main(["energy", "--model", str(model_path), "--rate", "50"]) == 2
    assert "rate_hz: model 30, given 50" in capsys.readouterr().err
