"""Open a store from a command-line string, and build the app in a uvicorn worker process.

``--workers N`` makes uvicorn start N processes that each import the app; they find their
settings in the ``STAIRSENSE_SERVE`` environment variable (JSON) that ``stairsense serve`` sets.
"""
from __future__ import annotations

import json
import os
from functools import partial

from ._app import create_app
from ._engine import ServeConfig
from ._store import SQLiteStore, Store

__all__ = ["open_store", "app_from_env", "ENV_VARIABLE"]

ENV_VARIABLE = "STAIRSENSE_SERVE"


def open_store(location: str) -> Store:
    """``postgresql://…`` (or ``postgres://…``) opens PostgreSQL; anything else is a SQLite file path."""
    if location.startswith(("postgresql://", "postgres://")):
        from ._postgres import PostgresStore

        return PostgresStore(location)
    return SQLiteStore(location)


def app_from_env():
    """The app for one uvicorn worker (``uvicorn --factory stairsense.serve._factory:app_from_env``)."""
    settings = json.loads(os.environ[ENV_VARIABLE])
    return create_app(partial(open_store, settings["store"]), ServeConfig(**settings["config"]),
                      max_body_bytes=settings["max_body_bytes"], body_timeout_s=settings["body_timeout_s"])
