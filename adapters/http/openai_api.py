"""An OpenAI-compatible door: ``GET /v1/models`` and ``POST /v1/chat/completions``.

So the official ``openai`` client and front-ends such as Open WebUI can talk to the
team's knowledge base with ``base_url=http://host:8080/v1`` and a teamrag token as
the API key.

Such clients send the whole history with every request. The turn still runs on the
agent's own thread memory (the same answer a Slack thread gets): the digest of the
messages before the new question names the conversation the previous answer was
stored in, and an unknown history starts a new conversation. Sources come at the end
of the answer text as a numbered list, since the format has no place for them.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import time
from collections.abc import AsyncIterator, Sequence
from typing import Any, Literal

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, StreamingResponse
from pydantic import BaseModel, Field

from adapters.http.accounts import Account
from adapters.http.api_chat import SSE_HEADERS, turns
from adapters.http.conversations import title_of
from adapters.http.security import CurrentAccount, context
from adapters.http.turns import LiveTurn, TurnRefused, check_text
from agent.events import Token

router = APIRouter(prefix="/v1", tags=["openai"])


class ChatMessage(BaseModel):
    role: str
    # A string, or a list of parts ({"type": "text", "text": ...}) as newer clients send.
    content: str | list[dict[str, Any]] | None = None

    def text(self) -> str:
        if isinstance(self.content, list):
            return "".join(str(p.get("text", "")) for p in self.content if p.get("type") == "text")
        return self.content or ""


class StreamOptions(BaseModel):
    include_usage: bool = False


class CompletionRequest(BaseModel):
    model: str = "teamrag"
    messages: list[ChatMessage] = Field(min_length=1)
    stream: bool = False
    stream_options: StreamOptions | None = None
    user: str | None = None


def openai_error(status: int, message: str, headers: dict[str, str] | None = None) -> JSONResponse:
    kind = {401: "authentication_error", 404: "not_found_error", 429: "rate_limit_error"}.get(
        status, "invalid_request_error"
    )
    return JSONResponse(
        {"error": {"message": message, "type": kind, "param": None, "code": str(status)}},
        status_code=status,
        headers=headers,
    )


def digest(messages: Sequence[tuple[str, str]]) -> str:
    """The conversation so far, whitespace-insensitive (clients trim differently)."""
    canonical = [[role, " ".join(text.split())] for role, text in messages]
    return hashlib.sha256(json.dumps(canonical, ensure_ascii=False).encode()).hexdigest()


def with_sources(answer: str, sources: list[dict[str, Any]]) -> str:
    if not sources:
        return answer
    lines = []
    for s in sources:
        where = f", {s['location']}" if s.get("location") else ""
        link = f" <{s['link']}>" if s.get("link") else ""
        lines.append(f"[{s['number']}] {s['title'] or s['source']}{where}{link}")
    return answer.rstrip() + "\n\nSources:\n" + "\n".join(lines)


@router.get("/models")
async def models(request: Request, account: CurrentAccount) -> dict[str, Any]:
    name = context(request).model_name
    return {
        "object": "list",
        "data": [{"id": name, "object": "model", "created": 0, "owned_by": "teamrag"}],
    }


def check_history(messages: Sequence[ChatMessage], limit: int) -> None:
    """The whole history, refused when over ``limit`` characters (the client sends it with
    every request; before, 100 MB of it were taken with 200) or when it is not text."""
    size = 0
    for number, message in enumerate(messages):
        text = message.text()
        check_text(text, f"messages[{number}]")
        size += len(text)
    if size > limit:
        raise TurnRefused(
            413,
            f"the messages hold {size} characters; the limit is {limit} "
            "(TEAMRAG_HTTP_MAX_HISTORY_CHARS): start a new chat or send less history",
        )


async def _start(request: Request, account: Account, body: CompletionRequest) -> LiveTurn:
    check_history(body.messages, context(request).max_history_chars)
    talk = [(m.role, m.text()) for m in body.messages if m.role in ("user", "assistant")]
    if not talk or talk[-1][0] != "user":
        raise TurnRefused(422, "the last message must be the user's question (role 'user')")
    chat = turns(request)
    query = chat.check_query(talk[-1][1])
    await chat.admit(account, query)
    store = context(request).conversations
    earlier = talk[:-1]
    found = await store.by_digest(account.name, digest(earlier)) if earlier else None
    conversation = await store.get(found, account.name) if found else None
    if conversation is None:
        first = next((text for role, text in talk if role == "user"), query)
        conversation = await store.create(account.name, title_of(first))
    live = chat.start(account, query, conversation)
    live.history = [*earlier, ("user", query)]
    # Remembered when the answer is ready, whether or not the client is still there.
    task = asyncio.create_task(_remember_answer(request, account, live))
    _remembering.add(task)
    task.add_done_callback(_remembering.discard)
    return live


_remembering: set[asyncio.Task[None]] = set()


async def _remember_answer(request: Request, account: Account, live: LiveTurn) -> None:
    response = await live.response
    await _remember(request, account, live, with_sources(response["response"], response["sources"]))


async def _remember(request: Request, account: Account, live: LiveTurn, answer: str) -> None:
    await context(request).conversations.remember_digest(
        account.name, digest([*live.history, ("assistant", answer)]), live.conversation.id
    )


def _usage(response: dict[str, Any]) -> dict[str, int]:
    used: dict[str, int] = response["usage"]
    return {
        "prompt_tokens": used["prompt_tokens"],
        "completion_tokens": used["completion_tokens"],
        "total_tokens": used["total_tokens"],
    }


@router.post("/chat/completions", response_model=None)
async def completions(
    body: CompletionRequest, request: Request, account: CurrentAccount
) -> JSONResponse | StreamingResponse:
    try:
        live = await _start(request, account, body)
    except TurnRefused as exc:
        return openai_error(exc.status, exc.reason, exc.headers)
    if body.stream:
        include_usage = bool(body.stream_options and body.stream_options.include_usage)
        chunks = _chunks(request, account, live, body.model, include_usage)
        return StreamingResponse(chunks, media_type="text/event-stream", headers=SSE_HEADERS)
    response = await live.response
    text = with_sources(response["response"], response["sources"])
    await _remember(request, account, live, text)  # before the client can send the next turn
    return JSONResponse(
        {
            "id": f"chatcmpl-{response['message_id']}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.model,
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": text},
                    "finish_reason": "stop",
                }
            ],
            "usage": _usage(response),
        }
    )


def _chunk(
    chunk_id: str,
    model: str,
    delta: dict[str, str],
    finish: Literal["stop"] | None = None,
    usage: dict[str, int] | None = None,
) -> bytes:
    body: dict[str, Any] = {
        "id": chunk_id,
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": model,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}] if usage is None else [],
    }
    if usage is not None:
        body["usage"] = usage
    return f"data: {json.dumps(body, ensure_ascii=False)}\n\n".encode()


async def _chunks(
    request: Request, account: Account, live: LiveTurn, model: str, include_usage: bool
) -> AsyncIterator[bytes]:
    chunk_id = f"chatcmpl-{live.conversation.id}"
    yield _chunk(chunk_id, model, {"role": "assistant", "content": ""})
    sent = ""
    async for event in live.stream():
        if isinstance(event, Token):
            # A rewritten draft cannot be taken back in this format: the final text
            # below is sent after what was shown (see the end of the turn).
            if event.text and not event.reset:
                sent += event.text
                yield _chunk(chunk_id, model, {"content": event.text})
        elif isinstance(event, dict):
            answer = with_sources(event["response"], event["sources"])
            # The rest of the answer; or, when the answer is not what was streamed (a
            # rewrite, a fallback), the whole authoritative answer after a rule.
            rest = answer[len(sent) :] if answer.startswith(sent) else "\n\n---\n\n" + answer
            # Before the client hears the end and can send the next turn.
            await _remember(request, account, live, sent + rest)
            if rest:
                sent += rest
                yield _chunk(chunk_id, model, {"content": rest})
            yield _chunk(chunk_id, model, {}, "stop")
            if include_usage:
                yield _chunk(chunk_id, model, {}, usage=_usage(event))
    yield b"data: [DONE]\n\n"
