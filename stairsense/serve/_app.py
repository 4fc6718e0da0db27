"""HTTP JSON API of the personalisation server, on FastAPI (OpenAPI page at ``/docs``).

Every error is ``{"error": "<one line>"}`` with a 4xx/5xx status, and a refused request changes
nothing: validation (JSON, shapes, finiteness, size, authentication) happens before an operation
reaches the committer, and the committer refuses replayed idempotency keys and unknown entries
before applying anything.

A user's task is the user itself: no endpoint takes a user or task id, so a token can only ever
write or read its own examples and predictions.  The admin token only manages users.
"""
from __future__ import annotations

import io
from contextlib import asynccontextmanager
from typing import Callable

import numpy as np
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.openapi.utils import get_openapi
from fastapi.responses import JSONResponse, Response
from starlette.exceptions import HTTPException as StarletteHTTPException

from ._auth import USER_NAME
from ._engine import Engine, Pending, Rejected, ServeConfig
from ._fastpath import (ShortcutFastAPI, UploadEndpoint, encode_json, error_headers, parse_new_user, parse_predict,
                        parse_upload)
from ._http import body_deadline
from ._limits import bounded_rows
from ._openapi import describe
from ._store import User, UserExistsError

__all__ = ["create_app"]


class _BodyLimit:
    """ASGI middleware: receive the whole body before the app sees the request, refusing bodies
    over ``max_bytes`` (declared or streamed) with 413 and bodies not received within
    ``timeout_s`` with 408 (:func:`._http.body_deadline`, the connection is then closed).

    Whole first, because an endpoint may answer before it reads the body (401 for a missing
    token): the rest of the body would then arrive with no deadline at all, one byte at a time.
    """

    def __init__(self, app, max_bytes: int, timeout_s: float):
        self.app, self.max_bytes, self.timeout_s = app, max_bytes, timeout_s

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        declared = dict(scope["headers"]).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.max_bytes:
            return await _too_large(self.max_bytes)(scope, receive, send)
        in_time = body_deadline(receive, self.timeout_s)
        chunks, received, more = [], 0, True
        try:
            while more:
                message = await in_time()
                if message["type"] == "http.disconnect":
                    return
                chunks.append(message.get("body", b""))
                received += len(chunks[-1])
                if received > self.max_bytes:
                    return await _too_large(self.max_bytes)(scope, receive, send)
                more = message.get("more_body", False)
        except StarletteHTTPException as late:
            return await _error(late.status_code, str(late.detail))(scope, receive, send)
        body = b"".join(chunks)

        async def replay():
            nonlocal body
            if body is None:
                return await receive()
            message, body = {"type": "http.request", "body": body, "more_body": False}, None
            return message

        await self.app(scope, replay, send)


def _error(status: int, reason: str, headers: dict | None = None, **detail) -> JSONResponse:
    return JSONResponse({"error": reason, **detail}, status_code=status,
                        headers={**(error_headers(status) or {}), **(headers or {})})


def _too_large_reason(max_bytes: int) -> str:
    return f"request body is larger than {max_bytes} bytes; split the upload"


def _too_large(max_bytes: int) -> JSONResponse:
    return _error(413, _too_large_reason(max_bytes))


def _validation_reason(exc: RequestValidationError) -> tuple[int, str]:
    first = exc.errors()[0]
    if first.get("type") == "json_invalid":
        return 400, f"malformed JSON: {first.get('ctx', {}).get('error', first.get('msg'))}"
    where = ".".join(str(part) for part in first.get("loc", ()) if part != "body") or "body"
    return 422, f"{where}: {first.get('msg')}"


