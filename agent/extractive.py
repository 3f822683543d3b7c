"""Answers without an LLM: quote the sentences that best answer the question, with citations.

This is the embedded default and the fallback when the LLM fails. It never
invents text: every sentence is copied from a retrieved passage and carries
the ``[n]`` of its source.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from agent.language import Language, detect_language
from agent.retrieval.embeddings import Embedder
from agent.retrieval.tokenizer import tokenize
from agent.retrieval.types import Chunk, SearchHit

_SENTENCE_END = re.compile(r"(?<=[.!?。])\s+|(?<=다\.)|(?<=요\.)|\n{2,}")

_TEXT: dict[Language, dict[str, str]] = {
    "ko": {
        "intro": "문서에서 찾은 내용입니다.",
        "none": "질문에 답할 수 있는 내용을 문서에서 찾지 못했습니다. "
        "질문을 바꿔 보시거나, 관련 문서가 수집되었는지 확인해 주세요.",
    },
    "en": {
        "intro": "Here is what the documents say.",
        "none": "I could not find anything in the documents that answers this. "
        "Try rephrasing, or check that the relevant documents were ingested.",
    },
}


@dataclass(frozen=True)
class Citation:
    number: int
    title: str
    source: str
    locator: str
    link: str | None

    @classmethod
    def from_chunk(cls, number: int, chunk: Chunk) -> Citation:
        return cls(number, chunk.title, chunk.source, chunk.locator(), chunk.link)


@dataclass(frozen=True)
class ExtractiveAnswer:
    text: str
    citations: list[Citation]
    language: Language


def split_sentences(text: str) -> list[str]:
    # PDF text breaks lines mid-sentence: a single newline is a space, a blank line a break.
    text = re.sub(r"(?<!\n)\n(?!\n)", " ", text)
    parts = (p.strip() for p in _SENTENCE_END.split(text))
    return [p for p in parts if len(p) >= 8]


def extractive_answer(
    question: str,
    hits: list[SearchHit],
    embedder: Embedder,
    *,
    max_sources: int = 3,
    sentences_per_source: int = 2,
) -> ExtractiveAnswer:
    """Quote the best sentences of the top hits.

    A sentence's score mixes keyword overlap with the question (exact facts,
    names, numbers) and embedding similarity (paraphrase and the other
    language), so a Korean question can quote an English passage.
    """
    language = detect_language(question)
    text = _TEXT[language]
    if not hits:
        return ExtractiveAnswer(text["none"], [], language)
    q_tokens = set(tokenize(question))
    q_vec = embedder.embed_query(question)
    lines = [text["intro"], ""]
    citations: list[Citation] = []
    for hit in hits[:max_sources]:
        sentences = split_sentences(hit.chunk.text) or [hit.chunk.text.strip()]
        vecs = embedder.embed_documents(sentences)
        dense = vecs @ q_vec if len(vecs) else np.zeros(len(sentences))
        scored = []
        for i, sentence in enumerate(sentences):
            tokens = set(tokenize(sentence))
            overlap = len(q_tokens & tokens) / len(q_tokens) if q_tokens else 0.0
            scored.append((0.5 * overlap + 0.5 * float(dense[i]), i))
        best = sorted(i for _, i in sorted(scored, reverse=True)[:sentences_per_source])
        number = _citation_number(citations, hit.chunk)
        quote = " ".join(sentences[i] for i in best)
        lines.extend([f"> {quote} [{number}]", ""])
    return ExtractiveAnswer("\n".join(lines).strip(), citations, language)


def _citation_number(citations: list[Citation], chunk: Chunk) -> int:
    """The number of the chunk's source, reusing it when the same place is cited twice."""
    for c in citations:
        if c.source == chunk.source and c.locator == chunk.locator():
            return c.number
    citations.append(Citation.from_chunk(len(citations) + 1, chunk))
    return len(citations)
