"""Every docstring example of the package runs and prints what it shows.

The modules are found from pyproject.toml (the package list and its ``package-dir`` mapping), so a
new module joins without being listed here, and each is imported under its installed name
(``stairsense.models.mkl._komd``, never ``models.mkl._komd``): pytest's ``--doctest-modules``
would import the top-level folders under their folder names and load the package twice.
"""

import doctest
import importlib
import io
import sys
from pathlib import Path

import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:  # the package depends on tomli below 3.11
    import tomli as tomllib

REPO = Path(__file__).resolve().parents[1]


def _package_folder(package: str, package_dir: dict[str, str]) -> Path:
    """The folder of ``package`` under setuptools' ``package-dir`` rule: the longest mapped prefix wins."""
    parts = package.split(".")
    for cut in range(len(parts), 0, -1):
        prefix = ".".join(parts[:cut])
        if prefix in package_dir:
            return REPO.joinpath(package_dir[prefix], *parts[cut:])
    return REPO.joinpath(*parts)


def modules_with_examples() -> list[str]:
    """Dotted names of the package's modules whose source holds a ``>>>`` example."""
    setuptools = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]
    names = []
    for package in setuptools["packages"]:
        for path in sorted(_package_folder(package, setuptools["package-dir"]).glob("*.py")):
            if ">>>" in path.read_text(encoding="utf-8"):
                names.append(package if path.stem == "__init__" else f"{package}.{path.stem}")
    return names


MODULES = modules_with_examples()


def test_the_module_walk_sees_every_package():
    # A wrong package-dir reading would silently find nothing to run in a whole subpackage.
    assert {name.split(".")[1] for name in MODULES} >= {"stream", "features", "models", "export"}


# An example that warns shows the reader a fit that did not converge or an input it should not copy.
@pytest.mark.filterwarnings("error")
@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples_run(name):
    module = importlib.import_module(name)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    report = io.StringIO()
    for test in doctest.DocTestFinder().find(module, name):
        runner.run(test, out=report.write)
    result = runner.summarize(verbose=False)
    # A ">>>" that the finder does not reach (a comment, a string outside a docstring) never runs.
    assert result.attempted > 0, f"{name} has '>>>' in its source but no example that doctest finds"
    assert result.failed == 0, report.getvalue()
