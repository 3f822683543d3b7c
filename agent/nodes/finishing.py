"""The end of every turn: the blocked reply, finalize, and cache store.

``finalize`` is the only node that writes the thread's history: it appends the
answer, trims the thread (a running summary keeps what was dropped), saves
facts the user stated about themselves, and empties the evidence pool so the
checkpoint stays small. The answer leaves with its update; ``cache_store`` then
keeps a grounded answer for the next asker, while the thread is still locked.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, RemoveMessage
from langgraph.runtime import Runtime

from agent.deps import Deps
from agent.events import quote_of
from agent.memory.profile import remember, user_namespace
from agent.memory.trimming import extractive_summary, select_for_trim
from agent.nodes.common import features_of, timed
from agent.nodes.entry import scope_key
from agent.nodes.judging import covered
from agent.nodes.short_routes import remembered_facts
from agent.state import RAG_ROUTES, RESET, AgentState, PoolItem
from agent.wording import replies

log = logging.getLogger(__name__)


@timed("blocked_response")
async def blocked_response(state: AgentState, runtime: Runtime[Deps]) -> dict[str, Any]:
    """The guard's polite refusal (it says why) becomes the answer; no LLM is called."""
    return {"answer": state["reply"], "route": "blocked"}


def _cacheable(state: AgentState, deps: Deps) -> bool:
    return (
        deps.cache is not None
        and features_of(state, deps).cache
        and state.get("route") in RAG_ROUTES
        and bool(state.get("grounded"))
        and not state.get("degraded")
        and not state.get("needs_history")
        and bool(state.get("sources"))
        # "The documents do not say": true until someone adds the document that does,
        # and a new document invalidates no entry (none cites it). Asked again, search again.
        # The judge's score decides, not only the draft's flag: a speculative draft was
        # written before that score was known.
        and state.get("covered", True) is not False
        and covered(state, state.get("sources", []))
        # Web results change by the hour; only document answers are worth keeping.
        and all(s["kind"] == "document" for s in state.get("sources", []))
    )


def _light(item: PoolItem) -> PoolItem:
    """A cached source keeps only what its citation shows (the quoted passage), not the
    chunk and its neighbours."""
    return item | {"text": quote_of(item.get("text", ""))}


@timed("cache_store")
async def cache_store(state: AgentState, runtime: Runtime[Deps]) -> dict[str, Any]:
    deps = runtime.context
    if not _cacheable(state, deps):
        return {}
    assert deps.cache is not None
    cache, kb = deps.cache, deps.kb
    sources = [_light(s) for s in state.get("sources", [])]
    doc_ids = sorted({s["doc_id"] for s in sources})

    def store() -> None:
        vector = kb.embedder.embed_query(state["question"])
        cache.store(
            state["question"],
            vector,
            scope_key(state, deps),
            state["answer"],
            [dict(s) for s in sources],
            state["language"],
            kb.catalog.document_versions(doc_ids),
        )

    try:
        await asyncio.to_thread(store)
    except Exception as exc:  # not caching is fine; the answer has already gone out
        log.warning("answer not cached (%s: %s)", type(exc).__name__, exc)
    return {}


def _trimmed(state: AgentState, answer: str, deps: Deps) -> dict[str, Any]:
    messages: list[BaseMessage] = [*state.get("messages", []), AIMessage(answer)]
    config = deps.config
    drop = select_for_trim(
        messages, keep_last=config.history_keep_messages, max_tokens=config.history_max_tokens
    )
    removals = [RemoveMessage(m.id) for m in drop if m.id]
    update: dict[str, Any] = {"messages": [messages[-1], *removals]}
    if drop:
        update["summary"] = extractive_summary(state.get("summary", ""), drop)
    return update


@timed("finalize")
async def finalize(state: AgentState, runtime: Runtime[Deps]) -> dict[str, Any]:
    deps = runtime.context
    answer = state.get("answer") or replies.text("error", state["language"], reason="no answer")
    update: dict[str, Any] = {"answer": answer, "pool": RESET, "seen": RESET, "draft_sources": []}
    last = state["messages"][-1]
    if state.get("blocked"):
        # A refused message (an injection, a harmful request) must not steer later turns.
        update["messages"] = [RemoveMessage(last.id)] if last.id else []
        return update
    update |= _trimmed(state, answer, deps)
    facts = remembered_facts(state)
    if facts and runtime.store is not None and features_of(state, deps).user_memory:
        namespace = user_namespace(state["turn"]["workspace"], state["turn"]["user"])
        try:
            await remember(runtime.store, namespace, facts)
        except Exception as exc:
            update["notes"] = [f"could not save what you told me ({type(exc).__name__})"]
    return update
