"""What the knowledge base holds, as a chat surface shows it to one user: only the
documents in the scopes the user may search there (a channel's rule decides), never
the titles of another team's documents.

Read from the catalog (``ChatServices.documents``); a few milliseconds for thousands of
documents, so a surface asks when it opens rather than keeping a copy.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from agent.retrieval.catalog import DocumentRecord

PROMPT = ("What does “{title}” say?", "“{title}” 문서의 핵심 내용은?")


@dataclass(frozen=True)
class Shelf:
    """The documents one user may see the titles of."""

    documents: tuple[DocumentRecord, ...]

    @classmethod
    def of(cls, documents: Sequence[DocumentRecord], scopes: frozenset[str] | None) -> Shelf:
        """``scopes`` None is every scope: callers pass a rule's scopes, which
        ``load_channel_rules`` always fills, so None only comes from a bare test rule."""
        kept = [d for d in documents if scopes is None or d.scope in scopes]
        return cls(tuple(sorted(kept, key=lambda d: d.ingested_at, reverse=True)))

    def recent_titles(self, limit: int) -> list[str]:
        """The newest documents' titles, each once."""
        titles: list[str] = []
        for doc in self.documents:
            title = (doc.title or doc.source).strip()
            if title and title not in titles:
                titles.append(title)
            if len(titles) == limit:
                break
        return titles

    def counts_by_scope(self) -> list[tuple[str, int]]:
        return sorted(Counter(d.scope for d in self.documents).items())

    def suggested_questions(self, limit: int, language: str) -> list[str]:
        """Questions to offer an empty conversation (the Slack pane's prompts, the web
        chat's welcome): one per newest document, in the user's language."""
        english, korean = PROMPT
        template = korean if language == "ko" else english
        return [template.format(title=title) for title in self.recent_titles(limit)]

    @property
    def last_ingested(self) -> float | None:
        return self.documents[0].ingested_at if self.documents else None
