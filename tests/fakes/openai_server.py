"""A small OpenAI-compatible server for tests, over real HTTP.

It answers ``/v1/embeddings`` with deterministic vectors (a hash of each
word, so texts that share words are similar), and can be told to fail.

It also answers ``/v1/chat/completions`` well enough for the real
``langchain_openai.ChatOpenAI``: plain and streamed (SSE) text, structured
output (``response_format`` json_schema), tool calls, usage, injected HTTP
errors and delays. Replies are scripted per *task* (see
:func:`tests.fakes.openai_calls.task_of`), and every chat call is logged with its timing
so a test can count how many LLM round trips were on the critical path
(:meth:`FakeOpenAI.round_trips`). ``GET /v1/models`` lists models (or fails on demand)
for readiness checks. What it sends is shaped in :mod:`tests.fakes.openai_wire`.
"""

from __future__ import annotations

import asyncio
import hashlib
import itertools
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from aiohttp import web

from tests.fakes.background import BackgroundApp
from tests.fakes.openai_calls import Call, round_trips, task_of
from tests.fakes.openai_wire import (
    Answer,
    completion_body,
    dumps,
    error_body,
    rough_tokens,
    stream_events,
    text_of,
)
from tests.fakes.schema_instance import minimal_instance

DIM = 64


def fake_vector(text: str) -> list[float]:
    vec = np.zeros(DIM, dtype=np.float32)
    for word in text.lower().split():
        digest = hashlib.md5(word.encode("utf-8")).digest()
        vec[digest[0] % DIM] += 1.0
    if not vec.any():
        vec[0] = 1.0
    unit: list[float] = (vec / np.linalg.norm(vec)).tolist()
    return unit


@dataclass
class Reply:
    """One scripted chat answer.

    ``content`` dicts and lists are sent as JSON text (what a structured call expects).
    ``tool_calls`` are ``(name, arguments)`` pairs. ``status`` turns the answer into an
    OpenAI-style error with that HTTP status. ``delay`` is waited before answering, on top
    of :attr:`FakeOpenAI.latency_s`. ``malformed`` cuts the content short so it is not
    valid JSON. ``usage`` is ``(prompt_tokens, completion_tokens)``; by default both are
    rough counts from text lengths. ``stall`` is ``(chunks, seconds)``: a streamed answer
    goes quiet for that long after that many chunks (a model that hangs mid-answer).
    """

    content: str | dict[str, Any] | list[Any] | None = None
    tool_calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    status: int | None = None
    delay: float = 0.0
    malformed: bool = False
    usage: tuple[int, int] | None = None
    stall: tuple[int, float] | None = None


Script = list[Reply] | Reply | Callable[[dict[str, Any]], Reply]


