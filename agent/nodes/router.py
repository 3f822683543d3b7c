"""The router, and the history rewrite (context_enhancement) for a follow-up.

One fast-model call (``Analysis``) routes, rewrites with the thread history
and plans at once; the seeds' classifier, context enhancement and planner
stay separate nodes that read its result, so each can fall back on its own.
Without an LLM (or when it fails) routing uses multilingual embedding
prototypes and text rules.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from langchain_core.messages import BaseMessage
from langgraph.runtime import Runtime

from agent.deps import Deps
from agent.llm.calls import LLMError, once_sent, structured
from agent.llm.schemas import Analysis
from agent.memory.budget import TokenPlan
from agent.nodes.common import (
    degraded,
    features_of,
    glossary_pairs,
    llm_used,
    persona_of,
    timed,
)
from agent.nodes.entry import has_history
from agent.nodes.retrieve import prefetch
from agent.prompts import analysis_messages
from agent.retrieval.embeddings import encoder_similarity
from agent.routing.bypass import (
    ANY_QUESTION,
    Needed,
    asks_about_something,
    is_creative_request,
    match_needed,
    without_pleasantries,
)
from agent.routing.followup import resolve
from agent.routing.intent import is_context_dependent, memory_command
from agent.routing.reading import asks_for_tool, read_locally
from agent.state import RAG_ROUTES, AgentState, Plan, SubQuestion
from agent.wording import replies
from agent.wording.progress import report, shown

log = logging.getLogger(__name__)


def history_of(state: AgentState) -> list[BaseMessage]:
    """The thread before this turn's message."""
    messages: list[BaseMessage] = list(state.get("messages", []))
    return messages[:-1]


def _plan_from(analysis: Analysis) -> Plan:
    """The model's plan as it came; the planner node bounds and cleans every plan."""
    return Plan(
        normalized=analysis.standalone_question,
        sub_questions=[
            SubQuestion(id=s.id, question=s.question, priority=s.priority, depends_on=s.depends_on)
            for s in analysis.sub_questions
        ],
        variations=list(analysis.variations),
        answer_style=analysis.answer_style,
        filters=analysis.filters.model_dump(exclude_none=True),
    )


def _unsure(
    route: str, confidence: float, threshold: float, keep: tuple[str, ...] = ()
) -> tuple[str, list[str]]:
    """Seed 004's safe fallback: an unsure classification searches the documents
    (except for the routes in ``keep``, which the caller trusts whatever the score)."""
    if confidence < threshold and route != "knowledge" and route not in keep:
        return "knowledge", [f"router unsure ({confidence:.2f}); searched the documents"]
    return route, []


def _from_analysis(analysis: Analysis, state: AgentState, deps: Deps) -> dict[str, Any]:
    config = deps.config
    question = state["question"]
    route, notes = _unsure(
        analysis.route, analysis.confidence, config.router_min_confidence, ("tools", "memory")
    )
    if route in ("smalltalk", "general") and not analysis.reply.strip():
        route = "knowledge"
    standalone = analysis.standalone_question.strip() or question
    if not (analysis.needs_history and has_history(state)):
        standalone = question
    return {
        "route": route,
        "route_confidence": analysis.confidence,
        "complexity": analysis.complexity,
        "needs_history": analysis.needs_history and has_history(state),
        "standalone": standalone,
        "reply": analysis.reply.strip(),
        "plan": _plan_from(analysis),
        "user_facts": [f.model_dump() for f in analysis.user_facts],
        "web_query": analysis.web_query.strip(),
        "notes": notes,
    }


async def _documents_claim(state: AgentState, deps: Deps, needed: Needed | None) -> str | None:
    """Why a message headed for a bypass is a question for the documents, or None.

    One keyword lookup in the turn's scopes, then, if its words fall short, one vector
    read for its meaning (see :mod:`agent.routing.bypass`); ``needed`` is the match that
    claims it, None for a pleasantry, which never needs a lookup.
    """
    if needed is None:
        return None
    scopes = state["turn"]["scopes"]
    question, kb = state["question"], deps.kb
    within = frozenset(scopes) if scopes else None

    def claim() -> str | None:
        match = kb.keyword_match(question, within)
        if match >= needed.words:
            return f"the documents match this message ({match:.2f}), so they were searched"
        try:
            meaning = kb.meaning_match(question, within)
        except Exception:  # the vector store is down: the words had their say
            log.warning("meaning match unavailable; routed on keywords", exc_info=True)
            return None
        if meaning >= needed.meaning:
            return (
                f"the documents match this message in meaning ({meaning:.2f}), "
                "so they were searched"
            )
        return None

    return await asyncio.to_thread(claim)


async def _local_route(state: AgentState, deps: Deps) -> dict[str, Any]:
    """Routing without an LLM: text rules for tools, then embedding prototypes, then the
    documents' say before a smalltalk reply."""
    question = state["question"]
    reading = await asyncio.to_thread(read_locally, question, has_history(state))
    needs_history = reading.needs_history
    base = {
        "user_facts": reading.facts,
        "needs_history": needs_history,
        "standalone": reading.standalone,
    }
    if reading.tool:
        return base | {"route": "tools", "route_confidence": 1.0, "complexity": "simple"}
    guess = await asyncio.to_thread(deps.prototype_router.classify, question)
    route, notes = _unsure(guess.route, guess.confidence, deps.config.prototype_min_confidence)
    if route == "tools":  # the prototypes say "tools" but no rule found what to compute
        route = "knowledge"
    if route == "creative" and not is_creative_request(question):
        claimed = await _documents_claim(state, deps, match_needed(question))
        if claimed is not None:
            route, notes = "knowledge", [*notes, claimed]
    if route == "smalltalk" and not needs_history:
        needed = match_needed(question)
        claimed = await _documents_claim(state, deps, needed)
        if claimed is None and needed is not None and asks_about_something(question):
            claimed = "a question about something, not a pleasantry: searched, not greeted"
        if claimed is None:
            reply = replies.smalltalk(question, state["language"])
            return base | {"route": route, "route_confidence": guess.confidence, "reply": reply}
        notes = [*notes, claimed]
    if route == "smalltalk":
        route = "knowledge"
    complexity = "complex" if route == "analysis" else "moderate"
    return base | {
        "route": route,
        "route_confidence": guess.confidence,
        "complexity": complexity,
        "notes": notes,
    }


