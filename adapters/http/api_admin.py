"""What an admin sees at ``/admin``: documents and scopes, usage per user, recent
feedback with comments, recent questions that got no answer, and (read only) the web
conversations those questions were asked in."""

from __future__ import annotations

import asyncio
from dataclasses import asdict
from typing import Annotated, Any

from fastapi import APIRouter, HTTPException, Query, Request

from adapters.chat.unanswered import unanswered as questions_without_answer
from adapters.http.api_records import conversation_detail, report, usage_report
from adapters.http.schemas import GapConversation
from adapters.http.security import AdminAccount, context
from adapters.paths import shown_path

router = APIRouter(prefix="/api/admin", tags=["admin"])
MAX_GAPS = 200  # the most /unanswered lists: a gap the admin view can show is among these


@router.get("/usage")
async def usage(
    request: Request, admin: AdminAccount, days: Annotated[int, Query(ge=1, le=400)] = 30
) -> dict[str, Any]:
    """Everyone's requests and tokens (every door: HTTP, Slack, Discord), with a total per user."""
    rows = await report(request, days, None)
    per_user: dict[str, dict[str, int]] = {}
    for row in rows:
        total = per_user.setdefault(
            row.user, {"requests": 0, "prompt_tokens": 0, "completion_tokens": 0}
        )
        total["requests"] += row.requests
        total["prompt_tokens"] += row.prompt_tokens
        total["completion_tokens"] += row.completion_tokens
    users = [
        {"user": user} | t | {"total_tokens": t["prompt_tokens"] + t["completion_tokens"]}
        for user, t in sorted(per_user.items(), key=lambda kv: -kv[1]["requests"])
    ]
    return usage_report(rows, days) | {"users": users}


@router.get("/documents")
async def documents(request: Request, admin: AdminAccount) -> dict[str, Any]:
    """The knowledge base's documents, and how many documents each scope holds."""
    docs = await asyncio.to_thread(context(request).documents)
    scopes: dict[str, int] = {}
    for doc in docs:
        scopes[str(doc.get("scope", ""))] = scopes.get(str(doc.get("scope", "")), 0) + 1
    return {"documents": docs, "scopes": dict(sorted(scopes.items()))}


@router.get("/feedback")
async def feedback(
    request: Request, admin: AdminAccount, limit: Annotated[int, Query(ge=1, le=200)] = 50
) -> dict[str, Any]:
    """The latest votes from every door, newest first, with their comments."""
    entries = await asyncio.to_thread(context(request).services.feedback.entries, None, limit)
    return {
        "items": [
            {
                "rating": e.rating,
                "voter": e.voter,
                "voted_at": e.voted_at,
                "comment": e.comment,
                "platform": e.answer.platform,
                "question": e.answer.question,
                "answer": e.answer.answer,
                "sources": e.answer.sources,
            }
            for e in entries
        ]
    }


@router.get("/unanswered")
async def unanswered(
    request: Request, admin: AdminAccount, limit: Annotated[int, Query(ge=1, le=MAX_GAPS)] = 50
) -> dict[str, Any]:
    """Recent questions from every door that the documents did not cover or that got a
    thumbs-down, grouped by topic (the document their closest passages came from, or a
    word they share): what the knowledge base is missing."""
    services = context(request).services
    groups = await questions_without_answer(services.usage, services.feedback, limit)
    return {
        "groups": [g.to_dict() for g in groups],
        "items": [item.to_dict() | {"topic": g.topic} for g in groups for item in g.items],
    }


@router.get("/conversations/{conversation_id}", response_model=GapConversation)
async def gap_conversation(
    conversation_id: str, request: Request, admin: AdminAccount
) -> dict[str, Any]:
    """A web conversation a knowledge gap came from, read only. Admins read only these:
    a conversation that none of the latest gaps (not covered or voted down, as many as
    ``/unanswered`` can list) was asked in stays its owner's alone, and is 404."""
    ctx = context(request)
    groups = await questions_without_answer(ctx.services.usage, ctx.services.feedback, MAX_GAPS)
    gaps = {item.conversation_id for g in groups for item in g.items}
    found = await ctx.conversations.find(conversation_id) if conversation_id in gaps else None
    if found is None:
        raise HTTPException(
            404,
            f"no knowledge gap links to the conversation {conversation_id!r}: admins read "
            "only the web conversations of the latest questions the documents did not cover "
            "or that were voted down (GET /api/admin/unanswered lists them)",
        )
    return await conversation_detail(ctx.conversations, found) | {"owner": found.owner}


def document_row(record: Any) -> dict[str, Any]:
    """A document as the admin view lists it: the source as the team named it (a path
    relative to the service's folder, or the web address), never the server's own path."""
    data = asdict(record)
    row = {k: data[k] for k in ("doc_id", "title", "scope", "n_chunks", "ingested_at") if k in data}
    return row | {"source": shown_path(str(data.get("source", "")))}
