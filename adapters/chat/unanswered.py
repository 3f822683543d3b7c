"""Questions without an answer, from every door: the ones the documents did not cover (the
usage records) and the answers people marked unhelpful (the feedback votes), grouped by
topic (:mod:`adapters.chat.topics`) so a team sees which documents to write.

Read by ``/api/admin/unanswered`` (and the ``/admin`` page) and App Home's admin section.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any, Literal

from adapters.chat.feedback import FeedbackStore
from adapters.chat.topics import TopicKind, group, source_title, topic_of
from adapters.chat.usage import UsageStore

Reason = Literal["not_covered", "thumbs_down"]


@dataclass
class Unanswered:
    """One question, with why it is listed (both reasons when both hold)."""

    question: str
    asked_at: float
    thread_id: str
    user: str
    topic: str
    reasons: list[Reason] = field(default_factory=list)
    comment: str = ""  # what the voter wrote with a thumbs-down

    @property
    def platform(self) -> str:
        return self.thread_id.split(":", 1)[0]

    @property
    def conversation_id(self) -> str | None:
        """An HTTP conversation's id is its thread's root: the reference the web chat opens."""
        parts = self.thread_id.split(":")
        return parts[3] if self.platform == "http" and len(parts) == 4 else None

    def to_dict(self) -> dict[str, Any]:
        return {
            "question": self.question,
            "asked_at": self.asked_at,
            "reasons": self.reasons,
            "comment": self.comment,
            "platform": self.platform,
            "user": self.user,
            "thread_id": self.thread_id,
            "conversation_id": self.conversation_id,
        }


@dataclass(frozen=True)
class TopicGroup:
    """The questions about one topic: a document title, a word they share, or neither."""

    topic: str
    kind: TopicKind
    items: list[Unanswered]

    def to_dict(self) -> dict[str, Any]:
        return {
            "topic": self.topic,
            "kind": self.kind,
            "count": len(self.items),
            "items": [item.to_dict() for item in self.items],
        }


async def unanswered(
    usage: UsageStore | None,
    feedback: FeedbackStore,
    limit: int = 50,
    platform: str | None = None,
) -> list[TopicGroup]:
    """The last ``limit`` questions without an answer (of ``platform`` only, when given),
    newest first within each group, the largest group first."""
    uncovered = await usage.uncovered(limit) if usage is not None else []
    votes = await asyncio.to_thread(feedback.entries, "down", limit)
    found: dict[tuple[str, str], Unanswered] = {}
    for q in uncovered:
        item = Unanswered(q.text, q.asked_at, q.thread_id, q.user, q.topic, ["not_covered"])
        found.setdefault((q.thread_id, q.text), item)
    for vote in votes:
        answer = vote.answer
        key = (answer.thread_id, answer.question)
        if key in found:  # not covered and voted down: one question, two reasons
            found[key].reasons.append("thumbs_down")
            found[key].comment = vote.comment
            continue
        titles = (source_title(s) for s in vote.source_list())
        found[key] = Unanswered(
            answer.question,
            answer.created_at,
            answer.thread_id,
            f"{answer.platform}:{answer.workspace}:{answer.user}",
            topic_of(titles),
            ["thumbs_down"],
            vote.comment,
        )
    items = [i for i in found.values() if platform is None or i.platform == platform]
    items = sorted(items, key=lambda i: -i.asked_at)[:limit]
    return [
        TopicGroup(topic, kind, members)
        for topic, kind, members in group(items, lambda i: i.topic, lambda i: i.question)
    ]
