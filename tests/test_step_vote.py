"""StepVote: the majority of each step's decision with its run's neighbours, streamed and in one go."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.ndimage import median_filter

from stairsense.models import StepVote, vote_decisions

GAP_S = 1.5


def windows(draw_decisions, draw_gaps):
    """Window times with the given gaps (s) between one window's end and the next one's start."""
    starts, t = [], 0
    for gap in draw_gaps:
        t += int(gap * 1e9)
        starts.append(t)
        t += 600_000_000
    starts = np.asarray(starts, dtype=np.int64)
    return np.asarray(draw_decisions), starts, starts + 600_000_000


def median_oracle(decided, starts, ends, steps):
    """scipy's median filter with the nearest window standing in at the ends, run by run."""
    breaks = np.flatnonzero((starts[1:] - ends[:-1]) / 1e9 > GAP_S) + 1
    return np.concatenate([median_filter(run, size=steps, mode="nearest")
                           for run in np.split(decided.astype(np.int64), breaks)])


def onset_oracle(voted, decided, onset, starts, ends, steps):
    """``voted`` with each window that reaches the onset threshold set STAIR where the next window,
    in the same run, is STAIR before the vote; nothing with ``steps=1``."""
    voted = np.array(voted)
    if steps > 1:
        same_run = (starts[1:] - ends[:-1]) / 1e9 <= GAP_S
        voted[:-1] |= onset[:-1] & same_run & (decided[1:] == 1)
    return voted


runs = st.integers(1, 60).flatmap(lambda n: st.tuples(
    st.lists(st.integers(0, 1), min_size=n, max_size=n),
    st.lists(st.sampled_from([0.0, 0.2, 1.0, 1.5, 1.6, 5.0]), min_size=n, max_size=n)))
onsets = st.lists(st.booleans(), min_size=60, max_size=60)


@settings(max_examples=200, deadline=None)
@given(runs, st.sampled_from([1, 3, 5, 7]))
def test_equals_a_median_filter_within_each_run(run, steps):
    decided, starts, ends = windows(*run)
    assert vote_decisions(decided, starts, ends, steps, GAP_S).tolist() == \
        median_oracle(decided, starts, ends, steps).tolist()


@settings(max_examples=200, deadline=None)
@given(runs, st.sampled_from([1, 3, 5, 7]), onsets)
def test_a_flight_onset_is_the_median_filter_or_an_onset_before_a_stair_window(run, steps, flags):
    decided, starts, ends = windows(*run)
    onset = np.asarray(flags[:decided.size])
    expected = onset_oracle(median_oracle(decided, starts, ends, steps), decided, onset, starts, ends, steps)
    assert vote_decisions(decided, starts, ends, steps, GAP_S, onset=onset).tolist() == expected.tolist()


@settings(max_examples=200, deadline=None)
@given(runs, st.sampled_from([1, 3, 5]), st.lists(st.integers(0, 60), max_size=6), onsets)
def test_any_chunking_gives_the_same_decisions_and_rows(run, steps, cuts, flags):
    decided, starts, ends = windows(*run)
    onset = np.asarray(flags[:decided.size])
    carried = np.arange(decided.size) * 10  # rows handed back beside their own decisions
    vote = StepVote(steps, GAP_S)
    got, rows = [], []
    for part in np.split(np.arange(decided.size), sorted(c for c in cuts if c <= decided.size)):
        voted, back = vote.push(decided[part], starts[part], ends[part], carried[part], onset=onset[part])
        assert vote.waiting <= steps // 2
        got += voted.tolist()
        rows += back.tolist()
    voted, back = vote.flush()
    got += voted.tolist()
    rows += back.tolist()
    assert got == vote_decisions(decided, starts, ends, steps, GAP_S, onset=onset).tolist()
    assert rows == carried.tolist()


def test_one_is_every_decision_as_it_is_and_undelayed():
    decided, starts, ends = windows([1, 0, 1, 1, 0], [0.0] * 5)
    vote = StepVote(1)
    assert vote.push(decided, starts, ends)[0].tolist() == decided.tolist()
    assert vote.waiting == 0 and vote.flush()[0].size == 0


def test_a_window_waits_only_for_its_successors_in_the_run():
    vote = StepVote(3, GAP_S)
    (voted,) = vote.push([1], [0], [10**9])
    assert voted.size == 0 and vote.waiting == 1
    (voted,) = vote.push([0], [5 * 10**9], [6 * 10**9])  # 4 s later: a new run, the lone step keeps its STAIR
    assert voted.tolist() == [1] and vote.waiting == 1


