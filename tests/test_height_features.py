"""Height features (issue 24, "Classifier") against a brute-force reading of their definitions over the
height filter's per-sample output, and the configuration that asks for them."""
from __future__ import annotations

import numpy as np
import pytest

from stairsense.features import HEIGHT_NAMES, LONG_STEPS, WindowRowStage, feature_names_for, height_columns, window_dataset
from stairsense.stream import (
    Activity,
    Barometer,
    HeightFilter,
    Person,
    PipelineConfig,
    building_walk,
    run_front_end,
    simulate,
)

A = Activity


def _walk(seed: int, legs=(("stairs", 1), ("lift", -1), ("stairs", -1))):
    rng = np.random.default_rng(seed)
    schedule, person = building_walk(Person.draw(rng), rng, list(legs))
    return simulate(schedule=schedule, seed=seed, person=person, barometer=Barometer(), rate_hz=50)


def _brute_force(result, config):
    """The 7 features and the height at each kept window's end, from the filter pushed sample by sample
    and the windows' samples and times read one by one (the run rule written out again)."""
    std = result.standardized
    pressure = result.log.pressure[std.first: std.first + std.t_ns.size]
    hf = HeightFilter(max_gap_s=config.max_gap_s)
    hv = np.array([hf.push(int(t), float(a), float(p)) for t, a, p in zip(std.t_ns, std.vertical, pressure)])
    w = result.windows
    rows, ends, block = [], [], []
    last_end = None
    for i in np.flatnonzero(w.kept):
        h, v = hv[w.start[i]:w.stop[i], 0], hv[w.start[i]:w.stop[i], 1]
        if last_end is not None and (w.t_start_ns[i] - last_end) / 1e9 > config.step_context_gap_s:
            block = []
        last_end = w.t_end_ns[i]
        block = (block + [(w.start[i], w.stop[i])])[-max(config.step_context, LONG_STEPS):]
        row = [abs(h[-1] - h[0]), abs(np.mean(v))]
        for steps in (block[-config.step_context:], block[-LONG_STEPS:]):
            speeds = np.concatenate([hv[a:b, 1] for a, b in steps])
            change = h[-1] - hv[steps[0][0], 0]
            row += [abs(np.mean(speeds)), abs(change) / len(steps)]
        rows.append(row + [h[-1] - hv[block[-config.step_context:][0][0], 0]])
        ends.append(h[-1])
    return np.array(rows), np.array(ends)


@pytest.mark.parametrize(("seed", "config"), [
    (0, PipelineConfig(rate_hz=30, barometer=True)),
    (1, PipelineConfig(orientation="vertical", step_context=3, step_context_gap_s=0.8, barometer=True)),
    (2, PipelineConfig(rate_hz=30, orientation="mizell", barometer=True)),
])
def test_height_features_are_their_definitions_over_the_filters_output(seed, config):
    result = run_front_end(_walk(seed), config)
    rows = WindowRowStage(config, result.log.rate_hz).process(result)
    want, ends = _brute_force(result, config)
    assert len(rows) > 50 and rows.height.shape == (len(rows), len(HEIGHT_NAMES))
    np.testing.assert_allclose(rows.height, want, rtol=1e-9, atol=1e-12)
    np.testing.assert_array_equal(rows.height_m, ends)
    # the run restarts where the person stands (the lift), so the oracle's gap rule was exercised
    assert (rows.step_context[:, -1] == 1).sum() >= 2
    # and some runs outgrew the long block, whose oldest window the oracle then dropped
    assert max(len(run) for run in np.split(rows.step_context[:, -1], np.flatnonzero(rows.step_context[:, -1] == 1)[1:])) > LONG_STEPS
    # they are the last columns of the model's features, after the Table 12.1 and step-context ones
    assert rows.features().shape[1] == len(feature_names_for(config))
    np.testing.assert_array_equal(rows.features()[:, -len(HEIGHT_NAMES):], rows.height)


def test_stairs_have_the_height_of_their_risers_and_level_walking_none():
    """The features mean what their names say on a simulated walk (a sanity check on scale, besides the oracle)."""
    config = PipelineConfig(rate_hz=30, barometer=True)
    ds = window_dataset([_walk(seed, [("stairs", 2), ("stairs", -2)]) for seed in range(3)], config)
    rise = ds.X[:, ds.feature_names.index("abs_ctx_rise_per_step_m")]
    change = ds.X[:, ds.feature_names.index("ctx_height_change_m")]
    up, down, level = ds.direction == A.WALKING_UPSTAIRS, ds.direction == A.WALKING_DOWNSTAIRS, ds.activity == A.WALKING
    assert 0.12 < np.median(rise[up | down]) < 0.2 and np.median(rise[level]) < 0.03
    # the sign is the direction but at some flights' first steps, where a stairwell door's pressure step
    # (the simulator's building disturbances, about 0.4 m) outweighs a step or two of stairs
    assert np.mean(change[up] > 0) > 0.9 and np.mean(change[down] < 0) > 0.9


def test_off_by_default_and_only_with_a_step_context():
    assert PipelineConfig().barometer is False
    assert feature_names_for(PipelineConfig()) == feature_names_for(PipelineConfig(barometer=False))
    assert feature_names_for(PipelineConfig(barometer=True))[-len(HEIGHT_NAMES):] == list(HEIGHT_NAMES)
    assert PipelineConfig.from_record({k: v for k, v in PipelineConfig(barometer=True).to_dict().items()
                                       if k != "barometer"}).barometer is False  # a record from before issue 24
    with pytest.raises(ValueError, match="barometer needs step_context >= 1"):
        PipelineConfig(barometer=True, step_context=0)
    with pytest.raises(ValueError, match="barometer must be true or false"):
        PipelineConfig(barometer=1)
    assert height_columns(feature_names_for(PipelineConfig(barometer=True))) == len(HEIGHT_NAMES) == 7
    assert height_columns(feature_names_for(PipelineConfig())) == 0
    with pytest.raises(ValueError, match="7 HEIGHT_NAMES, in order, at the end"):
        height_columns(list(HEIGHT_NAMES) + ["x"])


def test_a_log_without_pressure_is_refused_naming_it():
    config = PipelineConfig(rate_hz=30, barometer=True)
    log = simulate(minutes=0.3, seed=1)
    log.meta["path"] = "walk.csv"
    with pytest.raises(ValueError, match=r"^walk\.csv: .*no air pressure \(no p column\).*accelerometer-only model"):
        WindowRowStage(config, 30.0).process(run_front_end(log, config))
    with pytest.raises(ValueError, match="no air pressure"):
        WindowRowStage(config, 30.0).push(0, (0.0, 0.0, 0.0), 0.0)
