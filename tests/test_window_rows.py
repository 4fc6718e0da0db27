"""The window-row stage: per sample ≡ whole log ≡ random chunks, and its rows against oracles
written from the definitions (window_features over each window's samples taken by hand, labels
counted per window, the step context of tests/test_pipeline_step_context.py, the height features
of tests/test_height_features.py)."""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from stairsense.features import (
    AMBIGUOUS,
    HEIGHT_NAMES,
    NO_STAIR,
    STAIR,
    WindowDataset,
    WindowRowStage,
    feature_names_for,
    window_dataset,
    window_features,
    window_labels,
)
from stairsense.stream import (
    Activity,
    Barometer,
    FrontEnd,
    PipelineConfig,
    Resampler,
    WindowTable,
    run_front_end,
    simulate,
)

CONFIGS = [
    PipelineConfig(rate_hz=30, orientation="vertical"),
    PipelineConfig(rate_hz=30, orientation="mizell", step_context=3),
    PipelineConfig(orientation="rotvec", segmentation="sliding", step_context=2),
    PipelineConfig(rate_hz=25, orientation="ahrs", step_context=0),
    # issue 24: the height filter and height context carried across blocks like the rest
    PipelineConfig(rate_hz=30, orientation="vertical", barometer=True),
    PipelineConfig(orientation="rotvec", step_context=2, barometer=True),
]


def _log(seed: int, seconds: float):
    rng = np.random.default_rng(seed)
    schedule = [(Activity.WALKING, seconds * 0.3), (Activity.WALKING_UPSTAIRS, seconds * 0.3),
                (Activity.STANDING, seconds * 0.1), (Activity.WALKING_DOWNSTAIRS, seconds * 0.3)]
    # The barometer draws from a stream of its own: every other array is the log without it.
    return simulate(schedule=schedule, rate_hz=float(rng.choice([30.0, 50.0, 100.0])), seed=seed,
                    barometer=Barometer(rate_hz=float(rng.choice([1.0, 10.0, 25.0]))))


def _assert_same_rows(a, b):
    assert len(a) == len(b)
    np.testing.assert_array_equal(a.offsets, b.offsets)
    np.testing.assert_array_equal(a.t_start_ns, b.t_start_ns)
    np.testing.assert_array_equal(a.t_end_ns, b.t_end_ns)
    np.testing.assert_array_equal(a.label, b.label)
    np.testing.assert_array_equal(a.direction, b.direction)
    np.testing.assert_allclose(a.samples, b.samples, rtol=1e-9, atol=1e-9)
    if a.step_context is None:
        assert b.step_context is None
    else:
        np.testing.assert_allclose(a.step_context, b.step_context, rtol=1e-7, atol=1e-9)
    for name in ("height", "height_m"):  # the filter is bit-exact in any split; its input (vertical) to rounding
        if getattr(a, name) is None:
            assert getattr(b, name) is None
        else:
            np.testing.assert_allclose(getattr(a, name), getattr(b, name), rtol=1e-7, atol=1e-9)


def _concatenate(parts):
    parts = [p for p in parts if len(p)]
    samples = np.concatenate([p.samples for p in parts])
    offsets = np.concatenate([[0]] + [p.offsets[1:] + sum(q.samples.shape[0] for q in parts[:i])
                                      for i, p in enumerate(parts)])
    context = None if parts[0].step_context is None else np.vstack([p.step_context for p in parts])
    cat = lambda name: np.concatenate([getattr(p, name) for p in parts])  # noqa: E731
    heights = {} if parts[0].height is None else {"height": np.vstack([p.height for p in parts]),
                                                  "height_m": cat("height_m")}
    return type(parts[0])(samples, offsets, context, cat("t_start_ns"), cat("t_end_ns"), cat("label"),
                          cat("direction"), **heights)


def _chunked(log, config, rng):
    """Random chunks through the resampler, the front end and one stage, state carried across (at
    the whole log's rate: the stage's dt is a parameter, not a property of the chunks)."""
    resampler = Resampler(config.rate_hz) if config.rate_hz else None
    whole = run_front_end(log, config)
    method, rate = whole.standardized.method, whole.log.rate_hz
    front = stage = None
    cuts = np.sort(rng.choice(np.arange(1, len(log)), size=int(rng.integers(1, 12)), replace=False))
    parts = []
    for piece in np.split(np.arange(len(log)), cuts):
        chunk = log.slice(piece[0], piece[-1] + 1)
        if resampler is not None:
            chunk = resampler.process(chunk)
            if not len(chunk):
                continue
        if front is None:
            front = FrontEnd(config, method, rate_hz=rate)
            stage = WindowRowStage(config, rate, labelled=True)
        parts.append(stage.process(front.process(chunk)))
    return _concatenate(parts)


def _per_sample(log, config):
    """One sample at a time: the standardizer, the windower and the stage's ``push``."""
    whole = run_front_end(log, config)
    at_rate = whole.log
    front = FrontEnd(config, whole.standardized.method, rate_hz=at_rate.rate_hz)
    stage = WindowRowStage(config, at_rate.rate_hz, labelled=True)
    parts = []
    for i in range(len(at_rate)):
        streams = [None if s is None else tuple(s[i]) for s in (at_rate.gyro, at_rate.rotvec, at_rate.linacc)]
        out = front.standardizer.push(int(at_rate.t_ns[i]), tuple(at_rate.acc[i]), *streams)
        if out is None:
            continue
        t, sample, vertical = out
        closed = front.windower.push(t, vertical)
        closed = [] if closed is None else closed if isinstance(closed, list) else [closed]
        pressure = None if at_rate.pressure is None else float(at_rate.pressure[i])
        parts.append(stage.push(t, sample, vertical, int(at_rate.label[i]), closed, pressure))
    return _concatenate(parts)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), seconds=st.floats(8.0, 40.0), config=st.sampled_from(CONFIGS))
