"""The OpenAPI description of the server, written to match what it serves.

Why by hand: the bodies are parsed after authentication by :mod:`._fastpath` (not by pydantic
models FastAPI could describe), the row length is the store's learner's (known once it is open),
the number ranges are :data:`._limits.BOUNDS`, and every error is ``{"error": "<one line>"}``
with the statuses listed here.  The tests run a schema-driven tester (schemathesis) against it.
"""
from __future__ import annotations

from ._limits import BOUNDS

__all__ = ["describe"]

_ERROR = {"$ref": "#/components/schemas/Error"}
_REASONS = {
    400: "malformed JSON, or a missing or malformed Idempotency-Key",
    401: "missing token, or unknown user or wrong secret",
    403: "a user token on an admin endpoint, or the admin token on a user's",
    404: "no such entry, user or snapshot",
    405: "method not allowed (the Allow header lists the allowed ones)",
    408: "the request body did not arrive in time; the connection is closed",
    409: "Idempotency-Key already used (the body has the first result under 'applied'), name taken, "
         "or too few contributors to publish",
    413: "body or row count over the limit",
    422: "a field of the wrong shape or type, or a number outside its range",
    503: "storage failed; retry (an upload with the same Idempotency-Key)",
}
_OPERATIONS = {  # (path, method): (success status, error statuses)
    ("/v1/health", "get"): (200, ()),
    ("/v1/users", "post"): (201, (400, 401, 403, 408, 409, 413, 422)),
    ("/v1/users/{name}/purge", "post"): (200, (401, 403, 404, 422, 503)),
    ("/v1/examples", "post"): (200, (400, 401, 403, 408, 409, 413, 422, 503)),
    ("/v1/examples", "get"): (200, (401, 403, 503)),
    ("/v1/examples/{key}", "delete"): (200, (400, 401, 403, 404, 409, 503)),
    ("/v1/predict", "post"): (200, (400, 401, 403, 408, 413, 422, 503)),
    ("/v1/snapshot", "get"): (200, (401, 404, 422)),
    ("/v1/snapshot", "post"): (200, (401, 403, 409, 503)),
}


def _numbers(name: str) -> dict:
    low, high, what = BOUNDS[name]
    return {"type": "number", "minimum": low, "maximum": high, "description": f"{what}, in [{low:g}, {high:g}]"}


def _rows(n_features: int, max_rows: int) -> dict:
    return {"type": "array", "minItems": 1, "maxItems": max_rows,
            "description": f"input rows, {n_features} numbers each (the window features, scaled to [-1, 1])",
            "items": {"type": "array", "minItems": n_features, "maxItems": n_features, "items": _numbers("X")}}


def _body(schema: dict) -> dict:
    return {"required": True, "content": {"application/json": {"schema": schema}}}


def describe(schema: dict, n_features: int, max_rows: int) -> dict:
    """``schema`` (FastAPI's, from the routes) completed: bodies, parameters, error answers, security."""
    components = schema.setdefault("components", {})
    components["schemas"] = {"Error": {
        "type": "object", "required": ["error"], "properties": {
            "error": {"type": "string", "description": "what was wrong and what to do, in one line"},
            "applied": {"type": "object", "description": "409 on a reused Idempotency-Key: the first result"}}}}
    components["securitySchemes"] = {"bearer": {"type": "http", "scheme": "bearer",
                                                "description": "a token from POST /v1/users (or the admin token)"}}
    schema["security"] = [{"bearer": []}]
    rows = _rows(n_features, max_rows)
    idempotency = {"name": "Idempotency-Key", "in": "header", "required": True,
                   "schema": {"type": "string", "pattern": "^[ -~]{1,200}$"},
                   "description": "1-200 printable ASCII characters, unique per request of a user; resend it "
                                  "unchanged when retrying. A key already used is refused with 409 and the "
                                  "first request's result; nothing is applied twice"}
    bodies = {
        ("/v1/examples", "post"): {"type": "object", "additionalProperties": False, "required": ["X", "y"],
                                   "properties": {"X": rows,
                                                  "y": {"type": "array", "items": _numbers("y"),
                                                        "description": "one label per row"},
                                                  "w": {"type": "array", "items": _numbers("w"),
                                                        "description": "one noise-variance scale per row "
                                                                       "(default 1)"}}},
        ("/v1/predict", "post"): {"type": "object", "additionalProperties": False, "required": ["X"],
                                  "properties": {"X": rows}},
        ("/v1/users", "post"): {"type": "object", "additionalProperties": False, "required": ["name"],
                                "properties": {"name": {"type": "string", "pattern": "^[A-Za-z0-9_-]{1,64}$"}}},
    }
    parameters = {
        ("/v1/examples", "post"): [idempotency],
        ("/v1/examples/{key}", "delete"): [
            {"name": "key", "in": "path", "required": True, "schema": {"type": "integer"},
             "description": "one of your input keys (from an upload or GET /v1/examples)"}, idempotency],
        ("/v1/users/{name}/purge", "post"): [
            {"name": "name", "in": "path", "required": True, "schema": {"type": "string"}}],
        ("/v1/snapshot", "get"): [
            {"name": "format", "in": "query", "required": False,
             "schema": {"type": "string", "enum": ["json", "npz"], "default": "json"}}],
    }
    for (path, method), (ok, errors) in _OPERATIONS.items():
        operation = schema["paths"][path][method]
        if (path, method) in bodies:
            operation["requestBody"] = _body(bodies[(path, method)])
        operation["parameters"] = parameters.get((path, method), [])
        success = {"description": "OK", "content": {"application/json": {"schema": {"type": "object"}}}}
        if (path, method) == ("/v1/snapshot", "get"):
            success["content"]["application/octet-stream"] = {"schema": {"type": "string", "format": "binary"}}
        operation["responses"] = {str(ok): success, **{
            str(status): {"description": _REASONS[status], "content": {"application/json": {"schema": _ERROR}}}
            for status in errors}}
        if 401 in errors:
            operation["responses"]["401"]["headers"] = {"WWW-Authenticate": {"schema": {"type": "string"}}}
    return schema
