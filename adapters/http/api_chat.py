"""``POST /api/chat`` (one JSON answer, or Server-Sent Events)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query, Request
from fastapi.responses import JSONResponse, StreamingResponse

from adapters.chat.library import Shelf
from adapters.chat.phrases import phrase
from adapters.http.schemas import ChatRequest, ChatResponse
from adapters.http.security import CurrentAccount, context
from adapters.http.turns import HttpTurns, LiveTurn, TurnRefused
from agent.events import Progress, Token
from agent.wording.language import detect_language

router = APIRouter(prefix="/api", tags=["chat"])

SSE_HEADERS = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}


def turns(request: Request) -> HttpTurns:
    found: HttpTurns = request.app.state.turns
    return found


def refused(exc: TurnRefused) -> JSONResponse:
    return JSONResponse({"detail": exc.reason}, status_code=exc.status, headers=exc.headers)


def sse(event: str, data: Any) -> bytes:
    return f"event: {event}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n".encode()


async def sse_events(live: LiveTurn) -> AsyncIterator[bytes]:
    """progress, token, then final; the stream ends after the final.

    The first step is sent at once, before the agent's own first step (which waits for
    the question to be stored and analysed): the asker sees within milliseconds that the
    question was taken, and which conversation it is in, as the Slack reply opens with
    "Thinking…".
    """
    yield sse(
        "progress",
        {
            "stage": "accepted",
            "text": phrase("thinking", detect_language(live.query)),
            "conversation_id": live.conversation.id,
        },
    )
    async for event in live.stream():
        if isinstance(event, Progress):
            yield sse("progress", {"stage": event.stage, "text": event.text})
        elif isinstance(event, Token):
            yield sse("token", {"text": event.text, "reset": event.reset})
        else:
            yield sse("final", event)


@router.post(
    "/chat",
    response_model=ChatResponse,
    responses={
        200: {"content": {"text/event-stream": {}}, "description": "JSON, or SSE when streamed"},
        401: {"description": "No valid token"},
        404: {"description": "No such conversation among yours"},
        422: {"description": "Empty or oversized question"},
        429: {"description": "Over the per-user limit; see Retry-After"},
    },
)
async def chat(body: ChatRequest, request: Request, account: CurrentAccount) -> Any:
    """Ask a question; continue a conversation by passing its id."""
    try:
        live = await turns(request).ask(account, body.query, body.conversation_id, body.features)
    except TurnRefused as exc:
        return refused(exc)
    if body.stream or "text/event-stream" in request.headers.get("accept", ""):
        return StreamingResponse(
            sse_events(live), media_type="text/event-stream", headers=SSE_HEADERS
        )
    return await live.response


@router.get("/welcome")
async def welcome(
    request: Request,
    account: CurrentAccount,
    language: Literal["ko", "en"] = "en",
    limit: Annotated[int, Query(ge=1, le=10)] = 4,
) -> dict[str, Any]:
    """What an empty conversation offers: how many documents can answer, and questions
    about the newest of them, only among the scopes this account may search (the Slack
    pane's suggested prompts, built by the same rule)."""
    ctx = context(request)
    documents = await asyncio.to_thread(ctx.services.documents)
    shelf = Shelf.of(documents, account.searchable(ctx.default_scope))
    return {
        "documents": len(shelf.documents),
        "questions": shelf.suggested_questions(limit, language),
    }
