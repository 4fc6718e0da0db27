"""``stairsense serve``: the personalisation server on one command.

Thin shell over :mod:`stairsense.serve`: open (or create) the store, make sure an admin exists
(its token is written once to a 0600 file, the store keeps only its hash), then run uvicorn on
loopback (another address needs ``--allow-remote``).  Put TLS in front with a reverse proxy
(README "Personalisation server").
"""
from __future__ import annotations

import json
import os
from dataclasses import asdict
from pathlib import Path

from ._cli_common import check_files
from ._cli_types import between, non_negative, non_negative_int, positive

__all__ = ["add_parser"]


def _write_secret(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` readable by the owner only (atomically: never a half token)."""
    from stairsense.stream import atomic_write

    with atomic_write(path, mode=0o600) as tmp:
        tmp.write_text(text + "\n")


def _loopback(host: str) -> bool:
    import ipaddress

    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:  # a host name: it may resolve to anything
        return False


def _learner(path) -> dict | None:
    if path is None:
        return None
    try:
        return json.loads(Path(path).read_text())
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}: line {exc.lineno}: not JSON ({exc.msg}); see models/multitask/ONLINE_API.md "
                         "for the learner parameters") from None


def cmd_serve(args) -> int:
    import uvicorn

    from stairsense.serve import (
        DEFAULT_LEARNER,
        ENV_VARIABLE,
        KEEP_ALIVE_S,
        DeadlineProtocol,
        ServeConfig,
        app_from_env,
        bootstrap_admin,
        n_features_of,
        open_store,
    )

    if not (args.allow_remote or _loopback(args.host)):
        raise ValueError(f"--host {args.host} is not a loopback address: bearer tokens and users' data would "
                         "cross the network in clear; put a TLS reverse proxy in front and pass --allow-remote")
    token_file = Path(args.admin_token_file or (f"{args.store}.admin-token" if "://" not in args.store
                                                 else "stairsense-admin-token"))
    check_files({"--admin-token-file": token_file} if args.admin_token_file else {},
                {"--store": args.store if "://" not in args.store else None, "--learner": args.learner})
    learner = _learner(args.learner)
    config = ServeConfig(learner=learner, checkpoint_every=args.checkpoint_every,
                         publish_interval_s=args.publish_interval, min_contributors=args.min_contributors,
                         follow=args.workers > 1)
    store = open_store(args.store)
    try:
        stored = store.setup(learner or DEFAULT_LEARNER)
        if learner is not None and json.loads(json.dumps(learner)) != stored:
            raise ValueError(f"--learner {args.learner}: the store {args.store} was created with other learner "
                             "parameters; drop --learner to keep them, or use a new --store")
        n_features_of(stored)
        token = bootstrap_admin(store)
    finally:
        store.close()
    if token is not None:
        _write_secret(token_file, token)
    info = {"url": f"http://{args.host}:{args.port}", "docs": f"http://{args.host}:{args.port}/docs",
            "store": args.store, "admin_token_file": str(token_file) if token is not None else None,
            "workers": args.workers, "learner": stored}
    if args.json:
        print(json.dumps(info), flush=True)
    else:
        created = f"; admin token written to {token_file}" if token is not None else ""
        print(f"stairsense serve: {info['url']} (API docs {info['docs']}), store {args.store}{created}", flush=True)
    os.environ[ENV_VARIABLE] = json.dumps({"store": args.store, "config": asdict(config),
                                           "max_body_bytes": args.max_body_bytes,
                                           "body_timeout_s": args.body_timeout})
    target = "stairsense.serve:app_from_env" if args.workers > 1 else app_from_env()
    uvicorn.run(target, factory=args.workers > 1, host=args.host, port=args.port, workers=args.workers,
                log_level=args.log_level, access_log=args.access_log, http=DeadlineProtocol,
                timeout_keep_alive=KEEP_ALIVE_S)
    return 0


def add_parser(subparsers) -> None:
    p = subparsers.add_parser(
        "serve", help="run the personalisation server (online multi-task learner over HTTP)",
        description="HTTP JSON API of the online multi-task learner: users upload labelled examples and get "
                    "personal predictions; every acknowledged upload is durable (SQLite WAL or PostgreSQL "
                    "operation log). Listens on loopback; put TLS in front with a reverse proxy. "
                    "API docs at /docs.")
    p.add_argument("--store", default="stairsense-serve.db",
                   help="SQLite file (created if absent) or postgresql://… URL (default stairsense-serve.db)")
    p.add_argument("--host", default="127.0.0.1",
                   help="address to listen on (default 127.0.0.1, loopback only; any other needs --allow-remote)")
    p.add_argument("--allow-remote", action="store_true",
                   help="allow a --host that is not loopback, e.g. 0.0.0.0: only behind a reverse proxy that "
                        "terminates TLS (tokens and data travel in clear otherwise)")
    p.add_argument("--port", type=between(int, 0, 65535), default=8000, help="port (default 8000)")
    p.add_argument("--learner", metavar="JSON", help="learner parameters for a NEW store (ONLINE_API.md; default: "
                   "feature-map mode on the 79 window features)")
    p.add_argument("--admin-token-file", metavar="PATH",
                   help="where the admin token is written when the store is created (default <store>.admin-token)")
    p.add_argument("--publish-interval", type=non_negative, default=300.0, metavar="S",
                   help="seconds between snapshot publications, 0 = only on admin request (default 300)")
    p.add_argument("--min-contributors", type=non_negative_int, default=10, metavar="K",
                   help="publish only after K distinct users changed the model since the last snapshot (default 10)")
    p.add_argument("--checkpoint-every", type=positive(int), default=10000, metavar="N",
                   help="operations between learner checkpoints, written in the background: a restart replays "
                        "about N (plus any committed while the last one was being written), and the log's "
                        "payloads before the older of the two kept checkpoints are dropped (default 10000)")
    p.add_argument("--max-body-bytes", type=between(int, 1, 1 << 30, why=" (1 GiB)"), default=1 << 20,
                   help="largest request body (default 1 MiB)")
    p.add_argument("--body-timeout", type=positive(float, 3600), default=20.0, metavar="S",
                   help="seconds a client has to send a whole request body, else 408 and the connection is "
                        "closed (default 20; request headers get 10 s, an idle keep-alive connection 5 s)")
    p.add_argument("--workers", type=between(int, 1, 64), default=1,
                   help="API worker processes sharing the store (writes serialised by its writer lock; default 1)")
    p.add_argument("--log-level", default="warning", choices=["debug", "info", "warning", "error"])
    p.add_argument("--access-log", action="store_true", help="log every request (slower)")
    p.add_argument("--json", action="store_true", help="print the startup summary as one JSON line")
    p.set_defaults(func=cmd_serve)
