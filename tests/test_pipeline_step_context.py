"""Step context in the pipeline: the configuration, the feature columns, the batch window_dataset
against a direct reading of STEPCTX.md, replay in chunks against the batch rows, old model files, and
the `train` default. Oracles: features.step_shape called per window on z and h taken by hand from the
standardized stream, a loop over the context rule, and the window-row stage over the whole log for
the streaming forms."""
from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import stairsense.pipeline as pipeline
from stairsense.stream._config import _LIMITS
from stairsense import PipelineConfig, window_dataset
from stairsense.features import (
    AMBIGUOUS,
    FEATURE_NAMES,
    STEP_CONTEXT_NAMES,
    STEP_CONTEXT_OF,
    STEP_SHAPE_NAMES,
    WindowRows,
    WindowRowStage,
    feature_names_for,
    step_shape,
    step_signals,
)
from stairsense.models import StairstepModel, load_model, make_stairstep_pipeline, save_model, vote_decisions
from stairsense.stream import READ_ONLY_FIELDS, Activity, read_segments, run_front_end, simulate, write_log

CONFIG = PipelineConfig(rate_hz=30, orientation="vertical")  # explicit: independent of the defaults


def _log(seed=0, minutes=1.0, rate_hz=50):
    # walking, stairs and a pause: runs of steps that the context gap splits
    schedule = [(Activity.WALKING, 20.0), (Activity.WALKING_UPSTAIRS, 15.0), (Activity.STANDING, 5.0),
                (Activity.WALKING_DOWNSTAIRS, 15.0), (Activity.WALKING, minutes * 60 - 55.0)]
    log = simulate(schedule=schedule, rate_hz=rate_hz, seed=seed)
    return dataclasses.replace(log, meta={"subject": seed})


# ---------------------------------------------------------------------------------------------
# Configuration


def test_step_context_is_on_by_default_and_changes_the_features():
    config = PipelineConfig()
    assert config.step_context == 5 and config.step_context_gap_s == 1.5
    assert {"step_context", "step_context_gap_s"}.isdisjoint(READ_ONLY_FIELDS)
    assert PipelineConfig.from_dict(config.to_dict()) == config


@pytest.mark.parametrize("changes, match", [
    ({"step_context": -1}, "step_context must be an integer >= 0"),
    ({"step_context": 2.5}, "step_context must be an integer >= 0"),
    ({"step_context": True}, "step_context must be an integer >= 0"),
    ({"step_context_gap_s": 0.0}, "step_context_gap_s must be > 0"),
    ({"step_context_gap_s": float("nan")}, "step_context_gap_s must be > 0"),
])
def test_bad_step_context_settings_are_refused(changes, match):
    with pytest.raises(ValueError, match=match):
        PipelineConfig(**changes)


@pytest.mark.parametrize("name", sorted(_LIMITS))
def test_every_size_a_config_claims_is_bounded(name):
    """At the limit the config is built; one step past it is refused before any buffer is sized."""
    limit = _LIMITS[name]
    PipelineConfig(**{name: limit})
    past = limit + 2 if isinstance(limit, int) else limit * 1.001  # an odd vote stays odd
    with pytest.raises(ValueError, match=rf"PipelineConfig.{name} must be at most {limit:g}, got"):
        PipelineConfig(**{name: past})


def test_a_recorded_configuration_without_step_context_means_the_79_features():
    """A model file written before issue 9 records every field of its time; one without step_context
    was trained on the 79 Table 12.1 features, whatever today's default."""
    old = {k: v for k, v in PipelineConfig(rate_hz=30).to_dict().items() if not k.startswith("step_context")}
    assert PipelineConfig.from_record(old).step_context == 0
    assert PipelineConfig.from_record(old).step_context_gap_s == PipelineConfig().step_context_gap_s
    assert PipelineConfig.from_record(PipelineConfig(step_context=3).to_dict()).step_context == 3
    assert PipelineConfig.from_dict(old).step_context == 5  # a config *file* is partial: defaults apply


@pytest.mark.parametrize("orientation, table", [("vertical", 79), ("mizell", 158)])
@pytest.mark.parametrize("context", [0, 1, 5])
def test_feature_names_append_the_step_context(orientation, table, context):
    names = feature_names_for(PipelineConfig(orientation=orientation, step_context=context))
    assert len(names) == table + (len(STEP_CONTEXT_NAMES) if context else 0) and len(set(names)) == len(names)
    assert names[:table] == feature_names_for(PipelineConfig(orientation=orientation, step_context=0))
    if context:
        assert tuple(names[table:]) == STEP_CONTEXT_NAMES and len(STEP_CONTEXT_NAMES) == 36


