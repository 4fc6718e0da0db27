"""The server's core: an online multi-task learner kept equal to a replay of the durable log.

Write path (durability, idempotency): a request becomes a :class:`Pending` operation
in a queue; one committer task takes *every* operation waiting (group commit, up to
``max_batch``), and in one job on the store's thread

1. takes the writer lock and replays the ops other workers committed meanwhile,
2. refuses replayed idempotency keys (409) and entries the user does not hold (404),
3. applies the rest to the learner in order and appends them to the log with the next ``seq``,
4. commits: SQLite WAL with ``synchronous=FULL`` (or PostgreSQL) fsyncs before returning.

Only then are the requests answered, so an acknowledged update is durable, and the in-memory
state equals the replay of exactly the committed log.  A request the learner refuses part-way
is answered 422 on its own; the others of its group are committed as usual.  If the commit
fails, the batch is answered
503 ("retry with the same Idempotency-Key") and the learner is rebuilt from the store, so memory
never holds an op the log does not.  Every access to the learner (writes, reads, publishing)
runs on that one thread: reads never see an op that is applied but not yet committed.

Restart: the newest checkpoint (:mod:`._checkpoint`: inputs, per-user task states, ``A``, ``b``;
no pickle) plus the log after it.  ``ONLINE_API.md`` guarantees replay is bit-identical, so the
restarted learner is the one that acknowledged the updates.  A checkpoint is started every
``checkpoint_every`` operations, so a restart replays about that many; the commit path only
freezes the learner (copy-on-write, O(users)) and a background thread writes the parts changed
since the previous checkpoint, registers it, and then truncates the log: the payloads up to the
*older* kept checkpoint are dropped, so the log stays bounded, the newest checkpoint can fall
back to the previous one, and the idempotency keys stay (a replayed key is refused forever).
The feature rows ``Phi`` are never written (they are ``feature_map(x)`` of the stored inputs,
recomputed row by row on restore exactly as the learner computed them, so bit-identical).

Privacy (spec §3.6): the disclosed snapshot ``(X̌, y̌, H)`` is published only every
``publish_interval_s`` seconds and only when at least ``min_contributors`` distinct users changed
the state since the last one, because differencing two consecutive snapshots reveals the inputs
of the users who updated between them.
"""
from __future__ import annotations

import asyncio
import gc
import json
import logging
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import numpy as np

from stairsense.models.multitask import OnlineMultiTaskLearner, UnknownEntryError

from ._auth import new_token, token_hash, token_matches, token_user_name
from ._checkpoint import CheckpointWriter
from ._keys import KeyCipher
from ._store import Op, Store, User, UserExistsError

__all__ = ["Engine", "ServeConfig", "Rejected", "DEFAULT_LEARNER", "bootstrap_admin"]

log = logging.getLogger("stairsense.serve")

# Feature-map mode (spec §3.7-1) on the 79 window features scaled to [-1, 1]: inputs are
# continuous, so exact mode would keep one shared row per upload.  γ ≈ 1/d is the usual RBF
# scale for [-1, 1]-scaled features; r = 256 and λ = 1 are the online learner's HAPT benchmark
# setting (bench_online_mtl_hapt.py on the online branch).
DEFAULT_LEARNER = {
    "alpha": 0.5,
    "lam": 1.0,
    "task_kernel": {"name": "rbf", "gamma": 1.0 / 79},
    "feature_map": {"name": "rff", "n_features_in": 79, "n_components": 256, "gamma": 1.0 / 79, "seed": 0},
}
_NO_USER_HASH = token_hash("ss1.nobody.nothing")
_LEARNER_KEYS = ("alpha", "lam", "task_kernel", "shared_kernel", "feature_map", "pivot_tol")


class Rejected(Exception):
    """A request refused with an HTTP status and a one-line reason; nothing was changed."""

    def __init__(self, status: int, reason: str, detail: dict | None = None):
        super().__init__(reason)
        self.status, self.reason, self.detail = status, reason, detail or {}


