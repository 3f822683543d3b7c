"""The chat endpoint on the wire (agent/llm/endpoint.py): retries as the SDK does them, errors
by kind, and server-sent events however the network cuts them.

A scripted HTTP server answers each request with the next of its raw responses (status,
headers, body pieces with pauses), so every edge a real endpoint or proxy produces can be
sent exactly.
"""

from __future__ import annotations

import asyncio
import json
import logging
import socket
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from email.utils import formatdate

import pytest
from aiohttp import web

from agent.llm.endpoint import ChatEndpoint, EndpointError, on_sent, retry_wait
from tests.fakes.background import BackgroundApp

BODY = {"model": "fast", "messages": [{"role": "user", "content": "백업은 며칠 보관되나요?"}]}
REPLY = {"choices": [{"message": {"content": "35일"}}], "usage": {"prompt_tokens": 9}}


@dataclass
class Raw:
    """One scripted response: ``pieces`` are written in order, each after its pause."""

    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    pieces: list[tuple[float, bytes]] = field(default_factory=list)

    @staticmethod
    def json(value: object, status: int = 200, **headers: str) -> Raw:
        return Raw(status, headers, [(0.0, json.dumps(value, ensure_ascii=False).encode())])

    @staticmethod
    def sse(*pieces: bytes | tuple[float, bytes]) -> Raw:
        steps = [p if isinstance(p, tuple) else (0.0, p) for p in pieces]
        return Raw(200, {"Content-Type": "text/event-stream"}, steps)


class Scripted:
    """Answers the n-th request with ``script[n]`` (the last one repeats)."""

    def __init__(self) -> None:
        self.script: list[Raw] = []
        self.bodies: list[dict[str, object]] = []
        app = web.Application()
        app.router.add_post("/v1/chat/completions", self._answer)
        self._server = BackgroundApp(app, handler_cancellation=True)
        self.base_url = self._server.start() + "/v1"

    async def _answer(self, request: web.Request) -> web.StreamResponse:
        self.bodies.append(await request.json())
        raw = self.script[min(len(self.bodies), len(self.script)) - 1]
        response = web.StreamResponse(status=raw.status, headers=raw.headers)
        await response.prepare(request)
        for pause, piece in raw.pieces:
            await asyncio.sleep(pause)
            await response.write(piece)
        await response.write_eof()
        return response

    def stop(self) -> None:
        self._server.stop()


@pytest.fixture
def server() -> Iterator[Scripted]:
    scripted = Scripted()
    yield scripted
    scripted.stop()


@pytest.fixture
async def endpoint(server: Scripted) -> AsyncIterator[ChatEndpoint]:
    made = ChatEndpoint(server.base_url, "key", timeout_s=2.0, max_retries=2)
    yield made
    await made.aclose()


async def test_a_whole_reply_comes_back_as_the_json_the_endpoint_sent(
    server: Scripted, endpoint: ChatEndpoint
) -> None:
    server.script = [Raw.json(REPLY)]
    assert await endpoint.complete(BODY) == REPLY
    assert server.bodies == [BODY]  # Korean intact, nothing added


async def test_a_429_is_retried_after_the_wait_the_endpoint_asked_for(
    server: Scripted, endpoint: ChatEndpoint, caplog: pytest.LogCaptureFixture
) -> None:
    busy = {"error": {"message": "slow down"}}
    server.script = [Raw.json(busy, 429, **{"Retry-After": "0.2"}), Raw.json(REPLY)]
    started = time.monotonic()
    with caplog.at_level(logging.INFO, logger="agent.llm.endpoint"):
        assert await endpoint.complete(BODY) == REPLY
    assert time.monotonic() - started >= 0.2
    assert len(server.bodies) == 2
    # Each try is a log line, as the SDK's HTTP client wrote them.
    lines = [r.getMessage() for r in caplog.records if r.name == "agent.llm.endpoint"]
    assert [line.split('"')[1] for line in lines] == [
        "HTTP/1.1 429 Too Many Requests",
        "HTTP/1.1 200 OK",
    ]


async def test_server_errors_are_retried_then_reported_with_the_endpoints_message(
    server: Scripted,
) -> None:
    broken = ChatEndpoint(server.base_url, "key", timeout_s=2.0, max_retries=1)
    failed = {"error": {"message": "the GPU fell over"}}
    server.script = [Raw.json(failed, 503, **{"retry-after-ms": "10"})]
    with pytest.raises(EndpointError) as caught:
        await broken.complete(BODY)
    await broken.aclose()
    assert (caught.value.kind, caught.value.status) == ("http_error", 503)
    assert "the GPU fell over" in caught.value.detail
    assert len(server.bodies) == 2  # the first try and one retry


