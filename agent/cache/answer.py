"""What the answer cache stores and promises, independent of any backend.

The record (``CachedAnswer``), the exact-match key (``normalize_question``) and
the ``AnswerCache`` protocol live here so that callers and alternative backends
(e.g. Redis) depend on the contract, not on SQLite or numpy matrix internals.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Protocol

import numpy.typing as npt

SameQuestion = Callable[[str, str], bool]
VersionLookup = Callable[[list[str]], dict[str, str]]

# NFKC has already folded the full-width ？ and ！ into ASCII; 。 survives it.
_TRAILING = "?!.。"
_SPACES = re.compile(r"\s+")


def normalize_question(text: str) -> str:
    """The exact-match key: NFKC, lowercase, single spaces, no trailing ``?!.。``.

    Deliberately nothing language-aware (no Korean ending or particle folding):
    the key must be predictable, and rewordings are the semantic lookup's job.
    """
    folded = _SPACES.sub(" ", unicodedata.normalize("NFKC", text).lower()).strip()
    return folded.rstrip(_TRAILING + " ")


def outdated(versions: dict[str, str], current_versions: VersionLookup | None) -> bool:
    """Whether a document the entry cited (``versions``: doc_id -> version token when
    stored) has changed or gone since; without ``current_versions`` nothing is checked."""
    if not versions or current_versions is None:
        return False
    current = current_versions(list(versions))
    return any(current.get(doc_id) != token for doc_id, token in versions.items())


@dataclass(frozen=True)
class CachedAnswer:
    question: str  # the question as first asked
    answer: str
    sources: list[dict[str, Any]]  # JSON-able source records as the agent produced them
    language: str
    similarity: float  # 1.0 for an exact (normalised text) match
    created_at: float
    doc_versions: dict[str, str]  # doc_id -> version token of every cited document when stored


class AnswerCache(Protocol):
    def lookup(
        self,
        question: str,
        vector: npt.NDArray[Any] | None,
        scope_key: str,
        current_versions: VersionLookup | None = None,
        agrees: SameQuestion | None = None,
    ) -> CachedAnswer | None:
        """The cached answer for ``question`` in ``scope_key``, or None.

        ``current_versions(doc_ids)`` gives each document's current version token
        (absent = deleted); entries citing a changed document are dropped, never served.
        ``agrees(question, cached_question)`` may veto a semantic match (the next
        candidate is tried). Without ``vector`` only the exact lookup runs.
        """
        ...

    def store(
        self,
        question: str,
        vector: npt.NDArray[Any] | None,
        scope_key: str,
        answer: str,
        sources: list[dict[str, Any]],
        language: str,
        doc_versions: dict[str, str],
    ) -> None: ...

    def invalidate_documents(self, doc_ids: Iterable[str]) -> int:
        """Drop every entry citing one of ``doc_ids``; return how many were dropped."""
        ...

    def clear(self) -> None: ...
