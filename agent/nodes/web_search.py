"""Web search: once a turn, when a provider is configured and the documents are thin."""

from __future__ import annotations

from typing import Any

from langgraph.runtime import Runtime

from agent.deps import Deps
from agent.nodes.common import features_of, judge_enabled, question_of, timed
from agent.state import AgentState, PoolItem
from agent.websearch.provider import WebSearchError, search_terms
from agent.wording.progress import report


def web_available(state: AgentState, deps: Deps) -> bool:
    """A provider is configured and switched on, and this turn has not searched the web."""
    return (
        deps.web is not None
        and features_of(state, deps).web_search
        and not state.get("web_searched")
    )


@timed("web_search")
async def web_search(state: AgentState, runtime: Runtime[Deps]) -> dict[str, Any]:
    deps = runtime.context
    assert deps.web is not None
    report("web", state["language"])
    update: dict[str, Any] = {"web_searched": True}
    try:
        # The router's refined query (seed 002/004), else the question without filler words.
        query = state.get("web_query") or search_terms(question_of(state))
        results = await deps.web.search(query, max_results=5)
    except WebSearchError as exc:
        return update | {"notes": [str(exc)]}
    items = [
        PoolItem(
            id=r.url,
            doc_id="",
            text=r.content,
            title=r.title or r.url,
            source=r.url,
            locator="",
            page=None,
            heading="",
            link=r.url,
            score=r.score,
            kind="web",
            found_by="web",
        )
        for r in results
    ]
    report("found", state["language"], n=len(state.get("pool", [])) + len(items))
    llm_judge = deps.llms is not None and judge_enabled(state, deps)
    speculating = llm_judge and features_of(state, deps).speculative_generation
    return update | {"pool": items, "seen": [i["id"] for i in items], "speculating": speculating}
