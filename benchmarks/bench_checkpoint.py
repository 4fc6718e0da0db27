"""The server's checkpoint apart (issue 13 latency): its cost and the stall it puts on the commit
path, against the size of the state (distinct inputs), the previous way and the current way side
by side in one process.

State: the server's default learner (feature-map mode, 79 features, 256 random Fourier
features), ``--users`` users, one fresh input per update (so distinct inputs = updates; a user
holds inputs/users entries, the regime of ``bench_serve.py``).  At each size of ``--sizes`` the
state is checkpointed, after a checkpoint ``--every`` updates earlier (the server's default
``checkpoint_every``), both ways:

* **previous** (the server up to commit 8a10a44, re-enacted here from public pieces): on the store
  thread, between two group commits, ``learner.snapshot()`` (``Phi`` dropped), ``pack_arrays``
  into one ``.npz`` blob, one ``INSERT`` into the log's SQLite database (WAL, ``synchronous=FULL``).
  Every request waiting meanwhile waits all of it: the commit-path stall is the total.
* **current** (``stairsense/serve/_checkpoint.py``): the store thread only runs
  ``learner.freeze()`` (copy-on-write); a ``CheckpointWriter`` writes, on another thread, the
  inputs and user states changed since the previous checkpoint into the side file, the manifest,
  the log truncation.  The stall is the freeze, plus whatever the write does to the commits that
  go on meanwhile: a thread commits one small op at a time to the log (``Store.writing``, as the
  committer does) during the write and, for the peer, for as long without a checkpoint; their
  latencies are reported side by side.

Run: ``.venv/bin/python benchmarks/bench_checkpoint.py`` (``--sizes 10000 30000 60000 120000``).
Writes ``benchmarks/results/checkpoint.md``.
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np

from _common import git_commit, load_average, markdown_table, write_results
# The code these figures measure: a change there makes them stale (tests/test_measured_figures.py).
MEASURES = ("stairsense/serve/_checkpoint.py", "stairsense/serve/_store.py", "models/multitask/_online.py",
            "models/multitask/_online_compiled.py")

from stairsense.models.multitask import OnlineMultiTaskLearner  # noqa: E402
from stairsense.serve import DEFAULT_LEARNER, SQLiteStore  # noqa: E402
from stairsense.serve._checkpoint import CheckpointWriter  # noqa: E402
from stairsense.serve._store import Op, pack_arrays  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
D = DEFAULT_LEARNER["feature_map"]["n_features_in"]


class LogCommitter(threading.Thread):
    """Commits one small op per transaction to the log until stopped; records each commit's seconds."""

    def __init__(self, path: Path, first_seq: int):
        super().__init__(daemon=True)
        self.store, self.seq, self.stop, self.latencies = SQLiteStore(path), first_seq, threading.Event(), []

    def run(self):
        x = np.zeros((1, D))
        while not self.stop.is_set():
            self.seq += 1
            started = time.perf_counter()
            with self.store.writing() as tx:
                tx.append([Op(self.seq, 0, "update", f"b{self.seq}", x, np.zeros(1), np.ones(1), np.zeros(1, np.int64))])
            self.latencies.append(time.perf_counter() - started)
            time.sleep(0.001)  # a request rate, not a tight loop

    def finish(self) -> list[float]:
        self.stop.set()
        self.join()
        self.store.close()
        return self.latencies


def previous_checkpoint(learner, store: SQLiteStore, seq: int) -> dict:
    """The checkpoint as the server took it before (full snapshot, one blob, on the commit path)."""
    t0 = time.perf_counter()
    arrays, meta = learner.snapshot()
    arrays.pop("Phi")
    t1 = time.perf_counter()
    blob = pack_arrays(arrays)
    t2 = time.perf_counter()
    with store._transaction() as cur:
        cur.execute("CREATE TABLE IF NOT EXISTS full_checkpoints (seq BIGINT PRIMARY KEY, arrays BLOB, meta TEXT)")
        cur.execute("INSERT INTO full_checkpoints VALUES (?, ?, ?)", (seq, blob, "{}"))
        cur.execute("DELETE FROM full_checkpoints WHERE seq < ?", (seq,))
    t3 = time.perf_counter()
    return {"snapshot": t1 - t0, "pack": t2 - t1, "write": t3 - t2, "total": t3 - t0, "mb": len(blob) / 1e6}


