"""benchmarks/_common.vote_per_log: the benchmarks vote each log's decisions as replay does, logs apart."""
import sys

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import REPO
from stairsense import PipelineConfig
from stairsense.models import vote_decisions

sys.path.insert(0, str(REPO / "benchmarks"))
from _common import vote_per_log  # noqa: E402


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 2), st.integers(0, 1)), max_size=60), st.sampled_from([1, 3, 5]))
def test_interleaved_logs_are_voted_each_on_its_own(rows, steps):
    """Windows of three logs interleaved in the arrays (as pooled test folds are): each log's votes
    equal voting that log alone, 0.6 s windows back to back."""
    config = PipelineConfig(vote_steps=steps)
    log = np.array([g for g, _ in rows], dtype=int)
    decided = np.array([d for _, d in rows], dtype=int)
    starts = np.zeros(log.size, dtype=np.int64)
    for g in range(3):
        starts[log == g] = np.arange(np.sum(log == g)) * 600_000_000
    got = vote_per_log(decided, log, starts, starts + 600_000_000, config)
    for g in range(3):
        mine = log == g
        np.testing.assert_array_equal(got[mine], vote_decisions(decided[mine], starts[mine], starts[mine] + 600_000_000,
                                                                steps))
