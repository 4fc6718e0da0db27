"""Re-exports a package resolves on first use, so importing it costs only what is used (PEP 562).

``stairsense --help`` and a replay need a fraction of what the packages re-export: importing every
module eagerly pulled in scikit-learn, skl2onnx, numba and pyarrow before a single argument was read.
It sits in the bottom layer, importing nothing of ours, so every package's ``__init__`` can use it.
"""
from __future__ import annotations

import importlib
import sys
from typing import Any, Callable

__all__ = ["lazy_exports"]


def lazy_exports(package: str, exports: dict[str, tuple[str, ...]]) -> tuple[Callable[[str], Any], Callable[[], list]]:
    """The module-level ``__getattr__`` and ``__dir__`` of ``package``, re-exporting ``exports`` lazily.

    Parameters
    ----------
    package : str
        The package's ``__name__``; it must already be in ``sys.modules`` (call this from its
        ``__init__``).
    exports : dict of str to tuple of str
        Module, relative to ``package`` (``"._config"``), to the names it provides; ``"alias=name"``
        exports the module's ``name`` as ``alias``.

    Returns
    -------
    __getattr__, __dir__
        ``__getattr__(name)`` imports the module providing ``name``, keeps the value in the
        package's namespace (so the next lookup is an ordinary attribute) and returns it; a name
        that is no export but a sub-module (``stairsense.models.mkl``) is imported, as an eager
        ``__init__`` would have done; anything else raises ``AttributeError``. ``__dir__`` lists
        the namespace and every export.

    Examples
    --------
    >>> import stairsense.stream as stream
    >>> "PipelineConfig" in dir(stream)
    True
    >>> stream.PipelineConfig is stream._config.PipelineConfig
    True
    >>> stream.no_such_name
    Traceback (most recent call last):
    AttributeError: module 'stairsense.stream' has no attribute 'no_such_name'
    """
    provider = {entry.partition("=")[0]: (module, entry.partition("=")[2] or entry)
                for module, names in exports.items() for entry in names}
    namespace = sys.modules[package].__dict__

    def __getattr__(name: str) -> Any:
        source = provider.get(name)
        if source is not None:
            module, attribute = source
            value = getattr(importlib.import_module(module, package), attribute)
            namespace[name] = value
            return value
        if not name.startswith("__"):
            try:
                return importlib.import_module(f"{package}.{name}")
            except ModuleNotFoundError as exc:
                if exc.name != f"{package}.{name}":
                    raise
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    def __dir__() -> list:
        return sorted({*namespace, *provider})

    return __getattr__, __dir__
