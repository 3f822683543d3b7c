"""Rerank + sufficiency judge, and the gate that loops back or moves on.

One fast-model call (``Review``) reranks the pool and scores whether it is
enough. The loop is bounded three ways: the iteration limit, stagnation (the
score stopped improving) and nothing left to look for. While the judge reads,
the answer may already be drafting (``speculating``); the judge then tells the
runner to show or drop that draft as soon as it knows.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import Any, Literal

import numpy as np
from langgraph.runtime import Runtime
from langgraph.types import Send

from agent.answers.lead import holds_stem, term_weight
from agent.config import AgentConfig
from agent.deps import Deps
from agent.llm.calls import LLMError, structured
from agent.llm.schemas import Review
from agent.nodes.common import config_of, degraded, llm_used, question_of, timed
from agent.nodes.planning import loop_tasks
from agent.nodes.web_search import web_available
from agent.prompts import review_messages
from agent.retrieval.embeddings import Embedder
from agent.retrieval.tokenizer import inflected, tokenize, words
from agent.state import AgentState, Judgement, PoolItem
from agent.wording.progress import emit, report

Decision = Literal["enough", "loop", "web", "give_up"]
REVIEW_LIMIT = 12  # passages shown to the judge


def by_score(pool: list[PoolItem]) -> list[PoolItem]:
    return sorted(pool, key=lambda item: item["score"], reverse=True)


def candidates(state: AgentState) -> list[PoolItem]:
    """What the judge reads (and a speculative draft is written from).

    First pass: the pool by retrieval score. After a loop: the passages the last
    review found useful, then the new ones by score. Scores of different queries
    do not compare, so sorting the whole pool again would bury what the loop found.
    """
    pool = state.get("pool", [])
    review = state.get("review")
    if review is None:
        return by_score(pool)[:REVIEW_LIMIT]
    by_id = {item["id"]: item for item in pool}
    kept = [by_id[i] for i in review["ranking"][: review["useful"]] if i in by_id]
    reviewed = set(review["ranking"])
    new = by_score([item for item in pool if item["id"] not in reviewed])
    return (kept + new)[:REVIEW_LIMIT]


def decide(
    review: tuple[float, list[str], int],
    iteration: int,
    history: list[float],
    config: AgentConfig,
    *,
    can_web: bool,
) -> Decision:
    """The seeds' loop rule, the web fallback for a thin pool, and the stagnation stop."""
    score, missing, useful = review
    if score >= config.min_sufficiency:
        return "enough"
    if can_web and useful < config.min_documents_for_no_web:
        return "web"
    if not config.features.sufficiency_loop:
        return "enough"
    if iteration + 1 >= config.max_iterations or not missing:
        return "give_up"
    if history and score - history[-1] < config.stagnation_delta:
        return "give_up"
    return "loop"


LocalReview = tuple[list[str], float, list[str], int]

# Cosine of the multilingual encoder between a question and a passage: unrelated pairs
# measured at or below 0.14 on the samples, answering ones 0.23-0.48 (also across languages).
_COSINE_FLOOR, _COSINE_SPAN = 0.1, 0.3


# How much more a question's English word counts when no document uses it: usually it is
# what the question is about ("dress" of "What is the dress code?"), and no passage holds it.
_UNSEEN_WEIGHT = 3.0

TermIds = Callable[[Sequence[str]], Sequence[int | None]]


def local_review(
    question: str, items: list[PoolItem], embedder: Embedder, term_ids: TermIds | None = None
) -> LocalReview:
    """Without an LLM: keep the retrieval order and estimate sufficiency two ways.

    Terms: the share of the question's terms the passages contain (the missing aspects are
    the terms not found), an English word no document uses weighing ``_UNSEEN_WEIGHT`` times more
    (``term_ids``: the catalog's, None for such a word). Meaning: the encoder's similarity
    of the question to the best passages, which also works when the question and the
    documents differ in language and so share no terms. Useful passages score at least half
    the best one.
    """
    ids = [i["id"] for i in items]
    top = max((i["score"] for i in items), default=0.0)
    useful = sum(1 for i in items if i["score"] >= 0.5 * top)
    # Whole words: a character pair of a compound ("로덕" of 프로덕션) is a matching
    # device of the keyword index, not something the question asks about.
    terms = [t for t in dict.fromkeys(words(question)) if len(t) > 1]
    if not terms or not items:
        return ids, 0.0 if not items else 1.0, [], useful
    found = set()
    for item in items:
        found |= set(tokenize(item["text"]))
    weights = {t: term_weight(t) for t in terms}
    held = {t for t in terms if holds_stem(found, t)}
    if term_ids is not None:
        # Latin words only: a Korean stem is a whole 어절 less its particles, so compounds
        # and spacing ("전철역", "전철 1호선 영등포역") leave many Korean stems unseen.
        missed = [t for t in terms if t not in held and t.isascii()]
        for term, known in zip(missed, term_ids(missed), strict=True):
            if known is None:
                weights[term] *= _UNSEEN_WEIGHT
    covered = sum(w for t, w in weights.items() if t in held)
    # An inflected verb ("나면", "넣어야") is grammar the passages need not hold: searched
    # again as "missing", it pulled in any passage with the same verb.
    missing = [t for t in terms if t not in held and not inflected(t)]
    coverage = covered / sum(weights.values())
    vectors = embedder.embed_documents([i["text"] for i in items[:3]])
    best = float(np.max(vectors @ embedder.embed_query(question)))
    meaning = min(1.0, max(0.0, (best - _COSINE_FLOOR) / _COSINE_SPAN))
    score = max(coverage, meaning)
    return ids, score, [] if score >= 0.7 else missing[:3], useful


