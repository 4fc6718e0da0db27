"""What benchmark scripts share: median timings, one-thread children, provenance, Markdown tables, data caches.

The machine the figures come from is shared, so every timing is a median over repeats and every
results page says how loaded the machine was. Scripts import this as ``from _common import ...``:
run as ``python benchmarks/bench_x.py``, the script's folder is first on ``sys.path``.
"""
from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

from _provenance import BENCHMARKS, REPO, measures

__all__ = [
    "ONE_THREAD_VARIABLES",
    "git_commit",
    "load_average",
    "markdown_table",
    "median_time",
    "median_wall_cpu",
    "one_thread_env",
    "python_stdout",
    "data_dir",
    "write_results",
    "UCI_CACHE",
    "fused_uci_logs",
    "cached_windows",
]

# The thread-pool sizes of BLAS, OpenMP, numexpr and numba: pinned to 1 for "on one core" targets.
ONE_THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS",
                        "NUMEXPR_NUM_THREADS", "NUMBA_NUM_THREADS")


def median_time(fn: Callable[[], Any], repeats: int) -> tuple[float, Any]:
    """Median wall-clock seconds of ``fn()`` over ``repeats`` calls, and the last call's result.

    The result comes back so a benchmark can check or report what it timed without running it again.
    """
    times, result = [], None
    for _ in range(repeats):
        started = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - started)
    return statistics.median(times), result


def median_wall_cpu(fn: Callable[[], Any], repeats: int) -> tuple[float, float]:
    """Median wall-clock and median CPU seconds of ``fn()`` over ``repeats`` calls.

    CPU time of this process is the steadier figure for single-threaded work on a loaded machine.
    """
    wall, cpu = [], []
    for _ in range(repeats):
        wall_start, cpu_start = time.perf_counter(), time.process_time()
        fn()
        wall.append(time.perf_counter() - wall_start)
        cpu.append(time.process_time() - cpu_start)
    return statistics.median(wall), statistics.median(cpu)


def one_thread_env() -> dict[str, str]:
    """This process's environment with every thread pool in ``ONE_THREAD_VARIABLES`` set to 1."""
    return {**os.environ, **{name: "1" for name in ONE_THREAD_VARIABLES}}


def python_stdout(*args: str, env: dict[str, str] | None = None) -> str:
    """Standard output of a fresh ``python *args`` (this interpreter); raises if it fails.

    Memory is measured in a fresh process so that its peak is that run's own, not this one's.
    """
    return subprocess.run([sys.executable, *args], env=env, check=True, capture_output=True, text=True).stdout


def load_average() -> str:
    """The 1/5/15-minute load averages as ``"a/b/c"``, written beside timings taken on a shared machine."""
    return "/".join(f"{x:.1f}" for x in os.getloadavg())


def git_commit(cwd: Path) -> str:
    """Short hash of the checked-out commit (empty when ``cwd`` is not in a git checkout)."""
    return subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=cwd, capture_output=True,
                          text=True).stdout.strip()


def markdown_table(header: Sequence[str], rows: Iterable[Sequence[Any]], align: str = "") -> list[str]:
    """Lines of a Markdown table: the header, its rule, then one line per row (cells through ``str``).

    ``align`` has one letter per column, ``"l"`` (the default for missing letters) or ``"r"``.

    Examples
    --------
    >>> print("\\n".join(markdown_table(["what", "s"], [("a", 1.5)], align="lr")))
    | what | s |
    |---|---:|
    | a | 1.5 |
    """
    rules = ["---:" if align[i:i + 1] == "r" else "---" for i in range(len(header))]
    return ["| " + " | ".join(header) + " |", "|" + "|".join(rules) + "|",
            *("| " + " | ".join(str(cell) for cell in row) + " |" for row in rows)]


def write_results(path: Path, text: str) -> Path:
    """Write a results page atomically, its first line a provenance comment: full commit, command.

    ``<!-- bench: commit=<sha>[+dirty] command="..." -->`` is what ``tests/test_measured_figures.py``
    reads to decide whether a figure is older than the code it measures (``+dirty``: that code had
    uncommitted changes, so the figure belongs to no commit and counts as stale). The code is the
    script's ``MEASURES`` and the script (:func:`_provenance.measures`), as freshness is judged on, so
    an edit elsewhere (the README, another module) while a benchmark runs leaves its page clean.
    """
    path = Path(path)
    sha = subprocess.run(["git", "rev-parse", "HEAD"], cwd=REPO, capture_output=True, text=True).stdout.strip()
    script = Path(sys.argv[0]).resolve()
    measured = measures(script.name) if script.parent == BENCHMARKS and script.name.startswith("bench_") else (".",)
    # Results pages themselves may be modified (a run of several benchmarks): they are not code.
    dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no", "--", *measured,
                            ":!benchmarks/results"], cwd=REPO, capture_output=True, text=True).stdout.strip()
    command = " ".join(["python", str(script.relative_to(REPO)), *sys.argv[1:]])
    header = f'<!-- bench: commit={sha or "unknown"}{"+dirty" if dirty else ""} command="{command}" -->\n'
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(header + text)
    os.replace(tmp, path)
    return path


