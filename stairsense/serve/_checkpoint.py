"""Incremental checkpoints, written off the commit path.

Why: a whole learner snapshot, packed and written as one blob on the store thread between two
group commits, costs more the more distinct inputs the learner holds: 0.09 s at 10,000 inputs,
1.96 s at 120,000 (0.65 s snapshot, 0.18 s packing, 1.13 s writing 138 MB), and every request
waiting meanwhile would wait that long -- a p99 of 1.5 s in the loopback load test.
``benchmarks/bench_checkpoint.py`` measures both ways side by side.

So the commit path only *freezes* the learner (``OnlineMultiTaskLearner.freeze``: copy-on-write,
O(number of users)), and :class:`CheckpointWriter`, on its own thread with its own store
connection, writes the checkpoint at op ``seq`` as

* **parts** (``Store.save_checkpoint_parts``, no writer lock; SQLite keeps them in a second file):
  the inputs appended since the previous checkpoint, and the state ``(h, y, w, R)`` of each user
  whose task changed since (same array objects in both frozen states = unchanged);
* a **manifest** (``Store.register_checkpoint``): ``A``, ``b`` (r×r in feature-map mode; in exact
  mode also the n×n LDLᵀ factor and Gram, written whole), the task order and, per task, the
  checkpoint whose row holds its state.  ``Phi`` is never written (recomputed from ``X``).

Durability order: parts, then manifest, then log truncation up to the oldest kept manifest, then
deletion of task rows no kept manifest names.  A ``kill -9`` anywhere leaves either the previous
manifests with the whole log after the oldest (a restart replays more) or the new manifest with
every part it names; nothing acknowledged is lost, since the log is the source of truth.

Several workers on one store (``follow``): each writes its own checkpoints; their task rows are
written whole (``incremental=False``), because another worker's checkpoints may retire the rows a
worker's previous checkpoint named.  The inputs stay incremental: their rows are the same in every
worker (deterministic replay) and are never deleted.
"""
from __future__ import annotations

import time

import numpy as np

from ._store import Store

__all__ = ["CheckpointWriter"]


class CheckpointWriter:
    """Writes checkpoints from frozen learner states; one instance, one thread.

    Parameters
    ----------
    store_factory : callable
        Opens this writer's own :class:`Store` connection (on first use, on the writer's thread).
    incremental : bool
        Write only the tasks that changed since this writer's previous checkpoint.
    keep : int
        Manifests kept (a restart falls back to an older one if the newest cannot be read).
    """

    def __init__(self, store_factory, incremental: bool = True, keep: int = 2):
        self.store_factory = store_factory
        self.incremental = incremental
        self.keep = keep
        self._store: Store | None = None
        self._previous = None  # (FrozenState, {task: checkpoint seq holding its row}) of the last durable one

    def prime(self, frozen, home: dict | None) -> None:
        """Start the chain from the checkpoint the learner was just restored from (``home`` as
        returned by ``Store.latest_checkpoint``; None = no usable parts, write everything)."""
        self._previous = None if frozen is None or home is None else (frozen, home)

    def write(self, seq: int, frozen) -> dict:
        """Write the checkpoint of ``frozen``, the learner right after op ``seq``; returns what was written."""
        started = time.perf_counter()
        if self._store is None:
            self._store = self.store_factory()
        previous, previous_home = self._previous or (None, {})
        start = previous.n_inputs if previous is not None else 0
        before = {entry[0]: entry for entry in previous.tasks} if previous is not None and self.incremental else {}
        home, changed = [], []
        for entry in frozen.tasks:
            old = before.get(entry[0])
            if old is not None and entry[0] in previous_home and all(a is b for a, b in zip(entry[1:5], old[1:5])) \
                    and entry[5] == old[5]:
                home.append(previous_home[entry[0]])
            else:
                home.append(seq)
                changed.append((entry[0], *frozen.live(entry)))
        X = frozen.inputs["X"][start:]
        self._store.save_checkpoint_parts(seq, start, X, changed)
        manifest = {k: v for k, v in frozen.inputs.items() if k not in ("X", "Phi")}  # exact mode: L, D, Kt
        manifest.update(frozen.dense, task_home=np.array(home, dtype=np.int64))
        kept = self._store.register_checkpoint(seq, manifest, {**frozen.meta, "n_inputs": frozen.n_inputs},
                                               keep=self.keep)
        self._previous = (frozen, dict(zip(frozen.meta["tasks"], home)))
        self._store.truncate_log(kept[0])
        self._store.collect_checkpoint_garbage()
        return {"seq": seq, "inputs_written": len(X), "tasks_written": len(changed), "tasks": len(frozen.tasks),
                "part_bytes": X.nbytes + sum(sum(a.nbytes for a in entry[1:]) for entry in changed),
                "seconds": time.perf_counter() - started}

    def store_garbage(self) -> int:
        """Delete the checkpoint parts no manifest names (see ``Store.collect_checkpoint_garbage``)."""
        if self._store is None:
            self._store = self.store_factory()
        return self._store.collect_checkpoint_garbage()

    def close(self) -> None:
        if self._store is not None:
            self._store.close()
            self._store = None
