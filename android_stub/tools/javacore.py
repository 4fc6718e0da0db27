"""Python side of the Java core's parity tests and benchmark: compile, feed, read back.

Used by ``tests/test_android_parity.py`` and ``benchmarks/bench_android_core.py`` (both put this
folder on ``sys.path``). The Java side is ``android_stub/core`` plus the drivers in
``android_stub/core/src/tools``.

Logs go to Java as raw binary (little-endian rows of int64 ``t_ns`` and 11 float64: accelerometer,
rotation vector, linear acceleration, air pressure, NaN where not recorded: ``RawSample`` in
android_stub/core), so no decimal round trip sits between the two languages' doubles.
"""
from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
SOURCES = (ROOT / "core" / "src" / "main" / "java", ROOT / "core" / "src" / "tools" / "java")
RAW_DTYPE = np.dtype([("t", "<i8"), ("v", "<f8", (11,))])
SAMPLE_DTYPE = np.dtype([("segment", "<i8"), ("index", "<i8"), ("t", "<i8"), ("x", "<f8", (6,)), ("vertical", "<f8")])


def java_missing() -> str | None:
    """Why the Java core cannot be built here, or None when ``javac`` and ``java`` are on PATH."""
    missing = [tool for tool in ("javac", "java") if shutil.which(tool) is None]
    return f"{' and '.join(missing)} not on PATH (install a JDK 11+)" if missing else None


def compile_core(out_dir: Path) -> Path:
    """Compile the core and its drivers with ``javac --release 11`` (Android's language level); returns the class dir."""
    files = sorted(str(p) for src in SOURCES for p in src.rglob("*.java"))
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(["javac", "--release", "11", "-d", str(out_dir), *files],
                          capture_output=True, text=True)
    if done.returncode:
        raise RuntimeError(f"javac failed on android_stub/core:\n{done.stderr}")
    return out_dir


def write_raw(log, path) -> None:
    """Write a SensorLog's accelerometer, rotation vector, linear acceleration and air pressure as
    raw binary rows to ``path`` (a path, or an open binary file to append to)."""
    rows = np.zeros(len(log), dtype=RAW_DTYPE)
    rows["t"] = log.t_ns
    rows["v"] = np.nan
    rows["v"][:, 0:3] = log.acc
    if log.rotvec is not None:
        rows["v"][:, 3:7] = log.rotvec
    if log.linacc is not None:
        rows["v"][:, 7:10] = log.linacc
    if log.pressure is not None:
        rows["v"][:, 10] = log.pressure
    rows.tofile(path)


@dataclass
class JavaRun:
    """What the Java pipeline produced on one log (see ``ParityDriver``)."""

    restarts: list[int]
    windows: list[tuple]  # (segment, start, stop, t_start, t_end, STATUS)
    samples: np.ndarray   # SAMPLE_DTYPE
    steps: int | None
    error: str | None
    step_context: np.ndarray | None = None  # (kept windows, 36) when the configuration has step_context > 0
    height: np.ndarray | None = None  # (kept windows, 7) when the configuration has barometer
    climb: tuple | None = None  # (up, down, climbed_m, descended_m, floors_up, floors_down): run with decisions


def read_run(prefix: Path) -> JavaRun:
    restarts, windows, steps, error, segment, context, height, climb = [], [], None, None, 0, [], [], None
    for line in Path(f"{prefix}.windows.txt").read_text().splitlines():
        kind, _, rest = line.partition(" ")
        if kind == "R":
            segment += 1
            restarts.append(int(rest))
        elif kind == "W":
            a, b, ts, te, status = rest.split()
            windows.append((segment, int(a), int(b), int(ts), int(te), status))
        elif kind == "X":
            context.append([float(v) for v in rest.split()])
        elif kind == "H":
            height.append([float(v) for v in rest.split()])
        elif kind == "M":
            up, down, climbed, descended, floors_up, floors_down = rest.split()
            climb = (int(up), int(down), float(climbed), float(descended), int(floors_up), int(floors_down))
        elif kind == "C":
            steps = int(rest)
        elif kind == "E":
            error = rest
    samples = np.fromfile(f"{prefix}.samples.bin", dtype=SAMPLE_DTYPE)
    # Each printed row carries its own width (the core's StepContext and HeightContext N_FEATURES),
    # so no copy of those constants here; the parity tests compare the shapes with Python's.
    step_context = np.array(context, dtype=np.float64) if context else None
    heights = np.array(height, dtype=np.float64) if height else None
    return JavaRun(restarts, windows, samples, steps, error, step_context, heights, climb)


class JavaCore:
    """One long-lived ``ParityDriver --serve`` JVM; :meth:`run` costs a file write, not a JVM start."""

    def __init__(self, classes: Path):
        self._process = subprocess.Popen(
            ["java", "-Xss8m", "-cp", str(classes), "org.stairsense.tools.ParityDriver", "--serve"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)

    def _request(self, *args: str, ok=("done 0",)) -> None:
        """One tab-separated request line; raises unless the driver answers one of ``ok``."""
        self._process.stdin.write("\t".join(args) + "\n")
        self._process.stdin.flush()
        answer = self._process.stdout.readline().strip()
        if answer not in ok:
            raise RuntimeError(f"ParityDriver failed ({answer!r}) on {args}")

    def run(self, config_json: Path, method: str, native_rate_hz: float, raw: Path, prefix: Path,
            decisions=None, onset=None) -> JavaRun:
        """The pipeline on a raw log; with ``decisions`` (one per kept window, 1 = STAIR) its classifier
        answers those, with ``onset`` (one bool per kept window; None: none) as whether each reaches
        the model's flight-onset threshold, and the run ends with a flush (``JavaRun.climb`` for a
        barometer model). The driver reads them as one int8 per window: decision | onset << 1."""
        extra = []
        if decisions is not None:
            decisions = np.asarray(decisions, dtype=np.int8)
            flags = np.zeros_like(decisions) if onset is None else np.asarray(onset, dtype=bool).astype(np.int8)
            (decisions | flags << 1).astype(np.int8).tofile(f"{prefix}.decisions.bin")
            extra = [f"{prefix}.decisions.bin"]
        self._request(str(config_json), method, repr(float(native_rate_hz)), str(raw), str(prefix), *extra,
                      ok=("done 0", "done 3"))
        return read_run(prefix)

    def vote(self, decided, t_start_ns, t_end_ns, steps: int, max_gap_s: float, folder: Path,
             onset=None) -> np.ndarray:
        """Java's ``StepVote`` over a stream of kept windows (decision -1: a flush), each at the
        flight-onset threshold where ``onset`` (one bool per row; None: none) says so:
        ``(row, decision)`` per window decided, ``row`` being the window or flush whose call decided
        it. The driver reads each window's decision | onset << 1; a flush stays -1."""
        decided = np.asarray(decided, dtype=np.int64)
        flags = np.zeros_like(decided) if onset is None else np.asarray(onset, dtype=bool).astype(np.int64)
        coded = np.where(decided < 0, -1, decided | flags << 1)
        rows = np.column_stack([coded, t_start_ns, t_end_ns]).astype("<i8")
        rows.tofile(Path(folder) / "vote.bin")
        self._request("vote", str(int(steps)), repr(float(max_gap_s)), str(Path(folder) / "vote.bin"),
                      str(Path(folder) / "voted.bin"))
        return np.fromfile(Path(folder) / "voted.bin", dtype="<i8").reshape(-1, 2)

    def close(self):
        self._process.stdin.close()
        self._process.wait(timeout=30)
        self._process.stdout.close()  # else its collection warns inside whichever test runs last
