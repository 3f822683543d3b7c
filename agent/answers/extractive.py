"""Answers without an LLM: quote the sentences that best answer the question, with citations.

This is the embedded default and the fallback when the LLM fails. It never
invents text: every sentence is copied from a retrieved passage and carries
the ``[n]`` of its source.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from agent.answers.candidates import Candidate, beside, quotable
from agent.answers.definitions import defined_names
from agent.answers.kind import Kind, asked_counter, asked_kind, holds_kind
from agent.answers.lead import LeadVerdict, Nearest, TermIds, judge_lead
from agent.answers.scoring import score_sentences
from agent.glossary.glossary import Glossary
from agent.retrieval.embeddings import Embedder, word_similarity
from agent.retrieval.tokenizer import words
from agent.retrieval.types import Chunk, SearchHit
from agent.wording.language import Language, detect_language

# Three sentences hold the gold answer 93% of the time, the best one alone 80%: an answer is
# short, and one of its lines is almost always the one.
MAX_SENTENCES = 3
# A 2nd or 3rd sentence must earn its place, or it is the off-point line a reader trips on.
# Beside the best one, in its passage and section, it often carries the context (who, when)
# and needs 30% of the best score; from another passage or section it must stand on its
# own (50%). A sentence that shares no term with the question needs a cosine of 0.3 and
# half the best sentence's. On the 300-question sets every answer that quoted its gold span
# still does, with 12% (KorQuAD) and 20% (XQuAD) fewer quoted sentences that hold none (on a
# second 300 of each, one answer a set lost its span, a third sentence from another passage).
_KEEP_BESIDE = 0.3
_KEEP_APART = 0.5
_UNRELATED_COSINE = 0.3
_UNRELATED_SHARE = 0.5


# The citation closing a quoted group: " [2]".
_CITED = re.compile(r"\s*\[\d+\]$")

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
    # False when the lead sentence does not answer the question (agent/answers/lead.py): the
    # quotes are the nearest text, not an answer.
    related: bool = True


def extractive_answer(
    question: str,
    hits: list[SearchHit],
    embedder: Embedder,
    *,
    max_sentences: int = MAX_SENTENCES,
    consider: int = 6,
    intro: str | None = None,
    unrelated_intro: str | None = None,
    follow_up: str | None = None,
    said: str = "",
    term_ids: TermIds | None = None,
    glossary: Glossary | None = None,
) -> ExtractiveAnswer:
    """Quote the sentences that answer the question, each with the ``[n]`` of its passage.

    Every sentence of the first ``consider`` hits competes: keyword overlap with the
    question (exact facts, names, numbers) and embedding similarity (paraphrase and the
    other language, so a Korean question can quote an English passage). Up to
    ``max_sentences`` are quoted, the best one first: the passage that answers is not
    always the one ranked first, and the sentence that answers is rarely a passage's first.
    ``intro`` replaces the opening line; ``unrelated_intro`` (when no ``intro`` is given)
    opens an answer whose best sentence bears no relation to the question. For a follow-up
    (``question`` is then the earlier question with it), ``follow_up`` is the message as
    written and ``said`` the thread's previous answer: see ``agent.answers.scoring``.
    ``glossary`` bridges the question's words to the other language (see ``agent.answers.scoring``).
    """
    language = detect_language(question)
    text = _TEXT[language]
    if not hits:
        return ExtractiveAnswer(text["none"], [], language)
    candidates = [c for rank, hit in enumerate(hits[:consider]) for c in quotable(rank, hit.chunk)]
    bridge = glossary.counterpart_phrases(words(question)) if glossary is not None else {}
    # What the team's definitions call what the question describes ("all-hands": 타운홀).
    named = defined_names(follow_up or question, [c.text for c in candidates])
    # What asks for the kind of answer: the message as written, else the question it follows.
    asking = follow_up if follow_up and asked_kind(follow_up) else question
    kind = asked_kind(asking)
    counter = asked_counter(asking)
    scores, overlaps, subjects, cosines = score_sentences(
        question,
        language,
        candidates,
        embedder,
        kind,
        follow_up,
        led_with(said),
        bridge,
        named,
        counter,
    )
    bridge = {t: (*bridge.get(t, ()), *named.get(t, ())) for t in bridge.keys() | named.keys()}
    chosen = _choose(candidates, scores, overlaps, subjects, cosines, max_sentences)

    nearest = _nearest(embedder)

    def verdict(i: int) -> LeadVerdict:
        chunk = hits[candidates[i].rank].chunk
        return judge_lead(
            follow_up or question,
            candidates[i].text,
            f"{chunk.title}\n{candidates[i].heading}",
            cosines[i],
            same_language=detect_language(candidates[i].text) == language,
            term_ids=term_ids,
            counterparts=bridge,
            nearby=beside(candidates, i),
            nearest=nearest,
        )

    # The answer comes first: when the best-scored sentence does not answer and one quoted
    # beside it does (the glossary's definition of "postmortem" above the line with its
    # deadline), that one leads.
    verdicts = {i: verdict(i) for i in chosen}
    lead = next((i for i in chosen if verdicts[i].answers), None)
    if lead is None:
        lead = _answer_beside(candidates, chosen, verdicts, kind, counter)
        if lead is not None:
            chosen = [lead, *chosen[: max_sentences - 1]]
    related = lead is not None
    if lead is not None and lead != chosen[0]:
        chosen = [lead, *(i for i in chosen if i != lead)]
    if intro is None and not related:
        intro = unrelated_intro
    groups: dict[tuple[int, int], list[Candidate]] = {}
    for i in chosen:  # groups in the order of their best sentence, which leads its group
        groups.setdefault(candidates[i].group, []).append(candidates[i])
    lines = [intro or text["intro"], ""]
    citations: list[Citation] = []
    for (rank, _), picked in groups.items():
        # The best sentence first (the answer comes first), the rest as the passage has them.
        ordered = [picked[0], *sorted(picked[1:], key=lambda c: c.position)]
        number = _citation_number(citations, hits[rank].chunk)
        # Each sentence, list item or table row on a line of its own: glued together, two
        # list items read as one with a stray " - " between them.
        quote = [f"> {c.text.removeprefix('• ')}" for c in ordered]
        quote[-1] += f" [{number}]"
        # A bare ">" between them: Markdown (the web chat, the terminal) joins consecutive
        # quote lines into one paragraph.
        lines.extend(["\n>\n".join(quote), ""])
    return ExtractiveAnswer("\n".join(lines).strip(), citations, language, related)


def led_with(answer: str) -> str:
    """What ``answer`` gave as the answer: the first quote of an extractive answer (the
    lines after it are context, and often hold what a follow-up asks next: the weekend
    row under the overtime one), or all of another answer."""
    lines = answer.splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith("> ")), None)
    if start is None:
        return answer
    lead = []
    for line in lines[start:]:
        if not line.startswith("> "):
            break
        lead.append(_CITED.sub("", line.removeprefix("> ")))
    return "\n".join(lead)


def _answer_beside(
    candidates: list[Candidate],
    chosen: list[int],
    verdicts: Mapping[int, LeadVerdict],
    kind: Kind | None,
    counter: str | None,
) -> int | None:
    """The sentence next to a quoted one on the question's subject that holds the kind of
    answer the quoted one lacks: "Your personal checklist ... live there." holds the
    question's words, and the sentence before it the address asked for ("the onboarding
    portal at https://..."). Only right beside, in the same section: further away, "there"
    means something else. ``counter``: the Korean counter a count is asked in ("몇 명")."""
    if kind is None:
        return None
    for i in chosen:
        if verdicts[i].kind_ok or not verdicts[i].on_subject:
            continue
        me = candidates[i]
        for j, other in enumerate(candidates):
            if (
                j not in chosen
                and other.group == me.group
                and abs(other.position - me.position) == 1
                and holds_kind(other.text, kind, counter)
            ):
                return j
    return None


def _nearest(embedder: Embedder) -> Nearest:
    similarity = word_similarity(embedder)

    def nearest(terms: Sequence[str], others: Sequence[str]) -> list[float]:
        return [float(row.max()) for row in similarity(terms, others)]

    return nearest


def _choose(
    candidates: list[Candidate],
    scores: list[float],
    overlaps: list[float],
    subjects: list[float],
    cosines: list[float],
    limit: int,
) -> list[int]:
    """The best sentence, then up to ``limit - 1`` more that earn their place (see
    ``_KEEP_BESIDE``), best first."""
    chosen: list[int] = []
    # Overlapping chunks (neighbour context) share sentences, and a chunk cut inside a
    # definition holds only its start.
    seen: list[str] = []
    for i in sorted(range(len(candidates)), key=lambda i: -scores[i]):
        text = candidates[i].text
        if any(text in other or other in text for other in seen):
            continue
        seen.append(text)
        if chosen:
            best = scores[chosen[0]]
            if scores[i] < _KEEP_BESIDE * best:
                break  # the rest score lower still
            apart = candidates[i].group != candidates[chosen[0]].group
            if apart and scores[i] < _KEEP_APART * best:
                continue  # a sentence beside the best one may still earn a place
            # A sentence that shares no word may still go on with the best one, in a
            # definition of the question's term ("달빛게임즈는 보통 캐나다와 필리핀에서
            # 진행합니다." after "**Soft launch (소프트 런칭)**: ...").
            mine = candidates[i]
            on_with_best = (
                mine.defines and mine.block == candidates[chosen[0]].block and subjects[i] > 0
            )
            if (
                overlaps[i] == 0
                and not on_with_best
                and cosines[i] < max(_UNRELATED_COSINE, _UNRELATED_SHARE * cosines[chosen[0]])
            ):
                continue
        chosen.append(i)
        if len(chosen) == limit:
            break
    return chosen


def _citation_number(citations: list[Citation], chunk: Chunk) -> int:
    """The number of the chunk's source, reusing it when the same place is cited twice."""
    for c in citations:
        if c.source == chunk.source and c.locator == chunk.locator():
            return c.number
    citations.append(Citation.from_chunk(len(citations) + 1, chunk))
    return len(citations)