def quantiles(latencies: list[float]) -> str:
    a = np.array(latencies) * 1e3
    return f"{np.median(a):.1f} / {np.percentile(a, 99):.1f} / {a.max():.1f}" if len(a) else "-"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10000, 30000, 60000, 120000],
                        help="distinct inputs at which to checkpoint (default 10000 30000 60000 120000)")
    parser.add_argument("--every", type=int, default=10000, help="updates between two checkpoints (default 10000)")
    parser.add_argument("--users", type=int, default=2000)
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "checkpoint.md"))
    args = parser.parse_args(argv)
    rng = np.random.default_rng(0)
    learner = OnlineMultiTaskLearner(**DEFAULT_LEARNER)
    load_before = load_average()
    rows, seq = [], 0

    def grow(to: int):
        nonlocal seq
        while learner.n_inputs < to:
            learner.update(int(rng.integers(args.users)), rng.uniform(-1, 1, D), float(rng.normal()))
            seq += 1

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "s.db"
        store = SQLiteStore(path)
        store.setup(DEFAULT_LEARNER)
        writer = CheckpointWriter(lambda: SQLiteStore(path))
        for size in args.sizes:
            grow(size - args.every)
            writer.write(seq, learner.freeze())  # the previous checkpoint of the chain
            grow(size)
            before = previous_checkpoint(learner, store, seq)
            committer = LogCommitter(path, 10**9 + 10 * seq)
            committer.start()
            time.sleep(0.2)
            started = time.perf_counter()
            frozen = learner.freeze()
            freeze_s = time.perf_counter() - started
            written = writer.write(seq, frozen)
            write_s = time.perf_counter() - started
            during = committer.finish()
            idle = LogCommitter(path, 10**9 + 10 * seq + 5 * 10**8)  # the peer: as long, no checkpoint
            idle.start()
            time.sleep(0.2 + write_s)
            quiet = idle.finish()
            rows.append((size, len(frozen.tasks), f"{before['mb']:.1f}",
                         f"{before['snapshot']:.2f} + {before['pack']:.2f} + {before['write']:.2f} = {before['total']:.2f}",
                         f"{freeze_s * 1e3:.1f}", f"{write_s:.2f}",
                         f"{written['inputs_written']} / {written['tasks_written']} of {written['tasks']}",
                         f"{written['part_bytes'] / 1e6:.1f}", quantiles(during), quantiles(quiet),
                         f"{before['total'] / freeze_s:.0f}"))
            print(rows[-1], flush=True)
        writer.close()
        store.close()
    header = ["distinct inputs", "users", "previous: blob MB", "previous: stall s (snapshot + pack + write)",
              "current: stall ms (freeze)", "current: background write s", "current: inputs / users written",
              "current: MB of parts written", "log commits during the write: p50 / p99 / max ms",
              "same, no checkpoint: p50 / p99 / max ms", "stall previous / current"]
    lines = ["# The server's checkpoint apart (issue 13)", "",
             f"Command: `.venv/bin/python benchmarks/bench_checkpoint.py --sizes {' '.join(map(str, args.sizes))} "
             f"--every {args.every} --users {args.users}` at commit {git_commit(ROOT)}; load average before: "
             f"{load_before}, after: {load_average()} on 2 cores shared with other jobs "
             f"(OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS', 'unset')}).", "",
             "Default learner (feature-map mode, r = 256), one fresh input per update for a user drawn from "
             f"{args.users}; a checkpoint every {args.every} updates.  *Previous* = the checkpoint as the server "
             "took it up to commit 8a10a44 (full snapshot, one `.npz` blob, one INSERT into the log's database, "
             "all on the store thread: requests wait all of it).  *Current* = `learner.freeze()` on the store "
             "thread, then the incremental write on the checkpoint thread.  Log commits: another thread commits "
             "one small op per transaction to the log (as the committer does) during the current write, and for "
             "as long without any checkpoint (peer); both with WAL, synchronous=FULL.", "",
             *markdown_table(header, rows, align="rrrrrrrrrrr"), ""]
    write_results(Path(args.out), "\n".join(lines))
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
