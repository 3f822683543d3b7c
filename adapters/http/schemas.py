"""What the HTTP API reads and writes (and what /docs shows)."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any, Literal

from pydantic import BaseModel, Field

from adapters.http.markdown import answer_html
from adapters.paths import shown_path
from agent.events import Citation, Final


class ChatRequest(BaseModel):
    query: str = Field(description="The question, in Korean or English.")
    conversation_id: str | None = Field(
        None, description="Continue this conversation; null starts a new one."
    )
    stream: bool = Field(
        False, description="Server-Sent Events (progress, token, final) instead of one JSON."
    )
    features: dict[str, bool | str] | None = Field(
        None,
        description="This turn's feature flags over the defaults and the server's settings, "
        'e.g. {"self_refine": false, "hallucination_policy": "warn"} (docs/agent.md).',
    )


class SourceOut(BaseModel):
    number: int
    title: str
    source: str
    location: str = Field(description="Page or heading within the document.")
    link: str | None
    kind: str
    quote: str = Field("", description="The cited passage, cut at 600 characters.")


class UsageOut(BaseModel):
    prompt_tokens: int
    completion_tokens: int
    total_tokens: int


class ChatResponse(BaseModel):
    query: str
    response: str
    html: str = Field(description="The response's Markdown as sanitized HTML (links http(s) only).")
    sources: list[SourceOut]
    intent: str = Field(description="The route the agent took (knowledge, smalltalk, ...).")
    complexity: str = Field(description="simple, moderate or complex; empty when not routed.")
    model: str = Field(description="The model that wrote the answer, or how it was made.")
    confidence: float
    is_blocked: bool
    cached: bool
    covered: bool | None = Field(
        None,
        description="false: the documents do not answer the question (the reply says so and "
        "shows the closest passages); null: not a question for the documents (smalltalk, "
        "blocked, a failure).",
    )
    conversation_id: str
    message_id: str = Field(description="The answer's id, for POST /api/feedback.")
    language: str
    usage: UsageOut
    timings: dict[str, float] = Field(description="Milliseconds per stage.")
    notes: list[str] = Field(description="Fallbacks taken and limits hit, in plain words.")
    features: dict[str, Any] = Field(
        default_factory=dict, description="The feature flags this turn ran with."
    )


def source_out(source: Citation) -> dict[str, Any]:
    return {
        "number": source.number,
        "title": source.title,
        "source": shown_path(source.source),
        "location": source.locator,
        "link": source.link,
        "kind": source.kind,
        "quote": source.quote,
    }


def model_label(final: Final) -> str:
    """The model that wrote the answer, or how the answer was made without one."""
    if final.model:
        return final.model
    if final.blocked:
        return "(blocked)"
    if final.cached:
        return "(cache)"
    return "(extractive)" if final.mode == "extractive" else "(no llm)"


def chat_response(
    query: str, final: Final, conversation_id: str, message_id: str
) -> dict[str, Any]:
    usage = asdict(final.usage) | {"total_tokens": final.usage.total_tokens}
    return {
        "query": query,
        "response": final.answer,
        "html": answer_html(final.answer),
        "sources": [source_out(s) for s in final.sources],
        "intent": final.route,
        "complexity": final.complexity,
        "model": model_label(final),
        "confidence": round(final.confidence, 4),
        "is_blocked": final.blocked,
        "cached": final.cached,
        "covered": final.covered,
        "conversation_id": conversation_id,
        "message_id": message_id,
        "language": final.language,
        "usage": usage,
        "timings": final.timings,
        "notes": final.notes,
        "features": final.features,
    }


class TokenResponse(BaseModel):
    access_token: str
    token_type: Literal["bearer"] = "bearer"


class ConversationOut(BaseModel):
    id: str
    title: str
    created_at: float
    updated_at: float


class ConversationPage(BaseModel):
    items: list[ConversationOut]
    next_offset: int | None = Field(description="Pass as ?offset= for the next page; null: last.")


class MessageOut(BaseModel):
    id: str
    role: Literal["user", "assistant"]
    content: str
    html: str = Field("", description="An answer as sanitized HTML; empty for a question.")
    sources: list[SourceOut]
    created_at: float
    meta: dict[str, Any]


class ConversationDetail(ConversationOut):
    messages: list[MessageOut]


class GapConversation(ConversationDetail):
    """A knowledge gap's conversation as an admin reads it: whose it is, too."""

    owner: str


class RenameRequest(BaseModel):
    title: str = Field(min_length=1, max_length=200)


class FeedbackRequest(BaseModel):
    message_id: str
    rating: Literal["up", "down"]
    comment: str = Field("", max_length=2000)


class UsageRowOut(BaseModel):
    day: str
    user: str
    model: str
    requests: int
    prompt_tokens: int
    completion_tokens: int
    total_tokens: int


class UsageReport(BaseModel):
    days: int
    requests: int
    prompt_tokens: int
    completion_tokens: int
    total_tokens: int
    rows: list[UsageRowOut]
