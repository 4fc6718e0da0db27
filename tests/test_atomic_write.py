"""``stairsense.stream.atomic_write``: the one way every file is written (README: "Files are written
atomically with the permissions of your umask")."""
from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
import threading
import time

import pytest

from stairsense.stream import atomic_write

# Writes forever in small pieces once the temporary file exists, so a signal lands mid-write. A shell
# without job control starts background jobs with SIGINT ignored, and Python keeps an inherited
# SIG_IGN: the child takes Ctrl-C the way an interactive program does.
_LONG_WRITE = """
import signal, sys, time
signal.signal(signal.SIGINT, signal.default_int_handler)
from stairsense.stream import atomic_write
with atomic_write(sys.argv[1]) as tmp, open(tmp, "wb") as f:
    print(tmp, flush=True)
    while True:
        f.write(b"x" * 4096)
        time.sleep(0.001)
"""


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP])
def test_a_signal_mid_write_leaves_neither_target_nor_temporary_file(tmp_path, signum):
    target = tmp_path / "out.bin"
    child = subprocess.Popen([sys.executable, "-c", _LONG_WRITE, str(target)], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
    tmp = child.stdout.readline().strip()
    assert tmp and os.path.dirname(tmp) == str(tmp_path)
    time.sleep(0.2)
    child.send_signal(signum)
    child.wait(timeout=30)
    assert child.returncode == -signum  # the signal still ends the process, as it would without us
    assert sorted(tmp_path.iterdir()) == []


def test_sigterm_after_the_write_keeps_the_default_action(tmp_path):
    """The handlers live only while a write runs: afterwards SIGTERM and SIGHUP are Python's defaults again,
    and a signal that was ignored stays ignored."""
    script = ("import sys, signal\nfrom stairsense.stream import atomic_write\n"
              "signal.signal(signal.SIGHUP, signal.SIG_IGN)\n"
              "with atomic_write(sys.argv[1]) as tmp:\n    tmp.write_text('done')\n"
              "    assert signal.getsignal(signal.SIGHUP) == signal.SIG_IGN\n"
              "assert signal.getsignal(signal.SIGTERM) == signal.SIG_DFL\n"
              "assert signal.getsignal(signal.SIGHUP) == signal.SIG_IGN\n")
    subprocess.run([sys.executable, "-c", script, str(tmp_path / "x")], check=True)
    assert (tmp_path / "x").read_text() == "done"


def test_an_exception_keeps_the_old_file(tmp_path):
    target = tmp_path / "model.bin"
    target.write_bytes(b"old")
    with pytest.raises(RuntimeError, match="half"):
        with atomic_write(target) as tmp:
            tmp.write_bytes(b"new, half")
            raise RuntimeError("half written")
    assert target.read_bytes() == b"old"
    assert [p.name for p in tmp_path.iterdir()] == ["model.bin"]


def test_the_temporary_file_is_unique_and_keeps_the_suffix(tmp_path):
    target = tmp_path / "stairs.ort"
    with atomic_write(target) as first, atomic_write(target) as second:
        assert first != second
        assert first.parent == second.parent == tmp_path
        assert first.name.endswith(".ort") and second.name.endswith(".ort")
        first.write_text("1")
        second.write_text("2")
    assert target.read_text() == "1"  # the outer block ends last


@pytest.mark.parametrize("mask", [0o022, 0o077, 0o002])
def test_the_file_follows_the_umask_unless_a_mode_is_given(tmp_path, mask):
    old = os.umask(mask)
    try:
        with atomic_write(tmp_path / "plain") as tmp:
            tmp.write_text("x")
        with atomic_write(tmp_path / "secret", mode=0o600) as tmp:
            tmp.write_text("x")
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "plain").stat().st_mode) == 0o666 & ~mask
    assert stat.S_IMODE((tmp_path / "secret").stat().st_mode) == 0o600


def test_a_write_outside_the_main_thread_works_without_a_handler(tmp_path):
    errors = []

    def write():
        try:
            with atomic_write(tmp_path / "t") as tmp:
                tmp.write_text("from a thread")
        except BaseException as exc:  # reported to the main thread below
            errors.append(exc)

    thread = threading.Thread(target=write)
    thread.start()
    thread.join()
    assert errors == [] and (tmp_path / "t").read_text() == "from a thread"


def test_a_missing_folder_is_named_not_the_temporary_file(tmp_path):
    with pytest.raises(FileNotFoundError) as caught:
        with atomic_write(tmp_path / "no" / "out.bin") as tmp:
            tmp.write_text("never")
    assert str(caught.value) == f"{tmp_path}/no/out.bin: folder {tmp_path}/no does not exist; create it first"