# ---------------------------------------------------------------------------------------------
# Batch features against STEPCTX.md read directly


def _expected_rows(log, config):
    """The 36 step-context columns of every kept window of one log, from the definition: z is the
    vertical dynamic acceleration, h the horizontal magnitude, dt 1 / rate; the context is the mean
    and Std / (|mean| + 1e-6) over the run's last ≤ context kept windows, a run breaking where one
    window starts more than the gap after the previous one ended."""
    result = run_front_end(log, config)
    std, windows = result.standardized, result.windows
    samples = std.samples
    h = (np.sqrt((samples[:, 3:6] ** 2).sum(axis=1)) if config.orientation == "mizell"
         else np.sqrt(samples[:, 0] ** 2 + samples[:, 1] ** 2))
    dt = 1 / (config.rate_hz or result.log.rate_hz)
    cols = [STEP_SHAPE_NAMES.index(n) for n in STEP_CONTEXT_OF]
    rows, run, last_end = [], [], None
    for i in np.flatnonzero(windows.kept):
        a, b = windows.start[i], windows.stop[i]
        shape = step_shape(std.vertical[a:b], h[a:b], dt)
        if last_end is not None and (windows.t_start_ns[i] - last_end) / 1e9 > config.step_context_gap_s:
            run = []
        last_end = windows.t_end_ns[i]
        run = (run + [shape[cols]])[-config.step_context:]
        block = np.array(run)
        mean = block.mean(axis=0)
        rows.append(np.concatenate([shape, mean, block.std(axis=0) / (np.abs(mean) + 1e-6), [len(run)]]))
    return np.array(rows), windows.t_start_ns[windows.kept]


@pytest.mark.parametrize("config", [CONFIG, CONFIG.replace(orientation="mizell", step_context=3),
                                    PipelineConfig(orientation="vertical", step_context_gap_s=0.5)])
def test_window_dataset_appends_the_defined_step_context_per_log(config):
    logs = [_log(seed=1), _log(seed=2)]
    ds = window_dataset(logs, config)
    paper = window_dataset(logs, config.replace(step_context=0))
    table = len(paper.feature_names)
    assert ds.feature_names == paper.feature_names + list(STEP_CONTEXT_NAMES)
    np.testing.assert_array_equal(ds.X[:, :table], paper.X)  # the Table 12.1 columns are untouched
    for i, log in enumerate(logs):
        rows, starts = _expected_rows(log, config)
        mine = ds.log_index == i
        # every kept window entered the context; the training set keeps the unambiguous ones
        at = np.searchsorted(starts, ds.t_start_ns[mine])
        np.testing.assert_allclose(ds.X[mine, table:], rows[at], rtol=1e-9, atol=1e-12)
        assert ds.X[mine][0, -1] == 1  # a log's first window has no context: it runs within one log
    assert ds.X[:, -1].max() == config.step_context and (ds.y == 1).any() and (ds.y == 0).any()


# ---------------------------------------------------------------------------------------------
# Replay: a running StepContext per segment equals the batch features


class _Recorder:
    """A model that records the rows replay feeds its ``decide_windows`` (and calls every window STAIR)."""

    def __init__(self, config):
        self.config, self.rows, self.contexts = config, [], []

    def decide_windows(self, samples, offsets, step_context=None):
        rows = WindowRows(np.asarray(samples), np.asarray(offsets), step_context, None, None)
        self.rows.append(rows.features())
        if step_context is not None:
            self.contexts.append(step_context)
        return np.ones(len(offsets) - 1, dtype=int), np.zeros(len(offsets) - 1, dtype=bool)


@pytest.fixture(scope="module")
def walk(tmp_path_factory):
    log = _log(seed=3, minutes=1.5)
    return log, write_log(log, tmp_path_factory.mktemp("replay") / "walk.csv")


def _batch(log, config):
    result = run_front_end(log, config)
    return WindowRowStage(config, result.log.rate_hz).process(result).features()


