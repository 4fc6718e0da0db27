"""Where the server's state lives: one small interface, SQLite (embedded, default) behind it.

The durable **operation log** is the source of truth: every acknowledged
upload or deletion is one row ``(seq, user, kind, idempotency key, X, y, w, keys)``, committed
before the client hears back.  The in-memory learner is a deterministic replay of that log
(``ONLINE_API.md`` guarantees bit-identical replay), and *checkpoints* (learner snapshots stored
as arrays + JSON, no pickle) only bound how much of the log a restart replays.

Serialisation across API workers: a write happens inside :meth:`Store.writing`, which holds the
store's single **writer lock** for the whole transaction (SQLite ``BEGIN IMMEDIATE``; PostgreSQL
``pg_advisory_xact_lock``).  Under the lock a worker first replays the ops other workers committed
(:meth:`WriteTransaction.ops_after`), then appends its own with the next sequence numbers, so
sequence order = commit order = apply order in every worker.  ``seq`` is the primary key: a
serialisation bug would fail the commit instead of forking the state.

Arrays are stored as ``.npz`` bytes (read back with ``allow_pickle=False``); floats as
little-endian float64 bytes, so the replayed inputs are bit-identical to the uploaded ones.
"""
from __future__ import annotations

import io
import json
import logging
import os
import secrets
import sqlite3
import threading
import time
from abc import ABC, abstractmethod
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import numpy as np

log = logging.getLogger("stairsense.serve")

__all__ = ["Op", "User", "Store", "WriteTransaction", "SQLiteStore", "UserExistsError", "pack_arrays",
           "unpack_arrays", "MissingCheckpointPart"]


class UserExistsError(ValueError):
    """``add_user`` was given a name that is taken."""


@dataclass(frozen=True)
class User:
    id: int
    name: str
    token_hash: str
    admin: bool


@dataclass(frozen=True)
class Op:
    """One logged operation: ``kind`` is ``"update"`` (rows X, y, w; ``keys`` = the input ids the
    learner returned) or ``"delete"`` (``keys`` = the one input id removed)."""

    seq: int
    user: int
    kind: str
    idem_key: str
    X: np.ndarray | None
    y: np.ndarray | None
    w: np.ndarray | None
    keys: np.ndarray


def pack_arrays(arrays: dict) -> bytes:
    """``.npz`` bytes of a dict of numpy arrays (numeric only: no object arrays, hence no pickle)."""
    buffer = io.BytesIO()
    np.savez(buffer, **{k: np.asarray(v) for k, v in arrays.items()})
    return buffer.getvalue()


def unpack_arrays(blob: bytes) -> dict:
    with np.load(io.BytesIO(bytes(blob)), allow_pickle=False) as npz:
        return {k: npz[k] for k in npz.files}


def _le_bytes(a: np.ndarray | None) -> memoryview | None:
    """The bytes of ``a`` as little-endian float64 (floats) or int64 (integers), without a copy
    when ``a`` already is one (a database binds any buffer); None stays None."""
    if a is None:
        return None
    return memoryview(np.ascontiguousarray(a, dtype="<f8" if a.dtype.kind == "f" else "<i8")).cast("B")


_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS users (id {serial}, name TEXT UNIQUE NOT NULL, token_hash TEXT NOT NULL,
    admin INTEGER NOT NULL, created {real} NOT NULL);
CREATE TABLE IF NOT EXISTS ops (seq BIGINT PRIMARY KEY, user_id BIGINT NOT NULL, kind TEXT NOT NULL,
    idem_key TEXT NOT NULL, x {blob}, y {blob}, w {blob}, keys {blob} NOT NULL, at {real} NOT NULL,
    UNIQUE (user_id, idem_key));
