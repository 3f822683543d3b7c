"""Planner, retrieval per sub-question in parallel (``Send``), the join, web search.

The pool of evidence is de-duplicated by chunk id and only grows during a
turn (``merge_pool``). Sub-questions run in dependency waves: the first wave
has every sub-question without dependencies; a later one searches with the
findings of those it depends on. Loops from the sufficiency judge search for
the missing aspects and skip every chunk already seen.
"""

from __future__ import annotations

import asyncio
import re
import time
from typing import Any, Literal, TypedDict

from langgraph.runtime import Runtime
from langgraph.types import Send

from agent import replies
from agent.deps import Deps
from agent.nodes.common import features_of, pool_item, question_of, timed
from agent.progress import report
from agent.retrieval.knowledge_base import KnowledgeBase, SearchOptions
from agent.retrieval.types import SearchHit
from agent.state import AgentState, Plan, PoolItem, SubQuestion
from agent.websearch import WebSearchError, search_terms


class RetrieveTask(TypedDict):
    label: str
    queries: list[str]
    k: int
    scopes: list[str] | None
    filters: dict[str, Any]
    exclude: list[str]
    neighbours: int


_SPLIT = re.compile(r"\s+(?:vs\.?|versus|and|그리고|및|또는|or)\s+|\s*,\s*", re.IGNORECASE)


def plan_of(state: AgentState) -> Plan:
    """The planner has run once retrieval starts; before that there is no plan to read."""
    plan = state.get("plan")
    assert plan is not None, "retrieval before planning"
    return plan


def _local_plan(question: str, route: str) -> Plan:
    """Without an LLM: the question itself, split at 'and'/'vs' for an analysis question."""
    subs = [SubQuestion(id=1, question=question, priority=1, depends_on=[])]
    if route == "analysis":
        parts = [p.strip() for p in _SPLIT.split(question) if len(p.strip()) >= 3]
        if len(parts) >= 2:
            subs += [
                SubQuestion(id=i, question=p, priority=2, depends_on=[])
                for i, p in enumerate(parts[:3], start=2)
            ]
    return Plan(
        normalized=question, sub_questions=subs, variations=[], answer_style="normal", filters={}
    )


def _normalise(plan: Plan, question: str, config_max_sub: int, max_variations: int) -> Plan:
    """Make any plan usable: at least one sub-question, the question among the variations."""
    subs = [s for s in plan["sub_questions"] if s["question"].strip()][:config_max_sub]
    if not subs:
        subs = [SubQuestion(id=1, question=question, priority=1, depends_on=[])]
    ids = {s["id"] for s in subs}
    # Unknown or self dependencies would stall a wave forever: drop them.
    subs = [
        SubQuestion(
            id=s["id"],
            question=s["question"],
            priority=s["priority"],
            depends_on=[d for d in s["depends_on"] if d in ids and d != s["id"]],
        )
        for s in sorted(subs, key=lambda s: (s["priority"], s["id"]))
    ]
    variations: list[str] = []
    seen: set[str] = set()
    for v in [question, *plan["variations"]]:
        if v.strip() and v.strip().lower() not in seen:
            seen.add(v.strip().lower())
            variations.append(v.strip())
    return Plan(
        normalized=plan["normalized"] or question,
        sub_questions=subs,
        variations=variations[:max_variations],
        answer_style=plan["answer_style"],
        filters=plan["filters"],
    )


def levels(subs: list[SubQuestion]) -> dict[int, int]:
    """The dependency wave of each sub-question; a cycle falls back to the first wave."""
    by_id = {s["id"]: s for s in subs}
    memo: dict[int, int] = {}

    def level(sid: int, trail: frozenset[int]) -> int:
        if sid in memo:
            return memo[sid]
        if sid in trail:
            return 0
        deps = by_id[sid]["depends_on"]
        value = 0 if not deps else 1 + max(level(d, trail | {sid}) for d in deps)
        memo[sid] = value
        return value

    return {s["id"]: level(s["id"], frozenset()) for s in subs}


def _k(state: AgentState, deps: Deps) -> int:
    config = deps.config
    if not features_of(state, deps).dynamic_k:
        return config.k_moderate
    return {"simple": config.k_simple, "complex": config.k_complex}.get(
        state.get("complexity", "moderate"), config.k_moderate
    )


def _task(state: AgentState, deps: Deps, label: str, queries: list[str]) -> RetrieveTask:
    return RetrieveTask(
        label=label,
        queries=queries,
        k=_k(state, deps),
        scopes=state["turn"]["scopes"],
        filters=plan_of(state)["filters"],
        exclude=list(state.get("seen", [])),
        neighbours=deps.config.neighbours,
    )


def _findings(state: AgentState, sub: SubQuestion) -> str:
    """What the sub-questions this one depends on found: titles of their best passages."""
    by_id = {s["id"]: s["question"] for s in plan_of(state)["sub_questions"]}
    labels = {by_id[d] for d in sub["depends_on"] if d in by_id}
    titles = []
    for item in state.get("pool", []):
        if item["found_by"] in labels and item["title"] not in titles:
            titles.append(item["title"])
    return " ".join(titles[:2])


