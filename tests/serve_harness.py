"""Drive a real ``stairsense serve`` process: start it, fire uploads, ``kill -9`` it, check recovery.

Shared by ``tests/test_serve_crash.py`` (a few kill points, CI) and ``benchmarks/bench_serve.py``
(≥ 20 kill points, load test).  The oracle is independent of the server's incremental algebra:
a dense solve of ``(K + λW) c = y`` (spec dinuzzo §3.2) over exactly the acknowledged uploads.

Every uploaded row has a fresh random input, so each stored entry belongs to one upload: an upload
applied twice would merge into one entry of weight 1/2 (spec §3.3, duplicates), and an upload lost
would leave its input missing.  Both are counted from the server's ``GET /v1/examples``.
"""
from __future__ import annotations

import glob
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import tempfile
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import numpy as np

from stairsense.models.multitask import feature_map_from_spec

LEARNER = {
    "alpha": 0.5,
    "lam": 0.1,
    "task_kernel": {"name": "rbf", "gamma": 0.5},
    "feature_map": {"name": "rff", "n_features_in": 3, "n_components": 24, "gamma": 0.5, "seed": 0},
}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """A ``stairsense serve`` subprocess on a free loopback port."""

    def __init__(self, folder: Path, store: str | None = None, learner: dict = LEARNER, extra=()):
        self.folder = Path(folder)
        self.store = store or str(self.folder / "serve.db")
        self.learner_file = self.folder / "learner.json"
        self.learner_file.write_text(json.dumps(learner))
        self.token_file = self.folder / "admin-token"
        self.extra = list(extra)
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.process = None

    def start(self, timeout: float = 90.0) -> "Server":
        command = [sys.executable, "-m", "stairsense.cli", "serve", "--store", self.store, "--port", str(self.port),
                   "--learner", str(self.learner_file), "--admin-token-file", str(self.token_file),
                   "--publish-interval", "0", *self.extra]
        env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
        self.log = open(self.folder / "server.log", "ab")
        self.process = subprocess.Popen(command, stdout=self.log, stderr=subprocess.STDOUT, env=env)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"server exited with {self.process.returncode}: "
                                   f"{(self.folder / 'server.log').read_text()[-2000:]}")
            try:
                if httpx.get(self.url + "/v1/health", timeout=1.0).status_code == 200:
                    return self
            except httpx.TransportError:
                pass
            time.sleep(0.1)
        self.kill()
        raise RuntimeError(f"server did not answer within {timeout} s")

    def cpu_seconds(self) -> float:
        """User + system CPU seconds the server process has used so far (Linux /proc)."""
        fields = Path(f"/proc/{self.process.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def kill(self) -> None:
        """``kill -9``: no shutdown hooks, no flush."""
        if self.process is not None and self.process.poll() is None:
            os.kill(self.process.pid, signal.SIGKILL)
            self.process.wait()
        self.log.close()

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.kill()
        self.log.close()

    @property
    def admin_token(self) -> str:
        return self.token_file.read_text().strip()


@dataclass
class ClientOp:
    user: str
    idem: str
    kind: str  # "update" or "delete"
    X: np.ndarray | None = None
    y: np.ndarray | None = None
    key: int | None = None
    status: str = "pending"  # "acked" (200, or 409 on a retry), "unknown" (no answer), "refused"
    keys: list = field(default_factory=list)


class Workload:
    """Users, their tokens, and every operation sent with its fate."""

    def __init__(self, server: Server, n_users: int = 6, seed: int = 0):
        self.rng = np.random.default_rng(seed)
        self.users: dict[str, str] = {}
        self.ops: list[ClientOp] = []
        self.counter = 0
        admin = {"Authorization": f"Bearer {server.admin_token}"}
        for i in range(n_users):
            r = httpx.post(server.url + "/v1/users", json={"name": f"u{seed}x{i}"}, headers=admin, timeout=10)
            r.raise_for_status()
            self.users[f"u{seed}x{i}"] = r.json()["token"]
        self.lock = threading.Lock()

    def _new_op(self, user: str, rng) -> ClientOp:
        with self.lock:
            self.counter += 1
            idem = f"op-{self.counter}"
        acked = [op for op in self.ops if op.user == user and op.status == "acked" and op.kind == "update"]
        if acked and rng.random() < 0.1:
            return ClientOp(user, idem, "delete", key=int(rng.choice(acked[int(rng.integers(len(acked)))].keys)))
        rows = int(rng.integers(1, 4))
        d = LEARNER["feature_map"]["n_features_in"]
        return ClientOp(user, idem, "update", X=rng.normal(size=(rows, d)), y=rng.normal(size=rows))

    def send(self, client: httpx.Client, server: Server, op: ClientOp, retry: bool = False) -> int | None:
        """Send ``op``, record its fate, return the HTTP status (None: no answer)."""
        headers = {"Authorization": f"Bearer {self.users[op.user]}", "Idempotency-Key": op.idem}
        try:
            if op.kind == "update":
                r = client.post(server.url + "/v1/examples", headers=headers,
                                json={"X": op.X.tolist(), "y": op.y.tolist()})
            else:
                r = client.delete(f"{server.url}/v1/examples/{op.key}", headers=headers)
        except httpx.TransportError:
            op.status = "unknown"
            return None
        if r.status_code == 200:
            op.status, op.keys = "acked", r.json()["keys"]
        elif r.status_code == 409 and retry:  # applied before the crash, not acknowledged then
            op.status, op.keys = "acked", r.json()["applied"]["keys"]
        elif r.status_code == 404 and op.kind == "delete":
            op.status = "refused"  # its entry was already deleted by another (retried) op
        else:
            raise AssertionError(f"{op.kind} {op.idem}: HTTP {r.status_code} {r.text}")
        return r.status_code

    def fire(self, server: Server, seconds: float, threads: int = 4, on_started=None) -> None:
        """Each thread owns some users and sends their ops in order until ``seconds`` pass or the
        server stops answering (then it stops: a user's next op waits for the retry).
        ``on_started()`` runs once every thread has its connection ready."""
        names = list(self.users)
        ready = threading.Barrier(threads + 1)
        stop_at = time.monotonic() + seconds

        def run(k: int) -> None:
            rng = np.random.default_rng([k, self.counter])
            mine = names[k::threads]
            with httpx.Client(timeout=10) as client:
                client.get(server.url + "/v1/health")
                ready.wait()
                while time.monotonic() < stop_at:
                    op = self._new_op(mine[int(rng.integers(len(mine)))], rng)
                    with self.lock:
                        self.ops.append(op)
                    self.send(client, server, op)
                    if op.status == "unknown":
                        return

        workers = [threading.Thread(target=run, args=(k,)) for k in range(threads)]
        for t in workers:
            t.start()
        ready.wait()
        if on_started is not None:
            on_started()
        for t in workers:
            t.join()

    def examples(self, server: Server) -> dict[str, dict]:
        out = {}
        for name, token in self.users.items():
            r = httpx.get(server.url + "/v1/examples", headers={"Authorization": f"Bearer {token}"}, timeout=30)
            r.raise_for_status()
            out[name] = r.json()
        return out

    def audit(self, server: Server) -> dict:
        """After a restart and before any retry: acknowledged ops missing (lost), entries applied
        twice (duplicated), and unacknowledged uploads that were committed anyway."""
        stored = self.examples(server)
        weights = {name: {tuple(x): w for x, w in zip(e["X"], e["w"])} for name, e in stored.items()}
        # Inputs are fresh random vectors, so a key names one uploaded row for good.  A row that a
        # delete may have removed (acknowledged or unanswered) is not expected to be there.
        maybe_deleted = {(op.user, op.key) for op in self.ops if op.kind == "delete" and op.status != "refused"}
        lost = duplicated = applied_unacked = 0
        for op in self.ops:
            if op.kind == "delete":
                lost += op.status == "acked" and op.key in stored[op.user]["keys"]
                continue
            rows = [tuple(x) for x in op.X.tolist()]
            found = [row in weights[op.user] for row in rows]
            if op.status == "acked":
                lost += sum(not f for f, key in zip(found, op.keys) if (op.user, key) not in maybe_deleted)
            elif any(found):
                applied_unacked += 1
            duplicated += sum(weights[op.user].get(row, 1.0) != 1.0 for row in rows)
        return {"acked": sum(op.status == "acked" for op in self.ops),
                "unknown": sum(op.status == "unknown" for op in self.ops),
                "lost": int(lost), "duplicated": int(duplicated), "applied_unacked": applied_unacked}

    def retry_unknown(self, server: Server) -> int:
        """Resend every unanswered op with its idempotency key; returns how many the server had
        already applied (answered 409)."""
        already = 0
        with httpx.Client(timeout=30) as client:
            for op in self.ops:
                if op.status == "unknown":
                    already += self.send(client, server, op, retry=True) == 409
        return already

    def replay_acked(self, server: Server, count: int = 5) -> int:
        """Resend a few acknowledged ops: each must be refused with 409; returns how many were not."""
        wrong = 0
        acked = [op for op in self.ops if op.status == "acked"]
        with httpx.Client(timeout=30) as client:
            for op in acked[-count:]:
                headers = {"Authorization": f"Bearer {self.users[op.user]}", "Idempotency-Key": op.idem}
                if op.kind == "update":
                    r = client.post(server.url + "/v1/examples", headers=headers,
                                    json={"X": op.X.tolist(), "y": op.y.tolist()})
                else:
                    r = client.delete(f"{server.url}/v1/examples/{op.key}", headers=headers)
                wrong += r.status_code != 409
        return wrong

    # ---------------------------------------------------------------- oracle
    def dense_predictions(self, probes: np.ndarray) -> dict[str, np.ndarray]:
        """Predictions of the dense solve over exactly the acknowledged ops, in send order per user."""
        rows: list[tuple[str, np.ndarray, float, int]] = []
        for op in self.ops:
            if op.status != "acked":
                continue
            if op.kind == "update":
                rows += [(op.user, x, yv, key) for x, yv, key in zip(op.X, op.y, op.keys)]
            else:
                rows = [r for r in rows if not (r[0] == op.user and r[3] == op.key)]
        return dense_solve_predict(rows, probes, list(self.users))

    def server_predictions(self, server: Server, probes: np.ndarray) -> dict[str, np.ndarray]:
        out = {}
        for name, token in self.users.items():
            r = httpx.post(server.url + "/v1/predict", headers={"Authorization": f"Bearer {token}"},
                           json={"X": probes.tolist()}, timeout=30)
            r.raise_for_status()
            out[name] = np.array(r.json()["y"])
        return out


def dense_solve_predict(rows, probes, users, learner=LEARNER) -> dict[str, np.ndarray]:
    """``g_j(probes)`` from a direct solve of ``(K + λW) c = y``, ``K = α φφᵀ + (1−α) δ_tt' K̃``
    (spec §3.2, every row weight 1), without any of the learner's incremental algebra."""
    alpha, lam, gamma = learner["alpha"], learner["lam"], learner["task_kernel"]["gamma"]
    phi = feature_map_from_spec(learner["feature_map"])

    def ktilde(A, B):
        return np.exp(-gamma * ((A[:, None, :] - B[None, :, :]) ** 2).sum(-1))

    if not rows:
        return {u: np.zeros(len(probes)) for u in users}
    tasks = np.array([r[0] for r in rows])
    X = np.array([r[1] for r in rows])
    y = np.array([r[2] for r in rows])
    same = tasks[:, None] == tasks[None, :]
    Phi = phi(X)
    K = alpha * Phi @ Phi.T + (1 - alpha) * same * ktilde(X, X)
    c = np.linalg.solve(K + lam * np.eye(len(y)), y)
    shared = alpha * phi(probes) @ (Phi.T @ c)
    return {u: shared + (1 - alpha) * ktilde(probes, X[tasks == u]) @ c[tasks == u] for u in users}


def crash_cycles(folder: Path, kills: int, fire_seconds=(0.3, 1.5), seed: int = 0, store: str | None = None,
                 extra=(), progress=None) -> list[dict]:
    """Start a server, then ``kills`` times: fire uploads, ``kill -9`` at a random moment, restart,
    audit (lost / duplicated before any retry), retry the unanswered ops, check that replayed
    keys are refused, and compare predictions with the dense solve.  One dict per kill."""
    rng = np.random.default_rng(seed)
    server = Server(folder, store=store, extra=extra).start()
    probes = np.random.default_rng(seed + 1).normal(size=(7, LEARNER["feature_map"]["n_features_in"]))
    workload = Workload(server, seed=seed)
    results = []
    try:
        for k in range(kills):
            killer = threading.Timer(float(rng.uniform(*fire_seconds)), server.kill)
            workload.fire(server, seconds=fire_seconds[1] + 5.0, on_started=killer.start)
            killer.join()
            started = time.monotonic()
            server.start()
            restart_s = time.monotonic() - started
            restart_cpu_s = server.cpu_seconds()
            audit = workload.audit(server)
            audit["committed_before_retry"] = workload.retry_unknown(server)
            audit["replay_not_refused"] = workload.replay_acked(server)
            expected = workload.dense_predictions(probes)
            got = workload.server_predictions(server, probes)
            audit["max_abs_error"] = max(float(np.max(np.abs(expected[u] - got[u]))) for u in expected)
            audit["restart_s"], audit["restart_cpu_s"] = restart_s, restart_cpu_s
            audit["ops"] = len(workload.ops)
            results.append(audit)
            if progress is not None:
                progress(k, audit)
    finally:
        server.stop()
    return results


@contextmanager
def postgres_cluster():
    """A throwaway PostgreSQL server from the Debian packages on a free loopback port; yields a
    function ``database(name) -> URL`` that creates a database.  Raises RuntimeError with the
    reason when it cannot start (no binaries, no ``postgres`` user to drop root to, ...)."""
    initdbs = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    if not initdbs:
        raise RuntimeError("no PostgreSQL server binaries (apt-get install postgresql)")
    bindir = Path(initdbs[-1]).parent
    folder = Path(tempfile.mkdtemp(prefix="stairsense-pg-"))
    runas = []
    if os.geteuid() == 0:  # the server refuses to run as root: drop to the package's user
        try:
            shutil.chown(folder, "postgres", "postgres")
        except (LookupError, PermissionError) as exc:
            raise RuntimeError(f"running as root and cannot hand a folder to user postgres: {exc}") from None
        runas = ["runuser", "-u", "postgres", "--"]
    port = free_port()

    def run(*command):
        done = subprocess.run([*runas, *map(str, command)], capture_output=True, text=True, timeout=120)
        if done.returncode != 0:
            raise RuntimeError(f"{Path(str(command[0])).name} failed: {(done.stderr or done.stdout).strip()[-500:]}")

    data = folder / "data"
    try:
        run(bindir / "initdb", "-D", data, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-instructions")
        run(bindir / "pg_ctl", "-D", data, "-l", folder / "server.log", "-w", "-t", "60", "-o",
            f"-c listen_addresses=127.0.0.1 -c port={port} -c unix_socket_directories={folder}", "start")
    except (RuntimeError, OSError, subprocess.TimeoutExpired) as exc:
        shutil.rmtree(folder, ignore_errors=True)
        raise RuntimeError(str(exc)) from None
    base = f"postgresql://postgres@127.0.0.1:{port}"

    def database(name: str) -> str:
        import psycopg

        with psycopg.connect(base + "/postgres", autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return f"{base}/{name}"

    try:
        yield database
    finally:
        subprocess.run([*runas, str(bindir / "pg_ctl"), "-D", str(data), "-m", "immediate", "stop"],
                       capture_output=True, timeout=60)
        shutil.rmtree(folder, ignore_errors=True)
