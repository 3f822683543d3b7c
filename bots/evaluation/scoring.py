"""Score one answered question, and a whole run.

A *hit* is a retrieved or cited passage from the expected source; an answer *contains*
the expected text when, ignoring case, spaces, punctuation and citation markers, the
answer's text includes it (the KorQuAD and SQuAD scripts normalise the same way).

A quoted sentence (a ``> `` line of an extractive answer, split into sentences) is
*off-point* when it holds none of the expected texts: beside the question, whatever else
it says. It is a strict count (a sentence a reader needs to make sense of the one that
answers counts too), so it is read as a comparison between two runs on the same questions.
Quoted table rows end in no full stop: two rows of one quote count as one sentence.

An answer is *right* as the team handbook set scores it: it holds one of the answer strings
as written (runs of whitespace collapsed, case ignored), cites the expected source, opens
as found and was searched for (a reader stops at "couldn't find", so the fact under that
opening is not an answer); for a question the documents do not answer, it opens as "not
found". An answer that holds and cites the fact under a "not found" opening is *hidden*:
the issue's "not found over a right answer". Whether an answer opened
as found is :func:`opened_as_found`, the one place that reads it.
"""

from __future__ import annotations

import re
import statistics
import unicodedata
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import PurePath
from typing import Any

from agent.answers.sentences import split_sentences
from agent.events import Final
from bots.evaluation.sets import Question

_CITATION = re.compile(r"\[\d{1,2}\]")
# Routes that answer without searching the documents.
BYPASS_ROUTES = ("smalltalk", "tools", "memory", "blocked")


def normalise(text: str) -> str:
    text = unicodedata.normalize("NFKC", _CITATION.sub(" ", text)).lower()
    return "".join(c for c in text if not (c.isspace() or unicodedata.category(c)[0] in "PS"))


def contains_answer(answer: str, expected: list[str]) -> bool:
    body = normalise(answer)
    return any(normalise(e) and normalise(e) in body for e in expected)


def holds_answer(answer: str, expected: list[str]) -> bool:
    """The handbook rule, stricter than :func:`contains_answer`: "30,000" is not "30000"."""
    body = " ".join(answer.split()).lower()
    return any(e.strip() and " ".join(e.split()).lower() in body for e in expected)


def opened_as_found(final: Final) -> bool:
    """Whether the reply told the user the documents answer the question (the runner's
    coverage signal: False when the reply opens with "couldn't find"; None, for a reply that
    is not a question for the documents, counts as found)."""
    return final.covered is not False


def holds_cited(question: Question, final: Final, cited: bool | None) -> bool | None:
    """Whether the reply's text holds an answer string and cites the source, whatever it
    opened with; None when the set gives nothing to judge by."""
    if question.unanswerable or not question.answers:
        return None
    return holds_answer(final.answer, question.answers) and cited is not False


def is_right(question: Question, final: Final, cited: bool | None) -> bool | None:
    """None when the set gives nothing to judge by (no answer, and not a none-question)."""
    searched = final.route not in BYPASS_ROUTES
    if question.unanswerable:
        return searched and not opened_as_found(final)
    held = holds_cited(question, final, cited)
    if held is None:
        return None
    return held and searched and opened_as_found(final)


def quoted_sentences(answer: str) -> list[str]:
    """The sentences an answer quotes, in the order the reader sees them; none for a
    written (LLM) answer."""
    quotes = [_CITATION.sub(" ", line[2:]) for line in answer.splitlines() if line[:2] == "> "]
    return [s for quote in quotes for s in split_sentences(quote)]


def off_point(sentences: list[str], expected: list[str]) -> tuple[int, bool] | None:
    """How many of an answer's quoted ``sentences`` hold none of the expected texts, and
    whether the first one does; None when there is nothing to judge (no quote, or no
    expected text)."""
    if not sentences or not expected:
        return None
    on = [contains_answer(s, expected) for s in sentences]
    return on.count(False), on[0]


def matches_source(expected: str, source: str, title: str = "", link: str | None = None) -> bool:
    """Whether a passage's source is the expected one: the same file name (with or without
    its extension), or the expected text inside its path, title or link."""
    if not expected:
        return False
    wanted = expected.strip().lower()
    stem = PurePath(source).stem.lower()
    if wanted in (stem, PurePath(source).name.lower()):
        return True
    if re.fullmatch(r"[\w-]+", wanted):
        # A bare name must be the whole file name or title: paragraph p00001 is not p000012.
        return wanted == title.strip().lower()
    return any(wanted in h for h in (source.lower(), title.lower(), (link or "").lower()))


