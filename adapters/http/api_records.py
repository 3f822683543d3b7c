"""The caller's conversations, feedback on answers, and usage."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, HTTPException, Query, Request, Response

from adapters.chat.usage import UsageRow
from adapters.http.context import PLATFORM, WORKSPACE, conversation_thread_id
from adapters.http.conversations import Conversation, ConversationStore
from adapters.http.markdown import answer_html
from adapters.http.schemas import (
    ConversationDetail,
    ConversationOut,
    ConversationPage,
    FeedbackRequest,
    RenameRequest,
    UsageReport,
)
from adapters.http.security import CurrentAccount, context

MAX_OFFSET = 2**63 - 1  # SQL takes a signed 64-bit offset

router = APIRouter(prefix="/api", tags=["records"])


def conversation_out(found: Conversation) -> dict[str, Any]:
    return {
        "id": found.id,
        "title": found.title,
        "created_at": found.created_at,
        "updated_at": found.updated_at,
    }


def not_found(conversation_id: str) -> HTTPException:
    return HTTPException(404, f"no conversation {conversation_id!r} among yours")


@router.get("/conversations", response_model=ConversationPage)
async def list_conversations(
    request: Request,
    account: CurrentAccount,
    limit: Annotated[int, Query(ge=1, le=100)] = 20,
    # A larger one failed in SQLite (OverflowError) with 500.
    offset: Annotated[int, Query(ge=0, le=MAX_OFFSET)] = 0,
) -> dict[str, Any]:
    """Your conversations, most recently updated first."""
    store = context(request).conversations
    found = await store.page(account.name, limit + 1, offset)
    more = len(found) > limit
    return {
        "items": [conversation_out(c) for c in found[:limit]],
        "next_offset": offset + limit if more else None,
    }


@router.get("/conversations/{conversation_id}", response_model=ConversationDetail)
async def get_conversation(
    conversation_id: str, request: Request, account: CurrentAccount
) -> dict[str, Any]:
    """Every message of one of your conversations, oldest first."""
    store = context(request).conversations
    found = await store.get(conversation_id, account.name)
    if found is None:
        raise not_found(conversation_id)
    return await conversation_detail(store, found)


async def conversation_detail(store: ConversationStore, found: Conversation) -> dict[str, Any]:
    """A conversation with every message, oldest first, answers also as sanitized HTML."""
    messages = await store.messages(found.id)
    return conversation_out(found) | {
        "messages": [
            {
                "id": m.id,
                "role": m.role,
                "content": m.content,
                "html": answer_html(m.content) if m.role == "assistant" else "",
                "sources": m.sources,
                "created_at": m.created_at,
                "meta": m.meta,
            }
            for m in messages
        ]
    }


@router.patch("/conversations/{conversation_id}", response_model=ConversationOut)
async def rename_conversation(
    conversation_id: str, body: RenameRequest, request: Request, account: CurrentAccount
) -> dict[str, Any]:
    store = context(request).conversations
    title = " ".join(body.title.split())
    if not title or not await store.rename(conversation_id, account.name, title):
        raise not_found(conversation_id) if title else HTTPException(422, "the title is blank")
    found = await store.get(conversation_id, account.name)
    assert found is not None
    return conversation_out(found)


@router.delete("/conversations/{conversation_id}", status_code=204)
async def delete_conversation(
    conversation_id: str, request: Request, account: CurrentAccount
) -> Response:
    ctx = context(request)
    if not await ctx.conversations.delete(conversation_id, account.name):
        raise not_found(conversation_id)
    if ctx.services.forget is not None:  # its memory goes too, not only the list entry
        await ctx.services.forget(conversation_thread_id(conversation_id))
    return Response(status_code=204)


@router.post("/feedback")
async def feedback(
    body: FeedbackRequest, request: Request, account: CurrentAccount
) -> dict[str, Any]:
    """Thumbs up or down on one of your answers, with an optional comment. Recorded in the
    same store as the Slack and Discord buttons (see `teamrag feedback`)."""
    ctx = context(request)
    owner = await ctx.conversations.message_owner(body.message_id)
    if owner is None or owner[0] != account.name or owner[1] != "assistant":
        raise HTTPException(404, f"no answer {body.message_id!r} among yours")
    recorded = await ctx.services.feedback.rate(
        body.message_id, account.name, body.rating, body.comment.strip()
    )
    if not recorded:
        raise HTTPException(
            409,
            "this answer can no longer be rated (blocked replies take no feedback, and "
            "unrated answers are forgotten after 90 days)",
        )
    return {"recorded": True, "message_id": body.message_id, "rating": body.rating}


def usage_report(rows: list[UsageRow], days: int) -> dict[str, Any]:
    out = [
        {
            "day": r.day,
            "user": r.user,
            "model": r.model,
            "requests": r.requests,
            "prompt_tokens": r.prompt_tokens,
            "completion_tokens": r.completion_tokens,
            "total_tokens": r.total_tokens,
        }
        for r in rows
    ]
    prompt = sum(r.prompt_tokens for r in rows)
    completion = sum(r.completion_tokens for r in rows)
    return {
        "days": days,
        "requests": sum(r.requests for r in rows),
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
        "rows": out,
    }


async def report(request: Request, days: int, user: str | None) -> list[UsageRow]:
    store = context(request).services.usage
    if store is None:
        raise HTTPException(503, "usage records are not kept by this service")
    return await store.report(days, user)


@router.get("/usage", response_model=UsageReport)
async def usage(
    request: Request, account: CurrentAccount, days: Annotated[int, Query(ge=1, le=400)] = 30
) -> dict[str, Any]:
    """Your requests and tokens over the last ``days`` days (the server's
    ``TEAMRAG_TIMEZONE``), per day and model."""
    rows = await report(request, days, f"{PLATFORM}:{WORKSPACE}:{account.name}")
    return usage_report(rows, days)