CREATE TABLE IF NOT EXISTS checkpoints (seq BIGINT PRIMARY KEY, arrays {blob} NOT NULL, meta TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS published (seq BIGINT PRIMARY KEY, at {real} NOT NULL, contributors BIGINT NOT NULL,
    arrays {blob} NOT NULL);
"""

# The bulk of a checkpoint (see save_checkpoint_parts): the inputs, rows [start, stop), written once
# and kept (they only grow), and one row per (task, checkpoint that changed it).
_PARTS_SCHEMA = """
CREATE TABLE IF NOT EXISTS checkpoint_inputs (start BIGINT NOT NULL, stop BIGINT NOT NULL, x {blob} NOT NULL,
    PRIMARY KEY (start, stop));
CREATE TABLE IF NOT EXISTS checkpoint_tasks (task TEXT NOT NULL, seq BIGINT NOT NULL, size BIGINT NOT NULL,
    state {blob} NOT NULL, PRIMARY KEY (task, seq));
"""


class MissingCheckpointPart(RuntimeError):
    """A checkpoint manifest names a part the store does not hold (a restart tries an older one)."""


class WriteTransaction:
    """What a writer may do while it holds the writer lock (see the module docstring)."""

    def __init__(self, store: "Store", cursor):
        self._store, self._cur = store, cursor

    def ops_after(self, seq: int) -> list[Op]:
        return self._store._ops_after(self._cur, seq)

    def append(self, ops: list[Op]) -> None:
        sql = self._store._sql("INSERT INTO ops (seq, user_id, kind, idem_key, x, y, w, keys, at) "
                               "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)")
        now = time.time()
        self._cur.executemany(sql, [
            (op.seq, op.user, op.kind, op.idem_key, _le_bytes(op.X), _le_bytes(op.y), _le_bytes(op.w),
             _le_bytes(op.keys), now) for op in ops])

    def contributors_since(self, seq: int) -> int:
        self._cur.execute(self._store._sql("SELECT COUNT(DISTINCT user_id) FROM ops WHERE seq > ?"), (seq,))
        return int(self._cur.fetchone()[0])

    def last_published_seq(self) -> int:
        self._cur.execute("SELECT MAX(seq) FROM published")
        value = self._cur.fetchone()[0]
        return -1 if value is None else int(value)

    def save_published(self, seq: int, contributors: int, arrays: dict) -> float:
        at = time.time()
        self._cur.execute(self._store._sql("INSERT INTO published (seq, at, contributors, arrays) VALUES (?, ?, ?, ?)"),
                          (seq, at, contributors, pack_arrays(arrays)))
        return at


class Store(ABC):
    """The storage interface the server needs; backends differ only in connection, SQL dialect
    and how the writer lock is taken.  One instance is used from one thread at a time."""

    serial, real, blob, placeholder = "INTEGER PRIMARY KEY", "REAL", "BLOB", "?"
    parts_apart = False  # True: the checkpoint parts live elsewhere (_parts_transaction)
    part_bytes = 4 << 20  # checkpoint parts written per transaction (save_checkpoint_parts)
    # The checkpoint writer's share of the time while it writes: after each of its transactions it
    # pauses (1 - duty) / duty times as long as that batch took (_pause_since).  Spreading the write,
    # as PostgreSQL's checkpoint_completion_target does, leaves the event loop and the committer
    # the CPU and the GIL between batches: unpaced, 16-19 % of the uploads sent while parts were
    # written or garbage collected waited over 30 ms (2,000 single-example uploads/s, traced).
    background_duty = 0.5

    def _pause_since(self, started: float) -> None:
        """Sleep so that the background batch begun at ``started`` used :attr:`background_duty` of the time."""
        time.sleep((time.perf_counter() - started) * (1 - self.background_duty) / self.background_duty)

    @abstractmethod
    def _connect(self): ...

    @abstractmethod
    @contextmanager
    def _locked_transaction(self):
        """A cursor inside one transaction that holds the writer lock; commit (durably) on success."""

    @abstractmethod
    @contextmanager
    def _transaction(self):
        """A cursor inside one ordinary transaction (no writer lock)."""

    def _create(self, cur, schema: str) -> None:
        for statement in schema.format(serial=self.serial, real=self.real, blob=self.blob).split(";"):
            if statement.strip():
                cur.execute(statement)

    def _sql(self, sql: str) -> str:
        return sql if self.placeholder == "?" else sql.replace("?", self.placeholder)

    # ----------------------------------------------------------------- setup
    def setup(self, learner_params: dict) -> dict:
        """Create the schema if needed and fix the learner parameters on first use.

        Returns the stored parameters: a store keeps the parameters it was created with (the log
        only replays under them, spec §3.7-4), so a restart with other ones is refused.
        """
        schema = _SCHEMA if self.parts_apart else _SCHEMA + _PARTS_SCHEMA
        with self._locked_transaction() as cur:
            self._create(cur, schema)
            cur.execute(self._sql("SELECT value FROM meta WHERE key = ?"), ("learner",))
            row = cur.fetchone()
            if row is None:
                cur.execute(self._sql("INSERT INTO meta (key, value) VALUES (?, ?)"),
                            ("learner", json.dumps(learner_params, sort_keys=True)))
                return learner_params
            return json.loads(row[0])

    def secret(self, name: str) -> bytes:
        """A random 32-byte secret kept in the store under ``name``, made on first use (every
        worker of one store reads the same one)."""
        with self._locked_transaction() as cur:
            cur.execute(self._sql("SELECT value FROM meta WHERE key = ?"), (name,))
            row = cur.fetchone()
            if row is not None:
                return bytes.fromhex(row[0])
            value = secrets.token_bytes(32)
            cur.execute(self._sql("INSERT INTO meta (key, value) VALUES (?, ?)"), (name, value.hex()))
            return value

    # ----------------------------------------------------------------- users
    def add_user(self, name: str, token_hash: str, admin: bool) -> int:
        with self._transaction() as cur:
            cur.execute(self._sql("SELECT 1 FROM users WHERE name = ?"), (name,))
            if cur.fetchone() is not None:
                raise UserExistsError(f"user {name!r} exists; pick another name")
            cur.execute(self._sql("INSERT INTO users (name, token_hash, admin, created) VALUES (?, ?, ?, ?) "
                                  "RETURNING id"), (name, token_hash, int(admin), time.time()))
            return int(cur.fetchone()[0])

    def user(self, name: str) -> User | None:
        with self._transaction() as cur:
            cur.execute(self._sql("SELECT id, name, token_hash, admin FROM users WHERE name = ?"), (name,))
            row = cur.fetchone()
        return None if row is None else User(int(row[0]), row[1], row[2], bool(row[3]))

    def has_admin(self) -> bool:
        with self._transaction() as cur:
            cur.execute("SELECT 1 FROM users WHERE admin = 1")
            return cur.fetchone() is not None

    # ------------------------------------------------------------------- log
    @contextmanager
    def writing(self):
        """A :class:`WriteTransaction` under the writer lock; durable when the block exits."""
        with self._locked_transaction() as cur:
            yield WriteTransaction(self, cur)

    def ops_after(self, seq: int) -> list[Op]:
        with self._transaction() as cur:
            return self._ops_after(cur, seq)

    def _ops_after(self, cur, seq: int) -> list[Op]:
        cur.execute(self._sql("SELECT seq, user_id, kind, idem_key, x, y, w, keys FROM ops WHERE seq > ? "
                              "ORDER BY seq"), (seq,))
        ops = []
        for s, user, kind, key, x, y, w, keys in cur.fetchall():
            if kind == "update" and y is None:
                raise RuntimeError(f"op {s} has no payload: the log was truncated past the checkpoint replayed from")
            yv = None if y is None else np.frombuffer(bytes(y), dtype="<f8")
            Xv = None if x is None else np.frombuffer(bytes(x), dtype="<f8").reshape(len(yv), -1)
            wv = None if w is None else np.frombuffer(bytes(w), dtype="<f8")
            ops.append(Op(int(s), int(user), kind, key, Xv, yv, wv, np.frombuffer(bytes(keys), dtype="<i8")))
        return ops

    def idempotency_index(self, up_to: int) -> list[tuple[int, str, int, str, bytes]]:
        """``(user, idem_key, seq, kind, keys)`` of every op with ``seq <= up_to``: the keys a
        restart must keep refusing even though their ops are inside a checkpoint."""
        with self._transaction() as cur:
            cur.execute(self._sql("SELECT user_id, idem_key, seq, kind, keys FROM ops WHERE seq <= ?"), (up_to,))
            return [(int(u), k, int(s), kind, bytes(keys)) for u, k, s, kind, keys in cur.fetchall()]

    # ----------------------------------------------------------- checkpoints
    def _parts_transaction(self):
        """A transaction where the checkpoint parts live (the main database unless overridden)."""
        return self._transaction()

    def save_checkpoint_parts(self, seq: int, start: int, X: np.ndarray, tasks: list) -> None:
        """Durably write the bulk of the checkpoint at op ``seq``, without the writer lock: the
        input rows ``[start, start + len(X))`` and the state of each task in ``tasks``
        (``(task, h, y, w, R)``, see ``FrozenState``).

        Nothing refers to these rows until :meth:`register_checkpoint` names them, so a kill
        before that leaves only rows :meth:`collect_checkpoint_garbage` removes later.

        At most :attr:`part_bytes` per transaction, the inputs as several ``[start, stop)`` parts,
        paced by :attr:`background_duty`: each commit's fsync then flushes a few MB, so the log's
        fsyncs meanwhile do not queue behind one big flush, and no call copies more than a few MB
        while holding the GIL.  One 63 MB blob (the first checkpoint of the load test: 100,000
        inputs) held it for ~70 ms in ``tobytes`` and the parameter binding, and stalled the event
        loop and the commit thread for 0.2-0.4 s (traced in the load test at commit a69dbca).
        """
        X = np.ascontiguousarray(X, dtype="<f8")
        step = max(1, self.part_bytes // (8 * max(1, X.shape[1])))
        for lo in range(0, len(X), step):
            started, part = time.perf_counter(), X[lo: lo + step]
            with self._parts_transaction() as cur:
                cur.execute(self._sql("INSERT INTO checkpoint_inputs (start, stop, x) VALUES (?, ?, ?) "
                                      "ON CONFLICT DO NOTHING"), (start + lo, start + lo + len(part), _le_bytes(part)))
            self._pause_since(started)
        batch, size, started = [], 0, time.perf_counter()
        for i, (task, h, y, w, R) in enumerate(tasks):
            state = b"".join(_le_bytes(a) for a in (h, y, w, R))
            batch.append((json.dumps(task), seq, len(h), state))
            size += len(state)
            if size >= self.part_bytes or i == len(tasks) - 1:
                with self._parts_transaction() as cur:
                    cur.executemany(self._sql("INSERT INTO checkpoint_tasks (task, seq, size, state) "
                                              "VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING"), batch)
                self._pause_since(started)
                batch, size, started = [], 0, time.perf_counter()

    def register_checkpoint(self, seq: int, arrays: dict, meta: dict, keep: int = 2) -> list[int]:
        """Make the checkpoint at op ``seq`` the newest: its manifest (``arrays`` = the dense
        state and ``task_home``, the checkpoint holding each task's rows; ``meta`` = the learner's
        plus ``n_inputs``), written after its parts are durable.  Keeps the newest ``keep``
        manifests; returns their seqs, oldest first."""
        blob = pack_arrays(arrays)  # outside the transaction: the writer lock is held only to write
        with self._locked_transaction() as cur:
            # Two workers may checkpoint the same op: the state is the same, keep the first.
            cur.execute(self._sql("INSERT INTO checkpoints (seq, arrays, meta) VALUES (?, ?, ?) "
                                  "ON CONFLICT (seq) DO NOTHING"), (seq, blob, json.dumps(meta)))
            cur.execute(self._sql("DELETE FROM checkpoints WHERE seq NOT IN "
                                  "(SELECT seq FROM checkpoints ORDER BY seq DESC LIMIT ?)"), (keep,))
            cur.execute("SELECT seq FROM checkpoints ORDER BY seq")
            return [int(row[0]) for row in cur.fetchall()]

    def truncate_log(self, through: int, batch: int = 250) -> None:
        """Drop the payloads (X, y, w) of the ops up to ``through``, which must be the oldest kept
        checkpoint: a restart replays from the newest one, or, if that cannot be read, from the
        oldest.  Their rows stay, without payload, as the record of the idempotency keys (a
        replayed key is refused forever).

        Done ``batch`` ops per transaction (~7 ms for ops of 10 rows; 2,000 took 55 ms), paced by
        :attr:`background_duty`.  The pause also matters because a lock is not fair: without one,
        this loop took the writer lock back before a waiting commit woke up, which then waited
        several batches (118-220 ms, traced in the load test)."""
        while True:
            started = time.perf_counter()
            with self._locked_transaction() as cur:
                cur.execute(self._sql("SELECT value FROM meta WHERE key = ?"), ("truncated_through",))
                row = cur.fetchone()
                done = -1 if row is None else int(row[0])
                if done >= through:
                    return
                upto = min(through, max(done, 0) + batch)
                cur.execute(self._sql("UPDATE ops SET x = NULL, y = NULL, w = NULL WHERE seq > ? AND seq <= ?"),
                            (done, upto))
                cur.execute(self._sql("INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE "
                                      "SET value = excluded.value"), ("truncated_through", str(upto)))
            self._pause_since(started)

    def forget(self, user: int, seq: int) -> None:
        """Drop what the store holds of ``user``'s examples once the checkpoint at op ``seq`` (its
        purge) is registered: the older checkpoint manifests and published snapshots (they include
        the user's contribution) and the payloads of the user's ops (their rows stay, as the record
        of the idempotency keys).  The checkpoint rows left unnamed go with the next
        :meth:`collect_checkpoint_garbage`."""
        with self._locked_transaction() as cur:
            cur.execute(self._sql("DELETE FROM checkpoints WHERE seq < ?"), (seq,))
            cur.execute(self._sql("DELETE FROM published WHERE seq < ?"), (seq,))
            cur.execute(self._sql("UPDATE ops SET x = NULL, y = NULL, w = NULL WHERE user_id = ? AND seq <= ?"),
                        (user, seq))

    def collect_checkpoint_garbage(self, batch: int = 128) -> int:
        """Delete the task rows older than the oldest kept checkpoint that no kept manifest names
        (superseded states, and parts of checkpoints never registered); returns how many.  Rows
        at or after the oldest kept checkpoint stay: a checkpoint still being written may own them.
        ``batch`` rows per transaction, paced by :attr:`background_duty`."""
        with self._transaction() as cur:
            cur.execute("SELECT arrays, meta FROM checkpoints")
            manifests = [(unpack_arrays(blob), json.loads(meta)) for blob, meta in cur.fetchall()]
            cur.execute("SELECT MIN(seq) FROM checkpoints")
            oldest = cur.fetchone()[0]
        if oldest is None:
            return 0
        named = {(json.dumps(task), int(home)) for arrays, meta in manifests if "task_home" in arrays
                 for task, home in zip(meta["tasks"], arrays["task_home"].tolist())}
        with self._parts_transaction() as cur:
            cur.execute(self._sql("SELECT task, seq FROM checkpoint_tasks WHERE seq < ?"), (int(oldest),))
            garbage = [(task, int(seq)) for task, seq in cur.fetchall() if (task, int(seq)) not in named]
        for first in range(0, len(garbage), batch):
            started = time.perf_counter()
            with self._parts_transaction() as cur:
                cur.executemany(self._sql("DELETE FROM checkpoint_tasks WHERE task = ? AND seq = ?"),
                                garbage[first: first + batch])
            self._pause_since(started)
        return len(garbage)

    def latest_checkpoint(self) -> tuple[int, dict, dict, dict] | None:
        """``(seq, arrays, meta, task_home)`` of the newest readable checkpoint, ``arrays`` and
        ``meta`` in ``OnlineMultiTaskLearner.snapshot`` form (without ``Phi``), or None."""
        with self._transaction() as cur:
            cur.execute("SELECT seq, arrays, meta FROM checkpoints ORDER BY seq DESC")
            rows = cur.fetchall()
        for seq, blob, meta in rows:
            manifest, meta = unpack_arrays(blob), json.loads(meta)
            if "X" in manifest:  # a whole snapshot in one row (stores written before parts existed)
                return int(seq), manifest, meta, {}
            try:
                arrays, home = self._assemble(int(seq), manifest, meta)
            except MissingCheckpointPart as missing:
                log.warning("checkpoint %d cannot be read (%s); trying an older one", seq, missing)
                continue
            return int(seq), arrays, meta, home
        return None

    def _assemble(self, seq: int, manifest: dict, meta: dict) -> tuple[dict, dict]:
        n, d = int(meta["n_inputs"]), int(meta["n_features_in"] or 0)
        tasks = [json.dumps(task) for task in meta["tasks"]]
        home = dict(zip(tasks, manifest["task_home"].tolist()))
        with self._parts_transaction() as cur:
            cur.execute(self._sql("SELECT start, stop, x FROM checkpoint_inputs WHERE start < ? ORDER BY start, stop"),
                        (n,))
            inputs = cur.fetchall()
            cur.execute(self._sql("SELECT task, seq, size, state FROM checkpoint_tasks WHERE seq <= ?"), (seq,))
            states = {(task, int(s)): (int(size), bytes(state)) for task, s, size, state in cur.fetchall()
                      if home.get(task) == int(s)}
        X, filled = np.empty((n, d)), 0
        for start, stop, x in inputs:  # parts may overlap (a retried write): take each row once
            start, stop = int(start), int(stop)
            if start > filled:
                break
            if stop > filled:
                rows = np.frombuffer(bytes(x), dtype="<f8").reshape(stop - start, d)
                take = rows[filled - start: min(stop, n) - start]
                X[filled: filled + len(take)] = take
                filled += len(take)
        if filled < n:
            raise MissingCheckpointPart(f"inputs from {filled} of {n} missing")
        sizes, parts = [], []
        for task in tasks:
            if (task, home[task]) not in states:
                raise MissingCheckpointPart(f"task {task} at checkpoint {home[task]} missing")
            size, state = states[(task, home[task])]
            sizes.append(size)
            parts.append(np.frombuffer(state, dtype="<f8"))  # h is int64 bytes: reinterpreted below
        arrays = {k: v for k, v in manifest.items() if k != "task_home"}
        arrays["X"] = X
        arrays["task_sizes"] = np.array(sizes, dtype=np.int64)
        pieces = [(p[:s].view("<i8"), p[s:2 * s], p[2 * s:3 * s], p[3 * s:]) for p, s in zip(parts, sizes)]
        for i, name in enumerate(("task_h", "task_y", "task_w", "task_R")):
            empty = np.zeros(0, dtype=np.int64 if i == 0 else np.float64)
            arrays[name] = np.concatenate([piece[i] for piece in pieces]) if pieces else empty
        return arrays, {json.loads(task): h for task, h in home.items()}

    # ------------------------------------------------------------- published
    def latest_published(self) -> dict | None:
        with self._transaction() as cur:
            cur.execute("SELECT seq, at, contributors, arrays FROM published ORDER BY seq DESC LIMIT 1")
            row = cur.fetchone()
        if row is None:
            return None
        return {"seq": int(row[0]), "published_at": float(row[1]), "contributors": int(row[2]),
                "arrays": unpack_arrays(row[3])}

    def close(self) -> None:
        self._conn.close()


def _owner_only(path: Path) -> None:
    """Make the database file ``path`` readable by its owner only (0600) before SQLite opens it.

    It holds every user's inputs and labels.  SQLite creates a new file with the process umask
    (0644 under the usual 022), and its ``-wal`` and ``-shm`` files with the database file's mode,
    so the file is created here first with mode 0600 whatever the umask.  A store made before is
    tightened in place (and its ``-wal``/``-shm`` with it, if they exist).
    """
    os.close(os.open(path, os.O_RDWR | os.O_CREAT, 0o600))
    for part in (Path(path), Path(f"{path}-wal"), Path(f"{path}-shm")):
        try:
            if part.stat().st_mode & 0o077:
                part.chmod(0o600)
        except FileNotFoundError:
            pass


# One lock per database file for the SQLiteStore connections of this process (_locked_transaction).
_PROCESS_LOCKS: dict[str, threading.Lock] = {}


class SQLiteStore(Store):
    """The embedded store: one SQLite file in WAL mode with ``synchronous=FULL``, so a commit
    returns only after the log record is fsynced (WAL mode with NORMAL would survive a process
    kill but not a power cut).  Several processes may share the file; ``BEGIN IMMEDIATE`` is the
    writer lock.

    The checkpoint parts (inputs and task states, megabytes) live in a second SQLite file next to
    it, ``<path>-checkpoints``: SQLite has one write lock per database, and a checkpoint written
    into the log's database would hold it -- and stall every commit -- for as long as the write
    takes (1.1 s for 138 MB, ``benchmarks/bench_checkpoint.py``).  Only the small manifest goes
    into the log's database, after the parts are durable.  Back up both files together.
    """

    parts_apart = True

    def __init__(self, path):
        self.path = Path(path)
        self._process_lock = _PROCESS_LOCKS.setdefault(str(self.path.resolve()), threading.Lock())
        self._conn = self._connect()
        self._parts = None

    def _connect(self, path=None):
        # isolation_level=None: we issue BEGIN/COMMIT ourselves; check_same_thread=False: the
        # server drives the connection from one dedicated thread, not the one that opened it.
        path = path or self.path
        _owner_only(path)
        conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False, timeout=30.0)
        mode = conn.execute("PRAGMA journal_mode=WAL").fetchone()[0]
        if mode.lower() != "wal":
            raise ValueError(f"{path}: SQLite refused WAL mode (got {mode!r}); put the store on a local disk")
        conn.execute("PRAGMA synchronous=FULL")
        return conn

    @contextmanager
    def _locked_transaction(self):
        # BEGIN IMMEDIATE takes SQLite's write lock at once: the writer lock.  Connections of this
        # process (the committer's, the checkpoint writer's) first queue on a lock of their own:
        # SQLite's busy handler polls a taken lock with sleeps that back off to 100 ms, so a
        # commit that met the checkpoint writer's manifest or a log-truncation batch slept well past
        # its release (commits of 118-220 ms, traced in the load test).  Other processes still meet
        # the busy handler (several API workers, where that wait is part of the price).
        with self._process_lock, self._begin(self._conn, "BEGIN IMMEDIATE") as cur:
            yield cur

    def _transaction(self):
        return self._begin(self._conn, "BEGIN")

    def _parts_transaction(self):
        if self._parts is None:
            parts = self._connect(Path(f"{self.path}-checkpoints"))
            with self._begin(parts, "BEGIN IMMEDIATE") as cur:
                self._create(cur, _PARTS_SCHEMA)
            self._parts = parts
        return self._begin(self._parts, "BEGIN IMMEDIATE")

    @contextmanager
    def _begin(self, conn, statement: str):
        cur = conn.cursor()
        cur.execute(statement)
        try:
            yield cur
        except BaseException:
            cur.execute("ROLLBACK")
            raise
        cur.execute("COMMIT")

    def close(self) -> None:
        super().close()
        if self._parts is not None:
            self._parts.close()
