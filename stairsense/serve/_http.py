"""Deadlines on the HTTP connection, so that a slow or silent client cannot hold one open forever.

Why: uvicorn closes an idle keep-alive connection (``timeout_keep_alive``), but it waits without
end for the headers of a request (a client that connects and sends nothing, or one header byte
now and then) and for its body.  Each such connection costs a socket and memory, and a few
thousand of them take the server down ("slowloris").  So:

* :class:`DeadlineProtocol` (uvicorn's httptools protocol) closes a connection whose request
  headers are not complete :attr:`~DeadlineProtocol.header_timeout_s` after it opened or after
  the first byte of the request;
* :func:`body_deadline` bounds the time to receive a whole body (the app answers 408 and
  closes the connection);
* between requests, uvicorn's ``timeout_keep_alive`` applies (set by ``stairsense serve``).
"""
from __future__ import annotations

import asyncio
import time

from starlette.exceptions import HTTPException as StarletteHTTPException
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

__all__ = ["DeadlineProtocol", "body_deadline", "HEADER_TIMEOUT_S", "KEEP_ALIVE_S"]

HEADER_TIMEOUT_S = 10.0
KEEP_ALIVE_S = 5


class DeadlineProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol with a deadline for each request's headers."""

    header_timeout_s = HEADER_TIMEOUT_S

    def connection_made(self, transport) -> None:
        super().connection_made(transport)
        self._header_deadline = None
        self._arm_header_deadline()

    def _arm_header_deadline(self) -> None:
        self._cancel_header_deadline()
        self._header_deadline = self.loop.call_later(self.header_timeout_s, self._headers_too_slow)

    def _cancel_header_deadline(self) -> None:
        if self._header_deadline is not None:
            self._header_deadline.cancel()
            self._header_deadline = None

    def _headers_too_slow(self) -> None:
        self._header_deadline = None
        if not self.transport.is_closing():
            self.transport.close()

    def on_message_begin(self) -> None:
        super().on_message_begin()
        self._arm_header_deadline()

    def on_headers_complete(self) -> None:
        self._cancel_header_deadline()
        super().on_headers_complete()

    def connection_lost(self, exc) -> None:
        self._cancel_header_deadline()
        super().connection_lost(exc)


def body_deadline(receive, seconds: float):
    """``receive`` that raises a 408 ``HTTPException`` if the body is not complete ``seconds``
    after the first call (later calls, e.g. waiting for a disconnect, are not bounded)."""
    deadline, done = None, False

    async def receive_in_time():
        nonlocal deadline, done
        if done:
            return await receive()
        now = time.monotonic()
        if deadline is None:
            deadline = now + seconds
        try:
            message = await asyncio.wait_for(receive(), max(0.0, deadline - now))
        except asyncio.TimeoutError:
            raise StarletteHTTPException(408, f"request body not received within {seconds:g} s; "
                                              "send it at once") from None
        done = not message.get("more_body", False)
        return message

    return receive_in_time
