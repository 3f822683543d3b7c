"""Generate, check, guard: the answer and its bounded retries.

``generate`` streams a draft with ``[n]`` citations (or quotes passages
without an LLM); ``verify`` runs the groundedness check and the answer grade
in one fast call; failures feed their reason back to the next draft, at most
``max_answer_retries`` times, then ``fallback`` answers honestly with the best
sources. ``output_guard`` catches empty or apology-only answers.
"""

from __future__ import annotations

import asyncio
import re
from typing import Any, NamedTuple

from langgraph.runtime import Runtime

from agent.answers.extractive import ExtractiveAnswer, extractive_answer
from agent.deps import Deps
from agent.guards import check_output
from agent.llm.calls import LLMError, stream_text, structured
from agent.llm.route_models import model_for
from agent.llm.schemas import Verdict
from agent.memory.budget import TokenPlan, fit_texts
from agent.nodes.common import (
    degraded,
    features_of,
    glossary_pairs,
    llm_used,
    persona_of,
    question_of,
    timed,
)
from agent.nodes.compression import compress_all
from agent.nodes.judging import candidates, covered
from agent.nodes.refine import missing_queries, stagnated
from agent.nodes.router import history_of
from agent.prompts import answer_messages, verdict_messages
from agent.state import RAG_ROUTES, AgentState, Check, PoolItem, hit_of
from agent.wording import replies
from agent.wording.progress import emit, report

_CITATION = re.compile(r"\[(\d{1,2})\]")


def evidence(state: AgentState, limit: int) -> list[PoolItem]:
    """The passages the answer is written from: the judge's ranking, else retrieval order.

    Passages found after the judge read the pool (the search for what a failed check
    found missing) come right after the ones it found useful: they were looked up for
    exactly what the answer lacked.
    """
    review = state.get("review")
    if review is not None and not state.get("speculating"):
        pool = state.get("pool", [])
        by_id = {item["id"]: item for item in pool}
        ranked = [by_id[i] for i in review["ranking"] if i in by_id]
        reviewed = set(review["ranking"])
        later = [item for item in pool if item["id"] not in reviewed]
        useful = review["useful"]
        return (ranked[:useful] + later + ranked[useful:])[:limit]
    return candidates(state)[:limit]


def renumber(answer: str, items: list[PoolItem]) -> tuple[str, list[PoolItem]]:
    """Keep only the cited passages, numbered 1..n in order of first citation.

    A marker pointing at no passage is removed, so every ``[n]`` the user sees
    maps to a real source.
    """
    order: list[int] = []
    for match in _CITATION.finditer(answer):
        n = int(match.group(1))
        if 0 < n <= len(items) and n not in order:
            order.append(n)
    mapping = {old: new for new, old in enumerate(order, start=1)}

    def replace(match: re.Match[str]) -> str:
        n = int(match.group(1))
        return f"[{mapping[n]}]" if n in mapping else ""

    return _CITATION.sub(replace, answer), [items[n - 1] for n in order]


class Quoted(NamedTuple):
    text: str
    covered: bool  # False: the reply says the documents do not answer the question


async def quote(state: AgentState, deps: Deps, items: list[PoolItem]) -> Quoted:
    """The extractive answer: quoted sentences with [n] pointing into ``items``. It says
    the documents do not answer unless the sentence it leads with answers the question
    (agent/answers/lead.py): what the reader sees first decides, not the passages around it."""
    if not items:
        return Quoted(replies.text("nothing_found", state["language"]), False)
    not_covered = replies.text("not_covered", state["language"])
    hits = [hit_of(item) for item in items]
    question = question_of(state)
    # A follow-up made self-contained (agent/routing/followup.py): the lead must answer the
    # question as resolved ("how often ... during a sev2?"), not the bare "what about sev2?",
    # and what the thread's last answer quoted weighs less.
    rewritten = state.get("needs_history") and question != state["question"]
    follow_up = question if rewritten else None
    answers = [m for m in history_of(state) if m.type == "ai"] if follow_up else []
    said = str(answers[-1].content) if answers else ""

    def run() -> ExtractiveAnswer:
        # In the worker thread: the glossary is rebuilt from the catalog after a change.
        return extractive_answer(
            question,
            hits,
            deps.kb.embedder,
            unrelated_intro=not_covered,
            follow_up=follow_up,
            said=said,
            term_ids=deps.kb.catalog.term_ids,
            glossary=deps.kb.glossary(),
        )

    answer = await asyncio.to_thread(run)
    # The extractive citations are numbered among the quoted passages; map them to ``items``.
    positions = {(c.source, c.locator): c.number for c in answer.citations}
    index = {
        positions[(hit.chunk.source, hit.chunk.locator())]: n
        for n, hit in enumerate(hits, start=1)
        if (hit.chunk.source, hit.chunk.locator()) in positions
    }
    text = _CITATION.sub(lambda m: f"[{index.get(int(m.group(1)), 0)}]", answer.text)
    return Quoted(text, answer.related)


