"""Stair-step classifier, its model file, and training from labelled logs (spec §3.6–§3.9)."""
from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest

from stairsense import PipelineConfig
import sklearn

from stairsense.models.stairstep._model import (
    MODEL_FORMAT,
    ModelFileError,
    StairstepModel,
    load_model,
    make_stairstep_pipeline,
    package_version,
    save_model,
    upgrade_model_file,
)
from stairsense import window_dataset
from stairsense.stream import write_log
from stairsense.stream._log import Activity
from stairsense.stream.simulate._simulate import simulate
from stairsense._recordings import load_labelled_logs, prepare_logs
from stairsense._train import evaluate, train_from_recordings
from stairsense.models import TrainRecipe

CONFIG = PipelineConfig(rate_hz=30, orientation="rotvec")


@pytest.fixture(scope="module")
def model():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(150, 6))
    y = (X[:, 0] - X[:, 2] + 0.5 * rng.normal(size=150) > 0).astype(int)
    return StairstepModel.train(make_stairstep_pipeline(k=3, lam=0.1, gamma=0.5), X, y, config=CONFIG,
                                feature_names=[f"f{i}" for i in range(6)], groups=np.arange(150) % 3,
                                sources=["synthetic"]), X


def _payload_offset(path):
    return len(path.read_bytes().split(b"\n", 1)[0]) + 1


def test_round_trip_keeps_predictions_config_and_summary(model, tmp_path):
    model, X = model
    back = load_model(save_model(model, tmp_path / "m.ssm"))
    np.testing.assert_array_equal(back.decision_function(X), model.decision_function(X))
    np.testing.assert_array_equal(back.predict(X), model.predict(X))
    assert back.config == CONFIG and back.feature_names == model.feature_names
    assert back.summary["subjects"] == ["0", "1", "2"] and back.summary["n_windows"] == 150
    assert back.summary["params"]["select__k"] == 3
    assert [p.name for p in tmp_path.iterdir()] == ["m.ssm"]  # no temporary file left behind


def _write_format_1(path, payload: bytes):
    """A format-1 file (before issue 10): a JSON header line, then a pickle, with a valid checksum."""
    import hashlib

    header = {"format": MODEL_FORMAT, "format_version": 1, "stairsense_version": package_version(),
              "sklearn_version": sklearn.__version__, "payload_bytes": len(payload),
              "payload_sha256": hashlib.sha256(payload).hexdigest()}
    path.write_bytes(json.dumps(header).encode() + b"\n" + payload)
    return path


class _CreatesMarker:
    """Unpickling this calls open(marker, "w"): the file appears if and only if the pickle ran."""

    def __init__(self, marker):
        self.marker = str(marker)

    def __reduce__(self):
        return open, (self.marker, "w")


def test_a_malicious_pickled_model_is_refused_without_running(tmp_path):
    import pickle

    marker = tmp_path / "pwned"
    path = _write_format_1(tmp_path / "evil.model", pickle.dumps(_CreatesMarker(marker)))
    with pytest.raises(ModelFileError, match="format 1 stores a pickle.*upgrade-model") as info:
        load_model(path)
    assert str(path) in str(info.value)
    assert not marker.exists()
    # The oracle that the payload is live: unpickling it does create the marker.
    pickle.loads(path.read_bytes().split(b"\n", 1)[1])
    assert marker.exists()


def _rewrite(path, edit_header=lambda h: None, payload=None):
    import hashlib

    head, old = path.read_bytes().split(b"\n", 1)
    header = json.loads(head)
    payload = old if payload is None else payload
    edit_header(header)
    header.update(payload_bytes=len(payload), payload_sha256=hashlib.sha256(payload).hexdigest())
    path.write_bytes(json.dumps(header).encode() + b"\n" + payload)


def test_a_pickle_hidden_in_the_array_payload_is_refused_without_running(model, tmp_path):
    import io

    marker = tmp_path / "pwned"
    path = save_model(model[0], tmp_path / "m.ssm")
    buffer = io.BytesIO()
    np.savez(buffer, **{"komd.dual_coef_": np.array([_CreatesMarker(marker)], dtype=object)})  # an .npy holding a pickle
    _rewrite(path, payload=buffer.getvalue())
    with pytest.raises(ModelFileError, match="not an npz of plain arrays"):
        load_model(path)
    assert not marker.exists()