# ------------------------------------------------------------------------------------- the app
def create_app(store_factory: Callable, config: ServeConfig | None = None, *, max_body_bytes: int = 1 << 20,
               body_timeout_s: float = 20.0, on_admin_token: Callable[[str], None] | None = None) -> FastAPI:
    """The ASGI app; ``store_factory()`` opens the store (called once, on the store thread).

    A request body larger than ``max_body_bytes`` is refused (413), one not received within
    ``body_timeout_s`` seconds too (408, and the connection is closed).

    ``on_admin_token(token)`` is called once if the store had no admin yet (the token is stored
    only as a hash, so this is the only time it exists in clear); it is also kept in
    ``app.state.admin_token`` for in-process use (tests).
    """
    engine = Engine(store_factory, config or ServeConfig())

    @asynccontextmanager
    async def lifespan(app):
        token = await engine.start()
        app.state.admin_token = token
        if token is not None and on_admin_token is not None:
            on_admin_token(token)
        yield
        await engine.close()

    app = ShortcutFastAPI(title="stairsense personalisation server", version="1",
                  description="Online multi-task learner (spec dinuzzo §3): upload labelled examples, get "
                              "personal predictions, download the published population snapshot.",
                  lifespan=lifespan)
    app.state.engine = engine
    app.add_middleware(_BodyLimit, max_bytes=max_body_bytes, timeout_s=body_timeout_s)
    app.shortcut = _BodyLimit(UploadEndpoint(lambda headers, body: upload_answer(headers, body)), max_body_bytes,
                              body_timeout_s)

    @app.exception_handler(Rejected)
    async def _rejected(request, exc: Rejected):
        return _error(exc.status, exc.reason, **exc.detail)

    @app.exception_handler(RequestValidationError)
    async def _invalid(request, exc: RequestValidationError):
        return _error(*_validation_reason(exc))

    @app.exception_handler(StarletteHTTPException)
    async def _http(request, exc: StarletteHTTPException):
        return _error(exc.status_code, str(exc.detail), exc.headers)  # 405 carries Allow

    # Authentication reads the headers directly instead of through FastAPI's dependency chain:
    # this is the per-request hot path, and each dependency level costs more than the check itself.
    async def authorize(request: Request, role: str) -> User:
        """The user behind the bearer token; ``role`` is "user" (learner endpoints), "admin" or "any"."""
        return await authorize_headers(request.headers, role)

    async def authorize_headers(headers, role: str) -> User:
        """:func:`authorize` from a mapping of lower-case header names (Starlette's or the shortcut's)."""
        scheme, _, token = headers.get("authorization", "").partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            raise Rejected(401, "missing token: send 'Authorization: Bearer <token>'")
        user = await engine.authenticate(token.strip())
        if user is None:
            raise Rejected(401, "invalid token (unknown user or wrong secret)")
        if role == "user" and user.admin:
            raise Rejected(403, "the admin token manages users; upload and predict with a user token")
        if role == "admin" and not user.admin:
            raise Rejected(403, "this needs the admin token")
        return user

    def idempotency(headers) -> str:
        key = headers.get("idempotency-key")
        if key is None:
            raise Rejected(400, "missing Idempotency-Key header: send a unique string per request and resend "
                                "it unchanged when retrying")
        if not (1 <= len(key) <= 200 and key.isascii() and key.isprintable()):
            raise Rejected(400, "Idempotency-Key must be 1-200 printable ASCII characters")
        return key

    def rows(name: str, X: list) -> np.ndarray:
        if len(X) > engine.config.max_rows:
            raise Rejected(413, f"{name} has {len(X)} rows; at most {engine.config.max_rows} per request")
        return bounded_rows(name, X, engine.n_features)

    @app.get("/v1/health", summary="liveness and the number of operations applied", openapi_extra={"security": []})
    async def health():
        return {"status": "ok", "seq": engine.seq, "n_features": engine.n_features}

    @app.post("/v1/users", status_code=201, summary="create a user (admin); the token is shown once")
    async def create_user(request: Request):
        await authorize(request, "admin")
        name = parse_new_user(await request.body())
        if not USER_NAME.fullmatch(name):
            raise Rejected(422, "name must be 1-64 letters, digits, '_' or '-'")
        try:
            token = await engine.create_user(name)
        except UserExistsError as error:
            raise Rejected(409, str(error)) from None
        return JSONResponse({"name": name, "token": token}, status_code=201)

    @app.post("/v1/users/{name}/purge", summary="remove every example of a user (admin): out of the model, "
                                               "the log and the checkpoints; the account stays")
    async def purge(name: str, request: Request):
        await authorize(request, "admin")
        return await engine.purge(name)

    async def upload_answer(headers, body: bytes) -> tuple[int, dict]:
        """``POST /v1/examples``: ``(status, JSON payload)``; 200 only once the upload is durable."""
        try:
            user = await authorize_headers(headers, "user")
            key = idempotency(headers)
            X, y, w = parse_upload(body)
            X = rows("X", X)
            y = bounded_rows("y", y)
            w = np.ones(len(y)) if w is None else bounded_rows("w", w)
            if not len(y) == len(w) == len(X):
                raise Rejected(422, f"X, y and w need one entry per row; got {len(X)}, {len(y)}, {len(w)}")
            return 200, await engine.submit(Pending(user.id, "update", key, X=X, y=y, w=w))
        except Rejected as rejected:
            return rejected.status, {"error": rejected.reason, **rejected.detail}

    # Answered by app.shortcut before FastAPI's middleware and routing (the hot path); declared here too
    # so that the OpenAPI page documents it, and served the same way if the shortcut is bypassed.
    @app.post("/v1/examples", summary="upload labelled examples (durable when answered); one request may carry "
                                      "up to max_rows examples, each one update")
    async def upload(request: Request):
        status, payload = await upload_answer(request.headers, await request.body())
        return Response(encode_json(payload), status_code=status, media_type="application/json",
                        headers=error_headers(status))

    @app.delete("/v1/examples/{key}", summary="delete all my examples at one input key (exact unlearning)")
    async def delete(key: str, request: Request):
        user = await authorize(request, "user")
        idem = idempotency(request.headers)
        if not (key.isascii() and key.lstrip("-").isdigit()):
            raise Rejected(404, f"you have no examples at key {key[:40]!r}; keys are integers")
        return await engine.submit(Pending(user.id, "delete", idem, key=int(key)))

    @app.get("/v1/examples", summary="my stored examples (merged per input key)")
    async def my_examples(request: Request):
        user = await authorize(request, "user")

        def entries(learner):
            keys, y, w = learner.entries(user.id)
            return {"seq": engine.seq, "keys": engine.public_keys(user.id, keys),
                    "X": [learner.input(int(k)).tolist() for k in keys],
                    "y": y.tolist(), "w": w.tolist()}
        return await engine.read(entries)

    @app.post("/v1/predict", summary="my personal predictions g_j(x)")
    async def predict(request: Request):
        user = await authorize(request, "user")
        X = rows("X", parse_predict(await request.body()))
        return await engine.read(lambda learner: {"seq": engine.seq, "y": learner.predict(user.id, X).tolist()})

    @app.get("/v1/snapshot", summary="the published population snapshot (X̌, y̌, H) and public parameters")
    async def snapshot(request: Request, format: str = "json"):
        await authorize(request, "any")
        if format not in ("json", "npz"):
            raise Rejected(422, f"format must be json or npz, got {format[:20]!r}")
        published = await engine.latest_published()
        if published is None:
            raise Rejected(404, "no snapshot published yet (it needs enough contributing users)")
        arrays = published.pop("arrays")
        if format == "npz":
            buffer = io.BytesIO()
            np.savez(buffer, **arrays)
            return Response(buffer.getvalue(), media_type="application/octet-stream",
                            headers={"Content-Disposition": f"attachment; filename=snapshot-{published['seq']}.npz"})
        return {**published, "params": engine.params, **{k: v.tolist() for k, v in arrays.items()}}

    @app.post("/v1/snapshot", summary="publish a snapshot now (admin), if enough users contributed")
    async def publish(request: Request):
        await authorize(request, "admin")
        return await engine.publish()

    def openapi():
        """The routes' schema completed by :func:`._openapi.describe` (bodies, errors, the bearer
        scheme: none of them goes through FastAPI's validation or dependencies here)."""
        if app.openapi_schema is None:
            schema = get_openapi(title=app.title, version=app.version, description=app.description, routes=app.routes)
            app.openapi_schema = describe(schema, engine.n_features, engine.config.max_rows)
        return app.openapi_schema

    app.openapi = openapi
    return app