@dataclass
class ServeConfig:
    """Server settings (all but ``learner`` may change between restarts).

    Parameters
    ----------
    learner : dict or None
        ``OnlineMultiTaskLearner`` parameters (``ONLINE_API.md``) plus ``n_features`` in exact
        mode.  Fixed when the store is created; None = what the store holds, or
        :data:`DEFAULT_LEARNER` for a new store.  A store refuses different parameters.
    max_batch : int
        Operations per group commit.
    max_rows : int
        Examples per upload request.
    checkpoint_every : int
        Operations between checkpoints (bounds the log a restart replays).  A checkpoint is
        written in the background; if the previous one is still being written when the next is
        due, the next starts when it is done.
    publish_interval_s : float
        Seconds between publication attempts (0 disables the timer; admins can still publish).
    min_contributors : int
        Distinct users who must have changed the state since the last snapshot (spec §3.6).
    follow : bool
        Other processes write the same store (several API workers): reads first replay their ops.
    """

    learner: dict | None = None
    max_batch: int = 1024
    max_rows: int = 1000
    checkpoint_every: int = 10000
    publish_interval_s: float = 300.0
    min_contributors: int = 10
    follow: bool = False


@dataclass
class Pending:
    user: int
    kind: str
    idem_key: str
    X: np.ndarray | None = None
    y: np.ndarray | None = None
    w: np.ndarray | None = None
    key: int = -1
    future: asyncio.Future = field(default=None, repr=False)


def n_features_of(params: dict) -> int:
    if params.get("feature_map") is not None:
        return int(params["feature_map"]["n_features_in"])
    if "n_features" not in params:
        raise ValueError("learner parameters in exact mode (shared_kernel) need n_features, the input length")
    return int(params["n_features"])


def bootstrap_admin(store: Store) -> str | None:
    """Create the ``admin`` user if the store has none; return its token (shown once), else None."""
    if store.has_admin():
        return None
    token = new_token("admin")
    try:
        store.add_user("admin", token_hash(token), admin=True)
    except UserExistsError:  # another worker won the race
        return None
    return token


