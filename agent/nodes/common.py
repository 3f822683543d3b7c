"""Small helpers every node uses: timing, usage accounting, pool items."""

from __future__ import annotations

import functools
import time
from collections.abc import Awaitable, Callable
from typing import Any

from langgraph.runtime import Runtime

from agent.deps import Deps
from agent.retrieval.types import Chunk, SearchHit
from agent.state import AgentState, PoolItem

# Routes answered from retrieved evidence (the others answer directly).
RAG_ROUTES = ("knowledge", "analysis", "current_events")

Node = Callable[[AgentState, Runtime[Deps]], Awaitable[dict[str, Any]]]


def timed(name: str) -> Callable[[Node], Node]:
    """Record the node's wall time (ms) in ``timings``; parallel copies add up."""

    def decorate(fn: Node) -> Node:
        @functools.wraps(fn)
        async def node(state: AgentState, runtime: Runtime[Deps]) -> dict[str, Any]:
            start = time.perf_counter()
            update = await fn(state, runtime)
            elapsed = round((time.perf_counter() - start) * 1000, 2)
            timings = dict(update.get("timings") or {})
            timings[name] = timings.get(name, 0.0) + elapsed
            return {**update, "timings": timings}

        return node

    return decorate


def llm_used(usage: dict[str, int], model: str, calls: int = 1) -> dict[str, Any]:
    """Count a model's calls and tokens, in total and per model (they are priced apart)."""
    by_model = {model: dict(usage)} if calls else {}
    return {"llm_calls": calls, "usage": dict(usage), "usage_by_model": by_model}


def persona_of(state: AgentState, deps: Deps) -> str:
    """The channel's persona line when it has one, else the process-wide one."""
    return state["turn"].get("persona") or deps.persona


def degraded(reason: str) -> dict[str, Any]:
    """The update a node returns when the LLM failed and its stand-in answered."""
    return {"degraded": True, "notes": [f"LLM unavailable ({reason}); used the fallback"]}


def pool_item(hit: SearchHit, found_by: str) -> PoolItem:
    chunk = hit.chunk
    return PoolItem(
        id=chunk.chunk_id,
        doc_id=chunk.doc_id,
        text=hit.context_text(),
        title=chunk.title,
        source=chunk.source,
        locator=chunk.locator(),
        page=chunk.page,
        heading=chunk.heading,
        link=chunk.link,
        score=round(hit.score, 4),
        kind="document",
        found_by=found_by,
    )


def hit_of(item: PoolItem) -> SearchHit:
    """The inverse of :func:`pool_item`, for the extractive answer, which reads hits."""
    chunk = Chunk(
        chunk_id=item["id"],
        doc_id=item["doc_id"],
        seq=0,
        text=item["text"],
        source=item["source"],
        title=item["title"],
        page=item["page"],
        heading=item["heading"],
        link=item["link"],
    )
    return SearchHit(chunk, item["score"])


def question_of(state: AgentState) -> str:
    return state.get("standalone") or state.get("question", "")
