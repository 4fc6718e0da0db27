"""The server's connection deadlines (``serve/_http.py``): a slow or silent client is cut off.

A real uvicorn server in a thread, as ``stairsense serve`` runs it, with short deadlines; raw
sockets play the slow clients.
"""
import json
import socket
import threading
import time
from types import SimpleNamespace

import httpx
import pytest
import uvicorn

from serve_harness import free_port
from stairsense.serve._http import DeadlineProtocol
from test_serve_api import make_app

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")
DEADLINE = 0.5


class _Quick(DeadlineProtocol):
    header_timeout_s = DEADLINE


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    app = make_app(tmp_path_factory.mktemp("http") / "s.db", body_timeout_s=DEADLINE)
    port = free_port()
    config = uvicorn.Config(app, host="127.0.0.1", port=port, http=_Quick, timeout_keep_alive=1,
                            log_level="warning")
    running = uvicorn.Server(config)
    thread = threading.Thread(target=running.run, daemon=True)
    thread.start()
    while not running.started:
        time.sleep(0.02)
    created = httpx.post(f"http://127.0.0.1:{port}/v1/users", json={"name": "ann"},
                         headers={"Authorization": f"Bearer {app.state.admin_token}"})
    yield SimpleNamespace(port=port, token=created.json()["token"])
    running.should_exit = True
    thread.join(10)


def closed_after(sock: socket.socket, limit: float = 5.0) -> tuple[float, bytes]:
    """Seconds until the server closed ``sock``, and what it sent before (socket.timeout past ``limit``)."""
    started, data = time.monotonic(), b""
    sock.settimeout(limit)
    while chunk := sock.recv(65536):
        data += chunk
    return time.monotonic() - started, data


def test_a_client_that_sends_nothing_is_disconnected(server):
    with socket.create_connection(("127.0.0.1", server.port)) as sock:
        seconds, data = closed_after(sock)
    assert data == b"" and seconds < DEADLINE + 1.5


def test_a_client_that_trickles_its_headers_is_disconnected(server):
    with socket.create_connection(("127.0.0.1", server.port)) as sock:
        sock.sendall(b"POST /v1/examples HTTP/1.1\r\nHost: x\r\n")
        seconds, data = closed_after(sock)
    assert data == b"" and seconds < DEADLINE + 1.5


# The hand-written upload path and FastAPI's; without a token, an endpoint that would answer 401
# before reading the body must not leave the rest of it to arrive without a deadline.
@pytest.mark.parametrize("path", ["/v1/examples", "/v1/predict"])
@pytest.mark.parametrize("with_token", [True, False])
def test_a_body_that_does_not_arrive_in_time_is_refused_408_and_the_connection_closed(server, path, with_token):
    token = f"Authorization: Bearer {server.token}\r\n" if with_token else ""
    with socket.create_connection(("127.0.0.1", server.port)) as sock:
        sock.sendall(f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                     f"{token}Idempotency-Key: slow\r\nContent-Length: 100\r\n\r\n{{\"X\": ".encode())
        seconds, data = closed_after(sock)
    head, _, body = data.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 408") and b"connection: close" in head.lower(), data
    assert "not received within 0.5 s" in json.loads(body)["error"]
    assert seconds < DEADLINE + 1.5


def test_an_idle_keep_alive_connection_is_closed(server):
    with socket.create_connection(("127.0.0.1", server.port)) as sock:
        sock.sendall(b"GET /v1/health HTTP/1.1\r\nHost: x\r\n\r\n")
        seconds, data = closed_after(sock)
    assert data.startswith(b"HTTP/1.1 200") and seconds < 1 + 1.5
