"""Every name a subpackage lists in __all__ exists (as sklearn's test_import_all_consistency)."""
import importlib

import pytest

SUBPACKAGES = ["stairsense", "stairsense.stream", "stairsense.features", "stairsense.models", "stairsense.models.multitask",
               "stairsense.export"]


@pytest.mark.parametrize("name", SUBPACKAGES)
def test_all_names_exist(name):
    module = importlib.import_module(name)
    missing = [n for n in module.__all__ if not hasattr(module, n)]
    assert not missing, f"{name}.__all__ lists names that do not exist: {missing}"
