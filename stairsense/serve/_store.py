"""Where the server's state lives: one small interface, SQLite (embedded, default) behind it.

The durable **operation log** is the source of truth (issue 13 "durability"): every acknowledged
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
import sqlite3
import time
from abc import ABC, abstractmethod
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import numpy as np

__all__ = ["Op", "User", "Store", "WriteTransaction", "SQLiteStore", "UserExistsError", "pack_arrays",
           "unpack_arrays"]


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


def _f8(a) -> bytes | None:
    return None if a is None else np.ascontiguousarray(a, dtype="<f8").tobytes()


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
            (op.seq, op.user, op.kind, op.idem_key, _f8(op.X), _f8(op.y), _f8(op.w),
             np.ascontiguousarray(op.keys, dtype="<i8").tobytes(), now) for op in ops])

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

    def _sql(self, sql: str) -> str:
        return sql if self.placeholder == "?" else sql.replace("?", self.placeholder)

    # ----------------------------------------------------------------- setup
    def setup(self, learner_params: dict) -> dict:
        """Create the schema if needed and fix the learner parameters on first use.

        Returns the stored parameters: a store keeps the parameters it was created with (the log
        only replays under them, spec §3.7-4), so a restart with other ones is refused.
        """
        with self._locked_transaction() as cur:
            for statement in _SCHEMA.format(serial=self.serial, real=self.real, blob=self.blob).split(";"):
                if statement.strip():
                    cur.execute(statement)
            cur.execute(self._sql("SELECT value FROM meta WHERE key = ?"), ("learner",))
            row = cur.fetchone()
            if row is None:
                cur.execute(self._sql("INSERT INTO meta (key, value) VALUES (?, ?)"),
                            ("learner", json.dumps(learner_params, sort_keys=True)))
                return learner_params
            return json.loads(row[0])

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
    def save_checkpoint(self, seq: int, arrays: dict, meta: dict, keep: int = 2) -> None:
        """Store a learner snapshot taken right after op ``seq``; keep the newest ``keep``, and
        truncate the log: drop the payloads (X, y, w) of the ops up to the oldest kept checkpoint.

        Their rows stay, without payload, as the record of the idempotency keys (a replayed key
        is refused forever, also after a restart).  Nothing a restart may need is dropped: it
        replays from the newest checkpoint, or, if that one could not be read, from the oldest.
        """
        blob = pack_arrays(arrays)  # outside the transaction: the writer lock is held only to write
        with self._transaction() as cur:
            # Two workers may checkpoint the same op: the state is the same, keep the first.
            cur.execute(self._sql("INSERT INTO checkpoints (seq, arrays, meta) VALUES (?, ?, ?) "
                                  "ON CONFLICT (seq) DO NOTHING"), (seq, blob, json.dumps(meta)))
            cur.execute(self._sql("DELETE FROM checkpoints WHERE seq NOT IN "
                                  "(SELECT seq FROM checkpoints ORDER BY seq DESC LIMIT ?)"), (keep,))
            cur.execute(self._sql("SELECT value FROM meta WHERE key = ?"), ("truncated_through",))
            row = cur.fetchone()
            done = -1 if row is None else int(row[0])
            cur.execute("SELECT MIN(seq) FROM checkpoints")
            oldest = int(cur.fetchone()[0])
            if oldest > done:
                cur.execute(self._sql("UPDATE ops SET x = NULL, y = NULL, w = NULL WHERE seq > ? AND seq <= ?"),
                            (done, oldest))
                cur.execute(self._sql("INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE "
                                      "SET value = excluded.value"), ("truncated_through", str(oldest)))

    def latest_checkpoint(self) -> tuple[int, dict, dict] | None:
        with self._transaction() as cur:
            cur.execute("SELECT seq, arrays, meta FROM checkpoints ORDER BY seq DESC LIMIT 1")
            row = cur.fetchone()
        return None if row is None else (int(row[0]), unpack_arrays(row[1]), json.loads(row[2]))

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


class SQLiteStore(Store):
    """The embedded store: one SQLite file in WAL mode with ``synchronous=FULL``, so a commit
    returns only after the log record is fsynced (WAL mode with NORMAL would survive a process
    kill but not a power cut).  Several processes may share the file; ``BEGIN IMMEDIATE`` is the
    writer lock."""

    def __init__(self, path):
        self.path = Path(path)
        self._conn = self._connect()

    def _connect(self):
        # isolation_level=None: we issue BEGIN/COMMIT ourselves; check_same_thread=False: the
        # server drives the connection from one dedicated thread, not the one that opened it.
        conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False, timeout=30.0)
        mode = conn.execute("PRAGMA journal_mode=WAL").fetchone()[0]
        if mode.lower() != "wal":
            raise ValueError(f"{self.path}: SQLite refused WAL mode (got {mode!r}); put the store on a local disk")
        conn.execute("PRAGMA synchronous=FULL")
        return conn

    def _locked_transaction(self):
        return self._begin("BEGIN IMMEDIATE")  # takes SQLite's write lock at once: the writer lock

    def _transaction(self):
        return self._begin("BEGIN")

    @contextmanager
    def _begin(self, statement: str):
        cur = self._conn.cursor()
        cur.execute(statement)
        try:
            yield cur
        except BaseException:
            cur.execute("ROLLBACK")
            raise
        cur.execute("COMMIT")