def test_whole_log_random_chunks_and_single_samples_give_the_same_rows(seed, seconds, config):
    log = _log(seed, seconds)
    result = run_front_end(log, config)
    whole = WindowRowStage(config, result.log.rate_hz, labelled=True).process(result)
    if not len(whole):
        return
    _assert_same_rows(_chunked(log, config, np.random.default_rng(seed)), whole)
    _assert_same_rows(_per_sample(log, config), whole)


@pytest.mark.parametrize("config", CONFIGS[:2])
def test_rows_are_the_kept_windows_samples_features_and_labels(config):
    log = _log(3, 60.0)
    result = run_front_end(log, config)
    rows = WindowRowStage(config, result.log.rate_hz, labelled=True).process(result)
    std, windows = result.standardized, result.windows
    kept = np.flatnonzero(windows.kept)
    assert len(rows) == kept.size > 20
    on_stairs = np.isin(result.log.label, [Activity.WALKING_UPSTAIRS, Activity.WALKING_DOWNSTAIRS])
    for w, i in enumerate(kept[:: max(1, kept.size // 15)]):
        w = int(np.flatnonzero(kept == i)[0])
        a, b = windows.start[i], windows.stop[i]
        mine = rows.samples[rows.offsets[w] : rows.offsets[w + 1]]
        np.testing.assert_array_equal(mine, std.samples[a:b])
        expected = np.hstack([window_features(std.samples[a:b, c : c + 3], [0, b - a])[0]
                              for c in range(0, std.samples.shape[1], 3)])
        np.testing.assert_allclose(rows.features()[w, : expected.size], expected, rtol=1e-12, atol=1e-12)
        stairs = on_stairs[std.first + a : std.first + b]
        assert rows.label[w] == (STAIR if stairs.all() else NO_STAIR if not stairs.any() else AMBIGUOUS)
    assert rows.features().shape == (len(rows), len(feature_names_for(config)))
    assert {STAIR, NO_STAIR} <= set(rows.label.tolist())


def test_window_labels_count_each_window():
    labels = np.array([Activity.WALKING, Activity.WALKING_UPSTAIRS, Activity.WALKING_UPSTAIRS,
                       Activity.WALKING_DOWNSTAIRS, Activity.UNLABELLED, Activity.STANDING])
    y, direction = window_labels(labels, np.array([1, 2, 3, 0, 5, 4, 5]), np.array([0, 2, 3, 5, 7]))
    np.testing.assert_array_equal(y, [STAIR, STAIR, NO_STAIR, AMBIGUOUS])
    np.testing.assert_array_equal(direction, [Activity.WALKING_UPSTAIRS, Activity.WALKING_DOWNSTAIRS, 0, 0])


def test_a_labelled_stage_needs_labels_and_a_window_needs_its_samples():
    config = CONFIGS[0]
    result = run_front_end(_log(1, 20.0), config)
    stage = WindowRowStage(config, 30.0, labelled=True)
    with pytest.raises(ValueError, match="per-sample labels"):
        stage.push(0, [0, 0, 0], 0.0)
    late = WindowRowStage(config, 30.0)
    late.process(dataclasses.replace(result, windows=WindowTable.from_windows([])))
    far = result.windows.shifted(-10**6)
    with pytest.raises(ValueError, match="starts before the samples"):
        late.process(dataclasses.replace(result, windows=far))


def test_window_dataset_is_the_labelled_rows_of_each_log():
    config = CONFIGS[0]
    logs = [dataclasses.replace(_log(s, 30.0), meta={"subject": f"p{s}"}) for s in (1, 2)]
    ds = window_dataset(logs, config)
    for i, log in enumerate(logs):
        result = run_front_end(log, config)
        rows = WindowRowStage(config, result.log.rate_hz, labelled=True).process(result)
        good = rows.label != AMBIGUOUS
        mine = ds.log_index == i
        np.testing.assert_array_equal(ds.X[mine], rows.features()[good])
        np.testing.assert_array_equal(ds.y[mine], rows.label[good])
        assert set(ds.groups[mine]) == {f"p{i + 1}"}
    assert ds.n_ambiguous + len(ds) == sum(int(run_front_end(log, config).windows.kept.sum()) for log in logs)
    with pytest.raises(ValueError, match="no per-sample labels"):
        WindowDataset.of_log(run_front_end(dataclasses.replace(logs[0], label=None), config), config)


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), seconds=st.floats(8.0, 40.0),
       config=st.sampled_from([c for c in CONFIGS if not c.barometer]))
def test_pressure_changes_no_row_of_a_model_without_the_barometer(seed, seconds, config):
    """Issue 24: a log gives an accelerometer-only model the same windows and features with its
    pressure column and without it, and a barometer configuration's rows are those rows with the
    seven height features appended."""
    log = _log(seed, seconds)
    with_p = window_dataset([log], config)
    without_p = window_dataset([dataclasses.replace(log, pressure=None)], config)
    np.testing.assert_array_equal(with_p.X, without_p.X)
    np.testing.assert_array_equal(with_p.y, without_p.y)
    np.testing.assert_array_equal(with_p.t_start_ns, without_p.t_start_ns)
    barometer = window_dataset([log], config.replace(barometer=True)) if config.step_context else None
    if barometer is not None:
        np.testing.assert_array_equal(barometer.X[:, :-len(HEIGHT_NAMES)], with_p.X)
        assert barometer.feature_names[:-len(HEIGHT_NAMES)] == with_p.feature_names
