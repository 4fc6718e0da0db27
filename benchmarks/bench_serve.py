"""The personalisation server on loopback (issue 13): load test and ``kill -9`` crash test.

Part 1, load test: a real ``stairsense serve`` process (default learner: feature-map mode, 79
features, 256 random Fourier features; SQLite WAL, ``synchronous=FULL``) and ``--clients``
concurrent keep-alive connections that upload fresh labelled examples (1 or 10 per request, each
for a user drawn from ``--users``) with a fresh idempotency key, for ``--seconds``, either back
to back (closed loop: the most the server sustains) or at a fixed offered rate (open loop,
latency from the scheduled send time).  Reported: acknowledged (HTTP 200, so durable) updates
per second, p50/p99 request latency, and the CPU of server and load generator.  Targets:
≥ 2,000 updates/s, p99 < 50 ms.  The load generator is a minimal HTTP/1.1 client on uvloop in this
process (the server is another process), so the two share the machine's 2 cores with whatever
else runs; in open loop it builds every request before the clock starts and reports how late it
sent them (its own lag, part of every latency it reports).  Peers, side by side: the same kind of
updates applied in-process by the learner alone (no HTTP, no durability), and SQLite
``synchronous=FULL`` commits of one op each (no group commit).

Part 2, crash test: ``--kills`` cycles of fire / ``kill -9`` at a random moment / restart /
audit (``tests/serve_harness.py``): acknowledged ops lost and ops applied twice (both must be 0),
and the largest difference between the restarted server's predictions and a dense solve over the
acknowledged ops.

Run: ``.venv/bin/python benchmarks/bench_serve.py`` (``--seconds 60 --clients 100 --users 2000 --kills 20``).
Writes ``benchmarks/results/serve.md``.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path

import httpx
import numpy as np
import uvloop

from _common import git_commit, load_average, markdown_table, write_results
# The code these figures measure: a change there makes them stale (tests/test_measured_figures.py).
MEASURES = ("stairsense/serve/", "models/multitask/_online.py", "models/multitask/_online_compiled.py",
            "models/multitask/_feature_maps.py")

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))  # the crash harness is shared with tests/test_serve_crash.py

from serve_harness import Server, crash_cycles  # noqa: E402

from stairsense.models.multitask import OnlineMultiTaskLearner  # noqa: E402
from stairsense.serve import DEFAULT_LEARNER  # noqa: E402

D = DEFAULT_LEARNER["feature_map"]["n_features_in"]
# The learner's cost apart: the same server with a linear shared feature map (r = 80) instead of
# 256 random Fourier features shows what transport + durability alone sustain.
LEARNERS = {"default": DEFAULT_LEARNER,
            "linear": {**DEFAULT_LEARNER, "feature_map": {"name": "linear", "n_features_in": D, "bias": 1.0}}}


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of a process so far (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _request(rng, tokens: list[str], name: str, i: int, rows: int) -> bytes:
    """One upload of ``rows`` fresh examples for a user drawn at random, with a fresh idempotency key."""
    body = json.dumps({"X": rng.uniform(-1, 1, size=(rows, D)).tolist(), "y": rng.normal(size=rows).tolist()}).encode()
    token = tokens[int(rng.integers(len(tokens)))]
    head = (f"POST /v1/examples HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {token}\r\n"
            f"Idempotency-Key: {name}-{i}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\n\r\n").encode()
    return head + body


async def _client(port: int, tokens: list[str], name: str, rows: int, stop_at: float, latencies: list, lags: list,
                  seed: int, interval: float | None, prebuilt: list[bytes] | None) -> int:
    """One keep-alive connection uploading ``rows`` examples per request, each request for a user
    drawn at random from ``tokens``; returns the number of examples acknowledged.

    ``interval`` None: closed loop, the next request leaves when the answer arrives (measures the
    most the server sustains; latency is then ~ clients / throughput by Little's law).  Otherwise
    open loop at one request per ``interval`` seconds from a random phase, latency counted from the
    *scheduled* send time, so a late answer also charges the requests queued behind it (no
    coordinated omission); the requests are then ``prebuilt`` before the clock starts, and ``lags``
    gets how late each left (the load generator's own delay, which the latency includes)."""
    rng = np.random.default_rng(seed)
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    acked, i = 0, 0
    scheduled = time.perf_counter() + (0.0 if interval is None else rng.uniform(0, interval))
    try:
        while time.monotonic() < stop_at:
            i += 1
            if interval is not None:
                await asyncio.sleep(max(0.0, scheduled - time.perf_counter()))
                lags.append(time.perf_counter() - scheduled)
            request = prebuilt[i - 1] if prebuilt is not None else _request(rng, tokens, name, i, rows)
            started = time.perf_counter() if interval is None else scheduled
            writer.write(request)
            status_and_headers = await reader.readuntil(b"\r\n\r\n")
            length = int(status_and_headers.lower().split(b"content-length:")[1].split(b"\r\n")[0])
            await reader.readexactly(length)
            latencies.append(time.perf_counter() - started)
            status = int(status_and_headers.split(b" ", 2)[1])
            if status != 200:
                raise RuntimeError(f"upload answered {status}")
            acked += rows
            if interval is not None:
                scheduled += interval
    finally:
        writer.close()
    return acked


def load_test(folder: Path, clients: int, seconds: float, rows: int, learner: str, users: int,
              offered: float | None) -> dict:
    """One run; ``offered`` = updates/s all clients send together (open loop), None = closed loop."""
    interval = None if offered is None else clients * rows / offered
    server = Server(folder, learner=LEARNERS[learner]).start()
    try:
        admin = {"Authorization": f"Bearer {server.admin_token}"}
        with httpx.Client(base_url=server.url, headers=admin, timeout=30) as http:
            tokens = [http.post("/v1/users", json={"name": f"load{i}"}).json()["token"] for i in range(users)]
        latencies: list[float] = []
        lags: list[float] = []
        # Open loop: every request built before the clock starts (a few seconds), so the load
        # generator's CPU during the run is sockets only; one request more than the run can send.
        prebuilt = None if interval is None else [
            [_request(np.random.default_rng(10**6 + i), tokens, f"c{i}", k, rows)
             for k in range(1, int(seconds / interval) + 3)] for i in range(clients)]

        async def run():
            stop_at = time.monotonic() + seconds
            return await asyncio.gather(*(_client(server.port, tokens, f"c{i}", rows, stop_at, latencies, lags, i,
                                                  interval, None if prebuilt is None else prebuilt[i])
                                          for i in range(clients)))

        started, server_cpu, client_cpu = time.perf_counter(), cpu_seconds(server.process.pid), time.process_time()
        acked = sum(uvloop.run(run()))
        elapsed = time.perf_counter() - started
        server_cpu, client_cpu = cpu_seconds(server.process.pid) - server_cpu, time.process_time() - client_cpu
        seq = httpx.get(server.url + "/v1/health", timeout=30).json()["seq"]
    finally:
        server.stop()
    lat = np.sort(np.array(latencies)) * 1e3
    return {"learner": learner, "clients": clients, "rows": rows, "users": users, "offered": offered,
            "seconds": elapsed,
            "server_cpu_us_per_update": 1e6 * server_cpu / acked, "server_cpu_share": server_cpu / elapsed,
            "client_cpu_share": client_cpu / elapsed, "requests": len(lat), "updates": acked,
            "updates_per_s": acked / elapsed, "requests_per_s": len(lat) / elapsed,
            "p50_ms": float(np.percentile(lat, 50)), "p99_ms": float(np.percentile(lat, 99)),
            "mean_ms": float(lat.mean()), "log_seq": seq,
            "generator_lag_p99_ms": float(np.percentile(lags, 99) * 1e3) if lags else None}


def peer_learner_only(users: int, n: int = 20000) -> tuple[float, float]:
    """Updates/s (wall) and CPU us/update of the learner alone, in-process, on updates spread over
    ``users`` like the load test's: the ceiling the server's overhead is measured from."""
    rng = np.random.default_rng(0)
    X, y = rng.uniform(-1, 1, size=(n, D)), rng.normal(size=n)
    learner = OnlineMultiTaskLearner(**DEFAULT_LEARNER)
    learner.update(0, X[0], y[0])  # load the compiled step
    started, cpu = time.perf_counter(), time.process_time()
    for i in range(1, n):
        learner.update(int(rng.integers(users)), X[i], y[i])
    return (n - 1) / (time.perf_counter() - started), 1e6 * (time.process_time() - cpu) / (n - 1)


def peer_sqlite_commit_per_op(folder: Path, n: int = 300) -> float:
    """Durable single-op commits/s (WAL, synchronous=FULL): what group commit improves on."""
    db = sqlite3.connect(folder / "peer.db", isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=FULL")
    db.execute("CREATE TABLE ops (seq INTEGER PRIMARY KEY, x BLOB)")
    blob = np.zeros(D).tobytes()
    started = time.perf_counter()
    for i in range(n):
        db.execute("BEGIN IMMEDIATE")
        db.execute("INSERT INTO ops VALUES (?, ?)", (i, blob))
        db.execute("COMMIT")
    rate = n / (time.perf_counter() - started)
    db.close()
    return rate


def load_section(tmp: Path, args) -> list[str]:
    loads = []
    for i, run in enumerate(args.runs):  # the same run may be repeated, each on a fresh store
        learner, rows, rate = run.split(":")
        folder = tmp / f"load-{i}-{learner}-{rows}-{rate}"
        folder.mkdir()
        result = load_test(folder, args.clients, args.seconds, int(rows), learner, args.users,
                           None if rate == "max" else float(rate))
        result["load_after"] = load_average()
        print(json.dumps(result), flush=True)
        loads.append(result)
    learner_rate, learner_cpu = peer_learner_only(args.users)
    sqlite_rate = peer_sqlite_commit_per_op(tmp)
    print(json.dumps({"learner_only_updates_per_s": learner_rate, "learner_only_cpu_us_per_update": learner_cpu,
                      "sqlite_single_commits_per_s": sqlite_rate}),
          flush=True)
    lines = ["## Load test", "",
             f"{args.clients} concurrent keep-alive clients, {args.seconds:g} s per run, each request for a user "
             f"drawn at random from {args.users} users (so a user holds a few dozen examples by the end, the "
             "regime of the HAPT personalisation, k <= 50), SQLite WAL synchronous=FULL, one uvicorn worker, "
             "group commit (every request waiting when a commit starts goes into its one transaction and "
             "fsync). An update = one labelled example; a request of 10 rows counts 10. It counts when its "
             "request was answered 200, i.e. after its commit. `closed` = each client sends its next "
             "request when the answer arrives (the most the server sustains; latency is then about clients / "
             "request rate, Little's law); `open N/s` = the clients together offer N updates/s at fixed "
             "intervals, latency counted from the scheduled send time, with every request built before the run "
             "starts; `generator lag p99` = how late the load generator itself sent them (included in the "
             "latency: a late generator charges the server). Learner `default` = the server's "
             "default (feature-map mode, 79 features, 256 random Fourier features, RBF personal kernel). "
             "CPU shares are user + system CPU seconds per wall second (1.00 = one core) of the server "
             "process and of the load generator (this process). Targets: >= 2,000 durable updates/s and "
             "p99 < 50 ms.", ""]
    table = []
    for r in loads:
        met = "met" if r["updates_per_s"] >= 2000 and r["p99_ms"] < 50 else "MISSED"
        table.append((r["learner"], r["rows"], "closed" if r["offered"] is None else f"open {r['offered']:.0f}/s",
                      r["requests"], r["updates"], f"{r['requests_per_s']:.0f}", f"{r['updates_per_s']:.0f}",
                      f"{r['p50_ms']:.1f}", f"{r['p99_ms']:.1f}", f"{r['mean_ms']:.1f}",
                      "-" if r["generator_lag_p99_ms"] is None else f"{r['generator_lag_p99_ms']:.1f}",
                      f"{r['server_cpu_share']:.2f}",
                      f"{r['client_cpu_share']:.2f}", f"{r['server_cpu_us_per_update']:.0f}", r["load_after"], met))
    lines += markdown_table(["learner", "rows/request", "load", "requests", "updates acked", "requests/s",
                             "durable updates/s", "p50 ms", "p99 ms", "mean ms", "generator lag p99 ms",
                             "server CPU (cores)",
                             "load generator CPU (cores)", "server CPU us/update", "load average after", "target"],
                            table, align="lllrrrrrrrrrrrll")
    lines += ["", "Peers in the same run (same machine, same moment; 'server's best' = the highest durable "
              "updates/s above):", ""]
    best = max(r["updates_per_s"] for r in loads)
    lines += markdown_table(
        ["what", "updates/s", "server's best / this"],
        [(f"learner alone, in-process, no HTTP, no durability, {args.users} users "
          f"({learner_cpu:.0f} us CPU/update)", f"{learner_rate:.0f}", f"{best / learner_rate:.3f}"),
         ("SQLite synchronous=FULL, one commit per op (no group commit)", f"{sqlite_rate:.0f}",
          f"{best / sqlite_rate:.1f}")], align="lrr")
    return lines + [""]


def crash_section(tmp: Path, args) -> list[str]:
    folder = tmp / "crash"
    folder.mkdir()
    if args.crash_store == "postgres":
        from serve_harness import postgres_cluster

        with postgres_cluster() as database:
            cycles = crash_cycles(folder, kills=args.kills, fire_seconds=(0.2, 2.0), seed=11,
                                  extra=("--checkpoint-every", str(args.crash_checkpoint_every)),
                                  store=database("crash"), progress=lambda k, a: print(k, json.dumps(a), flush=True))
        where = "one PostgreSQL database (a throwaway cluster from Debian's packages, started on loopback)"
    else:
        cycles = crash_cycles(folder, kills=args.kills, fire_seconds=(0.2, 2.0), seed=11,
                              extra=("--checkpoint-every", str(args.crash_checkpoint_every)),
                              progress=lambda k, a: print(k, json.dumps(a), flush=True))
        where = "one SQLite store"
    lost = sum(c["lost"] for c in cycles)
    duplicated = sum(c["duplicated"] for c in cycles)
    worst = max(c["max_abs_error"] for c in cycles)
    lines = ["## kill -9 crash test", "",
             f"{args.kills} cycles on {where}, server started with --checkpoint-every "
             f"{args.crash_checkpoint_every} (so kills also land around checkpoints and log truncation, and "
             "restarts load a checkpoint and replay the log after it): 4 client threads upload (1-3 rows) and "
             "delete for 6 users; the server "
             "is killed with SIGKILL at a uniform random moment in [0.2, 2] s; it is restarted; before any "
             "retry, the acknowledged ops missing from the server's state (lost) and the entries applied "
             "twice (duplicated) are counted; then every unanswered op is resent with its idempotency key "
             "(answered 409 = it had been committed before the kill), a few acknowledged ones are replayed "
             "(must be 409), and the predictions of every user are compared with a dense solve of "
             "(K + lambda W) c = y over exactly the acknowledged ops.", "",
             f"**Lost: {lost}. Duplicated: {duplicated}.** Largest |prediction - dense solve|: {worst:.1e} "
             f"(target 1e-9: {'met' if worst < 1e-9 and lost == duplicated == 0 else 'MISSED'}).", ""]
    lines += markdown_table(
        ["kill", "ops sent (total)", "acked", "unanswered", "lost", "duplicated", "committed, unanswered",
         "replays not refused", "max abs error", "restart s", "restart CPU s"],
        [(k + 1, c["ops"], c["acked"], c["unknown"], c["lost"], c["duplicated"], c["committed_before_retry"],
          c["replay_not_refused"], f"{c['max_abs_error']:.1e}", f"{c['restart_s']:.1f}",
          f"{c['restart_cpu_s']:.1f}")
         for k, c in enumerate(cycles)], align="rrrrrrrrrrr")
    restart = statistics.median(c["restart_s"] for c in cycles)
    restart_cpu = statistics.median(c["restart_cpu_s"] for c in cycles)
    return lines + ["", f"Median restart (process start, imports, checkpoint + log replay, warm-up, first health "
                        f"answer): {restart:.1f} s wall, {restart_cpu:.1f} s CPU of the server process (on a "
                        "quiet core the restart takes about its CPU time; most of it is imports).", ""]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--clients", type=int, default=100)
    parser.add_argument("--users", type=int, default=2000, help="users the clients upload for (default 2000)")
    parser.add_argument("--runs", nargs="*",
                        default=["default:1:max", "default:10:max", "default:1:2000", "default:10:2000", "default:1:500"],
                        help="load-test runs as LEARNER:ROWS:RATE (learner default or linear; examples per "
                             "request; offered updates/s, or max = closed loop)")
    parser.add_argument("--kills", type=int, default=20, help="crash-test cycles (0 = none)")
    parser.add_argument("--crash-store", choices=["sqlite", "postgres"], default="sqlite")
    parser.add_argument("--crash-checkpoint-every", type=int, default=500,
                        help="the crash-test server's --checkpoint-every: small, so that kills also land around "
                             "checkpoints and log truncation, and restarts load a checkpoint (default 500)")
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "serve.md"))
    args = parser.parse_args(argv)

    lines = ["# Personalisation server on loopback (issue 13)", "",
             f"Command: `.venv/bin/python benchmarks/bench_serve.py --seconds {args.seconds:g} --clients "
             f"{args.clients} --users {args.users} --runs {' '.join(args.runs)} --kills {args.kills} "
             f"--crash-store {args.crash_store} "
             f"--crash-checkpoint-every {args.crash_checkpoint_every}` "
             f"at commit {git_commit(ROOT)}; load average before: {load_average()} on 2 cores shared with other "
             "jobs.", ""]
    with tempfile.TemporaryDirectory() as tmp:
        if args.runs:
            lines += load_section(Path(tmp), args)
        if args.kills:
            lines += crash_section(Path(tmp), args)
    write_results(Path(args.out), "\n".join(lines))
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