def _set_type(kind):
    def edit(header):
        header["estimator"]["steps"][2][1]["type"] = kind
    return edit


def _set_attribute(name, value):
    def edit(header):
        header["estimator"]["steps"][2][1]["attributes"][name] = value
    return edit


@pytest.mark.parametrize("edit, match", [
    (_set_type("builtins.eval"), "'builtins.eval' is not one a model file may hold"),
    (_set_type("EasyMKL"), "'EasyMKL' is not one"),  # a real estimator, but one that takes callables
    (_set_attribute("__class__", 1), "not a fitted-attribute name"),
    (_set_attribute("theta_", {"py/object": "os.system"}), "not a number, string, tuple or stored array"),
    (_set_attribute("dual_coef_", {"array": "missing"}), "not a number, string"),
    (lambda h: h["estimator"]["steps"][2][1]["params"].update(kernel_callable="x"), "no parameter"),
    (lambda h: h.pop("estimator"), "must be described by a JSON object"),
    (lambda h: h.update(config={"rate_hz": "fast"}), "refused"),
])
def test_a_header_naming_anything_but_plain_data_is_refused(model, tmp_path, edit, match):
    path = save_model(model[0], tmp_path / "m.ssm")
    _rewrite(path, edit)
    with pytest.raises(ModelFileError, match=match):
        load_model(path)


def test_a_trusted_old_model_is_upgraded_explicitly_even_from_the_flat_layout(model, tmp_path):
    """Format-1 files pickled when the classes lived in stairsense.models._stairstep, stairsense.config,
    ... name those modules; upgrade_model_file maps them to where the classes live now."""
    import pickle

    from stairsense.models.stairstep._model import _MOVED_MODULES

    model, X = model
    payload = pickle.dumps(model, protocol=2)  # protocol 2 names classes as text lines: "c<module>\n<name>\n"
    for old, new in _MOVED_MODULES.items():
        payload = payload.replace(f"c{new}\n".encode(), f"c{old}\n".encode())
    for old in ("stairsense.models._stairstep", "stairsense.config", "stairsense.models._komd"):
        assert f"c{old}\n".encode() in payload  # the file really names the old modules
    old_path = _write_format_1(tmp_path / "old.model", payload)
    with pytest.raises(ModelFileError, match="format 1"):
        load_model(old_path)
    back = load_model(upgrade_model_file(old_path, tmp_path / "new.model"))
    np.testing.assert_array_equal(back.decision_function(X), model.decision_function(X))
    assert back.config == CONFIG and back.summary == model.summary
    with pytest.raises(ModelFileError, match="only format-1 files need upgrading"):
        upgrade_model_file(tmp_path / "new.model", tmp_path / "again.model")


