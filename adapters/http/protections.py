"""What every response and request goes through before a route: the browser protections
(Content-Security-Policy, no framing, nosniff, no referrer) and the request body cap.

A pure ASGI middleware, so the cap holds while the body streams in: a declared
``Content-Length`` over the cap is refused before a byte of the body is read, and a
chunked upload is refused as soon as it passes the cap, not after it is buffered whole
(before, 100 MB without a token were read into memory and only then answered 401).
"""

from __future__ import annotations

from starlette.exceptions import HTTPException
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from adapters.http.openai_api import openai_error

# The pages load their scripts and styles from /static only: no inline script or style,
# so an injected <script> or on*= attribute does not run, and the bearer token in
# localStorage is not readable by anything the pages did not ship.
PAGE_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; "
    "frame-ancestors 'none'"
)
# Swagger UI and ReDoc (/docs, /redoc) load from a CDN and run inline script: they keep
# only the framing ban.
DOCS_POLICY = "frame-ancestors 'none'"
DOCS_PATHS = ("/docs", "/redoc")


def security_headers(path: str) -> list[tuple[bytes, bytes]]:
    policy = DOCS_POLICY if path.startswith(DOCS_PATHS) else PAGE_POLICY
    return [
        (b"content-security-policy", policy.encode()),
        (b"x-frame-options", b"DENY"),  # frame-ancestors for browsers that predate it
        (b"x-content-type-options", b"nosniff"),
        # Source links open other sites: they need not learn which conversation linked them.
        (b"referrer-policy", b"no-referrer"),
    ]


def too_large_reason(limit: int) -> str:
    return (
        f"the request body is over {limit} bytes, the limit (TEAMRAG_HTTP_MAX_BODY_BYTES): "
        "send less, or raise the limit"
    )


class BodyTooLarge(HTTPException):
    """Raised from ``receive`` inside a route; the app's HTTP error handler answers 413
    (in the OpenAI shape under /v1)."""

    def __init__(self, limit: int) -> None:
        super().__init__(413, too_large_reason(limit))


class Protections:
    def __init__(self, app: ASGIApp, max_body_bytes: int) -> None:
        self.app = app
        self.max_body_bytes = max_body_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        extra = security_headers(scope["path"])

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), *extra]
            await send(message)

        declared = _content_length(scope)
        if declared is not None and declared > self.max_body_bytes:
            # Answered without reading the body; uvicorn closes the connection after it.
            reason = too_large_reason(self.max_body_bytes)
            response = (
                openai_error(413, reason)
                if scope["path"].startswith("/v1/")
                else JSONResponse({"detail": reason}, status_code=413)
            )
            await response(scope, receive, send_with_headers)
            return
        await self.app(scope, self._capped(receive), send_with_headers)

    def _capped(self, receive: Receive) -> Receive:
        received = 0

        async def capped() -> Message:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.max_body_bytes:
                    raise BodyTooLarge(self.max_body_bytes)
            return message

        return capped


def _content_length(scope: Scope) -> int | None:
    for name, value in scope["headers"]:
        if name == b"content-length":
            try:
                return int(value)
            except ValueError:
                return None  # the server refuses a malformed length itself
    return None
