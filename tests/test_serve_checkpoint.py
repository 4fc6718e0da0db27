"""Incremental checkpoints written off the commit path (issue 13 latency; ``stairsense/serve/_checkpoint.py``).

Oracles: the learner's own full :meth:`snapshot` taken at the same moment (a deep copy, the old
checkpoint); a dense solve of ``(K + λW) c = y`` over exactly the acknowledged uploads
(``serve_harness.dense_solve_predict``); the rows of the SQLite log; ``kill -9`` of a real process
held inside the checkpoint write.
"""
import asyncio
import os
import signal
import sqlite3
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from serve_harness import LEARNER, dense_solve_predict
from stairsense.models.multitask import OnlineMultiTaskLearner
from stairsense.serve import SQLiteStore
from stairsense.serve._checkpoint import CheckpointWriter
from test_serve_group_commit import PROBES, acked_rows, engine_on, predictions, submit_all, uploads

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")
D = LEARNER["feature_map"]["n_features_in"]


def new_learner():
    return OnlineMultiTaskLearner(**{k: v for k, v in LEARNER.items()})


def assert_same_snapshot(got, expected):
    (arrays, meta), (want, want_meta) = got, expected
    assert meta == want_meta
    assert sorted(arrays) == sorted(want)
    for name in want:
        np.testing.assert_array_equal(arrays[name], want[name], err_msg=name)
        assert arrays[name].dtype == want[name].dtype, name


def test_a_frozen_state_does_not_change_when_the_learner_does():
    rng = np.random.default_rng(0)
    learner = new_learner()
    keys = {u: [learner.update(u, rng.normal(size=D), rng.normal()) for _ in range(4)] for u in range(3)}
    expected = learner.snapshot()  # copies: the state at this moment
    frozen = learner.freeze()
    learner.update(0, rng.normal(size=D), 1.0)  # task 0 grows
    learner.update(1, learner.input(keys[1][0]), 2.0)  # task 1: a repeat (weights merge in place)
    learner.delete(2, keys[2][1])  # task 2 shrinks
    for _ in range(20):  # inputs and feature rows grow past their buffers
        learner.update(3, rng.normal(size=D), 0.0)
    assert_same_snapshot(frozen.snapshot(), expected)
    again = learner.freeze()
    assert all(a is not b for a, b in zip(again.tasks[0][1:5], frozen.tasks[0][1:5]))  # changed: new arrays
    learner.update(0, rng.normal(size=D), 1.0)
    third = learner.freeze()
    assert all(a is b for a, b in zip(third.tasks[1][1:5], again.tasks[1][1:5]))  # unchanged: the same arrays
    assert all(a is not b for a, b in zip(third.tasks[0][1:5], again.tasks[0][1:5]))


# One step of a run: ("up", user, rows) uploads fresh inputs, ("rep", user) uploads the user's oldest
# input again (its entry changes in place, the size does not), ("del", user) deletes that entry,
# ("ckpt",) writes a checkpoint.
steps = st.lists(st.one_of(
    st.tuples(st.just("up"), st.integers(0, 5), st.integers(1, 3)),
    st.tuples(st.just("rep"), st.integers(0, 5)),
    st.tuples(st.just("del"), st.integers(0, 5)),
    st.tuples(st.just("ckpt"))), min_size=1, max_size=40)


