"""The planner: sub-questions in dependency waves, and the retrieval tasks sent for them.

Without an LLM plan the question itself is searched (an analysis question split at
'and'/'vs'); any plan is normalised so that it can be run. Sub-questions run in
dependency waves: the first wave has every sub-question without dependencies; a
later one searches with the findings of those it depends on. Loops from the
sufficiency judge search for the missing aspects (:func:`loop_tasks`).
"""

from __future__ import annotations

import asyncio
import re
from typing import Any, TypedDict

from langgraph.runtime import Runtime
from langgraph.types import Send

from agent.deps import Deps
from agent.nodes.common import features_of, question_of, timed
from agent.state import AgentState, Plan, SubQuestion
from agent.wording import replies
from agent.wording.progress import report


class RetrieveTask(TypedDict, total=False):
    label: str
    queries: list[str]
    k: int
    scopes: list[str] | None
    filters: dict[str, Any]
    exclude: list[str]
    neighbours: int
    # The queries are one question in other words: they share its vector (SearchOptions).
    meaning: str
    # The queries name what the passages found so far lack: search them also written in
    # the other language, as far as the glossary and loanwords know (Glossary.respelled).
    respell: bool


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


def meanings(state: AgentState, plan: Plan) -> list[str]:
    """The texts a plan's searches embed: each sub-question, and the question, whose
    vector its variations share. A paraphrase or a translation means what the question
    means; on 482 Korean/English question pairs the gold passage led the pool as often
    (0.917 with a vector each or shared) and was in its top 6 for 0.994 against 1.0
    (benchmarks/shared_meaning.py)."""
    return list(
        dict.fromkeys([s["question"] for s in plan["sub_questions"]] + [question_of(state)])
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
        task = _task(state, deps, "variations", variations) | {"meaning": question_of(state)}
        sends.append(Send("retrieve", task))
    return sends


def loop_tasks(state: AgentState, deps: Deps) -> list[Send]:
    """A sufficiency loop: search for each missing aspect, in the question's context."""
    question = question_of(state)
    review = state.get("review")
    missing = review["missing"][:3] if review else []
    return [
        Send(
            "retrieve",
            _task(state, deps, f"missing: {aspect}", [aspect, f"{question} {aspect}"])
            | {"respell": True},
        )
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
    # One batch now instead of one encoder call per search; most often the question alone,
    # embedded already for the cache lookup, so nothing is left to do.
    await asyncio.to_thread(deps.kb.embedder.embed_queries, meanings(state, plan))
    queries = len(
        dict.fromkeys([s["question"] for s in plan["sub_questions"]] + plan["variations"])
    )
    if queries > 1:
        report("search", state["language"], n=queries)
    else:
        report("search_one", state["language"])
    return {"plan": plan, "wave": 0, "notes": notes, "k": _k(state, deps)}


def dispatch(state: AgentState, runtime: Runtime[Deps]) -> list[Send] | str:
    # Nothing left to search (the prefetch covered the plan): straight to the join.
    return wave_tasks(state, runtime.context) or "collect"
