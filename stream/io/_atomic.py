"""Writing a file atomically: readers see the old file or the new one, never half of one.

Every file stairsense writes (logs, models, exports, plots, caches, the server's admin token)
goes through :func:`atomic_write`, so a failure, Ctrl-C, ``kill`` or a closed terminal mid-write
leaves the previous file as it was and no temporary file behind.
"""
from __future__ import annotations

import contextlib
import os
import signal
import tempfile
import threading
from pathlib import Path

__all__ = ["atomic_write", "new_file_mode"]


def new_file_mode() -> int:
    """The permission bits ``open(path, "w")`` would give a new file under the current umask.

    ``tempfile.mkstemp`` creates files 0600 whatever the umask; a file renamed into place must get
    the mode the user expects from any other program instead.
    """
    mask = os.umask(0)  # the only way to read the umask is to set it; put it straight back
    os.umask(mask)
    return 0o666 & ~mask


# The signals that end a process without unwinding it: ``kill``'s default and the closed terminal (an
# ssh session that drops). SIGINT already raises KeyboardInterrupt; SIGKILL cannot be caught.
_ENDING_SIGNALS = tuple(getattr(signal, name) for name in ("SIGTERM", "SIGHUP") if hasattr(signal, name))


class _Terminated(BaseException):
    """An ending signal arrived during a write (a BaseException, like KeyboardInterrupt: no ``except
    Exception`` may swallow it)."""

    def __init__(self, signum):
        super().__init__(signum)
        self.signum = signum


def _raise_terminated(signum, frame):
    raise _Terminated(signum)


@contextlib.contextmanager
def _ending_signals_raise():
    """Turn SIGTERM and SIGHUP into :class:`_Terminated` for the block, so ``finally`` clauses run.

    Python's default action for them ends the process without unwinding. Only the main thread may set
    handlers; elsewhere nothing changes, and a signal that is ignored (or handled outside Python) is
    left alone.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {signum: signal.getsignal(signum) for signum in _ENDING_SIGNALS}
    previous = {signum: handler for signum, handler in previous.items() if handler not in (None, signal.SIG_IGN)}
    for signum in previous:
        signal.signal(signum, _raise_terminated)
    try:
        yield
    except _Terminated as stop:
        # Cleaned up: hand the signal to whoever had it (by default it ends the process, as if
        # we had never intercepted it).
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        os.kill(os.getpid(), stop.signum)
        raise
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def _hold_signals():
    """Block SIGINT and the ending signals (main thread, POSIX); return what :func:`_release_signals` restores."""
    if not hasattr(signal, "pthread_sigmask") or threading.current_thread() is not threading.main_thread():
        return None
    return signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, *_ENDING_SIGNALS})


def _release_signals(held) -> None:
    """Unblock what :func:`_hold_signals` blocked: a signal that came meanwhile is handled now."""
    if held is not None:
        signal.pthread_sigmask(signal.SIG_SETMASK, held)


def _fsync_path(path, flags=os.O_RDONLY) -> None:
    fd = os.open(path, flags)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


@contextlib.contextmanager
def atomic_write(path, *, mode: int | None = None):
    """Write ``path`` through a temporary file beside it, renamed over ``path`` when the block ends.

    The block receives the temporary file's path and writes it by any means (``open``,
    ``savefig``, ``onnx.save_model`` ...). When the block succeeds the file is flushed to disk
    (``fsync``), given its mode and renamed over ``path`` (atomic on one filesystem), and the
    folder is synced so the rename survives a power cut. When the block raises, or the process
    gets SIGINT, SIGTERM or SIGHUP meanwhile, the temporary file is removed and ``path`` is untouched.

    Parameters
    ----------
    path : str or Path
        The destination; its folder must exist.
    mode : int, optional
        Permission bits of the written file; default :func:`new_file_mode` (the umask's). Pass
        ``0o600`` for a secret: the temporary file is private from the start.

    Yields
    ------
    Path
        The temporary file: unique in ``path``'s folder, its name ending in ``path``'s suffix
        (ONNX Runtime and matplotlib choose the format by it).

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> with tempfile.TemporaryDirectory() as d:
    ...     with atomic_write(Path(d) / "note.txt") as tmp:
    ...         _ = tmp.write_text("hello")
    ...     print((Path(d) / "note.txt").read_text(), sorted(p.name for p in Path(d).iterdir()))
    hello ['note.txt']
    """
    path = Path(path)
    if not path.parent.is_dir():  # else mkstemp's error names the temporary file, which the user never chose
        raise FileNotFoundError(f"{path}: folder {path.parent} does not exist; create it first")
    with _ending_signals_raise():
        # A signal between mkstemp making the file and the cleanup below taking charge of it would leave
        # the file behind: the signals wait until the ``try`` is entered.
        held = _hold_signals()
        try:
            fd, name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=f".tmp{path.suffix}")
        except BaseException:
            _release_signals(held)
            raise
        tmp = Path(name)
        try:
            _release_signals(held)
            try:
                os.fchmod(fd, new_file_mode() if mode is None else mode)
            finally:
                os.close(fd)
            yield tmp
            _fsync_path(tmp)
            os.replace(tmp, path)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
    _fsync_path(path.parent, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