@pytest.mark.parametrize("config", [CONFIG, CONFIG.replace(orientation="mizell"), CONFIG.replace(step_context=0)])
def test_replay_in_chunks_feeds_the_batch_features(walk, config, monkeypatch):
    log, path = walk
    monkeypatch.setattr(pipeline, "REPLAY_CHUNK_ROWS", 601)  # many chunks, windows across their borders
    model = _Recorder(config)
    report = pipeline.replay(path, config, model=model)
    fed = np.vstack(model.rows)
    assert report.segments == 1 and len(model.rows) > 5 and fed.shape[1] == len(feature_names_for(config))
    np.testing.assert_allclose(fed, _batch(log, config), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("context", [0, 5])
def test_a_model_gets_step_context_rows_only_when_configured(walk, context, monkeypatch):
    log, path = walk
    config = CONFIG.replace(step_context=context)
    monkeypatch.setattr(pipeline, "REPLAY_CHUNK_ROWS", 997)
    model = _Recorder(config)
    report = pipeline.replay(path, config, model=model)
    assert report.stair_steps == report.kept  # every window was classified once
    if context:
        np.testing.assert_allclose(np.vstack(model.contexts), _batch(log, config)[:, len(FEATURE_NAMES):],
                                   rtol=1e-9, atol=1e-12)
    else:
        assert model.contexts == []


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(chunk_rows=st.integers(40, 5000))
def test_replay_step_context_does_not_depend_on_chunk_borders(walk, chunk_rows, monkeypatch):
    log, path = walk
    monkeypatch.setattr(pipeline, "REPLAY_CHUNK_ROWS", chunk_rows)
    model = _Recorder(CONFIG)
    pipeline.replay(path, CONFIG, model=model)
    np.testing.assert_allclose(np.vstack(model.rows)[:, -36:], _batch(log, CONFIG)[:, -36:], rtol=1e-9, atol=1e-12)


def test_replay_restarts_the_step_context_with_every_segment(tmp_path, monkeypatch):
    """A gap splits the log (``split-gaps``): the phone's sensor stopped, so the context restarts even
    when the gap is shorter than step_context_gap_s (here 60 s, so only the restart can separate)."""
    log = _log(seed=4)
    cut = log.t_ns.size // 2
    second = log.slice(cut + 50, log.t_ns.size)  # 1 s missing at 50 Hz, above max_gap_s
    gapped = dataclasses.replace(log.slice(0, cut), t_ns=np.concatenate([log.t_ns[:cut], second.t_ns]),
                                 acc=np.vstack([log.acc[:cut], second.acc]), gyro=None, rotvec=None, linacc=None,
                                 label=np.concatenate([log.label[:cut], second.label]), steps=None)
    path = write_log(gapped, tmp_path / "gap.csv")
    config = CONFIG.replace(step_context_gap_s=60.0)
    monkeypatch.setattr(pipeline, "REPLAY_CHUNK_ROWS", 500)
    model = _Recorder(config)
    report = pipeline.replay(path, config, model=model, repair=("split-gaps",))
    with pytest.warns(UserWarning, match="split-gaps: 2 segments"):
        segments = read_segments(path, max_gap_s=config.read_gap_s())
    assert report.segments == len(segments) == 2
    batch = np.vstack([_batch(s, config) for s in segments])
    fed = np.vstack(model.rows)
    np.testing.assert_allclose(fed, batch, rtol=1e-9, atol=1e-12)
    assert np.count_nonzero(fed[:, -1] == 1) == 2  # one run per segment, despite the 60 s gap rule


# ---------------------------------------------------------------------------------------------
# Model files and training


def _small_model(config, n_features):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(90, n_features))
    y = (X[:, 0] > 0).astype(int)
    return StairstepModel.train(make_stairstep_pipeline(k=4, gamma=0.5), X, y, config=config,
                                feature_names=feature_names_for(config)), X


def test_a_model_file_from_before_the_step_context_loads_as_79_features(tmp_path):
    """Main before issue 9 wrote headers whose config has no step_context keys: such a file loads, means
    step_context=0, replays with a 79-feature configuration and is refused with the new default."""
    import hashlib

    config = PipelineConfig(rate_hz=30, step_context=0)
    model, X = _small_model(config, 79)
    path = save_model(model, tmp_path / "old.model")
    head, payload = path.read_bytes().split(b"\n", 1)
    header = json.loads(head)
    for key in ("step_context", "step_context_gap_s"):
        del header["config"][key]
    assert header["payload_sha256"] == hashlib.sha256(payload).hexdigest()  # the payload is untouched
    path.write_bytes(json.dumps(header, sort_keys=True).encode() + b"\n" + payload)
    back = load_model(path)
    assert back.config == config and len(back.feature_names) == 79
    np.testing.assert_array_equal(back.predict(X), model.predict(X))
    assert back.check_config(PipelineConfig(rate_hz=30, step_context=0)) == config
    with pytest.raises(ValueError, match="step_context: model 0, given 5"):
        back.check_config(PipelineConfig(rate_hz=30))


def test_a_model_file_records_the_step_context(tmp_path):
    config = PipelineConfig(rate_hz=30, step_context=4, step_context_gap_s=2.0)
    model, _ = _small_model(config, 115)
    path = save_model(model, tmp_path / "m.model")
    recorded = json.loads(path.read_bytes().split(b"\n", 1)[0])["config"]
    assert recorded["step_context"] == 4 and recorded["step_context_gap_s"] == 2.0
    assert load_model(path).config == config