def store_writing_parts_of(path, part_bytes: int) -> SQLiteStore:
    store = SQLiteStore(path)
    store.part_bytes = part_bytes
    return store


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(steps=steps, seed=st.integers(0, 2**16), part_bytes=st.sampled_from([4 << 20, 100, 600]))
def test_a_chain_of_incremental_checkpoints_restores_the_full_snapshot(steps, seed, part_bytes):
    """Also with tiny parts: the inputs then go in several [start, stop) parts (4 rows of 3
    features per 100 bytes) and the task states one or a few per transaction."""
    rng = np.random.default_rng(seed)
    learner = new_learner()
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "s.db"
        store = SQLiteStore(path)
        store.setup(LEARNER)
        writer = CheckpointWriter(lambda: store_writing_parts_of(path, part_bytes))
        seq = 0
        for step in steps + [("ckpt",)]:
            if step[0] == "up":
                learner.update_many([step[1]] * step[2], rng.normal(size=(step[2], D)), rng.normal(size=step[2]))
            elif step[0] in ("rep", "del"):
                keys = learner.entries(step[1])[0]
                if len(keys) and step[0] == "rep":
                    learner.update(step[1], learner.input(int(keys[0])), float(rng.normal()))
                elif len(keys):
                    learner.delete(step[1], int(keys[0]))
            else:
                seq += 1
                expected = learner.snapshot()
                written = writer.write(seq, learner.freeze())
                got_seq, arrays, meta, home = store.latest_checkpoint()
                expected[0].pop("Phi")  # recomputed from X on restore, never written
                assert got_seq == seq
                assert_same_snapshot((arrays, {k: v for k, v in meta.items() if k != "n_inputs"}), expected)
                assert set(home.values()) <= set(range(1, seq + 1))
                assert written["tasks_written"] <= written["tasks"]
        writer.close()
        store.close()


def test_only_changed_tasks_and_new_inputs_are_written(tmp_path):
    rng = np.random.default_rng(1)
    learner = new_learner()
    for u in range(10):
        learner.update_many([u] * 5, rng.normal(size=(5, D)), rng.normal(size=5))
    writer = CheckpointWriter(lambda: SQLiteStore(tmp_path / "s.db"))
    SQLiteStore(tmp_path / "s.db").setup(LEARNER)
    first = writer.write(1, learner.freeze())
    learner.update(3, rng.normal(size=D), 1.0)
    learner.delete(7, int(learner.entries(7)[0][0]))
    second = writer.write(2, learner.freeze())
    assert (first["tasks_written"], first["inputs_written"]) == (10, 50)
    assert (second["tasks_written"], second["inputs_written"]) == (2, 1)
    with sqlite3.connect(f"{tmp_path / 's.db'}-checkpoints") as parts:  # side file: the log's lock stays free
        assert parts.execute("SELECT COUNT(*) FROM checkpoint_tasks").fetchone()[0] == 12
    third = writer.write(3, learner.freeze())  # nothing changed; checkpoint 1's superseded rows are retired
    assert (third["tasks_written"], third["inputs_written"]) == (0, 0)
    with sqlite3.connect(f"{tmp_path / 's.db'}-checkpoints") as parts:
        assert parts.execute("SELECT COUNT(*) FROM checkpoint_tasks").fetchone()[0] == 10
    writer.close()


def test_a_checkpoint_is_written_in_parts_of_at_most_part_bytes(tmp_path):
    """No transaction (and no copy under the GIL) of a whole checkpoint: 50 inputs of 3 float64
    features in parts of 96 bytes are 13 rows of 4 inputs (the last of 2), read back as one X."""
    rng = np.random.default_rng(2)
    learner = new_learner()
    for u in range(5):
        learner.update_many([u] * 10, rng.normal(size=(10, D)), rng.normal(size=10))
    SQLiteStore(tmp_path / "s.db").setup(LEARNER)
    writer = CheckpointWriter(lambda: store_writing_parts_of(tmp_path / "s.db", 96))
    writer.write(1, learner.freeze())
    with sqlite3.connect(f"{tmp_path / 's.db'}-checkpoints") as parts:
        spans = parts.execute("SELECT start, stop, length(x) FROM checkpoint_inputs ORDER BY start").fetchall()
    assert spans == [(i, min(i + 4, 50), 24 * (min(i + 4, 50) - i)) for i in range(0, 50, 4)]
    arrays = SQLiteStore(tmp_path / "s.db").latest_checkpoint()[1]
    np.testing.assert_array_equal(arrays["X"], learner.snapshot()[0]["X"])
    writer.close()


