"""A small OpenAI-compatible server for tests, over real HTTP.

It answers ``/v1/embeddings`` with deterministic vectors (a hash of each
word, so texts that share words are similar), and can be told to fail.

It also answers ``/v1/chat/completions`` well enough for the real
``langchain_openai.ChatOpenAI``: plain and streamed (SSE) text, structured
output (``response_format`` json_schema), tool calls, usage, injected HTTP
errors and delays. Replies are scripted per *task* (see :func:`task_of`), and
every chat call is logged with its timing so a test can count how many LLM
round trips were on the critical path (:meth:`FakeOpenAI.round_trips`).
``GET /v1/models`` lists models (or fails on demand) for readiness checks.
"""

from __future__ import annotations

import asyncio
import hashlib
import itertools
import json
import math
import re
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from aiohttp import web

from tests.fakes.background import BackgroundApp

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
class Call:
    """One chat request as the server saw it; times are ``time.monotonic()`` seconds."""

    task: str
    model: str
    start: float
    end: float
    stream: bool
    status: int = 200
    body: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)


def task_of(body: dict[str, Any]) -> str:
    """The script key for a chat request body.

    Structured output is keyed by the json_schema name, which for a pydantic class is the
    class name (the openai client sends ``{"name": cls.__name__, "strict": true, ...}``).
    A request offering tools is "tools" unless it is already carrying tool results back,
    in which case the model is expected to answer in text.
    """
    response_format = body.get("response_format")
    if isinstance(response_format, dict) and response_format.get("type") == "json_schema":
        name = (response_format.get("json_schema") or {}).get("name")
        if name:
            return str(name)
    messages = body.get("messages") or []
    last_role = messages[-1].get("role") if messages else None
    if body.get("tools") and last_role != "tool":
        return "tools"
    return "text"


def round_trips(calls: Sequence[Call]) -> int:
    """Number of waves of calls, where calls whose time intervals overlap share a wave."""
    waves = 0
    wave_end = float("-inf")
    for call in sorted(calls, key=lambda c: c.start):
        # Strictly later: a call that starts the instant another ends still waited for it.
        if call.start > wave_end:
            waves += 1
            wave_end = call.end
        else:
            wave_end = max(wave_end, call.end)
    return waves


# --- minimal valid instance of a JSON schema -------------------------------------------

_STRING_FORMATS = {
    "date-time": "1970-01-01T00:00:00Z",
    "date": "1970-01-01",
    "time": "00:00:00",
    "uuid": "00000000-0000-0000-0000-000000000000",
    "email": "a@example.com",
    "uri": "http://example.com/",
}


def _resolve_ref(root: dict[str, Any], ref: str) -> dict[str, Any]:
    node: Any = root
    for key in ref.removeprefix("#/").split("/"):
        node = node[key.replace("~1", "/").replace("~0", "~")]
    return dict(node)


def _is_null(schema: Any) -> bool:
    return isinstance(schema, dict) and schema.get("type") == "null"


