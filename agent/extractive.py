"""Answers without an LLM: quote the sentences that best answer the question, with citations.

This is the embedded default and the fallback when the LLM fails. It never
invents text: every sentence is copied from a retrieved passage and carries
the ``[n]`` of its source.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from agent.language import Language, detect_language
from agent.retrieval.embeddings import Embedder
from agent.retrieval.tokenizer import tokenize
from agent.retrieval.types import Chunk, SearchHit

_SENTENCE_END = re.compile(r"(?<=[.!?。])\s+|(?<=다\.)|(?<=요\.)|\n{2,}")

_RELATIVE_FLOOR = 0.6

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


_CODE_BLOCK = re.compile(r"```.*?(?:```|$)", re.DOTALL)


def split_sentences(text: str) -> list[str]:
    # A fenced code block is not a sentence: quoted, it reads as noise glued to the
    # next heading. The prose around it says what the code does.
    text = _CODE_BLOCK.sub("\n\n", text)
    # PDF text breaks lines mid-sentence: a single newline is a space, a blank line a
    # break. Table rows and list items stay lines of their own.
    text = re.sub(r"(?<!\n)\n(?!\n|\s*(?:\||[-*•] |\d+\. ))", " ", text)
    text = re.sub(r"\n(?=\s*(?:\||[-*•] |\d+\. ))", "\n\n", text)
    parts = (p.strip() for p in _SENTENCE_END.split(text))
    return [p for p in parts if len(p) >= 8]


def extractive_answer(
    question: str,
    hits: list[SearchHit],
    embedder: Embedder,
    *,
    max_sources: int = 3,
    sentences_per_source: int = 2,
    consider: int = 6,
    intro: str | None = None,
) -> ExtractiveAnswer:
    """Quote the best sentences of the top hits.

    A sentence's score mixes keyword overlap with the question (exact facts,
    names, numbers) and embedding similarity (paraphrase and the other
    language), so a Korean question can quote an English passage. The first
    ``consider`` hits compete on their best sentence and at most ``max_sources``
    are quoted: the passage that answers is not always the one ranked first.
    """
    language = detect_language(question)
    text = _TEXT[language]
    if not hits:
        return ExtractiveAnswer(text["none"], [], language)
    q_vec = embedder.embed_query(question)
    passages = [(hit, _quotable(hit.chunk)) for hit in hits[: max(consider, max_sources)]]
    token_sets = [[set(tokenize(s)) for s in sentences] for _, sentences in passages]
    weight = _rarity_weights(set(tokenize(question)), [t for ts in token_sets for t in ts])
    q_mass = sum(weight.values()) or 1.0
    candidates = []
    for (hit, sentences), tokens in zip(passages, token_sets, strict=True):
        dense = embedder.embed_documents(sentences) @ q_vec
        scored = []
        for i, sentence_tokens in enumerate(tokens):
            overlap = sum(w for t, w in weight.items() if t in sentence_tokens) / q_mass
            scored.append((0.5 * overlap + 0.5 * float(dense[i]), i))
        scored.sort(reverse=True)
        candidates.append((hit, sentences, scored))
    candidates.sort(key=lambda c: c[2][0][0], reverse=True)
    candidates = candidates[:max_sources]
    top = max(scored[0][0] for _, _, scored in candidates)
    lines = [intro or text["intro"], ""]
    citations: list[Citation] = []
    quoted: set[str] = set()  # overlapping chunks (neighbour context) share sentences
    for hit, sentences, scored in candidates:
        # A passage whose best sentence is much weaker than the best overall is noise.
        if scored[0][0] < _RELATIVE_FLOOR * top and citations:
            continue
        floor = _RELATIVE_FLOOR * scored[0][0]
        keep = [i for s, i in scored[:sentences_per_source] if s >= floor]
        fresh = [sentences[i] for i in sorted(keep) if sentences[i] not in quoted]
        if not fresh:
            continue
        quoted.update(fresh)
        number = _citation_number(citations, hit.chunk)
        quote = " ".join(fresh)
        lines.extend([f"> {quote} [{number}]", ""])
    return ExtractiveAnswer("\n".join(lines).strip(), citations, language)


def _is_row(sentence: str) -> bool:
    return sentence.count("|") >= 2


def _with_headers(sentences: list[str]) -> list[str]:
    """Table rows carry their header ("Service | Owner | Channel → billing | Payments | ...");
    a header row alone answers nothing, and a row alone does not say what its cells are."""
    out: list[str] = []
    header: str | None = None
    for sentence in sentences:
        if not _is_row(sentence):
            header = None
            out.append(sentence)
        elif re.fullmatch(r"[|\s:-]+", sentence):
            continue  # a Markdown separator row
        elif header is None:
            header = sentence
        else:
            out.append(f"{header} → {sentence}")
    return out


def _quotable(chunk: Chunk) -> list[str]:
    """Sentences that can answer: not a heading repeated in the text, not a lead-in ("...:")."""
    headings = {h.strip() for h in chunk.heading.split(" > ")} | {chunk.title.strip()}
    sentences = _with_headers(split_sentences(chunk.text))
    good = [s for s in sentences if s not in headings and not s.endswith((":", "："))]
    return good or sentences or [chunk.text.strip()]


def _rarity_weights(query: set[str], sentences: list[set[str]]) -> dict[str, float]:
    """IDF of each query term among the candidate sentences.

    A term in every sentence ("team" in a table of team channels) says little;
    the one that singles out a line ("billing") decides which line answers.
    """
    n = len(sentences)
    return {term: math.log(1.0 + n / (1 + sum(term in s for s in sentences))) for term in query}


def _citation_number(citations: list[Citation], chunk: Chunk) -> int:
    """The number of the chunk's source, reusing it when the same place is cited twice."""
    for c in citations:
        if c.source == chunk.source and c.locator == chunk.locator():
            return c.number
    citations.append(Citation.from_chunk(len(citations) + 1, chunk))
    return len(citations)
