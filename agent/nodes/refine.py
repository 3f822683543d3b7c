"""Seed 003's self-refine loop: a failed answer check searches again for what was missing.

The check (``verify``) names what the answer needed but the passages lack; ``research``
searches for exactly that, so the rewrite has new evidence instead of the same passages
told to try harder. The loop stops early when it stagnates: the check's score did not improve and
there is nothing new to write from, so another rewrite would repeat the last one.
"""

from __future__ import annotations

import asyncio
from typing import Any

from langgraph.runtime import Runtime

from agent.deps import Deps
from agent.nodes.common import question_of, timed
from agent.nodes.planning import RetrieveTask
from agent.nodes.retrieve import run_task
from agent.state import AgentState
from agent.wording.progress import report

_MAX_ASPECTS = 3


def missing_queries(state: AgentState) -> list[str]:
    """What the last check found missing and this turn has not searched yet."""
    searched = {q.strip().lower() for q in state.get("searched", [])}
    fresh = [m.strip() for m in state.get("check_missing", []) if m.strip()]
    return [m for m in dict.fromkeys(fresh) if m.lower() not in searched][:_MAX_ASPECTS]


def stagnated(state: AgentState) -> bool:
    """The check did not get better, and there is no new evidence to write from: the last
    search found nothing, or what the check still misses was searched already."""
    scores = state.get("check_scores", [])
    if len(scores) < 2 or scores[-1] > scores[-2]:
        return False
    return state.get("research_found", -1) == 0 or not missing_queries(state)


@timed("research")
async def research(state: AgentState, runtime: Runtime[Deps]) -> dict[str, Any]:
    deps = runtime.context
    aspects = missing_queries(state)
    question = question_of(state)
    report("more", state["language"])
    scopes = state["turn"]["scopes"]
    seen = list(state.get("seen", []))
    tasks = [
        RetrieveTask(
            label=f"missing: {aspect}",
            queries=[aspect, f"{question} {aspect}"],
            k=deps.config.k_moderate,
            scopes=scopes,
            filters={},
            exclude=seen,
            neighbours=deps.config.neighbours,
            respell=True,
        )
        for aspect in aspects
    ]
    results = await asyncio.gather(*(run_task(t, deps.kb, "research") for t in tasks))
    pool = [item for result in results for item in result["pool"]]
    fresh = {item["id"] for item in pool} - set(seen)
    notes = [f"searched again for: {', '.join(aspects)}"]
    notes += sorted({n for result in results for n in result["notes"]})
    return {
        "pool": pool,
        "seen": sorted(fresh),
        "searched": aspects,
        "research_found": len(fresh),
        "notes": notes,
    }