def minimal_instance(
    schema: dict[str, Any], root: dict[str, Any] | None = None, seen: frozenset[str] = frozenset()
) -> Any:
    """A small value that validates against ``schema`` (the subset pydantic and OpenAI use)."""
    root = schema if root is None else root
    if "$ref" in schema:
        ref = str(schema["$ref"])
        return minimal_instance(_resolve_ref(root, ref), root, seen | {ref})
    if "const" in schema:
        return schema["const"]
    if schema.get("enum"):
        return schema["enum"][0]
    for union in ("anyOf", "oneOf"):
        if union in schema:
            options = list(schema[union])
            # A recursive model is only finite through its nullable branch, so a $ref already
            # being expanded loses to null.
            fresh = [o for o in options if not _is_null(o) and o.get("$ref") not in seen]
            if fresh:
                return minimal_instance(fresh[0], root, seen)
            return (
                None
                if any(_is_null(o) for o in options)
                else minimal_instance(options[0], root, seen)
            )
    if "allOf" in schema:
        merged: dict[str, Any] = {k: v for k, v in schema.items() if k != "allOf"}
        for part in schema["allOf"]:
            part = _resolve_ref(root, part["$ref"]) if "$ref" in part else part
            for key, value in part.items():
                if key == "properties":
                    merged.setdefault("properties", {}).update(value)
                elif key == "required":
                    merged["required"] = [*merged.get("required", []), *value]
                else:
                    merged.setdefault(key, value)
        return minimal_instance(merged, root, seen)

    kind = schema.get("type")
    if isinstance(kind, list):
        kinds = [k for k in kind if k != "null"]
        if not kinds:
            return None
        kind = kinds[0]
    if kind is None and "properties" in schema:
        kind = "object"
    if kind == "object":
        properties = schema.get("properties", {})
        return {
            name: minimal_instance(properties.get(name, {}), root, seen)
            for name in schema.get("required", [])
        }
    if kind == "array":
        prefix = schema.get("prefixItems", [])
        out = [minimal_instance(item, root, seen) for item in prefix]
        items = schema.get("items")
        while len(out) < int(schema.get("minItems", 0)):
            out.append(minimal_instance(items if isinstance(items, dict) else {}, root, seen))
        return out
    if kind == "string":
        if schema.get("format") in _STRING_FORMATS:
            return _STRING_FORMATS[schema["format"]]
        return "x" * int(schema.get("minLength", 0))
    if kind in ("integer", "number"):
        return _minimal_number(schema, integer=kind == "integer")
    if kind == "boolean":
        return False
    return None


def _minimal_number(schema: dict[str, Any], *, integer: bool) -> int | float:
    step = 1 if integer else 0.5
    value: float = 0
    raised = False
    if "minimum" in schema and value < schema["minimum"]:
        value, raised = schema["minimum"], True
    if "exclusiveMinimum" in schema and value <= schema["exclusiveMinimum"]:
        value, raised = schema["exclusiveMinimum"] + step, True
    if "maximum" in schema and value > schema["maximum"]:
        value, raised = schema["maximum"], False
    if "exclusiveMaximum" in schema and value >= schema["exclusiveMaximum"]:
        value, raised = schema["exclusiveMaximum"] - step, False
    if integer:
        # Round toward the inside of the bound that moved the value.
        return math.ceil(value) if raised else math.floor(value)
    return value


# --- helpers for the wire format -------------------------------------------------------


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(
            str(part.get("text", "")) if isinstance(part, dict) else str(part) for part in content
        )
    return "" if content is None else str(content)