def wave_tasks(state: AgentState, deps: Deps) -> list[Send]:
    plan = plan_of(state)
    wave = state.get("wave", 0)
    searched = {q.strip().lower() for q in state.get("searched", [])}
    level = levels(plan["sub_questions"])
    subs = [s for s in plan["sub_questions"] if level[s["id"]] == wave]
    sends = []
    for sub in subs:
        if not sub["depends_on"] and sub["question"].strip().lower() in searched:
            continue  # the router's prefetch already searched it
        query = sub["question"]
        if sub["depends_on"]:
            query = f"{query} {_findings(state, sub)}".strip()
        sends.append(Send("retrieve", _task(state, deps, sub["question"], [query])))
    asked = searched | {s["question"].strip().lower() for s in plan["sub_questions"]}
    variations = [v for v in plan["variations"] if v.strip().lower() not in asked]
    if wave == 0 and variations:  # a variation equal to a sub-question is searched once
        sends.append(Send("retrieve", _task(state, deps, "variations", variations)))
    return sends


def loop_tasks(state: AgentState, deps: Deps) -> list[Send]:
    """A sufficiency loop: search for each missing aspect, in the question's context."""
    question = question_of(state)
    review = state.get("review")
    missing = review["missing"][:3] if review else []
    return [
        Send("retrieve", _task(state, deps, f"missing: {aspect}", [aspect, f"{question} {aspect}"]))
        for aspect in missing
    ]


@timed("planner")
async def planner(state: AgentState, runtime: Runtime[Deps]) -> dict[str, Any]:
    deps = runtime.context
    question = question_of(state)
    plan = state.get("plan") or _local_plan(question, state.get("route", "knowledge"))
    plan = _normalise(plan, question, deps.config.max_subquestions, deps.config.max_variations)
    if not features_of(state, deps).query_rewrite:  # search the question as asked
        plan = Plan(**(plan | {"variations": [question]}))
    notes = []
    if state.get("route") == "current_events" and deps.web is None:
        notes.append(replies.text("no_web", state["language"]))
    texts = list(dict.fromkeys([s["question"] for s in plan["sub_questions"]] + plan["variations"]))
    # One batch now instead of one encoder call per query in the searches.
    await asyncio.to_thread(deps.kb.embedder.embed_queries, texts)
    queries = len(texts)
    if queries > 1:
        report("search", state["language"], n=queries)
    else:
        report("search_one", state["language"])
    return {"plan": plan, "wave": 0, "notes": notes, "k": _k(state, deps)}


def dispatch(state: AgentState, runtime: Runtime[Deps]) -> list[Send] | str:
    # Nothing left to search (the prefetch covered the plan): straight to the join.
    return wave_tasks(state, runtime.context) or "collect"


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

    def search(query: str) -> list[SearchHit]:
        options = SearchOptions(k=fetch, scopes=scopes, neighbours=task["neighbours"])
        try:
            return kb.search(query, options)
        except Exception as exc:  # the vector store is down: keyword search still answers
            notes.append(f"vector search unavailable ({exc}); used keyword search only")
            keyword = SearchOptions(
                k=fetch, scopes=scopes, mode="keyword", neighbours=task["neighbours"]
            )
            return kb.search(query, keyword)

    # One worker thread runs this task's queries one after another (a few ms each): threads
    # per query only contend for the GIL. Sub-questions still run side by side (Send).
    results = await asyncio.to_thread(lambda: [search(q) for q in task["queries"]])
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
    step = {"node": name, "ms": elapsed, "query": task["label"][:80], "found": len(items)}
    return {
        "path": [step],
        "pool": list(items.values()),
        "seen": list(items),
        "notes": sorted(set(notes)),
        "timings": {name: elapsed},
    }


Next = Literal["wave", "web", "evaluate"]


def web_available(state: AgentState, deps: Deps) -> bool:
    """A provider is configured and switched on, and this turn has not searched the web."""
    return (
        deps.web is not None
        and features_of(state, deps).web_search
        and not state.get("web_searched")
    )


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
    llm_judge = deps.llms is not None and _judge_enabled(state, deps)
    speculative = features_of(state, deps).speculative_generation
    speculating = step == "evaluate" and llm_judge and speculative
    return {"wave": wave, "next_step": step, "speculating": speculating}


def _judge_enabled(state: AgentState, deps: Deps) -> bool:
    features = features_of(state, deps)
    return features.rerank or features.sufficiency_loop


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
    return ["judge"] if _judge_enabled(state, deps) else ["generate"]


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
    llm_judge = deps.llms is not None and _judge_enabled(state, deps)
    speculating = llm_judge and features_of(state, deps).speculative_generation
    return update | {"pool": items, "seen": [i["id"] for i in items], "speculating": speculating}
