"""What a command imports before it does anything: the CLI's parser, ``import stairsense`` and a replay
leave the heavy libraries alone (README "Measured": start-up), and the lazy re-exports behave as the
eager ones did.

Each check runs in a fresh interpreter and reads ``sys.modules`` afterwards, so it is about what gets
imported, never about how long it takes.
"""
from __future__ import annotations

import doctest
import json
import subprocess
import sys

import pytest

# What a parser, ``import stairsense`` or a replay never needs (each costs 0.05–1 s or tens of MiB).
HEAVY = ("sklearn", "skl2onnx", "numba", "onnx", "onnxruntime", "scipy", "pyarrow", "fastapi", "uvicorn", "pandas",
         "matplotlib", "dask", "river")
# A replay reads the log with pyarrow; the rest it never needs.
REPLAY_NEVER = tuple(name for name in HEAVY if name != "pyarrow")


def imported_after(code: str, watch=HEAVY) -> list[str]:
    """The packages of ``watch`` in ``sys.modules`` after a fresh interpreter runs ``code``."""
    probe = f"{code}\nimport json, sys\nprint(json.dumps(sorted({{m.split('.')[0] for m in sys.modules}} & {set(watch)!r})))"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


@pytest.mark.parametrize("code", [
    "import stairsense",
    "import stairsense.cli; stairsense.cli.build_parser()",
    "import stairsense.stream, stairsense.models, stairsense.export, stairsense.export.energy",
    "import stairsense.models.multitask",
    "from stairsense import PipelineConfig; from stairsense.stream import REPAIRS, LogRepairedWarning",
], ids=["import stairsense", "build the parser", "import every package", "the multi-task package",
         "the parser's names"])
def test_heavy_libraries_wait_until_used(code):
    assert imported_after(code) == []


@pytest.mark.parametrize("argv", [["--help"], ["replay", "--help"], ["import", "--help"], ["energy", "optimise", "--help"],
                                  ["train", "--help"], ["evaluate", "--help"],
                                  ["--version"]])
def test_help_imports_no_heavy_library(argv):
    """Not even NumPy (half of a start-up's time): the parser needs names and defaults, never arrays."""
    code = f"import contextlib, io, stairsense.cli\nwith contextlib.suppress(SystemExit), contextlib.redirect_stdout(io.StringIO()):\n    stairsense.cli.main({argv!r})"
    assert imported_after(code, (*HEAVY, "numpy")) == []


@pytest.mark.parametrize("suffix", [".csv.gz", ".parquet"])
def test_replay_imports_only_what_it_runs(tmp_path, suffix):
    """pandas too: Arrow's own ``to_numpy`` imports it on first use wherever it is installed."""
    from stairsense.stream import simulate, write_log

    path = write_log(simulate(minutes=0.5, rate_hz=50, seed=0), tmp_path / f"log{suffix}")
    code = f"from stairsense.cli import main\nassert main(['replay', {str(path)!r}, '--json']) == 0"
    assert imported_after(code, REPLAY_NEVER) == []


def test_a_lazy_name_is_the_object_its_module_defines():
    import stairsense
    import stairsense.models
    import stairsense.stream
    from stairsense.stream import _config

    assert stairsense.PipelineConfig is stairsense.stream.PipelineConfig is _config.PipelineConfig
    assert set(stairsense.stream.__all__) <= set(dir(stairsense.stream))
    assert set(stairsense.models.__all__) <= set(dir(stairsense.models))
    with pytest.raises(AttributeError, match="has no attribute 'no_such_name'"):
        stairsense.models.no_such_name
    assert stairsense.models.mkl.KOMDClassifier is stairsense.models.KOMDClassifier  # a sub-package, as before


def test_one_multi_task_learner_does_not_load_the_others():
    """The server's learner (numba-compiled) needs neither scikit-learn (the estimators, OKL, ADMM) nor river."""
    code = "from stairsense.models.multitask import OnlineMultiTaskLearner"
    assert imported_after(code, ("sklearn", "river")) == []


def test_simulate_stays_the_function_whatever_imports_the_sub_package_first():
    code = ("import stairsense.stream.simulate._device\nimport stairsense.stream as s\n"
            "from stairsense.stream.simulate._simulate import simulate\nassert s.simulate is simulate")
    assert imported_after(code, ()) == []


def test_using_the_export_package_registers_the_converters():
    """Importing ``stairsense.export`` is free; its first name used registers the skl2onnx converters."""
    code = ("import stairsense.export, sys\nassert 'skl2onnx' not in sys.modules\n"
            "stairsense.export.PRECISIONS\n"
            "from skl2onnx.common._registration import get_converter\n"
            "assert get_converter('StairsenseKOMDClassifier') is not None")
    assert imported_after(code, ()) == []


def test_lazy_exports_doctest():
    from stairsense.stream import lazy

    assert doctest.testmod(lazy).failed == 0
