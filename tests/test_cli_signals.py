"""A signal that ends ``stairsense`` while it writes leaves no temporary file (issue 25: SIGTERM while
``simulate`` or ``convert`` wrote left its 13–85 MB ``.tmp`` file; SIGINT cleaned up).

Each case runs the real command in a child process, waits until its temporary file exists, sends the
signal and checks that the child died of it and left no temporary file behind.
"""
from __future__ import annotations

import signal
import subprocess
import sys
import time

import numpy as np
import pytest

from stairsense.stream import SensorLog, write_log


def _run_until_writing(argv, folder, name):
    """Start ``stairsense argv`` and return it once the temporary file of ``name`` appears in ``folder``."""
    child = subprocess.Popen([sys.executable, "-m", "stairsense.cli", *argv], stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while not list(folder.glob(f".{name}.*.tmp*")):
        assert child.poll() is None, f"{argv} ended before writing: {child.stderr.read()}"
        assert time.monotonic() < deadline, f"{argv} wrote no temporary file in 120 s"
        time.sleep(0.01)
    return child


@pytest.fixture(scope="module")
def big_log(tmp_path_factory):
    """A plain CSV log of a million samples: converting it to .csv.gz takes a few seconds."""
    n = 1_000_000
    acc = np.random.default_rng(0).normal([0, 0, 9.8], 0.5, (n, 3))
    return write_log(SensorLog(np.arange(n, dtype=np.int64) * 20_000_000, acc),
                     tmp_path_factory.mktemp("input") / "in.csv")


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP], ids=["SIGTERM", "SIGHUP"])
@pytest.mark.parametrize("command", ["simulate", "convert"])
def test_a_signal_while_a_command_writes_leaves_no_temporary_file(command, signum, tmp_path, big_log):
    name = "out.csv.gz"
    argv = (["simulate", "--minutes", "60", "--out", str(tmp_path / name)] if command == "simulate"
            else ["convert", str(big_log), str(tmp_path / name)])
    # On a loaded machine the command may finish writing between the temporary file's appearance and
    # the signal: that run exercised nothing, so it is run again (a few times at most).
    for _ in range(3):
        child = _run_until_writing(argv, tmp_path, name)
        child.send_signal(signum)
        child.wait(timeout=60)
        if child.returncode != 0:
            break
        (tmp_path / name).unlink()
    assert child.returncode == -signum, child.stderr.read()
    # Under load the signal may land just after a file was renamed into place: a whole file may then
    # stay (atomic_write never shows half of one), a temporary file never.
    assert [p.name for p in tmp_path.iterdir() if ".tmp" in p.name] == []