@timed("generate")
async def generate(state: AgentState, runtime: Runtime[Deps]) -> dict[str, Any]:
    deps = runtime.context
    config = deps.config
    language = state["language"]
    items = evidence(state, config.evidence_chunks)
    speculative = bool(state.get("speculating"))
    if state.get("retries"):
        report("rewrite_answer", language)
    else:
        report("write", language)
    emit({"type": "draft_start", "speculative": speculative})
    if deps.llms is None or not items:
        quotes = await quote(state, deps, items)
        return {"draft": quotes.text, "draft_sources": items, "covered": quotes.covered}
    plan_tokens = TokenPlan.for_context(config.context_tokens)
    features = features_of(state, deps)
    raw = [item["text"] for item in items]
    if features.context_compression:
        question = question_of(state)
        # One thread hop for every passage: sentence splitting and term sets, a few ms
        # a passage, which the event loop should not wait for.
        raw = await asyncio.to_thread(compress_all, raw, question)
    texts = fit_texts(raw, plan_tokens.evidence)
    fitted = [item | {"text": text} for item, text in zip(items, texts, strict=False)]
    plan = state.get("plan")
    style = plan["answer_style"] if plan else "normal"
    # The team's spelling of the terms the question or the passages name.
    glossary = await glossary_pairs(deps, question_of(state), texts, language=language)
    messages = answer_messages(
        question_of(state),
        fitted,
        language=language,
        style=style,
        history=history_of(state),
        summary=state.get("summary", ""),
        profile=state.get("profile", ""),
        feedback=state.get("feedback", ""),
        persona=persona_of(state, deps),
        history_budget=plan_tokens.history,
        glossary=glossary,
    )

    def on_token(text: str) -> None:
        emit({"type": "token", "text": text, "speculative": speculative})

    route, complexity = state.get("route", "knowledge"), state.get("complexity", "moderate")
    model, name = model_for(deps.llms, config.route_models, route, complexity)
    try:
        text, usage = await stream_text(model, messages, on_token)
    except LLMError as exc:
        fallback = await quote(state, deps, items)
        quoted = {"draft": fallback.text, "draft_sources": items, "covered": fallback.covered}
        return quoted | degraded(exc.kind) | {"answer_model": ""}
    written = {"draft": text, "draft_sources": items, "answer_model": name}
    return written | {"covered": covered(state, items)} | llm_used(usage, name)


def _accept(draft: str, items: list[PoolItem], check: Check | None) -> dict[str, Any]:
    answer, cited = renumber(draft, items)
    return {"answer": answer, "sources": cited, "grounded": True, "check": check}


@timed("verify")
async def verify(state: AgentState, runtime: Runtime[Deps]) -> dict[str, Any]:
    """Groundedness check and answer grade in one call; a failure asks for a rewrite."""
    deps = runtime.context
    config = deps.config
    draft, items = state.get("draft", ""), state.get("draft_sources", [])
    checking = deps.llms is not None and features_of(state, deps).groundedness_check
    if not checking or state.get("degraded") or not items:
        # Quotes are grounded by construction; a degraded draft is a quote too.
        return _accept(draft, items, None)
    assert deps.llms is not None
    report("check", state["language"])
    if not renumber(draft, items)[1] and _CITATION.search(draft):
        reason = "the citations point at passages that do not exist"
        return _rejected(state, reason)
    try:
        out, usage = await structured(
            deps.llms.fast, Verdict, verdict_messages(question_of(state), draft, items)
        )
    except LLMError as exc:
        note = {"notes": [f"answer check skipped: LLM unavailable ({exc.kind})"]}
        return _accept(draft, items, None) | note
    check = Check(
        grounded=out.grounded and out.grounded_score >= config.min_grounded_score,
        answers_question=out.answers_question,
        score=round(min(out.grounded_score, out.answer_score), 3),
        reason=out.reason,
    )
    if check["grounded"] and check["answers_question"]:
        return _accept(draft, items, check) | llm_used(usage, deps.llms.fast_name)
    default = "not supported by the sources" if not check["grounded"] else "off topic"
    reason = out.reason or default
    used = llm_used(usage, deps.llms.fast_name)
    refine = {"check": check, "check_missing": out.missing, "check_scores": [check["score"]]}
    return _rejected(state, reason) | used | refine