# Below this sufficiency the passages are only the nearest text, not an answer: say so.
NOT_COVERED = 0.35


def covered(state: AgentState, items: list[PoolItem]) -> bool:
    """Whether the evidence answers the question, as far as the judge can tell."""
    review = state.get("review")
    return bool(items) and not (review is not None and review["score"] < NOT_COVERED)


@timed("judge")
async def judge(state: AgentState, runtime: Runtime[Deps]) -> dict[str, Any]:
    deps = runtime.context
    config = config_of(state, deps)
    question = question_of(state)
    items = candidates(state)
    report("judge", state["language"])
    update: dict[str, Any] = {}
    reviewed: LocalReview | None = None
    if deps.llms is not None and items:
        try:
            messages = review_messages(question, items)
            out, usage = await structured(deps.llms.fast, Review, messages)
            numbers = [n for n in dict.fromkeys(out.ranking) if 0 < n <= len(items)]
            ranked = [items[n - 1]["id"] for n in numbers]
            rest = [i["id"] for i in items if i["id"] not in ranked]  # kept behind the ranked
            score = max(0.0, min(1.0, out.sufficiency))
            reviewed = (ranked + rest, score, out.missing_aspects, len(ranked))
            update |= llm_used(usage, deps.llms.fast_name)
        except LLMError as exc:
            update |= degraded(exc.kind)
    if reviewed is None:  # no LLM, or it failed: the stand-in
        reviewed = await asyncio.to_thread(
            local_review, question, items, deps.kb.embedder, deps.kb.catalog.term_ids
        )
    ranking, score, missing, useful = reviewed
    if not config.features.rerank:
        ranking = [i["id"] for i in items]
    iteration = state.get("iteration", 0)
    can_web = web_available(state, deps)
    history = state.get("score_history", [])
    decision = decide((score, missing, useful), iteration, history, config, can_web=can_web)
    if state.get("speculating"):
        # Show the draft being written in parallel, or drop it if we go back for more.
        emit({"type": "judged", "keep": decision in ("enough", "give_up")})
    if decision == "loop":
        report("more", state["language"])
        update |= {"notes": [f"searched again for: {', '.join(missing[:3])}"]}
    review = Judgement(
        ranking=ranking, useful=useful, score=round(score, 3), missing=missing, decision=decision
    )
    return update | {"review": review, "iteration": iteration + 1, "score_history": [score]}


@timed("gate")
async def gate(state: AgentState, runtime: Runtime[Deps]) -> dict[str, Any]:
    """The join after the judge (and a speculative draft): drop a draft we will not use."""
    review = state.get("review")
    if review is not None and review["decision"] in ("loop", "web"):
        return {"draft": "", "draft_sources": [], "speculating": False}
    if state.get("speculating") and state.get("draft"):
        # The draft was written before the judge's score existed: whether the documents
        # cover the question is known only now (a quoted draft may have found it already).
        judged = covered(state, state.get("draft_sources", []))
        return {"speculating": False, "covered": judged and state.get("covered", True)}
    return {"speculating": False}


def after_gate(state: AgentState, runtime: Runtime[Deps]) -> list[Send] | str:
    review = state.get("review")
    if review is not None and review["decision"] == "loop":
        return loop_tasks(state, runtime.context)
    if review is not None and review["decision"] == "web":
        return "web_search"
    return "verify" if state.get("draft") else "generate"
