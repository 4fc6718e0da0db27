"""``kill -9`` of a real ``stairsense serve`` at random moments (issue 13 durability), CI size.

Each cycle fires uploads and deletions from 4 threads, kills the server at a random moment,
restarts it on the same SQLite file and checks: no acknowledged op lost, none applied twice,
replayed idempotency keys refused, and predictions equal (1e-9) to a dense solve over exactly the
acknowledged ops.  The ≥ 20-kill version is ``benchmarks/bench_serve.py``.
"""
import pytest

from serve_harness import crash_cycles

pytestmark = pytest.mark.slow


def test_kill_9_loses_nothing_and_applies_nothing_twice(tmp_path):
    results = crash_cycles(tmp_path, kills=2, fire_seconds=(0.2, 0.8), seed=3)
    for cycle in results:
        assert cycle["lost"] == 0, cycle
        assert cycle["duplicated"] == 0, cycle
        assert cycle["replay_not_refused"] == 0, cycle
        assert cycle["max_abs_error"] < 1e-9, cycle
    assert sum(c["acked"] for c in results[-1:]) > 10  # the cycles did real work
