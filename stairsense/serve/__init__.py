"""The personalisation server (``stairsense serve``, issue 13): HTTP transport, authentication and
durable storage around the online multi-task learner of :mod:`stairsense.models.multitask`."""
from ._app import create_app
from ._engine import DEFAULT_LEARNER, ServeConfig
from ._store import SQLiteStore, Store

__all__ = ["create_app", "ServeConfig", "DEFAULT_LEARNER", "Store", "SQLiteStore"]
