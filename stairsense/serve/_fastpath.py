"""The upload hot path: ``POST /v1/examples`` parsed and dispatched without FastAPI's machinery.

Why: the profile of the loopback load test (``benchmarks/bench_serve.py``, py-spy on the server)
put about a third of the server's CPU in FastAPI's routing, dependency solving, exception and
telemetry middleware and pydantic validation, for a body that is three lists of numbers.  So the
app is a :class:`ShortcutFastAPI` that hands this one request, before any of FastAPI's middleware,
to a small ASGI endpoint (:class:`UploadEndpoint`, behind the same body-size limit) that reads the
body, checks it by hand (extra fields refused, numbers only -- no text, no booleans --,
NaN/Infinity refused), and answers with ``json.dumps``.  The FastAPI route for the same path
stays declared (and calls the same :func:`parse_upload`), so the OpenAPI page still documents the
endpoint.  The other bodies are parsed by the same rules here too, *after* the token is checked
(FastAPI's validation ran first and answered a request without a token 422 instead of 401).
"""
from __future__ import annotations

import json

import orjson
from fastapi import FastAPI

from ._engine import Rejected

__all__ = ["parse_upload", "parse_predict", "parse_new_user", "UploadEndpoint", "ShortcutFastAPI", "encode_json", "error_headers"]

_FIELDS = ("X", "y", "w")


class _NotFinite(ValueError):
    pass


def _refuse_constant(name: str):
    raise _NotFinite(name)


def _numbers(name: str, values) -> list:
    """``values`` itself if it is a list of JSON numbers (int or float, not bool), else Rejected."""
    if type(values) is not list:
        raise Rejected(422, f"{name}: Input should be a valid list")
    for i, v in enumerate(values):
        if type(v) is not float and type(v) is not int:
            raise Rejected(422, f"{name}.{i}: Input should be a valid number")
    return values


def _parse_standard(body: bytes):
    try:
        return json.loads(body, parse_constant=_refuse_constant)
    except _NotFinite as constant:
        raise Rejected(422, f"{constant} is not a finite number; send finite numbers only") from None
    except (ValueError, UnicodeDecodeError) as error:  # JSONDecodeError is a ValueError
        raise Rejected(400, f"malformed JSON: {str(error).splitlines()[0]}") from None
    except RecursionError:  # orjson stops at 1,024 levels, the standard library at its stack
        raise Rejected(400, "malformed upload: JSON nested too deeply; send {\"X\": [[...], ...], "
                            "\"y\": [...]}") from None


def _load(body: bytes):
    try:
        # orjson parses a 10-row upload in 20 us, the standard library in 240 us (a tenth of the
        # server's CPU per example).  What orjson refuses (NaN, 1e999, lone surrogates, ...) is
        # parsed again by the standard library, whose verdict and values stand as before.
        return orjson.loads(body)
    except orjson.JSONDecodeError:
        return _parse_standard(body)


def _object(body: bytes, fields: tuple, required: tuple, shape: str) -> dict:
    """The JSON object of ``body`` with only ``fields`` and every one of ``required``, else Rejected."""
    data = _load(body)
    if type(data) is not dict:
        raise Rejected(422, f"body: Input should be an object with {shape}")
    for name in data:
        if name not in fields:
            raise Rejected(422, f"{name}: Extra inputs are not permitted")
    for name in required:
        if name not in data:
            raise Rejected(422, f"{name}: Field required")
    return data


def _rows(X) -> list:
    if type(X) is not list:
        raise Rejected(422, "X: Input should be a valid list")
    if not X:
        raise Rejected(422, "X: List should have at least 1 item after validation, not 0")
    for i, row in enumerate(X):
        _numbers(f"X.{i}", row)
    return X


def parse_upload(body: bytes) -> tuple[list, list, list | None]:
    """``(X, y, w)`` of an upload body, checked like a strict schema; raises :class:`Rejected`
    (400 malformed JSON, 422 wrong shape or type) with a one-line reason.  Row lengths and the
    ranges of the numbers are checked afterwards (``_limits.bounded_rows``)."""
    data = _object(body, _FIELDS, ("X", "y"), "fields X, y and optionally w")
    X = _rows(data["X"])
    w = data.get("w")
    return X, _numbers("y", data["y"]), None if w is None else _numbers("w", w)


def parse_predict(body: bytes) -> list:
    """``X`` of a ``POST /v1/predict`` body (same rules as :func:`parse_upload`)."""
    return _rows(_object(body, ("X",), ("X",), "the field X")["X"])


def parse_new_user(body: bytes) -> str:
    """``name`` of a ``POST /v1/users`` body."""
    name = _object(body, ("name",), ("name",), "the field name")["name"]
    if type(name) is not str:
        raise Rejected(422, "name: Input should be a valid string")
    return name


def error_headers(status: int) -> dict | None:
    """Headers an error answer needs: the scheme to authenticate with (401), and after a body
    that came too slowly (408) the end of the connection, whose rest of a body is unread."""
    if status == 401:
        return {"WWW-Authenticate": "Bearer"}
    if status == 408:
        return {"Connection": "close"}
    return None


def encode_json(payload: dict) -> bytes:
    return json.dumps(payload, separators=(",", ":"), allow_nan=False).encode()


class ShortcutFastAPI(FastAPI):
    """FastAPI that sends ``POST shortcut_path`` straight to the ASGI app ``shortcut`` (when set),
    past its own middleware stack; every other request, and the OpenAPI page, are FastAPI's."""

    shortcut = None
    shortcut_path = "/v1/examples"

    async def __call__(self, scope, receive, send):
        if (self.shortcut is not None and scope["type"] == "http" and scope["method"] == "POST"
                and scope["path"] == self.shortcut_path):
            return await self.shortcut(scope, receive, send)
        await super().__call__(scope, receive, send)


class UploadEndpoint:
    """ASGI app answering a request with ``handler(headers, body) -> (status, payload)`` as JSON.
    Meant to sit inside the body limits (size and deadline), which answer their own refusals."""

    def __init__(self, handler):
        self.handler = handler

    async def __call__(self, scope, receive, send):
        chunks, more = [], True
        while more:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            chunks.append(message.get("body", b""))
            more = message.get("more_body", False)
        headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope["headers"]}
        status, payload = await self.handler(headers, b"".join(chunks))
        content = encode_json(payload)
        head = [(b"content-type", b"application/json"), (b"content-length", str(len(content)).encode())]
        head += [(k.lower().encode(), v.encode()) for k, v in (error_headers(status) or {}).items()]
        await send({"type": "http.response.start", "status": status, "headers": head})
        await send({"type": "http.response.body", "body": content})