def _rejected(state: AgentState, reason: str) -> dict[str, Any]:
    """Count the failed draft and keep why, for the rewrite prompt and the Final's notes."""
    retries = state.get("retries", 0) + 1
    return {"retries": retries, "feedback": reason, "answer": "", "grounded": False}


def after_verify(state: AgentState, runtime: Runtime[Deps]) -> str:
    """Accept; or search for what was missing, then rewrite; or stop with the fallback."""
    if state.get("grounded"):
        return "output_guard"
    config = runtime.context.config
    # ``retries`` counts rejected drafts: the seeds' retry_count < 3 allows three rewrites.
    features = features_of(state, runtime.context)
    if not features.self_refine:  # no rewrite: the hallucination policy decides at once
        return "fallback"
    if state.get("retries", 0) > config.max_answer_retries or stagnated(state):
        return "fallback"
    if features.sufficiency_loop and missing_queries(state):
        return "research"
    return "generate"


@timed("output_guard")
async def output_guard(state: AgentState, runtime: Runtime[Deps]) -> dict[str, Any]:
    """Catch an LLM's empty or apology-only answer; our own fixed replies and quotes pass."""
    llm_text = runtime.context.llms is not None and not state.get("degraded")
    if state.get("route") in RAG_ROUTES and not (llm_text and state.get("draft_sources")):
        return {}  # a quote, or the fixed "nothing found" reply: honest by construction
    if state.get("route") == "creative" and not state.get("answer_model"):
        return {}  # the fixed "drafting needs a model" reply with the matching documents
    # Stays on the loop: it reads a model's answer (bounded by the answer's token limit,
    # about 1 ms on 4,000 characters), and a thread hop can queue behind embeddings and
    # searches in the default pool, which costs more than it saves.
    quality = check_output(state.get("answer", ""))
    if quality == "pass":
        return {}
    reason = "the answer was empty" if quality == "empty" else "the answer was only an apology"
    return _rejected(state, reason)


def after_output_guard(state: AgentState, runtime: Runtime[Deps]) -> str:
    if state.get("grounded"):
        return "finalize"
    limit = runtime.context.config.max_answer_retries
    if state.get("route") in RAG_ROUTES and state.get("retries", 0) <= limit:
        return "generate"
    return "fallback"


@timed("fallback")
async def fallback(state: AgentState, runtime: Runtime[Deps]) -> dict[str, Any]:
    """The honest end of failed retries: say so, and quote the best sources."""
    deps = runtime.context
    language = state["language"]
    if state.get("route") == "creative":
        return {"answer": replies.text("creative_failed", language), "grounded": False}
    if state.get("route") not in RAG_ROUTES:
        return {"answer": replies.smalltalk(state["question"], language), "grounded": False}
    policy = features_of(state, deps).hallucination_policy
    reason = state.get("feedback", "")
    notes = [f"answer checks failed {state.get('retries', 0)} times: {reason}"] if reason else []
    draft, drafted = state.get("draft", ""), state.get("draft_sources", [])
    if policy == "block":  # say so plainly; show nothing the checks could not support
        answer = replies.text("blocked_unsupported", language)
        return {"answer": answer, "sources": [], "grounded": False, "notes": notes}
    if policy == "warn" and draft.strip() and state.get("check"):
        # The draft as written, under a visible warning: the team chose to see it.
        text, cited = renumber(draft, drafted)
        answer = f"{replies.text('unsupported_warning', language)}\n\n{text}"
        return {"answer": answer, "sources": cited, "grounded": False, "notes": notes}
    items = evidence(state, deps.config.evidence_chunks)
    if not items:
        return {"answer": replies.text("nothing_found", language), "sources": [], "covered": False}
    quoted, cited = renumber((await quote(state, deps, items)).text, items)
    answer = f"{replies.text('fallback_intro', language)}\n\n{quoted}"
    return {"answer": answer, "sources": cited, "grounded": False, "notes": notes}
