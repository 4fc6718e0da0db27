"""PostgreSQL behind the same :class:`~._store.Store` interface: the store for several API
machines.

Serialisation: every write transaction first takes ``pg_advisory_xact_lock(WRITER_LOCK)``, a
database-wide lock released at commit, then replays the ops other workers committed, then
appends its own with the next ``seq`` (the primary key).  So however many API processes on however
many machines share the database, operations are applied in one order, the order of ``seq``, and
every worker's learner is the replay of the same log.  Writes are therefore serial (one writer at
a time, each committing a whole group of requests); reads scale with the workers.  Durability:
PostgreSQL's defaults (``fsync = on``, ``synchronous_commit = on``) flush the WAL before COMMIT
returns; the store refuses to run if either is off.
"""
from __future__ import annotations

from contextlib import contextmanager

from ._store import Store

__all__ = ["PostgresStore"]

WRITER_LOCK = 0x53_54_41_49_52  # "STAIR": one advisory lock key for every stairsense writer


class PostgresStore(Store):
    """A PostgreSQL database given by a libpq URL, e.g. ``postgresql://user@127.0.0.1:5432/db``."""

    serial, real, blob, placeholder = "BIGSERIAL PRIMARY KEY", "DOUBLE PRECISION", "BYTEA", "%s"

    def __init__(self, url: str):
        self.url = url
        self._conn = self._connect()

    def _connect(self):
        try:
            import psycopg
        except ImportError:
            raise ValueError("a postgresql:// store needs psycopg: pip install 'stairsense[postgres]'") from None
        try:
            conn = psycopg.connect(self.url, autocommit=True)  # transactions are explicit blocks
        except psycopg.OperationalError as exc:
            raise ValueError(f"cannot connect to {self.url}: {str(exc).strip().splitlines()[-1]}") from None
        for setting in ("fsync", "synchronous_commit"):
            value = conn.execute(f"SHOW {setting}").fetchone()[0]
            if value not in ("on", "remote_write", "remote_apply"):
                raise ValueError(f"{self.url}: PostgreSQL has {setting} = {value}; acknowledged updates would not "
                                 "be durable. Set it to on")
        return conn

    @contextmanager
    def _locked_transaction(self):
        with self._conn.transaction():
            cur = self._conn.cursor()
            cur.execute("SELECT pg_advisory_xact_lock(%s)", (WRITER_LOCK,))
            yield cur

    @contextmanager
    def _transaction(self):
        with self._conn.transaction():
            yield self._conn.cursor()