def data_dir(*parts: str) -> Path:
    """A folder of the real recordings: ``$STAIRSENSE_DATA/<parts>``, else ``../shared/data/<parts>``.

    Exits with one line naming the missing folder and the fix: a benchmark never quietly measures
    less than it says because an input is absent.
    """
    root = Path(os.environ.get("STAIRSENSE_DATA", REPO.parent / "shared" / "data"))
    path = root.joinpath(*parts)
    if not path.is_dir():
        raise SystemExit(f"{sys.argv[0]}: recordings not found at {path}; set STAIRSENSE_DATA to the folder "
                         "holding uci-hapt/ and oxford-stepcounter/ (see ../shared/data/README.md)")
    return path


def source_key(*parts: str) -> str:
    """A short hash of ``parts`` and of every source file under ``stream/`` and ``features/``.

    Benchmark caches of logs and window tables are keyed by it, so a change to the code that made
    them rebuilds them instead of feeding old windows to a figure that claims to measure new code.
    """
    import hashlib

    digest = hashlib.sha256("\0".join(parts).encode())
    for path in sorted(p for folder in ("stream", "features") for p in (REPO / folder).rglob("*.py")):
        digest.update(path.relative_to(REPO).as_posix().encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:16]


#: Fused UCI HAPT logs and window tables per configuration, shared by bench_table_12_2 and bench_export.
UCI_CACHE = Path(__file__).resolve().parent / "out" / "table_12_2"


def cached_pickle(folder: Path, name: str, build: Callable[[], Any], *key_parts: str):
    """``build()``, pickled once under ``folder/<name>_<source_key(*key_parts)>.pkl`` and loaded after.

    The file is written to a temporary name and renamed, so an interrupted run leaves no half cache.
    """
    import pickle

    path = folder / f"{name}_{source_key(*key_parts)}.pkl"
    if path.exists():
        with open(path, "rb") as f:
            return pickle.load(f)
    folder.mkdir(parents=True, exist_ok=True)
    value = build()
    with open(path.with_suffix(".tmp"), "wb") as f:
        pickle.dump(value, f, protocol=pickle.HIGHEST_PROTOCOL)
    os.replace(path.with_suffix(".tmp"), path)
    return value


def fused_uci_logs(data: Path):
    """UCI HAPT logs with virtual rotation vector and linear acceleration, cached (slow to fuse)."""
    from tqdm.auto import tqdm

    from stairsense.stream import load_uci_hapt, with_virtual_sensors

    def fuse():
        return [with_virtual_sensors(log) for log in tqdm(load_uci_hapt(data), desc="fusing", unit="log")]

    return cached_pickle(UCI_CACHE, "uci_fused", fuse, str(data))


def cached_windows(logs, config):
    """(X, y, groups) of ``window_dataset(logs, config)``, cached by the configuration's JSON."""
    import numpy as np

    from stairsense import window_dataset

    key = source_key(config.to_json(), f"{len(logs)} logs, {sum(len(log.t_ns) for log in logs)} samples")
    cache = UCI_CACHE / f"windows_{key}.npz"
    if not cache.exists():
        UCI_CACHE.mkdir(parents=True, exist_ok=True)
        ds = window_dataset(logs, config)
        np.savez(cache.with_suffix(".tmp.npz"), X=ds.X, y=ds.y, groups=ds.groups.astype(np.int64),
                 config=config.to_json())
        os.replace(cache.with_suffix(".tmp.npz"), cache)
    data = np.load(cache)
    return data["X"], data["y"], data["groups"]


def vote_per_log(decided, log_index, t_start_ns, t_end_ns, config, onset=None):
    """Each log's decisions (and the model's onset candidates, if any) voted as ``replay`` and the
    phone vote them, logs apart: :func:`stairsense.models.vote_decisions` with the configuration's vote."""
    from stairsense.models import vote_decisions

    return vote_decisions(decided, t_start_ns, t_end_ns, config.vote_steps, config.step_context_gap_s,
                          log_index=log_index, onset=onset)


def vote_windows(decided, ds, config, onset=None):
    """The decisions on a :class:`~stairsense.features.WindowDataset`'s windows voted per log
    (:func:`vote_per_log` with the dataset's logs and times)."""
    return vote_per_log(decided, ds.log_index, ds.t_start_ns, ds.t_end_ns, config, onset)
