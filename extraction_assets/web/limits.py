"""Bounds on what a request may send: a body larger than `MAX_BODY_BYTES` is refused with 413 before it is read
whole (its declared length, or the bytes as they stream in), so no request can make the server hold, or the
warehouse store, megabytes a person never wrote. A review decision, a correction or a note is a few KB at most."""

from __future__ import annotations

from starlette.responses import PlainTextResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

MAX_BODY_BYTES = 256 * 1024


class BoundedBody:
    """ASGI middleware: 413 for a body over `max_bytes`. The body is received here, at most `max_bytes` of it, then
    handed to the app as one message: a body without a declared length is bounded as it streams in too."""

    def __init__(self, app: ASGIApp, max_bytes: int = MAX_BODY_BYTES) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        refusal = PlainTextResponse(f"request body larger than {self.max_bytes} bytes", status_code=413)
        declared = dict(scope.get("headers") or []).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.max_bytes:
            await refusal(scope, receive, send)
            return
        body = bytearray()
        while True:
            message = await receive()
            if message["type"] != "http.request":  # the client went away: nothing to answer
                return
            body += message.get("body", b"")
            if len(body) > self.max_bytes:
                await refusal(scope, receive, send)
                return
            if not message.get("more_body", False):
                break
        delivered = False

        async def replay() -> Message:
            nonlocal delivered
            if delivered:
                return await receive()  # after the body: the client's disconnect, when it comes
            delivered = True
            return {"type": "http.request", "body": bytes(body), "more_body": False}

        await self.app(scope, replay, send)
