"""A local fake of the Slack Web API, response URLs and Socket Mode, over real HTTP.

The real ``AsyncWebClient`` (and Bolt, and the Socket Mode client) talk to it at
``base_url``. It records every call, keeps the messages as a user would see them
(posted, streamed, edited: :mod:`tests.fakes.slack_chat`) and the history people wrote
(:mod:`tests.fakes.slack_history`), rejects what real Slack rejects where that is cheap
to check (the limits in :mod:`tests.fakes.slack_limits`: ``invalid_blocks``; a stream
that is not streaming: ``message_not_in_streaming_state``), and can be told to fail a
method with a 429 and ``Retry-After`` or any Slack error, or to hold a call unanswered
(:meth:`FakeSlack.hold`: the request a worker has in flight when it is killed).
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl

from aiohttp import WSMsgType, web

from tests.fakes.background import BackgroundApp
from tests.fakes.slack_chat import ChatAPI, Message
from tests.fakes.slack_history import HistoryAPI
from tests.fakes.slack_limits import block_problems

BOT_TOKEN = "xoxb-test-token"
APP_TOKEN = "xapp-test-token"
TEAM = "T0TEAM"
BOT_USER = "UBOT0001"
BOT_ID = "BBOT0001"

# The arguments each Web API method requires (Slack's reference): a call without one is
# answered ``invalid_arguments`` and kept in ``FakeSlack.missing_args``, which the
# ``fake_slack`` fixture fails the test on.
REQUIRED: dict[str, tuple[str, ...]] = {
    "chat.postMessage": ("channel",),
    "chat.update": ("channel", "ts"),
    "chat.delete": ("channel", "ts"),
    "chat.postEphemeral": ("channel", "user"),
    "chat.startStream": ("channel", "thread_ts"),
    "chat.appendStream": ("channel", "ts"),
    "chat.stopStream": ("channel", "ts"),
    "assistant.threads.setStatus": ("channel_id", "thread_ts", "status"),
    "assistant.threads.setSuggestedPrompts": ("channel_id", "thread_ts", "prompts"),
    "assistant.threads.setTitle": ("channel_id", "thread_ts", "title"),
    "views.publish": ("user_id", "view"),
    "users.info": ("user",),
    "conversations.replies": ("channel", "ts"),
    "conversations.history": ("channel",),
    "conversations.info": ("channel",),
    "files.info": ("file",),
}


@dataclass
class Call:
    """One request as the fake saw it; ``at`` is ``time.monotonic()``."""

    method: str
    args: dict[str, Any]
    at: float
    status: int = 200
    error: str | None = None


@dataclass
class _Failure:
    error: str
    status: int
    retry_after: int | None
    times: int | None  # None: every call


@dataclass
class _Hold:
    method: str
    when: Callable[[dict[str, Any]], bool] | None
    times: int
    held: list[Call] = field(default_factory=list)


class FakeSlack(ChatAPI, HistoryAPI):
    """Start with :meth:`start`; point clients at :attr:`base_url`."""

    def __init__(self) -> None:
        self.calls: list[Call] = []
        self.socket_acks: list[dict[str, Any]] = []
        self.missing_args: list[tuple[str, str]] = []  # (method, argument)
        self.base_url = ""
        self.root = ""
        self._failures: dict[str, list[_Failure]] = {}
        self._holds: list[_Hold] = []
        self._released: asyncio.Event | None = None  # on the fake's loop, once serving
        self._server_loop: asyncio.AbstractEventLoop | None = None
        self._lock = threading.Lock()
        self._sockets: list[web.WebSocketResponse] = []
        self._loop: asyncio.AbstractEventLoop | None = None
        self._init_chat()
        self._init_history()
        app = web.Application(client_max_size=8 * 1024 * 1024)
        app.router.add_post("/api/{method}", self._api)
        app.router.add_get("/api/{method}", self._api)  # slack_sdk reads with GET
        app.router.add_get("/files/{id}/{name}", self._download)
        app.router.add_post("/respond/{key}", self._respond)
        app.router.add_get("/socket", self._socket)
        self._server = BackgroundApp(app)

    # --- control -------------------------------------------------------------------------

    def start(self) -> FakeSlack:
        self.root = self._server.start()
        self.base_url = self.root + "/api/"
        return self

    def stop(self) -> None:
        self.release()
        self._server.stop()

    def reset(self) -> None:
        self.release()
        with self._lock:
            self.calls.clear()
            self.messages.clear()
            self.socket_acks.clear()
            self._failures.clear()
            self.missing_args.clear()
            self.views.clear()
            self.admins.clear()
            self.locales.clear()

    def fail(
        self,
        method: str,
        error: str = "internal_error",
        *,
        status: int = 200,
        retry_after: int | None = None,
        times: int | None = 1,
    ) -> None:
        """The next ``times`` calls of ``method`` fail (None: all of them). ``status`` 429
        with ``retry_after`` is a rate limit; status 200 with ``error`` a Slack error."""
        self._failures.setdefault(method, []).append(_Failure(error, status, retry_after, times))

    def hold(
        self,
        method: str,
        *,
        when: Callable[[dict[str, Any]], bool] | None = None,
        times: int = 1,
    ) -> None:
        """The next ``times`` calls of ``method`` whose arguments satisfy ``when`` are
        recorded (with the error ``held``) and then left unanswered and not applied, as
        a request still in flight when the worker that sent it is killed; :meth:`release`
        (or :meth:`reset`) answers them with an error."""
        with self._lock:
            self._holds.append(_Hold(method, when, times))

    def held(self, method: str) -> list[Call]:
        """The calls of ``method`` held so far."""
        with self._lock:
            return [c for h in self._holds if h.method == method for c in h.held]

    def release(self) -> None:
        """Answer every held call (with an error: nothing of it is applied)."""
        with self._lock:
            self._holds.clear()
            released, self._released = self._released, None
        if released is not None and self._server_loop is not None:
            self._server_loop.call_soon_threadsafe(released.set)

    def delete(self, ts: str) -> None:
        """A message deleted by a person (``message_not_found`` from then on)."""
        with self._lock:
            del self.messages[ts]

    def response_url(self, key: str) -> str:
        return f"{self.root}/respond/{key}"

    # --- reading ---------------------------------------------------------------------------

    def calls_to(self, *methods: str) -> list[Call]:
        return [c for c in list(self.calls) if c.method in methods]

    def ok_calls(self, *methods: str) -> list[Call]:
        return [c for c in self.calls_to(*methods) if c.status == 200 and c.error is None]

    def replies(self, channel: str, thread_ts: str | None) -> list[Message]:
        """Messages the bot posted in a thread (or at the top level for None), oldest first."""
        return [
            m
            for m in list(self.messages.values())
            if (m.channel, m.thread_ts) == (channel, thread_ts)
        ]

    def answered(self, channel: str, thread_ts: str | None) -> list[Message]:
        """Replies in a thread that carry feedback buttons: one per finished answer."""
        return [m for m in self.replies(channel, thread_ts) if m.feedback_values()]

    @property
    def sockets(self) -> int:
        return len([s for s in self._sockets if not s.closed])

    def socket_send(self, envelope: dict[str, Any]) -> None:
        """Deliver a Socket Mode envelope on every open connection."""
        assert self._loop is not None, "no Socket Mode connection yet"

        async def send() -> None:
            for ws in list(self._sockets):
                if not ws.closed:
                    await ws.send_str(json.dumps(envelope))

        asyncio.run_coroutine_threadsafe(send(), self._loop).result(5)

    # --- the Web API -------------------------------------------------------------------------

    async def _api(self, request: web.Request) -> web.Response:
        method = request.match_info["method"]
        args = await _arguments(request)
        call = Call(method, args, time.monotonic())
        self.calls.append(call)
        released = self._hold(method, args, call)
        if released is not None:
            await released.wait()
            return web.json_response({"ok": False, "error": "fatal_error"})
        failure = self._failure(method)
        if failure is not None:
            call.status, call.error = failure.status, failure.error
            headers = (
                {"Retry-After": str(failure.retry_after)} if failure.retry_after is not None else {}
            )
            body = {"ok": False, "error": "ratelimited" if failure.status == 429 else failure.error}
            return web.json_response(body, status=failure.status, headers=headers)
        token = request.headers.get("Authorization", "").removeprefix("Bearer ") or args.get(
            "token"
        )
        expected = APP_TOKEN if method == "apps.connections.open" else BOT_TOKEN
        if token != expected:
            call.error = "invalid_auth"
            return web.json_response({"ok": False, "error": "invalid_auth"})
        missing = [a for a in REQUIRED.get(method, ()) if a not in args]
        if missing:
            self.missing_args += [(method, a) for a in missing]
            call.error = "invalid_arguments"
            return web.json_response({"ok": False, "error": "invalid_arguments"})
        handler = getattr(self, "_" + method.replace(".", "_"), None)
        if handler is None:
            call.error = "unknown_method"
            return web.json_response({"ok": False, "error": "unknown_method"})
        result: dict[str, Any] = handler(args)
        if not result.get("ok", True):
            call.error = str(result["error"])
        return web.json_response({"ok": True, **result})

    def _hold(self, method: str, args: dict[str, Any], call: Call) -> asyncio.Event | None:
        """The event that ends the wait of a call to hold (on the fake's loop), or None."""
        with self._lock:
            for hold in self._holds:
                if (
                    hold.method == method
                    and hold.times > 0
                    and (hold.when is None or hold.when(args))
                ):
                    hold.times -= 1
                    hold.held.append(call)
                    call.error = "held"
                    if self._released is None:
                        self._released = asyncio.Event()
                        self._server_loop = asyncio.get_running_loop()
                    return self._released
        return None

    def _failure(self, method: str) -> _Failure | None:
        with self._lock:
            for failure in self._failures.get(method, []):
                if failure.times is None:
                    return failure
                if failure.times > 0:
                    failure.times -= 1
                    return failure
        return None

    def _auth_test(self, args: dict[str, Any]) -> dict[str, Any]:
        return {
            "url": "https://teamrag-test.slack.com/",
            "team": "teamrag test",
            "user": "teamrag",
            "team_id": TEAM,
            "user_id": BOT_USER,
            "bot_id": BOT_ID,
            "is_enterprise_install": False,
        }

    def _apps_connections_open(self, args: dict[str, Any]) -> dict[str, Any]:
        return {"url": self.root.replace("http://", "ws://") + "/socket"}

    def _conversations_replies(self, args: dict[str, Any]) -> dict[str, Any]:
        """People's messages (the history) and the bot's own, as Slack keeps both."""
        channel, ts = str(args.get("channel")), str(args.get("ts"))
        own = [
            {"type": "message", "user": BOT_USER, "bot_id": BOT_ID, "ts": m.ts,
             "thread_ts": m.thread_ts, "text": m.text, "blocks": m.blocks}
            | ({"metadata": m.metadata} if m.metadata and args.get("include_all_metadata") else {})
            for m in list(self.messages.values())
            if m.channel == channel and ts in (m.ts, m.thread_ts)
        ]  # fmt: skip
        if not own:
            return super()._conversations_replies(args)
        people = [m for m in self.history.get(channel, []) if ts in (m["ts"], m.get("thread_ts"))]
        thread = sorted(people + own, key=lambda m: float(m["ts"]))
        return {"messages": thread, "has_more": False, "response_metadata": {"next_cursor": ""}}

    # --- response URLs and Socket Mode -------------------------------------------------------

    async def _respond(self, request: web.Request) -> web.Response:
        args = await request.json()
        key = request.match_info["key"]
        call = Call("response_url", {"key": key, **args}, time.monotonic())
        self.calls.append(call)
        # Slack allows five uses of a response URL (within 30 minutes).
        if len([c for c in self.calls_to("response_url") if c.args["key"] == key]) > 5:
            call.status, call.error = 404, "used_url"
            return web.Response(status=404, text="used_url")
        failure = self._failure("response_url")
        if failure is not None:
            call.status, call.error = (
                (failure.status if failure.status != 200 else 400),
                failure.error,
            )
            headers = (
                {"Retry-After": str(failure.retry_after)} if failure.retry_after is not None else {}
            )
            return web.Response(status=call.status, text=failure.error, headers=headers)
        problems = block_problems(args.get("blocks") or [])
        if problems:
            call.status, call.error = 400, "invalid_blocks"
            return web.Response(status=400, text="invalid_blocks")
        return web.Response(text="ok")

    async def _socket(self, request: web.Request) -> web.WebSocketResponse:
        ws = web.WebSocketResponse()
        await ws.prepare(request)
        self._loop = asyncio.get_running_loop()
        self._sockets.append(ws)
        await ws.send_str(json.dumps({"type": "hello", "num_connections": len(self._sockets)}))
        async for frame in ws:
            if frame.type == WSMsgType.TEXT:
                self.socket_acks.append(json.loads(frame.data))
        return ws


async def _arguments(request: web.Request) -> dict[str, Any]:
    """A Web API call's arguments, whether sent as JSON, as a form or in the query."""
    data: dict[str, Any] = dict(request.query)
    if request.content_type == "application/json":
        data |= await request.json()
    elif request.can_read_body:
        data |= dict(parse_qsl(await request.text()))
    for key in ("blocks", "chunks", "attachments", "loading_messages"):
        if isinstance(data.get(key), str):
            data[key] = json.loads(data[key])
    return data
