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

# How a sentence is scored against the question, tuned with `teamrag eval` on 300 KorQuAD and
# 300 XQuAD questions (benchmarks/README.md): share of the question's terms, weighted by
# rarity among the candidate sentences, against the encoder's cosine; a lift for the
# passage retrieval ranked first (right about 95% of the time); a small one for a new number
# when the question asks how many, how much or when.
_OVERLAP_WEIGHT = 0.8
_FIRST_PASSAGE_BONUS = 0.15
_NUMBER_BONUS = 0.03
# Three sentences hold the gold answer 94% (Korean) and 93% (English) of the time, the best
# one alone 79%: an answer is short, and one of its lines is almost always the one.
MAX_SENTENCES = 3

_ASKS_FOR_NUMBER = re.compile(
    r"몇|얼마|기록은|날짜|언제|연도|년도|수는|비율|how (?:many|much|long|old|far)|when|what year"
    r"|which year|percent|number of|\bdate\b",
    re.IGNORECASE,
)
_NUMBER = re.compile(r"\d+")

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
    max_sentences: int = MAX_SENTENCES,
    consider: int = 6,
    intro: str | None = None,
) -> ExtractiveAnswer:
    """Quote the sentences that answer the question, each with the ``[n]`` of its passage.

    Every sentence of the first ``consider`` hits competes: keyword overlap with the
    question (exact facts, names, numbers) and embedding similarity (paraphrase and the
    other language, so a Korean question can quote an English passage). The best
    ``max_sentences`` are quoted, grouped by passage in document order; the passage that
    answers is not always the one ranked first, and the sentence that answers is rarely
    a passage's first.
    """
    language = detect_language(question)
    text = _TEXT[language]
    if not hits:
        return ExtractiveAnswer(text["none"], [], language)
    sentences = [
        (rank, position, sentence)
        for rank, hit in enumerate(hits[:consider])
        for position, sentence in enumerate(_quotable(hit.chunk))
    ]
    scores = _scores(question, [s for _, _, s in sentences], [r for r, _, _ in sentences], embedder)
    chosen: list[int] = []
    seen: set[str] = set()  # overlapping chunks (neighbour context) share sentences
    for i in sorted(range(len(sentences)), key=lambda i: -scores[i]):
        if sentences[i][2] not in seen:
            seen.add(sentences[i][2])
            chosen.append(i)
        if len(chosen) == max_sentences:
            break
    by_passage: dict[int, list[int]] = {}
    for i in chosen:  # passages in the order of their best sentence
        by_passage.setdefault(sentences[i][0], []).append(i)
    lines = [intro or text["intro"], ""]
    citations: list[Citation] = []
    for rank, picked in by_passage.items():
        quote = " ".join(sentences[i][2] for i in sorted(picked, key=lambda i: sentences[i][1]))
        number = _citation_number(citations, hits[rank].chunk)
        lines.extend([f"> {quote} [{number}]", ""])
    return ExtractiveAnswer("\n".join(lines).strip(), citations, language)


def _scores(
    question: str, sentences: list[str], ranks: list[int], embedder: Embedder
) -> list[float]:
    dense = embedder.embed_documents(sentences) @ embedder.embed_query(question)
    tokens = [set(tokenize(s)) for s in sentences]
    weight = _rarity_weights(set(tokenize(question)), tokens)
    mass = sum(weight.values()) or 1.0
    asked = set(_NUMBER.findall(question))
    wants_number = bool(_ASKS_FOR_NUMBER.search(question))
    scores = []
    for sentence, sentence_tokens, cosine, rank in zip(
        sentences, tokens, dense, ranks, strict=True
    ):
        overlap = sum(w for t, w in weight.items() if t in sentence_tokens) / mass
        score = _OVERLAP_WEIGHT * overlap + (1 - _OVERLAP_WEIGHT) * float(cosine)
        if rank == 0:
            score += _FIRST_PASSAGE_BONUS
        if wants_number and set(_NUMBER.findall(sentence)) - asked:
            score += _NUMBER_BONUS
        scores.append(score)
    return scores


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