class Engine:
    """Learner + store + group committer; every method with a leading underscore runs on the
    store thread, the public coroutines hand work to it."""

    def __init__(self, store_factory, config: ServeConfig):
        self.store_factory = store_factory
        self.config = config

    # ------------------------------------------------------------ lifecycle
    async def start(self) -> str | None:
        """Open the store, recover the state; returns a new admin token if the store had none."""
        self._db = ThreadPoolExecutor(1, thread_name_prefix="stairsense-store")
        self._checkpointer = ThreadPoolExecutor(1, thread_name_prefix="stairsense-checkpoint")
        self._writer = CheckpointWriter(self.store_factory, incremental=not self.config.follow)
        self._checkpoint_job = None
        self._queue: asyncio.Queue[Pending] = asyncio.Queue()
        token = await self._call(self._open)
        # Everything so far (imports, the recovered learner) lives as long as the process: keep
        # it out of the garbage collector's full passes, which otherwise walk ~240,000 objects
        # and stall every request for 0.1-0.15 s each time (measured; one 27 ms pass instead).
        gc.freeze()
        self._tasks = [asyncio.create_task(self._commit_loop())]
        if self.config.publish_interval_s > 0:
            self._tasks.append(asyncio.create_task(self._publish_loop()))
        return token

    async def close(self) -> None:
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        await self._call(self.store.close)
        self._db.shutdown()
        self._checkpointer.submit(self._writer.close)
        # Let a checkpoint being written finish (a kill instead would only lengthen the next replay).
        await asyncio.get_running_loop().run_in_executor(None, self._checkpointer.shutdown)

    async def _call(self, fn, *args):
        return await asyncio.get_running_loop().run_in_executor(self._db, fn, *args)

    def _open(self) -> str | None:
        self.store: Store = self.store_factory()
        wanted = self.config.learner
        wanted = None if wanted is None else json.loads(json.dumps(wanted))
        self.params = self.store.setup(wanted or DEFAULT_LEARNER)
        if wanted is not None and wanted != self.params:
            raise ValueError(f"this store was created with learner parameters {json.dumps(self.params)}; "
                             "start without --learner to keep them, or use a new store")
        self.n_features = n_features_of(self.params)
        self._keys = KeyCipher(self.store.secret("input_key_secret"))
        self._users: dict[str, User] = {}
        self._stale = False
        self._recover()
        self._warm_up()
        return bootstrap_admin(self.store)

    def _warm_up(self) -> None:
        """Load the learner's compiled kernels on a scratch learner now, so the first real
        request after a (re)start is not the one that waits for them."""
        scratch = self._new_learner()
        key = scratch.update(0, np.full(self.n_features, 0.5), 0.0)
        scratch.update(0, np.full(self.n_features, 0.5), 1.0)
        scratch.predict(0, np.zeros((1, self.n_features)))
        scratch.delete(0, key)

    def _new_learner(self) -> OnlineMultiTaskLearner:
        return OnlineMultiTaskLearner(**{k: self.params[k] for k in _LEARNER_KEYS if k in self.params})

    def _recover(self) -> None:
        """Learner = newest checkpoint + replay of the log after it (also after a failed commit)."""
        checkpoint = self.store.latest_checkpoint()
        if checkpoint is None:
            self.learner = self._new_learner()
            self.seq, home = 0, None
        else:
            self.seq, arrays, meta, home = checkpoint
            self.learner = OnlineMultiTaskLearner.from_snapshot(self._with_features(arrays), meta)
        # The next checkpoint writes only what changes from here (queued behind a write in flight).
        self._checkpointer.submit(self._writer.prime, self.learner.freeze() if home else None, home)
        self._idem = {(u, k): (s, kind, np.frombuffer(keys, dtype="<i8"))
                      for u, k, s, kind, keys in self.store.idempotency_index(self.seq)}
        self.checkpoint_seq = self.seq
        self._replay(self.store.ops_after(self.seq))
        log.info("recovered state at seq %d (checkpoint %d)", self.seq, self.checkpoint_seq)

    def _replay(self, ops: list[Op]) -> None:
        for op in ops:
            if op.seq != self.seq + 1:
                raise RuntimeError(f"operation log has a gap: expected seq {self.seq + 1}, found {op.seq}")
            if op.kind == "update":
                keys = self.learner.update_many([op.user] * len(op.y), op.X, op.y, op.w)
                if not np.array_equal(keys, op.keys):
                    raise RuntimeError(f"replay of op {op.seq} gave input keys {keys} instead of {op.keys}")
            elif op.kind == "purge":
                self._remove_task(op.user)
            else:
                self.learner.delete(op.user, int(op.keys[0]))
            self.seq = op.seq
            self._idem[(op.user, op.idem_key)] = (op.seq, op.kind, op.keys)

    # ----------------------------------------------------------------- users
    async def purge(self, name: str) -> dict:
        """Remove every example of user ``name`` (an admin's remedy for a user's data); see :meth:`_purge`."""
        user = await self._call(self.store.user, name)
        if user is None:
            raise Rejected(404, f"no user {name!r}")
        if user.admin:
            raise Rejected(422, "the admin has no examples to purge")
        try:
            return await self._call(self._purge, user)
        except Rejected:
            raise
        except Exception as error:
            log.exception("purge of user %s failed", name)
            raise Rejected(503, f"storage failed ({type(error).__name__}) part-way; the examples are out of "
                                "the model, send the purge again to remove them from the store") from None

    def _purge(self, user: User) -> dict:
        """Take ``user``'s task out of the learner and the store, in an order a kill cannot break:

        1. a ``purge`` op in the log (its replay, :meth:`_remove_task`, is deterministic, so every
           worker and every restart from an older checkpoint gets the same state);
        2. a whole checkpoint at that op (written now, not in the background), so that no restart
           needs the log before it;
        3. one transaction that drops the older checkpoints and published snapshots (they hold the
           user's contribution) and the payloads of the user's ops, then the checkpoint rows no
           manifest names.  A kill before 3 leaves the data in the store but out of the model;
           sending the purge again finishes it.
        """
        self._fresh()
        job = self._checkpoint_job
        if job is not None:
            job.exception()  # wait for a checkpoint in flight: the next one must be this one
        with self.store.writing() as tx:
            self._replay(tx.ops_after(self.seq))
            removed = len(self.learner.entries(user.id)[0])
            self.seq += 1
            op = Op(self.seq, user.id, "purge", f"purge:{self.seq}", None, None, None, np.zeros(0, dtype=np.int64))
            try:
                self._remove_task(user.id)
            except Exception:
                self._stale = True
                raise
            tx.append([op])
        self._idem[(user.id, op.idem_key)] = (op.seq, op.kind, op.keys)
        seq = self.seq
        self._checkpointer.submit(self._writer.prime, None, None).result()  # write every part, not what changed
        self.checkpoint_seq = seq
        self._checkpoint_job = self._checkpointer.submit(self._writer.write, seq, self.learner.freeze())
        self._checkpoint_job.result()
        self.store.forget(user.id, seq)
        self._checkpointer.submit(self._writer.store_garbage).result()
        log.info("purged user %s at op %d (%d entries)", user.name, seq, removed)
        return {"seq": seq, "name": user.name, "removed": removed}

    async def create_user(self, name: str) -> str:
        token = new_token(name)
        await self._call(self.store.add_user, name, token_hash(token), False)
        return token

    async def authenticate(self, token: str) -> User | None:
        """The user a bearer token belongs to, or None (unknown user or wrong secret)."""
        name = token_user_name(token)
        if name is None:
            return None
        user = self._users.get(name)
        if user is None:
            user = await self._call(self.store.user, name)
            if user is None:
                token_matches(token, _NO_USER_HASH)  # same work as for a real user: names do not leak by timing
                return None
            self._users[name] = user
        return user if token_matches(token, user.token_hash) else None

    # ----------------------------------------------------------------- write
    async def submit(self, pending: Pending) -> dict:
        """Queue an operation; return once it is durable (or raise :class:`Rejected`)."""
        pending.future = asyncio.get_running_loop().create_future()
        await self._queue.put(pending)
        result = await pending.future
        if isinstance(result, Rejected):
            raise result
        return result

    async def _commit_loop(self) -> None:
        while True:
            batch = [await self._queue.get()]
            while not self._queue.empty() and len(batch) < self.config.max_batch:
                batch.append(self._queue.get_nowait())
            try:
                results = await self._call(self._commit, batch)
            except Exception as error:  # the store failed: nothing of this batch is acknowledged
                log.exception("commit of %d operations failed", len(batch))
                reason = f"storage failed ({type(error).__name__}); retry with the same Idempotency-Key"
                results = [Rejected(503, reason)] * len(batch)
            for pending, result in zip(batch, results):
                if not pending.future.done():
                    pending.future.set_result(result)

    def _fresh(self) -> None:
        """Rebuild from the store if a failed commit left memory ahead of the log (store thread)."""
        if self._stale:
            self._recover()
            self._stale = False

    def _commit(self, batch: list[Pending]) -> list:
        self._fresh()
        results: list = [None] * len(batch)
        todo = list(range(len(batch)))
        try:
            while todo:
                todo = self._commit_some(batch, todo, results)
        except Exception:
            # Applied in memory, not committed: rebuild now, in this same store-thread job, so no
            # read ever sees an op that was not acknowledged.  If the store is down, stay stale.
            self._stale = True
            try:
                self._fresh()
            except Exception:
                log.exception("cannot rebuild the state from the store yet")
            raise
        job = self._checkpoint_job
        if self.seq - self.checkpoint_seq >= self.config.checkpoint_every and (job is None or job.done()):
            self._checkpoint()
        return results

    def _with_features(self, arrays: dict) -> dict:
        """Checkpoint arrays with ``Phi`` restored (feature-map mode): one ``feature_map(x)`` per
        stored input, the same call on the same row as when the learner registered it."""
        if self.params.get("feature_map") is None or "Phi" in arrays:
            return arrays
        feature_map = self._new_learner().feature_map
        X = arrays["X"]
        Phi = np.empty((len(X), feature_map.n_components))
        for i in range(len(X)):
            Phi[i] = feature_map(np.ascontiguousarray(X[i], dtype=np.float64))[0]
        return {**arrays, "Phi": Phi}

    def _remove_task(self, task: int) -> None:
        """Take every entry of ``task`` out of the learner, then recompute the state from the other
        tasks' stored triples (spec §3.7-2 deletions, then §3.7-3 rebuild), so that no trace of the
        task's rank-one steps is left in the rounding of A and b.  Input ids stay (later ops refer
        to them).  The result goes through a snapshot with ``Phi`` recomputed row by row, as a
        restart from a checkpoint computes it, so memory, replays and restarts agree bit for bit."""
        for key in self.learner.entries(task)[0].tolist():
            self.learner.delete(task, key)
        self.learner.rebuild()
        arrays, meta = self.learner.snapshot()
        arrays.pop("Phi", None)
        self.learner = OnlineMultiTaskLearner.from_snapshot(self._with_features(arrays), meta)

    def _checkpoint(self) -> None:
        """Freeze the learner now (cheap) and write the checkpoint on the checkpoint thread."""
        self.checkpoint_seq = self.seq
        self._checkpoint_job = self._checkpointer.submit(self._writer.write, self.seq, self.learner.freeze())
        self._checkpoint_job.add_done_callback(_log_checkpoint)

    def _commit_some(self, batch, todo, results) -> list[int]:
        """One transaction over ``batch[todo]``; returns the indices still to do if the learner
        refused an upload part-way (its earlier rows are then in memory only: rebuild)."""
        appended: list[Op] = []
        left: list[int] = []
        broken = False
        with self.store.writing() as tx:
            self._replay(tx.ops_after(self.seq))
            for position, i in enumerate(todo):
                p = batch[i]
                try:
                    results[i] = self._apply(p, appended)
                except Rejected as rejected:
                    results[i] = rejected
                except (ValueError, ArithmeticError) as error:
                    # The learner refused this request part-way (a singular shared kernel in exact
                    # mode, a non-finite step): refuse it alone, commit the ones before it, rebuild
                    # memory from the log and go on with the ones after it.
                    results[i] = Rejected(422, _learner_refusal(error))
                    left, broken = todo[position + 1:], True
                    break
            tx.append(appended)
        if broken:
            self._recover()
        return left

    def _apply(self, p: Pending, appended: list[Op]) -> dict:
        prior = self._idem.get((p.user, p.idem_key))
        if prior is not None:
            seq, kind, keys = prior
            raise Rejected(409, f"Idempotency-Key {p.idem_key!r} was already used (op {seq}); nothing changed",
                           {"applied": {"seq": seq, "kind": kind, "keys": self.public_keys(p.user, keys)}})
        if p.kind == "update":
            keys = self.learner.update_many([p.user] * len(p.y), p.X, p.y, p.w)
        else:
            key = self._keys.private(p.user, p.key)
            try:
                if key is None:
                    raise UnknownEntryError(p.key)
                self.learner.delete(p.user, key)
            except UnknownEntryError:
                raise Rejected(404, f"you have no examples at key {p.key}") from None
            keys = np.array([key], dtype=np.int64)
        self.seq += 1
        appended.append(Op(self.seq, p.user, p.kind, p.idem_key, p.X, p.y, p.w, keys))
        self._idem[(p.user, p.idem_key)] = (self.seq, p.kind, keys)
        return {"seq": self.seq, "keys": self.public_keys(p.user, keys)}

    def public_keys(self, user: int, keys) -> list[int]:
        """The learner's input ids ``keys`` as ``user`` sees them (:mod:`._keys`)."""
        return [self._keys.public(user, int(k)) for k in keys]

    # ------------------------------------------------------------------ read
    async def read(self, fn):
        """``fn(learner)`` on the store thread, after catching up with other workers if following."""
        return await self._call(self._read, fn)

    def _read(self, fn):
        try:
            self._fresh()
        except Exception as error:
            raise Rejected(503, f"storage unavailable ({type(error).__name__}); retry later") from None
        if self.config.follow:
            self._replay(self.store.ops_after(self.seq))
        return fn(self.learner)

    # --------------------------------------------------------------- publish
    async def publish(self) -> dict:
        """Publish the disclosed snapshot now if enough users contributed (else :class:`Rejected`)."""
        return await self._call(self._publish)

    def _publish(self) -> dict:
        with self.store.writing() as tx:
            self._replay(tx.ops_after(self.seq))
            last = tx.last_published_seq()
            if self.seq <= last:
                raise Rejected(409, f"nothing changed since the snapshot at op {last}")
            contributors = tx.contributors_since(last)
            if contributors < self.config.min_contributors:
                raise Rejected(409, f"{contributors} user(s) contributed since the last snapshot; publishing "
                                    f"needs {self.config.min_contributors} (spec §3.6)")
            at = tx.save_published(self.seq, contributors, self.learner.published())
        log.info("published snapshot at op %d (%d contributors)", self.seq, contributors)
        return {"seq": self.seq, "published_at": at, "contributors": contributors}

    async def _publish_loop(self) -> None:
        while True:
            await asyncio.sleep(self.config.publish_interval_s)
            try:
                await self.publish()
            except Rejected as rejected:
                log.info("no snapshot published: %s", rejected.reason)

    async def latest_published(self) -> dict | None:
        return await self._call(self.store.latest_published)


def _learner_refusal(error: Exception) -> str:
    first = (str(error).splitlines() or [""])[0]
    if isinstance(error, ValueError):
        return first
    return f"the learner cannot apply this upload ({type(error).__name__}: {first}); nothing of it was applied"


def _log_checkpoint(job) -> None:
    # The ops are already durable: a failed checkpoint only means a longer replay next start.
    if job.exception() is not None:
        log.error("checkpoint failed; the log still has every operation", exc_info=job.exception())
    else:
        log.info("checkpoint written: %s", job.result())
