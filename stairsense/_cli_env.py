"""Caches for an account that can write neither the package folder nor its home.

Three libraries under ``stairsense`` keep files of their own: numba its compiled code (beside the
package's sources, else in the user's cache folder ``$XDG_CACHE_HOME``, default ``~/.cache``), ONNX
Runtime a device identifier (in the same cache folder) and matplotlib its font cache (``$MPLCONFIGDIR``,
default ``~/.config/matplotlib``). Where none of these can be written (a service account, a read-only
home, a container), numba stops every command that compiles with a 39-line traceback, and ONNX Runtime
and matplotlib print warnings on stderr. The command line then points them at a folder of this user's
own under the temporary folder; where the defaults work, nothing changes.
"""
from __future__ import annotations

import os
import stat
from pathlib import Path

__all__ = ["use_writable_caches"]

# The variables set, and their folders inside the private one.
_SUBFOLDERS = {"XDG_CACHE_HOME": "cache", "MPLCONFIGDIR": "matplotlib"}


def _writable(folder: Path) -> bool:
    """Whether ``folder`` is, or could be made as, a folder this process writes: its nearest existing
    ancestor is a folder we may write (found without creating anything)."""
    for candidate in (folder, *folder.parents):
        if candidate.exists():
            return candidate.is_dir() and os.access(candidate, os.W_OK | os.X_OK)
    return False


def _private_folder() -> Path | None:
    """``stairsense-<uid>`` in the temporary folder, made by and open to this user alone; else (someone
    else made it, or opened it up, and cached code could then be anyone's) a fresh folder for this run."""
    import atexit
    import shutil
    import tempfile

    try:
        base = Path(tempfile.gettempdir()) / f"stairsense-{os.getuid()}"
        base.mkdir(mode=0o700, exist_ok=True)
        info = os.lstat(base)
        if stat.S_ISDIR(info.st_mode) and info.st_uid == os.getuid() and not info.st_mode & 0o077:
            return base
        fresh = Path(tempfile.mkdtemp(prefix="stairsense-"))
    except OSError:  # no temporary folder we can write either: leave the libraries to their defaults
        return None
    atexit.register(shutil.rmtree, fresh, ignore_errors=True)
    return fresh


def use_writable_caches(environ=None) -> dict:
    """Point the libraries' caches at a private folder when their defaults cannot be written.

    Sets ``XDG_CACHE_HOME`` (numba's cache of compiled code when the package folder is read-only, and ONNX
    Runtime's device identifier) and ``MPLCONFIGDIR`` (matplotlib) in ``environ`` (default ``os.environ``)
    only where the folder they name, or would default to, is not writable; before those libraries are
    imported, so they read the new values. Returns the variables set. POSIX only: elsewhere the
    libraries' defaults live in the user's profile.
    """
    environ = os.environ if environ is None else environ
    if os.name != "posix":
        return {}
    home = Path(environ.get("HOME") or os.path.expanduser("~"))
    wanted = {
        "XDG_CACHE_HOME": Path(environ.get("XDG_CACHE_HOME") or home / ".cache"),
        "MPLCONFIGDIR": Path(environ.get("MPLCONFIGDIR") or Path(environ.get("XDG_CONFIG_HOME") or home / ".config")
                             / "matplotlib"),
    }
    unwritable = [name for name, folder in wanted.items() if not _writable(folder)]
    private = _private_folder() if unwritable else None
    if private is None:
        return {}
    chosen = {name: str(private / _SUBFOLDERS[name]) for name in unwritable}
    try:
        for folder in chosen.values():
            Path(folder).mkdir(mode=0o700, exist_ok=True)
    except OSError:
        return {}
    environ.update(chosen)
    return chosen