def test_lone_and_missed_decisions_in_a_flight():
    decided, starts, ends = windows([0, 0, 1, 0, 0, 1, 1, 0, 1, 1, 1], [0.0] * 11)
    assert vote_decisions(decided, starts, ends).tolist() == [0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1]


@pytest.mark.parametrize("steps", [0, 2, 4, -1, 3.5, True])
def test_refuses_an_even_or_non_whole_size(steps):
    with pytest.raises(ValueError, match="odd whole number"):
        StepVote(steps)


def test_refuses_mismatched_lengths():
    with pytest.raises(ValueError, match="one decision, start, end"):
        StepVote().push([1, 0], [0], [1])


# The vote in the pipeline configuration and in replay


@pytest.mark.parametrize("value", [0, 2, -3, 3.0, True])
def test_the_configuration_refuses_an_even_or_non_whole_vote(value):
    from stairsense import PipelineConfig

    with pytest.raises(ValueError, match="vote_steps must be an odd integer"):
        PipelineConfig(vote_steps=value)


def test_a_recorded_configuration_without_a_vote_decided_every_step_alone():
    from stairsense import PipelineConfig

    old = {k: v for k, v in PipelineConfig().to_dict().items() if k != "vote_steps"}
    assert PipelineConfig.from_record(old).vote_steps == 1
    assert PipelineConfig().vote_steps == 3


class _Parity:
    """A model calling a window STAIR when its sample count is odd (decisions that flip, so the vote
    changes them) and at its onset threshold when the count is not a multiple of 3 (so the onset rule does)."""

    def __init__(self, config):
        self.config = config

    def decide_windows(self, samples, offsets, step_context=None):
        counts = np.diff(np.asarray(offsets))
        return counts % 2, counts % 3 > 0


@settings(max_examples=8, deadline=None)
@given(chunk_rows=st.integers(40, 5000), steps=st.sampled_from([1, 3, 5]))
def test_replay_in_chunks_counts_the_batch_vote(chunk_rows, steps):
    import tempfile
    from pathlib import Path

    import stairsense.pipeline as pipeline
    from stairsense import PipelineConfig
    from stairsense.features import WindowRowStage
    from stairsense.stream import run_front_end, simulate, write_log

    config = PipelineConfig(rate_hz=30, orientation="vertical", vote_steps=steps)
    log = simulate(minutes=1.5, seed=3, rate_hz=50)
    result = run_front_end(log, config)
    rows = WindowRowStage(config, result.log.rate_hz).process(result)
    raw, onset = np.diff(rows.offsets) % 2, np.diff(rows.offsets) % 3 > 0
    want = vote_decisions(raw, rows.t_start_ns, rows.t_end_ns, steps, config.step_context_gap_s, onset=onset)
    assert steps == 1 or not np.array_equal(want, raw)  # the vote changed something, so the test can fail
    # and the onset rule did too
    assert steps == 1 or not np.array_equal(want, vote_decisions(raw, rows.t_start_ns, rows.t_end_ns, steps,
                                                                 config.step_context_gap_s))
    original = pipeline.REPLAY_CHUNK_ROWS
    pipeline.REPLAY_CHUNK_ROWS = chunk_rows
    try:
        with tempfile.TemporaryDirectory() as folder:  # from a file, so replay reads it in chunks
            report = pipeline.replay(write_log(log, Path(folder) / "walk.csv"), config, model=_Parity(config))
    finally:
        pipeline.REPLAY_CHUNK_ROWS = original
    assert report.stair_steps == int(want.sum())


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 2), st.integers(0, 1)), max_size=60), st.sampled_from([1, 3, 5]))
def test_interleaved_logs_are_voted_each_on_its_own(rows, steps):
    """Windows of three logs interleaved in the arrays (as pooled test folds are): each log's votes
    equal voting that log alone, 0.6 s windows back to back."""
    log = np.array([g for g, _ in rows], dtype=int)
    decided = np.array([d for _, d in rows], dtype=int)
    starts = np.zeros(log.size, dtype=np.int64)
    for g in range(3):
        starts[log == g] = np.arange(np.sum(log == g)) * 600_000_000
    got = vote_decisions(decided, starts, starts + 600_000_000, steps, log_index=log)
    for g in range(3):
        mine = log == g
        np.testing.assert_array_equal(got[mine], vote_decisions(decided[mine], starts[mine], starts[mine] + 600_000_000,
                                                                steps))