@pytest.mark.parametrize(
    ("status", "headers"), [(400, {}), (401, {}), (503, {"x-should-retry": "false"})]
)
async def test_what_a_retry_cannot_fix_is_reported_at_once(
    server: Scripted, endpoint: ChatEndpoint, status: int, headers: dict[str, str]
) -> None:
    server.script = [Raw.json({"error": {"message": "no"}}, status, **headers), Raw.json(REPLY)]
    with pytest.raises(EndpointError) as caught:
        await endpoint.complete(BODY)
    assert caught.value.status == status
    assert len(server.bodies) == 1


async def test_a_reply_that_is_not_json_is_malformed(
    server: Scripted, endpoint: ChatEndpoint
) -> None:
    server.script = [Raw(200, {}, [(0.0, b'{"choices": [')])]
    with pytest.raises(EndpointError) as caught:
        await endpoint.complete(BODY)
    assert caught.value.kind == "malformed"


async def test_an_endpoint_that_goes_silent_times_out(server: Scripted) -> None:
    slow = ChatEndpoint(server.base_url, "key", timeout_s=0.2, max_retries=0)
    server.script = [Raw(200, {}, [(1.0, json.dumps(REPLY).encode())])]
    with pytest.raises(EndpointError) as caught:
        await slow.complete(BODY)
    await slow.aclose()
    assert caught.value.kind == "timeout"


async def test_nothing_listening_is_unreachable_after_the_retries() -> None:
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    nowhere = ChatEndpoint(f"http://127.0.0.1:{port}/v1", "key", timeout_s=1.0, max_retries=1)
    with pytest.raises(EndpointError) as caught:
        await nowhere.complete(BODY)
    await nowhere.aclose()
    assert caught.value.kind == "unreachable"
    assert str(port) in caught.value.detail


async def test_events_are_read_whatever_the_network_cuts_and_keep_alives_are_skipped(
    server: Scripted, endpoint: ChatEndpoint
) -> None:
    first = json.dumps({"choices": [{"delta": {"content": "백업은 "}}]}, ensure_ascii=False)
    second = json.dumps({"choices": [{"delta": {"content": "35일"}}]}, ensure_ascii=False)
    cut = len(first.encode()) // 2  # in the middle of a Korean character's bytes, maybe
    server.script = [
        Raw.sse(
            b": keep-alive\n\n",
            b"event: message\r\n",
            b"data: " + first.encode()[:cut],
            (0.05, first.encode()[cut:] + b"\r\n\r\n"),
            b"id: 2\ndata: " + second.encode() + b"\n\ndata: [DONE]\n\n",
        )
    ]
    chunks = [chunk async for chunk in endpoint.stream(BODY)]
    texts = [c["choices"][0]["delta"]["content"] for c in chunks]
    assert texts == ["백업은 ", "35일"]


async def test_an_error_sent_inside_a_stream_fails_it(
    server: Scripted, endpoint: ChatEndpoint
) -> None:
    piece = json.dumps({"choices": [{"delta": {"content": "백업은"}}]}, ensure_ascii=False)
    error = json.dumps({"error": {"message": "context length exceeded"}})
    server.script = [Raw.sse(f"data: {piece}\n\ndata: {error}\n\n".encode())]
    seen = []
    with pytest.raises(EndpointError) as caught:
        async for chunk in endpoint.stream(BODY):
            seen.append(chunk)
    assert len(seen) == 1 and "context length exceeded" in caught.value.detail


async def test_the_request_is_reported_sent_before_the_reply_arrives(
    server: Scripted, endpoint: ChatEndpoint
) -> None:
    server.script = [Raw(200, {}, [(0.5, json.dumps(REPLY).encode())])]
    sent = asyncio.Event()
    token = on_sent.set(sent.set)
    try:
        call = asyncio.create_task(endpoint.complete(BODY))
    finally:
        on_sent.reset(token)
    await asyncio.wait_for(sent.wait(), 5)
    assert not call.done()
    assert await call == REPLY


async def test_a_closed_endpoint_opens_a_new_session_when_used_again(
    server: Scripted, endpoint: ChatEndpoint
) -> None:
    server.script = [Raw.json(REPLY)]
    await endpoint.complete(BODY)
    await endpoint.aclose()
    assert await endpoint.complete(BODY) == REPLY


def test_the_wait_before_a_retry() -> None:
    assert retry_wait(0, {"retry-after": "3"}) == 3.0
    assert retry_wait(0, {"retry-after-ms": "250"}) == 0.25
    in_two_seconds = formatdate(time.time() + 2, usegmt=True)
    assert 0 < retry_wait(0, {"retry-after": in_two_seconds}) <= 2
    # Over a minute, or nonsense: the SDK's back-off (0.5 s doubling to 8 s, less jitter).
    assert 0.375 <= retry_wait(0, {"retry-after": "600"}) <= 0.5
    assert 0.375 <= retry_wait(0, {"retry-after": "soon"}) <= 0.5
    assert 1.5 <= retry_wait(2) <= 2.0
    assert 6.0 <= retry_wait(10) <= 8.0