def _rough_tokens(text: str) -> int:
    return max(1, len(text) // 4)


def _pieces(text: str, size: int = 4) -> Iterator[str]:
    """Words with their trailing space, long words cut into ``size``-character groups.

    Cuts are on code points, never bytes, so Korean survives the SSE encoding intact.
    """
    for word in re.findall(r"\S+\s*|\s+", text):
        for i in range(0, len(word), size):
            yield word[i : i + size]


def _error_body(status: int) -> dict[str, Any]:
    kinds = {
        400: "invalid_request_error",
        401: "authentication_error",
        404: "not_found_error",
        429: "rate_limit_exceeded",
    }
    kind = kinds.get(status, "server_error")
    return {
        "error": {
            "message": f"injected failure ({status})",
            "type": kind,
            "param": None,
            "code": kind,
        }
    }


@dataclass
class _Answer:
    content: str | None
    tool_calls: list[dict[str, Any]]
    usage: dict[str, int]

    @property
    def finish_reason(self) -> str:
        return "tool_calls" if self.tool_calls else "stop"


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

    def _answer(self, task: str, body: dict[str, Any], reply: Reply) -> _Answer:
        structured = task not in ("text", "tools")
        content = reply.content
        if content is None and not reply.tool_calls:
            if structured:
                schema = body["response_format"]["json_schema"].get("schema") or {}
                content = minimal_instance(schema)
            else:
                content = "ok"
        text = content if isinstance(content, str) or content is None else _dumps(content)
        if reply.malformed:
            text = text or "{"
            # Any proper prefix of a JSON object or array is invalid JSON.
            text = text[: max(1, len(text) // 2)]
        tool_calls: list[dict[str, Any]] = [
            {
                "id": f"call_{next(self._ids)}",
                "type": "function",
                "function": {"name": name, "arguments": _dumps(args)},
            }
            for name, args in reply.tool_calls
        ]
        if reply.usage is not None:
            prompt, completion = reply.usage
        else:
            prompt_text = " ".join(_text_of(m.get("content")) for m in body.get("messages", []))
            prompt = _rough_tokens(prompt_text + _dumps(body.get("tools", "")))
            produced = (text or "") + "".join(t["function"]["arguments"] for t in tool_calls)
            completion = _rough_tokens(produced)
        usage = {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
        }
        return _Answer(text, tool_calls, usage)

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
                error = _error_body(500)
                error["error"]["message"] = f"fake script for {task!r} raised {exc!r}"
                return web.json_response(error, status=500)
            await asyncio.sleep(self.latency_s + reply.delay)
            if reply.status is not None:
                status = reply.status
                return web.json_response(_error_body(reply.status), status=reply.status)
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
            message: dict[str, Any] = {
                "role": "assistant",
                "content": answer.content,
                "refusal": None,
            }
            if answer.tool_calls:
                message["tool_calls"] = answer.tool_calls
            return web.json_response(
                {
                    "id": completion_id,
                    "object": "chat.completion",
                    "created": int(time.time()),
                    "model": model,
                    "choices": [
                        {
                            "index": 0,
                            "message": message,
                            "logprobs": None,
                            "finish_reason": answer.finish_reason,
                        }
                    ],
                    "usage": answer.usage,
                },
                dumps=_dumps,
            )
        finally:
            log_call()

    async def _stream(
        self,
        request: web.Request,
        completion_id: str,
        model: str,
        answer: _Answer,
        *,
        include_usage: bool,
        stall: tuple[int, float] | None = None,
        before_end: Callable[[], None] = lambda: None,
    ) -> web.StreamResponse:
        response = web.StreamResponse(
            headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"}
        )
        await response.prepare(request)
        created = int(time.time())

        def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
            return {
                "id": completion_id,
                "object": "chat.completion.chunk",
                "created": created,
                "model": model,
                "choices": [
                    {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
                ],
            }

        events: list[dict[str, Any]] = [chunk({"role": "assistant", "content": ""})]
        events += [chunk({"content": piece}) for piece in _pieces(answer.content or "")]
        for index, call in enumerate(answer.tool_calls):
            head = {
                "index": index,
                "id": call["id"],
                "type": "function",
                "function": {"name": call["function"]["name"], "arguments": ""},
            }
            events.append(chunk({"tool_calls": [head]}))
            arguments = call["function"]["arguments"]
            for i in range(0, len(arguments), 8):
                part = {"index": index, "function": {"arguments": arguments[i : i + 8]}}
                events.append(chunk({"tool_calls": [part]}))
        events.append(chunk({}, answer.finish_reason))
        if include_usage:
            events.append({**chunk({}), "choices": [], "usage": answer.usage})
        try:
            for sent, event in enumerate(events):
                if stall is not None and sent == stall[0]:
                    await asyncio.sleep(stall[1])
                await response.write(f"data: {_dumps(event)}\n\n".encode())
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
            return web.json_response(_error_body(status), status=status)
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


def _dumps(value: Any) -> str:
    # Real UTF-8 on the wire rather than \u escapes, so clients are tested on it.
    return json.dumps(value, ensure_ascii=False)