def test_an_old_pickled_model_upgrades_to_79_features(tmp_path):
    """A format-1 pickle written before issue 9 holds a config without the new fields; unpickled as is
    it would read the class default 5."""
    import hashlib
    import pickle

    import sklearn

    from stairsense.models.stairstep import MODEL_FORMAT, package_version, upgrade_model_file

    model, X = _small_model(PipelineConfig(rate_hz=30, step_context=0), 79)
    for key in ("step_context", "step_context_gap_s"):
        object.__delattr__(model.config, key)  # as pickled by the code before the fields existed
    payload = pickle.dumps(model)
    header = {"format": MODEL_FORMAT, "format_version": 1, "stairsense_version": package_version(),
              "sklearn_version": sklearn.__version__, "payload_bytes": len(payload),
              "payload_sha256": hashlib.sha256(payload).hexdigest()}
    old = tmp_path / "old.model"
    old.write_bytes(json.dumps(header).encode() + b"\n" + payload)
    back = load_model(upgrade_model_file(old, tmp_path / "new.model"))
    assert back.config == PipelineConfig(rate_hz=30, step_context=0)
    np.testing.assert_array_equal(back.predict(X), model.predict(X))


@pytest.fixture(scope="module")
def sim_files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("train")
    return [write_log(_log(seed=s, minutes=1.5), folder / f"s{s}.csv.gz") for s in range(3)]


def test_train_default_makes_a_step_context_model_and_evaluate_model_feeds_it(sim_files, tmp_path, capsys):
    from stairsense._evaluate_model import evaluate_model
    from stairsense._recordings import load_labelled_logs
    from stairsense.cli import main

    out = tmp_path / "default.model"
    assert main(["train", *map(str, sim_files[:2]), "--out", str(out), "--landmarks", "40", "--json"]) == 0
    model = load_model(out)
    assert model.config == PipelineConfig() and len(model.feature_names) == 79 + 36
    assert tuple(model.feature_names[-36:]) == STEP_CONTEXT_NAMES
    # evaluate --model classifies the windows window_dataset builds, step context included
    logs = load_labelled_logs(sim_files[2:])
    result = evaluate_model(out, logs)
    # the oracle: the Python model on every kept window, each log voted as replay votes, ambiguous dropped after
    ds = window_dataset(logs, model.config, keep_unlabelled=True)
    voted = vote_decisions(model.predict(ds.X), ds.t_start_ns, ds.t_end_ns, model.config.vote_steps,
                           model.config.step_context_gap_s, log_index=ds.log_index)
    good = ds.y != AMBIGUOUS
    pred, truth = voted[good] == 1, ds.y[good] == 1
    assert result["overall"]["windows"] == good.sum()
    assert result["overall"]["recall"] == pytest.approx(np.sum(pred & truth) / np.sum(truth))
    assert result["overall"]["precision"] == pytest.approx(np.sum(pred & truth) / np.sum(pred))
    capsys.readouterr()
    paper = tmp_path / "paper.model"
    assert main(["train", *map(str, sim_files[:2]), "--out", str(paper), "--landmarks", "40",
                 "--step-context", "0"]) == 0
    assert load_model(paper).feature_names == list(FEATURE_NAMES)
    with pytest.raises(SystemExit) as exit_:
        main(["train", str(sim_files[0]), "--out", str(paper), "--step-context", "-1"])
    assert exit_.value.code == 2 and "--step-context: expected a whole number >= 0" in capsys.readouterr().err


def test_step_context_features_are_heading_invariant():
    """z and the horizontal magnitude do not change when the phone turns about Up, so
    `train --invariant-features` may select every step-context column."""
    from scipy.spatial.transform import Rotation

    from stairsense.models.stairstep import heading_invariant_mask

    names = feature_names_for(CONFIG)
    assert heading_invariant_mask(names)[-36:].all()
    result = run_front_end(_log(seed=5), CONFIG)
    std = result.standardized
    turned = dataclasses.replace(std, samples=Rotation.from_euler("z", 1.1).apply(std.samples))
    np.testing.assert_allclose(step_signals(turned.samples, turned.vertical), step_signals(std.samples, std.vertical),
                               atol=1e-12)

    def context(result):
        return WindowRowStage(CONFIG, 30.0).process(result).step_context

    np.testing.assert_allclose(context(dataclasses.replace(result, standardized=turned)), context(result),
                               rtol=1e-9, atol=1e-12)