@dataclass(frozen=True)
class Row:
    question: str
    expected: str
    route: str
    answer: str
    retrieved_rank: int | None  # 1-based rank of the first passage from the expected source
    contains: bool | None  # None: the question has no expected answer
    cited: bool | None  # None: the question names no source
    covered: bool
    latency_ms: float
    llm_calls: int
    sources: list[str] = field(default_factory=list)
    faithfulness: float | None = None
    quoted: int = 0  # sentences quoted (extractive answers)
    off_point: int | None = None  # of those, how many hold no expected text
    lead_on_point: bool | None = None  # the first quoted sentence holds an expected text
    right: bool | None = None  # see is_right; None: nothing to judge by
    hidden: bool = False  # holds and cites the fact, under a "not found" opening
    id: str = ""
    category: str = ""
    unanswerable: bool = False
    thread_id: str = ""  # the conversation it was asked in (a follow-up shares its first turn's)


def score(
    question: Question, final: Final, retrieved: list[tuple[str, str, str | None]], ms: float
) -> Row:
    rank = None
    if question.source:
        for i, (source, title, link) in enumerate(retrieved, start=1):
            if matches_source(question.source, source, title, link):
                rank = i
                break
    cited = None
    if question.source:
        cited = any(
            matches_source(question.source, s.source, s.title, s.link) for s in final.sources
        )
    quoted = quoted_sentences(final.answer)
    judged = off_point(quoted, question.answers)
    return Row(
        question=question.text,
        expected=question.answers[0] if question.answers else "",
        route=final.route,
        answer=final.answer,
        retrieved_rank=rank,
        contains=contains_answer(final.answer, question.answers) if question.answers else None,
        cited=cited,
        covered=opened_as_found(final),
        latency_ms=round(ms, 1),
        llm_calls=final.llm_calls,
        sources=[f"{s.source} {s.locator}".strip() for s in final.sources],
        quoted=len(quoted),
        off_point=judged[0] if judged else None,
        lead_on_point=judged[1] if judged else None,
        right=is_right(question, final, cited),
        hidden=bool(holds_cited(question, final, cited)) and not opened_as_found(final),
        id=question.id,
        category=question.category,
        unanswerable=question.unanswerable,
        thread_id=final.thread_id,
    )


def percentile(values: list[float], q: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))], 1)


def _share(flags: list[bool | None]) -> float | None:
    known = [f for f in flags if f is not None]
    return round(sum(known) / len(known), 4) if known else None


def summarise(rows: list[Row], k: int) -> dict[str, Any]:
    latencies = [r.latency_ms for r in rows]
    ranks = [r.retrieved_rank for r in rows if r.cited is not None]
    faithful = [r.faithfulness for r in rows if r.faithfulness is not None]
    judged = [r for r in rows if r.off_point is not None]
    summary: dict[str, Any] = {
        "questions": len(rows),
        f"hit@{k}": round(sum(1 for r in ranks if r is not None and r <= k) / len(ranks), 4)
        if ranks
        else None,
        "hit@1": round(sum(1 for r in ranks if r == 1) / len(ranks), 4) if ranks else None,
        "answer_contains": _share([r.contains for r in rows]),
        "cited_expected_source": _share([r.cited for r in rows]),
        "not_covered": sum(1 for r in rows if not r.covered),
        "bypassed": sum(1 for r in rows if r.route in BYPASS_ROUTES),
        "routes": dict(Counter(r.route for r in rows).most_common()),
        "latency_p50_ms": round(statistics.median(latencies), 1) if latencies else 0.0,
        "latency_p95_ms": percentile(latencies, 0.95),
        "llm_calls": sum(r.llm_calls for r in rows),
        "faithfulness": round(sum(faithful) / len(faithful), 4) if faithful else None,
        # Extractive answers: quoted sentences that hold no expected text, per answer, and
        # the share of answers whose first quoted sentence is one of them.
        "off_point_per_answer": round(sum(r.off_point or 0 for r in judged) / len(judged), 3)
        if judged
        else None,
        "lead_off_point": _share([not r.lead_on_point for r in judged]),
        "answer_chars_p50": statistics.median(len(r.answer) for r in rows) if rows else 0,
    }
    return summary


def row_dict(row: Row) -> dict[str, Any]:
    return asdict(row)
