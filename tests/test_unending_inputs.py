"""A log that never ends is refused before it is read (issue 25: ``stairsense replay /dev/zero`` grew memory
without limit, and a 10 MB line was reported without its line number).

A reader takes regular files only (a device or a pipe may never end), and no line longer than any log
line can be: such a line is reported with its number."""
import gzip
import os
import subprocess
import sys

import pytest

from stairsense.stream import LogFormatError, read_log, simulate, steps_path, write_log

LONG = "9" * 10_000_000  # a 10 MB field


def _replay(path, timeout=60):
    """``stairsense replay path`` in a child process: a reader that blocks or grows fails by the timeout."""
    return subprocess.run([sys.executable, "-m", "stairsense.cli", "replay", str(path)], capture_output=True,
                          text=True, timeout=timeout)


def _read_steps(path, timeout=60):
    """``read_steps(path)`` in a child process, for the same reason; its error on stderr."""
    code = "import sys\nfrom stairsense.stream import read_steps\nread_steps(sys.argv[1])"
    return subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True, timeout=timeout)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes are POSIX")
def test_a_pipe_named_like_a_log_is_refused_without_waiting_for_it(tmp_path):
    fifo = tmp_path / "walk.csv"
    os.mkfifo(fifo)  # no writer: opening it would wait for ever
    done = _replay(fifo, timeout=60)
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert "walk.csv: is not a regular file (a device, pipe or socket" in done.stderr


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="needs /dev/zero")
def test_a_device_that_never_ends_is_refused(tmp_path):
    (tmp_path / "zero.csv").symlink_to("/dev/zero")
    for path in ("/dev/zero", tmp_path / "zero.csv"):
        with pytest.raises(LogFormatError, match="is not a regular file"):
            read_log(path)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes are POSIX")
def test_a_steps_sidecar_that_is_a_pipe_is_refused(tmp_path):
    log = write_log(simulate(minutes=0.2, seed=0), tmp_path / "walk.csv")
    steps_path(log).unlink()
    os.mkfifo(steps_path(log))
    done = _read_steps(log)  # opening a pipe without a writer would wait for ever
    assert "LogFormatError" in done.stderr
    assert "walk.csv.steps.csv: is not a regular file, not the steps sidecar of walk.csv" in done.stderr


@pytest.mark.parametrize("suffix", [".csv", ".csv.gz"])
@pytest.mark.parametrize("where, line", [("header", 1), ("meta", 1), ("data", 4)])
def test_a_line_longer_than_any_log_line_is_reported_with_its_number(tmp_path, suffix, where, line):
    rows = ["t_ns,ax,ay,az", "0,0,0,9.8", "20000000,0,0,9.8", "40000000,0,0,9.8", "60000000,0,0,9.8"]
    if where == "header":
        rows[0] += "x" * len(LONG)
    elif where == "meta":
        rows.insert(0, "# meta: " + LONG)
    else:
        rows[3] = "40000000,0,0," + LONG
    text = ("\n".join(rows) + "\n").encode()
    path = tmp_path / f"long{suffix}"
    path.write_bytes(gzip.compress(text, compresslevel=1) if suffix == ".csv.gz" else text)
    with pytest.raises(LogFormatError, match="the line is longer than 1,048,576 characters") as caught:
        read_log(path)
    assert caught.value.line == line
