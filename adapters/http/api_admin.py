"""What an admin sees at ``/admin``: documents and scopes, usage per user, recent
feedback with comments, and recent questions that got no answer."""

from __future__ import annotations

import asyncio
from dataclasses import asdict
from typing import Annotated, Any

from fastapi import APIRouter, Query, Request

from adapters.chat.unanswered import unanswered as questions_without_answer
from adapters.http.api_records import report, usage_report
from adapters.http.security import AdminAccount, context
from adapters.paths import shown_path

router = APIRouter(prefix="/api/admin", tags=["admin"])


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
    request: Request, admin: AdminAccount, limit: Annotated[int, Query(ge=1, le=200)] = 50
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


def document_row(record: Any) -> dict[str, Any]:
    """A document as the admin view lists it: the source as the team named it (a path
    relative to the service's folder, or the web address), never the server's own path."""
    data = asdict(record)
    row = {k: data[k] for k in ("doc_id", "title", "scope", "n_chunks", "ingested_at") if k in data}
    return row | {"source": shown_path(str(data.get("source", "")))}
