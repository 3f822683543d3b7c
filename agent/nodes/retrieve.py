"""Retrieval per sub-question in parallel (``Send``), the router's prefetch, and the join.

The pool of evidence is de-duplicated by chunk id and only grows during a
turn (``merge_pool``). After each wave the join decides the next step: another
wave, the web, or judging the evidence. Loops from the sufficiency judge search
again and skip every chunk already seen.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import replace
from typing import Any, Literal

from langgraph.runtime import Runtime
from langgraph.types import Send

from agent.answers.kind import without_asking
from agent.answers.lead import focus_terms
from agent.deps import Deps
from agent.nodes.common import features_of, judge_enabled, timed
from agent.nodes.planning import RetrieveTask, levels, plan_of, wave_tasks
from agent.nodes.web_search import web_available
from agent.retrieval.following import followed
from agent.retrieval.knowledge_base import KnowledgeBase, SearchOptions
from agent.retrieval.types import SearchHit
from agent.state import AgentState, PoolItem, pool_item
from agent.wording.progress import report

# A pointer is followed from the best passages of each query, for this many of its own.
POINTING_HITS = 5
POINTED_HITS = 3


def _matches(hit: SearchHit, filters: dict[str, Any]) -> bool:
    chunk = hit.chunk
    source, title = filters.get("source"), filters.get("title")
    if source and str(source).lower() not in chunk.source.lower():
        return False
    if title and str(title).lower() not in chunk.title.lower():
        return False
    low, high = filters.get("page_from"), filters.get("page_to")
    if (low or high) and chunk.page is None:
        return False
    if low and chunk.page is not None and chunk.page < int(low):
        return False
    return not (high and chunk.page is not None and chunk.page > int(high))


async def retrieve(task: RetrieveTask, runtime: Runtime[Deps]) -> dict[str, Any]:
    return await run_task(task, runtime.context.kb, "retrieve")


async def prefetch(state: AgentState, deps: Deps) -> dict[str, Any]:
    """Search the message as written while the router's LLM call is out.

    The question is almost always one of the plan's queries, so its search is off the
    critical path; the router keeps the result only for a retrieval route.
    """
    question = state["question"]
    task = RetrieveTask(
        label=question,
        queries=[question],
        k=deps.config.k_complex,
        scopes=state["turn"]["scopes"],
        filters={},
        exclude=[],
        neighbours=deps.config.neighbours,
    )
    return await run_task(task, deps.kb, "prefetch") | {"searched": [question]}


async def run_task(task: RetrieveTask, kb: KnowledgeBase, name: str) -> dict[str, Any]:
    """Hybrid search for one sub-question's queries; keyword-only if the vector store fails."""
    start = time.perf_counter()
    exclude = set(task["exclude"])
    filters = {k: v for k, v in task["filters"].items() if v}
    scopes = frozenset(task["scopes"]) if task["scopes"] else None
    # Over-fetch so that skipping seen chunks and filtering still leaves k new ones.
    fetch = task["k"] + len(exclude) + (3 * task["k"] if filters else 0)
    notes: list[str] = []
    respelled: list[str] = []  # the queries in the other language's spelling (task "respell")
    pointed_to: list[str] = []  # the titles of the documents the passages pointed to

    def search(queries: list[str]) -> list[list[SearchHit]]:
        if task.get("respell"):
            glossary = kb.glossary()
            others = (q for q in map(glossary.respelled, queries) if q and q not in queries)
            respelled.extend(dict.fromkeys(others))  # two queries may respell alike
            queries = queries + respelled
        options = SearchOptions(
            k=fetch, scopes=scopes, neighbours=task["neighbours"], meaning=task.get("meaning")
        )
        try:
            return with_pointed(queries, options)
        except Exception as exc:  # the vector store is down: keyword search still answers
            notes.append(f"vector search unavailable ({exc}); used keyword search only")
            keyword = SearchOptions(
                k=fetch, scopes=scopes, mode="keyword", neighbours=task["neighbours"]
            )
            return with_pointed(queries, keyword)

    def with_pointed(queries: list[str], options: SearchOptions) -> list[list[SearchHit]]:
        """The queries' hits, and what their best passages send the reader to ("See the
        IT Equipment FAQ"): the pointed documents searched with the first query."""
        found = kb.search_many(queries, options)
        top = [hit for hits in found for hit in hits[:POINTING_HITS]]
        pointed = followed(
            kb,
            queries[0],
            top,
            replace(options, k=POINTED_HITS),
            subject=without_asking(queries[0]),
            focus=focus_terms(queries[0]),
        )
        if pointed:
            titles = dict.fromkeys(h.chunk.title for h in pointed)
            pointed_to.extend(t for t in titles if t not in pointed_to)
            found.append(pointed)
        return found

    # The task's queries in one search: one embedding batch and one read of each store
    # for all of them, in one worker thread. Sub-questions still run side by side (Send).
    results = await asyncio.to_thread(search, list(task["queries"]))
    items: dict[str, PoolItem] = {}
    for hits in results:
        matching = [h for h in hits if _matches(h, filters)] if filters else hits
        if filters and not matching and hits:
            notes.append(f"nothing matched the filters {filters}; searched all documents")
            matching = hits
        fresh = [h for h in matching if h.chunk.chunk_id not in exclude][: task["k"]]
        for hit in fresh:
            item = pool_item(hit, task["label"])
            if item["id"] not in items or items[item["id"]]["score"] < item["score"]:
                items[item["id"]] = item
    elapsed = round((time.perf_counter() - start) * 1000, 2)
    step: dict[str, Any] = {
        "node": name,
        "ms": elapsed,
        "query": task["label"][:80],
        "found": len(items),
    }
    if respelled:
        step["respelled"] = respelled
    if pointed_to:
        step["followed"] = pointed_to
    return {
        "path": [step],
        "pool": list(items.values()),
        "seen": list(items),
        "notes": sorted(set(notes)),
        "timings": {name: elapsed},
    }


Next = Literal["wave", "web", "evaluate"]


def _next_step(state: AgentState, deps: Deps, wave: int) -> Next:
    plan = plan_of(state)
    if any(level == wave for level in levels(plan["sub_questions"]).values()):
        return "wave"
    if not web_available(state, deps):
        return "evaluate"
    documents = [i for i in state.get("pool", []) if i["kind"] == "document"]
    if state.get("route") == "current_events":
        return "web"
    return "web" if len(documents) < deps.config.min_documents_for_no_web else "evaluate"


@timed("collect")
async def collect(state: AgentState, runtime: Runtime[Deps]) -> dict[str, Any]:
    """The join after a retrieval wave: report, then decide the next step."""
    deps = runtime.context
    wave = state.get("wave", 0) + 1
    step = _next_step(state, deps, wave)
    if step != "wave":
        report("found", state["language"], n=len(state.get("pool", [])))
    llm_judge = deps.llms is not None and judge_enabled(state, deps)
    speculative = features_of(state, deps).speculative_generation
    speculating = step == "evaluate" and llm_judge and speculative
    return {"wave": wave, "next_step": step, "speculating": speculating}


def after_collect(state: AgentState, runtime: Runtime[Deps]) -> list[Send] | list[str] | str:
    deps = runtime.context
    step = state["next_step"]
    if step == "wave":
        return wave_tasks(state, deps) or "collect"
    if step == "web":
        return "web_search"
    return evaluate_targets(state, deps)


def evaluate_targets(state: AgentState, deps: Deps) -> list[str]:
    if state.get("speculating"):
        return ["judge", "generate"]
    return ["judge"] if judge_enabled(state, deps) else ["generate"]