def test_the_cli_upgrades_an_old_file(model, tmp_path, capsys):
    import pickle

    from stairsense.cli import main

    old_path = _write_format_1(tmp_path / "old.model", pickle.dumps(model[0]))
    assert main(["upgrade-model", str(old_path), "--out", str(tmp_path / "new.model"), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["out"] == str(tmp_path / "new.model")
    assert main(["replay", str(old_path), "--model", str(old_path)]) == 2
    assert "upgrade-model" in capsys.readouterr().err


def test_only_the_stair_step_estimators_can_be_saved(tmp_path):
    from sklearn.pipeline import make_pipeline
    from sklearn.tree import DecisionTreeClassifier

    X, y = np.random.default_rng(0).normal(size=(40, 3)), np.arange(40) % 2
    model = StairstepModel(make_pipeline(DecisionTreeClassifier()).fit(X, y), CONFIG, list("abc"))
    with pytest.raises(ValueError, match="cannot save a DecisionTreeClassifier"):
        save_model(model, tmp_path / "m.ssm")
    assert list(tmp_path.iterdir()) == []


def test_the_selector_keeps_the_k_features_easymkl_ranks_first(model):
    model, _ = model
    select = model.pipeline.named_steps["select"]
    assert set(np.flatnonzero(select.get_support())) == set(select.ranking_[:3].tolist())
    assert {0, 2} <= set(select.ranking_[:3].tolist())  # the two features y depends on


def _truncate(path):
    path.write_bytes(path.read_bytes()[:-100])


def _flip_payload_byte(path):
    data = bytearray(path.read_bytes())
    data[_payload_offset(path) + 50] ^= 0xFF
    path.write_bytes(bytes(data))


def _foreign(path):
    path.write_text("t_ns,ax,ay,az\n0,0,0,9.8\n")


def _empty(path):
    path.write_bytes(b"")


def _binary(path):
    path.write_bytes(np.random.default_rng(0).bytes(4096))


def _edit_header(**changes):
    def edit(path):
        head, payload = path.read_bytes().split(b"\n", 1)
        header = {**json.loads(head), **changes}
        path.write_bytes(json.dumps(header).encode() + b"\n" + payload)
    return edit


@pytest.mark.parametrize("damage, match", [
    (_truncate, "truncated"),
    (_flip_payload_byte, "corrupt"),
    (_foreign, "not a stairsense stair-step model"),
    (_empty, "not a stairsense stair-step model"),
    (_binary, "not a stairsense stair-step model"),
    (_edit_header(format_version=99), "format version 99"),
    (_edit_header(sklearn_version="0.1"), "scikit-learn '0.1'"),
    (_edit_header(stairsense_version="9.9"), "stairsense '9.9'"),
])
def test_unusable_files_are_refused_naming_the_file(model, tmp_path, damage, match):
    path = save_model(model[0], tmp_path / "m.ssm")
    damage(path)
    with pytest.raises(ModelFileError, match=match) as info:
        load_model(path)
    assert str(path) in str(info.value)


def test_version_mismatch_can_be_overridden(model, tmp_path):
    path = save_model(model[0], tmp_path / "m.ssm")
    _edit_header(sklearn_version="0.1")(path)
    assert isinstance(load_model(path, allow_version_mismatch=True), StairstepModel)


def test_failed_save_keeps_the_old_file(model, tmp_path, monkeypatch):
    path = save_model(model[0], tmp_path / "m.ssm")
    before = path.read_bytes()

    def fail(*args):
        raise OSError("disk full")

    monkeypatch.setattr("stairsense.models.stairstep._model.os.replace", fail)
    with pytest.raises(OSError, match="disk full"):
        save_model(model[0], path)
    assert path.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["m.ssm"]


@pytest.mark.parametrize("change", [dict(rate_hz=50), dict(smoothing="none"), dict(orientation="mizell"),
                                    dict(segmentation="sliding"), dict(peak_threshold=0.7), dict(hysteresis=0.2)])
def test_check_config_refuses_a_feature_changing_difference(model, change):
    with pytest.raises(ValueError, match=f"{next(iter(change))}: model"):
        model[0].check_config(CONFIG.replace(**change))


def test_check_config_accepts_the_same_features(model):
    m = model[0]
    assert m.check_config(None) == CONFIG
    assert m.check_config(CONFIG.replace(max_gap_s=1.0)) == CONFIG.replace(max_gap_s=1.0)  # a read option


def test_predict_names_the_expected_width(model):
    with pytest.raises(ValueError, match="takes 6 window features"):
        model[0].predict(np.zeros((2, 79)))


# ---------------------------------------------------------------------------------------------
# Training from logs (stairsense._train, stairsense._recordings)

SCHEDULE = [(Activity.WALKING, 40.0), (Activity.WALKING_UPSTAIRS, 20.0), (Activity.STANDING, 10.0),
            (Activity.WALKING_DOWNSTAIRS, 20.0), (Activity.WALKING, 40.0)]


@pytest.fixture(scope="module")
def sim_paths(tmp_path_factory):
    folder = tmp_path_factory.mktemp("logs")
    # Only the subject travels in meta: the simulator's nested meta (units per stream) is not what a
    # recording's header holds.
    return [write_log(dataclasses.replace(log, meta={"subject": seed}), folder / f"s{seed}.csv.gz")
            for seed in range(5) for log in [simulate(schedule=SCHEDULE, rate_hz=50, seed=seed)]]


def test_trained_model_beats_chance_on_an_unseen_person(sim_paths, tmp_path):
    model = train_from_recordings(sim_paths[:4], TrainRecipe(CONFIG, k=30, lam=0.1, gamma=0.1, n_landmarks=None))
    assert model.summary["subjects"] == ["0", "1", "2", "3"] and model.summary["sources"][0].endswith("s0.csv.gz")
    held_out = window_dataset(load_labelled_logs(sim_paths[4:]), CONFIG)
    pred = load_model(save_model(model, tmp_path / "m.ssm")).predict(held_out.X)
    tp = np.sum((pred == 1) & (held_out.y == 1))
    f1 = 2 * tp / (np.sum(pred == 1) + np.sum(held_out.y == 1))
    prevalence = held_out.y.mean()  # about 0.28 here; always answering STAIR scores F1 = 2p / (1 + p) ≈ 0.44
    assert f1 > 0.7 and f1 > 2 * prevalence / (1 + prevalence) + 0.25


def test_evaluate_runs_the_loso_protocol_on_logs(sim_paths):
    report = evaluate(sim_paths[:4], CONFIG, protocol="loso", classifier="dt", grid={"clf__min_samples_leaf": [5]})
    assert report["n_folds"] == 4 and sorted(g for fold in report["test_groups"] for g in fold) == [0, 1, 2, 3]
    assert report["f1_mean"] > 0.65 and len(report["per_fold"]["f1"]) == 4
    json.dumps(report)  # the CLI prints it as JSON


def test_load_labelled_logs_reads_uci_rawdata(tmp_path):
    raw = tmp_path / "RawData"
    raw.mkdir()
    rng = np.random.default_rng(0)
    np.savetxt(raw / "acc_exp01_user02.txt", rng.normal([0, 0, 1], 0.1, (100, 3)))
    np.savetxt(raw / "gyro_exp01_user02.txt", rng.normal(0, 0.1, (100, 3)))
    np.savetxt(raw / "labels.txt", [[1, 2, 2, 10, 59], [1, 2, 1, 60, 99]], fmt="%d")
    (log,) = load_labelled_logs([tmp_path])
    assert log.meta["subject"] == 2 and log.meta["path"] == str(tmp_path)
    assert np.bincount(log.label).tolist() == [10, 40, 50]


def test_load_labelled_logs_names_unusable_inputs(tmp_path):
    unlabelled = write_log(simulate(minutes=0.2, seed=0).__class__(np.arange(5) * 20_000_000,
                                                                   np.tile([0.0, 0.0, 9.8], (5, 1))),
                           tmp_path / "u.csv")
    with pytest.raises(ValueError, match="u.csv: no 'label' column"):
        load_labelled_logs([unlabelled])
    with pytest.raises(ValueError, match="neither UCI HAPT RawData"):
        load_labelled_logs([tmp_path])


def test_ahrs_on_the_raw_log_equals_rotvec_on_the_fused_log():
    """At the recorded rate the front end's own Madgwick filter and the virtual sensor agree exactly."""
    log = simulate(schedule=SCHEDULE[:2], rate_hz=30, seed=1)
    bare = dataclasses.replace(log, rotvec=None, linacc=None)
    native = PipelineConfig(orientation="rotvec")
    (fused,) = prepare_logs([bare], native)
    assert fused.rotvec is not None and prepare_logs([log], native)[0] is log
    a = window_dataset([fused], native)
    b = window_dataset([bare], native.replace(orientation="ahrs"))
    assert len(a) > 20
    np.testing.assert_allclose(a.X, b.X, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("allowed", [None, np.arange(79) % 3 == 0], ids=["budgeted", "budgeted+restricted"])
def test_budgeted_and_restricted_models_round_trip_through_the_safe_file(tmp_path, allowed):
    """The default Nystroem KOMD and the heading-invariant RestrictedSelector (which nests an
    EasyMKLSelector) are saved as plain data and decide identically after loading."""
    from stairsense.features import FEATURE_NAMES
    from stairsense.models import StairstepModel, load_model, make_stairstep_pipeline, save_model

    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 79))
    y = (X[:, 0] + X[:, 3] > 0).astype(int)
    model = StairstepModel.train(make_stairstep_pipeline(k=10, n_landmarks=50, allowed=allowed), X, y,
                                 config=PipelineConfig(), feature_names=list(FEATURE_NAMES),
                                 groups=np.arange(300) % 5, sources=["synthetic"])
    loaded = load_model(save_model(model, tmp_path / "m.model"))
    np.testing.assert_array_equal(loaded.pipeline.decision_function(X), model.pipeline.decision_function(X))
