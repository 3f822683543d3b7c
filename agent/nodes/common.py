"""Small helpers every node uses: timing, usage accounting, the turn's settings."""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from langgraph.runtime import Runtime

from agent.config import AgentConfig, Features
from agent.deps import Deps
from agent.glossary.prompt_pairs import prompt_pairs
from agent.retrieval.types import TermPair
from agent.state import AgentState

Node = Callable[[AgentState, Runtime[Deps]], Awaitable[dict[str, Any]]]


# One line per node run (seed 003/004's flow log); the thread id comes from log_context.
flow_log = logging.getLogger("teamrag.flow")


def decision_of(update: dict[str, Any]) -> dict[str, Any]:
    """What a node decided, in a few small values: the route, k, the loop count, a grade."""
    decision: dict[str, Any] = {}
    for key in ("route", "complexity", "next_step", "iteration", "retries", "answer_model"):
        value = update.get(key)
        if value not in (None, ""):
            decision[key] = value
    if update.get("route_confidence"):
        decision["confidence"] = round(float(update["route_confidence"]), 2)
    review, check = update.get("review"), update.get("check")
    if review:
        decision["sufficiency"] = review["score"]
        decision["judged"] = review["decision"]
    if check:
        decision["grade"] = check["score"]
    if update.get("k"):
        decision["k"] = update["k"]
    if update.get("pool"):
        decision["found"] = len(update["pool"])
    if update.get("tool_rounds") is not None:
        decision["tool_rounds"] = update["tool_rounds"]
    if update.get("degraded"):
        decision["degraded"] = True
    return decision


def timed(name: str) -> Callable[[Node], Node]:
    """Record the node's wall time (ms) in ``timings``, where parallel copies add up, and
    its step on the turn's ``path`` and in the flow log, with what it decided."""

    def decorate(fn: Node) -> Node:
        @functools.wraps(fn)
        async def node(state: AgentState, runtime: Runtime[Deps]) -> dict[str, Any]:
            start = time.perf_counter()
            update = await fn(state, runtime)
            elapsed = round((time.perf_counter() - start) * 1000, 2)
            timings = dict(update.get("timings") or {})
            timings[name] = timings.get(name, 0.0) + elapsed
            decision = decision_of(update)
            step = {"node": name, "ms": elapsed, **decision}
            flow_log.info(
                "node %s %.1f ms %s",
                name,
                elapsed,
                decision,
                extra={"node": name, "ms": elapsed, "decision": decision},
            )
            # Keys a node uses only to report (k, tool_rounds) are not state keys.
            update = {k: v for k, v in update.items() if k not in ("k", "tool_rounds")}
            return {**update, "timings": timings, "path": [step]}

        return node

    return decorate


def config_of(state: AgentState, deps: Deps) -> AgentConfig:
    """The agent's config with this turn's feature flags."""
    features = features_of(state, deps)
    if features is deps.config.features:
        return deps.config
    return dataclasses.replace(deps.config, features=features)


def features_of(state: AgentState, deps: Deps) -> Features:
    """This turn's feature flags: the runner's effective set, else the configured one."""
    flags = state.get("features")
    if not flags:
        return deps.config.features
    return deps.config.features.overridden(flags)


def judge_enabled(state: AgentState, deps: Deps) -> bool:
    """The judge node runs this turn: reranking or the sufficiency loop is switched on."""
    features = features_of(state, deps)
    return features.rerank or features.sufficiency_loop


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


def question_of(state: AgentState) -> str:
    return state.get("standalone") or state.get("question", "")


async def glossary_pairs(
    deps: Deps, question: str, passages: Sequence[str] = (), *, language: str = ""
) -> list[TermPair]:
    """The team glossary's pairs for an LLM prompt (agent/glossary/prompt_pairs.py). In a
    worker thread: the glossary is rebuilt from the catalog after a change, and a catalog
    that fails leaves the pairs out (agent/glossary/cache.py logs why)."""

    def pick() -> list[TermPair]:
        return prompt_pairs(deps.kb.glossary(), question, passages, language=language)

    return await asyncio.to_thread(pick)
