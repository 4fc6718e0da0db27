"""An account that can write neither the package folder nor its home runs every command without a
traceback or a library's warning (issue 25: numba's compiled-code cache stopped commands with a 39-line
traceback; ONNX Runtime printed telemetry warnings, matplotlib its own).

The children run the real command line with ``HOME`` a file (nothing below it can be created) and numba
told to use its user-wide cache only (``NUMBA_CACHE_LOCATOR_CLASSES``): what it does when the package's
``__pycache__`` is read-only, which a test running as root could not arrange otherwise.
"""
from __future__ import annotations

import os
from pathlib import Path
import stat
import subprocess
import sys

import pytest

from stairsense._cli_env import use_writable_caches
from stairsense.stream import simulate, write_log

pytestmark = pytest.mark.skipif(os.name != "posix", reason="the caches' defaults are POSIX paths")


@pytest.fixture
def homeless(tmp_path):
    """The environment of an account whose home cannot be written, and its temporary folder."""
    (tmp_path / "home").write_text("a file, so nothing can be created below it")
    (tmp_path / "tmp").mkdir()
    env = {k: v for k, v in os.environ.items()
           if k not in ("XDG_CACHE_HOME", "XDG_CONFIG_HOME", "MPLCONFIGDIR", "NUMBA_CACHE_DIR")}
    env.update(HOME=str(tmp_path / "home"), TMPDIR=str(tmp_path / "tmp"), NUMBA_CACHE_LOCATOR_CLASSES="UserWideCacheLocator")
    return env


def _stairsense(argv, env, cwd):
    return subprocess.run([sys.executable, "-m", "stairsense.cli", *argv], env=env, cwd=cwd, capture_output=True,
                          text=True, timeout=300)


def test_a_command_that_compiles_runs_without_a_writable_cache(homeless, tmp_path):
    """serve imports the numba-compiled learner, then refuses the address: exit 2 and its one line."""
    done = _stairsense(["serve", "--store", str(tmp_path / "s.db"), "--host", "0.0.0.0"], homeless, tmp_path)
    assert done.returncode == 2, done.stderr
    assert done.stderr.count("\n") == 1 and "--allow-remote" in done.stderr and "RuntimeError" not in done.stderr
    private = tmp_path / "tmp" / f"stairsense-{os.getuid()}"
    assert stat.S_IMODE(private.stat().st_mode) == 0o700 and (private / "cache" / "numba").is_dir()


def test_onnx_runtime_and_matplotlib_say_nothing(homeless, tmp_path):
    log = write_log(simulate(minutes=0.2, seed=0), tmp_path / "w.csv")
    (tmp_path / "broken.onnx").write_bytes(b"\x08\x07" + b"\x00" * 200)
    done = _stairsense(["replay", str(log), "--model", str(tmp_path / "broken.onnx")], homeless, tmp_path)
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr  # ONNX Runtime loaded, and quiet
    assert "broken.onnx: not an ONNX model" in done.stderr
    done = _stairsense(["replay", str(log), "--plot", str(tmp_path / "p.png")], homeless, tmp_path)
    assert done.returncode == 0 and done.stderr == "" and (tmp_path / "p.png").is_file()


def test_writable_defaults_are_left_alone(tmp_path):
    (tmp_path / "home").mkdir()
    env = {"HOME": str(tmp_path / "home")}
    assert use_writable_caches(env) == {} and env == {"HOME": str(tmp_path / "home")}


def test_a_private_folder_someone_else_opened_is_not_used(tmp_path, monkeypatch):
    """Cached compiled code is run: a folder others can write is never taken for ours."""
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    shared = tmp_path / f"stairsense-{os.getuid()}"
    shared.mkdir()
    shared.chmod(0o777)
    env = {"HOME": str(tmp_path / "nowhere" / "file")}
    (tmp_path / "nowhere").write_text("")
    chosen = use_writable_caches(env)
    assert set(chosen) == {"XDG_CACHE_HOME", "MPLCONFIGDIR"}
    # By path, not by string prefix: a fresh folder 'stairsense-0ab…' starts with 'stairsense-0' one run in 37.
    assert all(shared not in Path(value).parents and os.path.isdir(value) for value in chosen.values())