def test_the_checkpoint_writer_paces_every_batch_to_its_duty(tmp_path, monkeypatch):
    """After each background batch (input parts, task states, log truncation, garbage) the writer
    sleeps (1 - duty) / duty times the batch's duration: on a clock that advances 1 s per reading,
    every batch takes 1 s, so with duty 0.25 every pause is 3 s."""
    from stairsense.serve import _store

    rng = np.random.default_rng(3)
    learner = new_learner()
    for u in range(6):
        learner.update_many([u] * 10, rng.normal(size=(10, D)), rng.normal(size=10))
    SQLiteStore(tmp_path / "s.db").setup(LEARNER)

    def paced_store():
        store = store_writing_parts_of(tmp_path / "s.db", 240)  # 10 inputs of 3 features per part
        store.background_duty = 0.25
        return store

    writer = CheckpointWriter(paced_store)
    writer.write(1, learner.freeze())
    for u in range(6):  # every task changes: checkpoint 1's rows become garbage at checkpoint 3
        learner.update(u, rng.normal(size=D), 0.5)
    writer.write(2, learner.freeze())
    clock, pauses = iter(range(10**6)), []
    monkeypatch.setattr(_store.time, "perf_counter", lambda: float(next(clock)))
    monkeypatch.setattr(_store.time, "sleep", pauses.append)
    learner.update_many([0] * 25, rng.normal(size=(25, D)), rng.normal(size=25))
    written = writer.write(3, learner.freeze())
    monkeypatch.undo()
    assert written["inputs_written"] == 25 and written["tasks_written"] == 1
    # 3 input parts, 1 task batch, 1 truncation batch, 1 batch deleting checkpoint 1's 6 task rows
    assert pauses == [3.0] * 6
    writer.close()


def test_connections_of_one_process_to_one_store_share_its_writer_lock(tmp_path, monkeypatch):
    """The committer and the checkpoint writer queue on one in-process lock before SQLite's (whose
    busy handler sleeps up to 100 ms at a time), however the path is spelled."""
    monkeypatch.chdir(tmp_path)
    first, second, other = SQLiteStore(tmp_path / "s.db"), SQLiteStore("s.db"), SQLiteStore(tmp_path / "o.db")
    assert first._process_lock is second._process_lock
    assert first._process_lock is not other._process_lock
    with first.writing():
        assert first._process_lock.locked()
    assert not first._process_lock.locked()
    for store in (first, second, other):
        store.close()


def test_truncation_keeps_every_payload_after_the_oldest_kept_checkpoint(tmp_path):
    """Payloads go only up to the oldest kept checkpoint, so if the newest one cannot be read
    (its parts gone), the restart falls back to the older one and replays the log after it."""
    path = tmp_path / "s.db"
    ops = uploads(40, seed=7)

    async def run(parts):
        engine = engine_on(path)
        engine.config.checkpoint_every = 10
        await engine.start()
        results = []
        for i in range(0, len(parts), 5):  # in groups, waiting for each checkpoint to be written
            results += await submit_all(engine, parts[i:i + 5])
            if engine._checkpoint_job is not None:
                await asyncio.wrap_future(engine._checkpoint_job)
        got = predictions(engine, range(4))
        await engine.close()
        return results, got

    results, got = asyncio.run(run(ops))
    with sqlite3.connect(path) as db:
        kept = [row[0] for row in db.execute("SELECT seq FROM checkpoints ORDER BY seq")]
        payload = dict(db.execute("SELECT seq, y IS NOT NULL FROM ops"))
    assert kept == [30, 40]
    assert [s for s in sorted(payload) if not payload[s]] == list(range(1, 31))
    with sqlite3.connect(f"{path}-checkpoints") as parts:  # lose the newest checkpoint's own rows
        parts.execute("DELETE FROM checkpoint_tasks WHERE seq = 40")
    expected = dense_solve_predict(acked_rows(ops, results), PROBES, list(range(4)))

    async def restart():
        engine = engine_on(path)
        await engine.start()
        out = engine.seq, engine.checkpoint_seq, predictions(engine, range(4))
        await engine.close()
        return out

    seq, from_checkpoint, recovered = asyncio.run(restart())
    assert (seq, from_checkpoint) == (40, 30)
    for u in range(4):
        np.testing.assert_array_equal(recovered[u], got[u])
        np.testing.assert_allclose(recovered[u], expected[u], rtol=0, atol=1e-9)


