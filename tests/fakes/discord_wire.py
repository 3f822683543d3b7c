"""What the fake Discord puts on the wire: JSON responses and errors as Discord shapes them,
its message limits, its 429s; and the record of calls and injected failures.

Responses carry Content-Type exactly ``application/json``: aiohttp's json_response adds
a charset, and discord.py then takes the body for text and cannot read error codes.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from aiohttp import web

EPHEMERAL = 1 << 6
LOADING = 1 << 7
# The request body, parsed once by the recording middleware.
BODY = web.RequestKey("body", object)


@dataclass
class Call:
    """One REST request as the fake saw it; ``at`` is ``time.monotonic()``."""

    method: str
    route: str  # "POST /channels/{channel_id}/messages"
    path: str
    body: Any
    status: int
    at: float


@dataclass
class Failure:
    route: str
    status: int
    code: int
    message: str
    times: int
    retry_after: float | None = None
    when: Callable[[Any], bool] | None = None  # only calls whose JSON body matches


def json_response(
    data: Any, status: int = 200, headers: dict[str, str] | None = None
) -> web.Response:
    return web.Response(
        body=json.dumps(data, ensure_ascii=False).encode(),
        status=status,
        headers={"Content-Type": "application/json", **(headers or {})},
    )


def error(status: int, code: int, message: str) -> web.Response:
    return json_response({"code": code, "message": message}, status)


def failure_response(failure: Failure) -> web.Response:
    if failure.status != 429:
        return error(failure.status, failure.code, failure.message or f"{failure.status}")
    retry_after = failure.retry_after or 0.1
    return json_response(
        {"message": "You are being rate limited.", "retry_after": retry_after, "global": False},
        429,
        {
            "Retry-After": str(max(1, round(retry_after))),
            "X-RateLimit-Limit": "5",
            "X-RateLimit-Remaining": "0",
            "X-RateLimit-Reset-After": str(retry_after),
            "X-RateLimit-Bucket": "fake-bucket",
            "X-RateLimit-Scope": "user",
            # Discord's own 429s come through Google's front end; discord.py takes a 429
            # without Via for a Cloudflare ban and gives up instead of waiting.
            "Via": "1.1 google",
        },
    )


def invalid(body: dict[str, Any], *, creating: bool) -> web.Response | None:
    """Discord's refusal of a message body over its limits, or None when it is fine."""
    problems = []
    content = body.get("content") or ""
    embeds = body.get("embeds") or []
    if len(content) > 2000:
        problems.append(f"content: {len(content)} characters, at most 2000")
    if len(embeds) > 10:
        problems.append(f"embeds: {len(embeds)}, at most 10")
    total = 0
    for embed in embeds:
        description = embed.get("description") or ""
        if len(description) > 4096:
            problems.append(f"embed description: {len(description)} characters, at most 4096")
        total += len(embed.get("title") or "") + len(description)
        total += sum(
            len(f.get("name", "")) + len(f.get("value", "")) for f in embed.get("fields", [])
        )
    if total > 6000:
        problems.append(f"embeds: {total} characters in total, at most 6000")
    for row in body.get("components") or []:
        for item in row.get("components", []):
            if len(item.get("custom_id", "")) > 100:
                problems.append("custom_id: at most 100 characters")
    if problems:
        return json_response(
            {"code": 50035, "message": "Invalid Form Body", "errors": problems}, 400
        )
    if creating and not content and not embeds and not body.get("components"):
        return error(400, 50006, "Cannot send an empty message")
    return None


def apply_edit(message: dict[str, Any], body: dict[str, Any]) -> None:
    for key in ("content", "embeds", "components"):
        if key in body:
            message[key] = body[key] if body[key] is not None else ([] if key != "content" else "")
    if "flags" in body and body["flags"] is not None:
        message["flags"] = body["flags"] | (message["flags"] & EPHEMERAL)
    message["flags"] &= ~LOADING
    message["edited_timestamp"] = message["timestamp"]


class _Matches(Protocol):
    route: str
    times: int
    when: Callable[[Any], bool] | None


_M = TypeVar("_M", bound=_Matches)


def take_first(items: list[_M], route: str, body: Any) -> _M | None:
    """The first of ``items`` still due for this call to ``route`` (one use spent), or None."""
    for item in items:
        if item.route == route and item.times > 0 and (item.when is None or item.when(body)):
            item.times -= 1
            return item
    return None


class Failures:
    """Errors a test asked for, each answering the next calls to its route."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._items: list[Failure] = []

    def add(self, failure: Failure) -> None:
        with self._lock:
            self._items.append(failure)

    def take(self, route: str, body: Any) -> Failure | None:
        with self._lock:
            return take_first(self._items, route, body)


@dataclass
class Hold:
    route: str
    times: int
    when: Callable[[Any], bool] | None = None


HELD = 0  # the status a held call is recorded with


class Holds:
    """Calls a test asked to hold: recorded, then left unanswered (and not applied) until
    released, as the request a process has in flight when it is killed."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._items: list[Hold] = []
        self._released: asyncio.Event | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    def add(self, hold: Hold) -> None:
        with self._lock:
            self._items.append(hold)

    def take(self, route: str, body: Any) -> asyncio.Event | None:
        """The event that ends the wait of a call to hold (on the server's loop), or None."""
        with self._lock:
            if take_first(self._items, route, body) is None:
                return None
            if self._released is None:
                self._released = asyncio.Event()
                self._loop = asyncio.get_running_loop()
            return self._released

    def release(self) -> None:
        with self._lock:
            self._items.clear()
            released, self._released = self._released, None
        if released is not None and self._loop is not None:
            self._loop.call_soon_threadsafe(released.set)


Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def recording(
    calls: list[Call], lock: threading.Lock, failures: Failures, holds: Holds | None = None
) -> Any:
    """A middleware that parses each body once (``request[BODY]``), answers with an
    injected failure when one is due, holds a call a test asked to hold, and records the
    call with its route template."""

    @web.middleware
    async def record(request: web.Request, handler: Handler) -> web.StreamResponse:
        at = time.monotonic()
        resource = request.match_info.route.resource
        template = resource.canonical if resource is not None else request.path
        route = f"{request.method} {template.removeprefix('/api/v10')}"
        body: Any = None
        if request.can_read_body:
            raw = await request.read()
            body = json.loads(raw) if raw else None
        request[BODY] = body
        released = holds.take(route, body) if holds is not None else None
        if released is not None:
            with lock:
                calls.append(Call(request.method, route, request.path, body, HELD, at))
            await released.wait()
            return error(503, 0, "held, then released")
        failure = failures.take(route, body)
        response = failure_response(failure) if failure is not None else await handler(request)
        if route != "GET /gateway":
            with lock:
                calls.append(Call(request.method, route, request.path, body, response.status, at))
        return response

    return record
