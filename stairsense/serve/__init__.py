"""The personalisation server (``stairsense serve``): HTTP transport, authentication and durable
storage around the online multi-task learner of :mod:`stairsense.models.multitask`.

A layer of its own above ``export``: it may use the models, and only the command line imports it
(``tests/test_layering.py``)."""
from ._app import create_app
from ._engine import DEFAULT_LEARNER, ServeConfig, bootstrap_admin, n_features_of
from ._factory import ENV_VARIABLE, app_from_env, open_store
from ._http import KEEP_ALIVE_S, DeadlineProtocol
from ._store import SQLiteStore, Store

__all__ = ["create_app", "ServeConfig", "DEFAULT_LEARNER", "Store", "SQLiteStore", "bootstrap_admin",
           "n_features_of", "ENV_VARIABLE", "app_from_env", "open_store", "KEEP_ALIVE_S", "DeadlineProtocol"]