# A server engine whose checkpoint thread is held at one point of its write (the commit path must
# go on acknowledging meanwhile); the test kills it there with SIGKILL.
_HELD_IN_A_CHECKPOINT = textwrap.dedent("""
    import asyncio, sys, time
    sys.path.insert(0, {tests!r})
    from test_serve_group_commit import engine_on, uploads, submit_all
    from stairsense.serve._store import Store

    def say(*words):  # one write per line: the checkpoint thread and the main thread both print
        sys.stdout.write(" ".join(map(str, words)) + "\\n")
        sys.stdout.flush()

    def held(self, *args, **kwargs):
        if {point!r} == "inside parts":  # inside the parts transaction, holding the side file's lock
            with self._parts_transaction() as cur:
                cur.execute("DELETE FROM checkpoint_tasks WHERE seq < 0")
                say("HELD")
                time.sleep(600)
        say("HELD")
        time.sleep(600)

    async def main():
        engine = engine_on({db!r})
        engine.config.checkpoint_every = 8
        await engine.start()
        ops = uploads(24, seed=5)
        first = await submit_all(engine, ops[:8])  # op 8: a checkpoint, written normally
        await asyncio.wrap_future(engine._checkpoint_job)
        say("A", *[r["seq"] for r in first])
        name = {{"inside parts": "save_checkpoint_parts", "before manifest": "register_checkpoint",
                "before truncation": "truncate_log"}}[{point!r}]
        setattr(Store, name, held)
        engine.config.checkpoint_every = 4
        second = await submit_all(engine, ops[8:12])  # op 12: a checkpoint, held at the point
        say("A", *[r["seq"] for r in second])
        await asyncio.sleep(0.3)
        rest = await submit_all(engine, ops[12:])  # acknowledged while the checkpoint is held
        say("B", *[r["seq"] for r in rest])
        time.sleep(600)
    asyncio.run(main())
""")


@pytest.mark.slow
@pytest.mark.parametrize("point", ["inside parts", "before manifest", "before truncation"])
def test_kill_9_during_a_checkpoint_write_loses_nothing(tmp_path, point):
    db = tmp_path / "s.db"
    script = _HELD_IN_A_CHECKPOINT.format(tests=os.path.dirname(__file__), db=str(db), point=point)
    errors = open(tmp_path / "stderr.txt", "w+")
    process = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=errors, text=True,
                               env={**os.environ, "OPENBLAS_NUM_THREADS": "1"})
    lines = []
    try:
        while not lines or lines[-1][0] != "B":
            line = process.stdout.readline().split()
            assert line, (lines, (tmp_path / "stderr.txt").read_text()[-3000:])
            lines.append(line)
        os.kill(process.pid, signal.SIGKILL)
    finally:
        process.kill()
        process.wait()
    assert ["HELD"] in lines
    acked = sorted(int(s) for line in lines if line[0] in ("A", "B") for s in line[1:])
    assert acked == list(range(1, len(acked) + 1)) and len(acked) >= 20  # acknowledged while held
    ops = uploads(24, seed=5)
    with sqlite3.connect(db) as conn:
        assert [row[0] for row in conn.execute("SELECT seq FROM ops ORDER BY seq")] == acked

    async def run():
        engine = engine_on(db)
        await engine.start()
        recovered = engine.seq, predictions(engine, range(4))
        retried = await submit_all(engine, ops)  # every key again: all refused (409), none applied twice
        await engine.close()
        return recovered, retried

    (seq, recovered), retried = asyncio.run(run())
    assert seq == len(acked)
    assert all(getattr(r, "status", None) == 409 for r in retried[:len(acked)])
    applied = [{"keys": r.detail["applied"]["keys"]} for r in retried[:len(acked)]]
    expected = dense_solve_predict(acked_rows(ops[:len(acked)], applied), PROBES, list(range(4)))
    for u in range(4):
        np.testing.assert_allclose(recovered[u], expected[u], rtol=0, atol=1e-9)