@timed("router")
async def router(state: AgentState, runtime: Runtime[Deps]) -> dict[str, Any]:
    update = await _route(state, runtime)
    if features_of(state, runtime.context).routing or update["route"] in ("memory", *RAG_ROUTES):
        return update
    # Routing switched off: every message is a question for the documents.
    note = f"routing is off; searched the documents instead of the {update['route']} path"
    notes = [*update.get("notes", []), note]
    return update | {"route": "knowledge", "reply": "", "notes": notes}


async def _route(state: AgentState, runtime: Runtime[Deps]) -> dict[str, Any]:
    deps = runtime.context
    language = state["language"]
    report("analyze", language)
    profile = state.get("profile", "")  # read beside the cache lookup
    question = state["question"]
    if memory_command(question):
        return {"route": "memory", "route_confidence": 1.0}
    if deps.llms is not None:
        today = deps.clock().astimezone().strftime("%Y-%m-%d (%A)")
        messages = analysis_messages(
            question,
            history_of(state),
            state.get("summary", ""),
            profile,
            today,
            history_budget=TokenPlan.for_context(deps.config.context_tokens).history,
            persona=persona_of(state, deps),
            glossary=await glossary_pairs(deps, question),
        )
        # The request goes out first; the search of the question then runs during the call.
        call = await once_sent(structured(deps.llms.fast, Analysis, messages))
        fetching = None
        if _worth_prefetching(question, has_history(state)):
            fetching = asyncio.create_task(prefetch(state, deps))
        try:
            analysis, usage = await call
            update = _from_analysis(analysis, state, deps) | llm_used(usage, deps.llms.fast_name)
            update |= await _check_bypass(update, state, deps)
        except LLMError as exc:
            local = await _local_route(state, deps)
            update = local | _merge_notes(local, degraded(exc.kind))
        fetched = await fetching if fetching is not None else {}
        plan = update.get("plan")
        if update["route"] in RAG_ROUTES and not (plan and plan["filters"]):
            notes = [*update.get("notes", []), *fetched.get("notes", [])]
            update = update | fetched | {"notes": notes}
        return update
    return await _local_route(state, deps)


async def _check_bypass(update: dict[str, Any], state: AgentState, deps: Deps) -> dict[str, Any]:
    """The LLM's smalltalk, general or tools decision, unless the documents claim the
    message: then it is searched like any question (the plan came with the analysis)."""
    route, question = update["route"], state["question"]
    talk = route in ("smalltalk", "general") and not update.get("needs_history")
    if talk or (route == "creative" and not is_creative_request(question)):
        needed = match_needed(question)
    elif route == "tools" and not asks_for_tool(question):
        needed = ANY_QUESTION
    else:
        return {}
    claimed = await _documents_claim(state, deps, needed)
    if claimed is None:
        return {}
    return {"route": "knowledge", "reply": "", "notes": [*update.get("notes", []), claimed]}


# "안녕", "thanks!", "who are you?" are short; a question for the documents rarely is.
_PREFETCH_MIN_CHARS = 12


def _worth_prefetching(question: str, history: bool) -> bool:
    """Search the message during the routing call only when it reads like a question of
    its own: not a greeting (too short) and not a follow-up (it needs the rewrite first)."""
    return len(question) >= _PREFETCH_MIN_CHARS and not is_context_dependent(
        question, has_history=history
    )


def _merge_notes(first: dict[str, Any], second: dict[str, Any]) -> dict[str, Any]:
    return second | {"notes": [*first.get("notes", []), *second.get("notes", [])]}


@timed("context_enhancement")
async def context_enhancement(state: AgentState, runtime: Runtime[Deps]) -> dict[str, Any]:
    """Make a follow-up self-contained, and say in the progress line how it was read. The
    routing call's rewrite stands when there was one; without it (no LLM, or it kept the
    message) the thread's earlier questions resolve it by rule (agent/routing/followup.py)."""
    deps = runtime.context
    language, message = state["language"], state["question"]
    standalone = state.get("standalone") or message
    # The local reading only takes the pleasantries off; anything else is the LLM's rewrite.
    # (Off the event loop: the rules scan the whole message, and it may be long.)
    if standalone != message and standalone != await asyncio.to_thread(
        without_pleasantries, message
    ):
        report("rewrite", language, question=shown(standalone))
        return {"notes": [f"read as a follow-up: {standalone!r}"]}
    earlier = [str(m.content) for m in history_of(state) if m.type == "human"]
    similarity = encoder_similarity(deps.kb.embedder)
    resolution = await asyncio.to_thread(resolve, standalone, earlier, similarity)
    if resolution is None:  # only a summary is left of the thread: nothing to read it against
        report("rewrite", language, question=shown(standalone))
        return {}
    report("rewrite", language, question=shown(resolution.question))
    note = (
        f"read as a follow-up ({resolution.reading}) of {resolution.previous!r}: "
        f"{resolution.question!r}"
    )
    return {"standalone": resolution.question, "notes": [note]}