@dataclass
class FakeOpenAI:
    """Start with :meth:`start`; ``base_url`` is then ``http://127.0.0.1:PORT/v1``.

    ``fail_with`` applies to embeddings only; chat failures are scripted with
    ``Reply(status=...)`` so one task can fail while others answer.
    """

    fail_with: int | None = None
    requests: list[dict[str, Any]] = field(default_factory=list)
    base_url: str = ""
    script: dict[str, Script] = field(default_factory=dict)
    latency_s: float = 0.0
    chat_requests: list[dict[str, Any]] = field(default_factory=list)
    calls: list[Call] = field(default_factory=list)
    # GET /v1/models: the ids it lists, an injected HTTP status, and how often it was asked.
    models: list[str] = field(default_factory=lambda: ["gpt-4o-mini", "gpt-4o"])
    models_fail_with: int | None = None
    models_calls: int = 0
    _cursors: dict[str, tuple[list[Reply], int]] = field(default_factory=dict)
    _ids: Iterator[int] = field(default_factory=itertools.count)
    _epoch: int = 0
    _server: BackgroundApp | None = None

    # --- scripting ---------------------------------------------------------------------

    def reply(self, task: str, *replies: Reply | str | dict[str, Any]) -> FakeOpenAI:
        """Script ``task`` with replies used in order, the last one repeating.

        A bare string or dict is shorthand for ``Reply(content=...)``; no replies
        removes the script so the task gets its default answer again.
        """
        if not replies:
            self.script.pop(task, None)
            return self
        self.script[task] = [r if isinstance(r, Reply) else Reply(content=r) for r in replies]
        return self

    def reset(self) -> None:
        """Forget the script, every log and ``models_fail_with``; ``latency_s`` and
        ``fail_with`` are kept."""
        # A request still in flight (say, one a client already timed out on) belongs to
        # the previous test; the epoch keeps it out of the fresh logs when it finishes.
        self._epoch += 1
        self.script.clear()
        self._cursors.clear()
        self.requests.clear()
        self.chat_requests.clear()
        self.calls.clear()
        self.models_fail_with = None
        self.models_calls = 0

    def round_trips(self, calls: Sequence[Call] | None = None) -> int:
        """Sequential LLM round trips: overlapping calls count once (see :func:`round_trips`)."""
        return round_trips(self.calls if calls is None else calls)

    def calls_by_task(self) -> dict[str, int]:
        return dict(Counter(call.task for call in self.calls))

    def _next_reply(self, task: str, body: dict[str, Any]) -> Reply | None:
        # Read at request time so the main thread may rescript between turns.
        entry = self.script.get(task)
        if entry is None:
            return None
        if isinstance(entry, Reply):
            return entry
        if isinstance(entry, list):
            if not entry:
                return None
            # The cursor remembers which list it belongs to, so assigning a new list
            # starts over while appending to the current one continues it.
            owner, index = self._cursors.get(task, (entry, 0))
            if owner is not entry:
                index = 0
            self._cursors[task] = (entry, index + 1)
            return entry[min(index, len(entry) - 1)]
        return entry(body)

    # --- answering ---------------------------------------------------------------------

    def _answer(self, task: str, body: dict[str, Any], reply: Reply) -> Answer:
        structured = task not in ("text", "tools")
        content = reply.content
        if content is None and not reply.tool_calls:
            if structured:
                schema = body["response_format"]["json_schema"].get("schema") or {}
                content = minimal_instance(schema)
            else:
                content = "ok"
        text = content if isinstance(content, str) or content is None else dumps(content)
        if reply.malformed:
            text = text or "{"
            # Any proper prefix of a JSON object or array is invalid JSON.
            text = text[: max(1, len(text) // 2)]
        tool_calls: list[dict[str, Any]] = [
            {
                "id": f"call_{next(self._ids)}",
                "type": "function",
                "function": {"name": name, "arguments": dumps(args)},
            }
            for name, args in reply.tool_calls
        ]
        if reply.usage is not None:
            prompt, completion = reply.usage
        else:
            prompt_text = " ".join(text_of(m.get("content")) for m in body.get("messages", []))
            prompt = rough_tokens(prompt_text + dumps(body.get("tools", "")))
            produced = (text or "") + "".join(t["function"]["arguments"] for t in tool_calls)
            completion = rough_tokens(produced)
        usage = {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
        }
        return Answer(text, tool_calls, usage)

    async def _chat(self, request: web.Request) -> web.StreamResponse:
        start = time.monotonic()
        epoch = self._epoch
        body: dict[str, Any] = await request.json()
        self.chat_requests.append(body)
        task = task_of(body)
        stream = bool(body.get("stream"))
        status = 200
        logged = False

        def log_call() -> None:
            # Once per request, and for a stream before its last bytes: a client that has
            # read the whole answer finds the call in ``calls``.
            nonlocal logged
            if not logged and epoch == self._epoch:
                logged = True
                model_name = str(body.get("model", ""))
                end = time.monotonic()
                self.calls.append(Call(task, model_name, start, end, stream, status, body))

        try:
            try:
                reply = self._next_reply(task, body) or Reply()
            except Exception as exc:  # a broken script callable should read as a failure
                status = 500
                error = error_body(500)
                error["error"]["message"] = f"fake script for {task!r} raised {exc!r}"
                return web.json_response(error, status=500)
            await asyncio.sleep(self.latency_s + reply.delay)
            if reply.status is not None:
                status = reply.status
                return web.json_response(error_body(reply.status), status=reply.status)
            answer = self._answer(task, body, reply)
            completion_id = f"chatcmpl-{next(self._ids)}"
            model = str(body.get("model", "fake"))
            if stream:
                include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
                return await self._stream(
                    request,
                    completion_id,
                    model,
                    answer,
                    include_usage=include_usage,
                    stall=reply.stall,
                    before_end=log_call,
                )
            return web.json_response(completion_body(completion_id, model, answer), dumps=dumps)
        finally:
            log_call()

    async def _stream(
        self,
        request: web.Request,
        completion_id: str,
        model: str,
        answer: Answer,
        *,
        include_usage: bool,
        stall: tuple[int, float] | None = None,
        before_end: Callable[[], None] = lambda: None,
    ) -> web.StreamResponse:
        response = web.StreamResponse(
            headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"}
        )
        await response.prepare(request)
        events = stream_events(completion_id, model, answer, include_usage=include_usage)
        try:
            for sent, event in enumerate(events):
                if stall is not None and sent == stall[0]:
                    await asyncio.sleep(stall[1])
                await response.write(f"data: {dumps(event)}\n\n".encode())
            before_end()
            await response.write(b"data: [DONE]\n\n")
            await response.write_eof()
        except ConnectionResetError:
            pass  # the client gave up (a timeout test); nothing left to tell it
        return response

    async def _embeddings(self, request: web.Request) -> web.Response:
        body = await request.json()
        self.requests.append(body)
        if self.fail_with is not None:
            return web.json_response(
                {"error": {"message": "injected failure", "type": "server_error"}},
                status=self.fail_with,
            )
        inputs = body["input"] if isinstance(body["input"], list) else [body["input"]]
        data = [
            {"object": "embedding", "index": i, "embedding": fake_vector(str(text))}
            for i, text in enumerate(inputs)
        ]
        return web.json_response(
            {
                "object": "list",
                "data": data,
                "model": body.get("model", "fake"),
                "usage": {"prompt_tokens": 1, "total_tokens": 1},
            }
        )

    async def _models(self, request: web.Request) -> web.Response:
        """The model list, as readiness checks and ``teamrag doctor`` ask for it."""
        self.models_calls += 1
        if self.models_fail_with is not None:
            status = self.models_fail_with
            return web.json_response(error_body(status), status=status)
        data = [
            {"id": model, "object": "model", "created": 0, "owned_by": "fake"}
            for model in self.models
        ]
        return web.json_response({"object": "list", "data": data})

    def start(self) -> FakeOpenAI:
        app = web.Application()
        app.router.add_post("/v1/embeddings", self._embeddings)
        app.router.add_post("/v1/chat/completions", self._chat)
        app.router.add_get("/v1/models", self._models)
        self._server = BackgroundApp(app)
        self.base_url = self._server.start() + "/v1"
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.stop()
