"""Context compression (seed 003's ``context_compression_enabled``), without an LLM call.

A retrieved chunk carries its neighbours, so most of its sentences are about something
else. Keeping the sentences that share a term with the question (and the first one, which
names the subject) shrinks the evidence the answer model reads, so more passages fit the
token plan; an extra compression call would cost a round trip on the critical path.
"""

from __future__ import annotations

import re

_SENTENCE = re.compile(r"(?<=[.!?。])\s+|\n+")
_TERM = re.compile(r"[0-9A-Za-z가-힣]{2,}")


def _terms(text: str) -> set[str]:
    # Korean particles cling to nouns ("배포는"): the first two syllables still match.
    return {t.lower()[:2] if "가" <= t[0] <= "힣" else t.lower() for t in _TERM.findall(text)}


def compress(passage: str, question: str) -> str:
    """The passage's first sentence and every sentence sharing a term with the question;
    the passage unchanged when no sentence matches (better too much than nothing)."""
    sentences = [s.strip() for s in _SENTENCE.split(passage) if s.strip()]
    if len(sentences) <= 2:
        return passage
    wanted = _terms(question)
    kept = [s for i, s in enumerate(sentences) if i == 0 or _terms(s) & wanted]
    if len(kept) <= 1:
        return passage
    return " ".join(kept)


def compress_all(passages: list[str], question: str) -> list[str]:
    """:func:`compress` on every passage, for one thread hop instead of one each."""
    return [compress(passage, question) for passage in passages]
