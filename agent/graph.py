"""The whole seed workflow as one LangGraph graph.

```
START -> input_guard -> blocked_response -> finalize            (blocked: no LLM)
                     -> cache_lookup -> finalize                (cache hit: no LLM)
                                     -> router -> direct_response | tools | memory
                                               -> creative (bounded tool loop)
                                               -> [context_enhancement] -> planner
planner -> retrieve x N (Send, in dependency waves) -> collect
collect -> web_search (thin pool, provider configured)
        -> judge (rerank + sufficiency) || generate (speculative draft) -> gate
gate -> retrieve x missing aspects (loop, bounded)  | generate | verify
verify -> research (search for what was missing) -> generate (rewrite, bounded)
       | generate (rewrite with the reason) | fallback (bounded, or stagnant) | output_guard
output_guard -> generate (bounded) | fallback | finalize -> cache_store -> END
```
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, cast

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.runtime import Runtime
from langgraph.store.base import BaseStore
from langgraph.types import Command

from agent.deps import Deps
from agent.nodes.answering import (
    after_output_guard,
    after_verify,
    fallback,
    generate,
    output_guard,
    verify,
)
from agent.nodes.creative import creative
from agent.nodes.entry import cache_lookup, input_guard
from agent.nodes.finishing import blocked_response, cache_store, finalize
from agent.nodes.judging import after_gate, gate, judge
from agent.nodes.planning import dispatch, planner
from agent.nodes.refine import research
from agent.nodes.retrieve import after_collect, collect, evaluate_targets, retrieve
from agent.nodes.router import context_enhancement, router
from agent.nodes.short_routes import direct_response, memory_node, tools_node
from agent.nodes.web_search import web_search
from agent.state import AgentState, updated

Route = Callable[[AgentState, Runtime[Deps]], Any]


def _after_guard(state: AgentState, runtime: Runtime[Deps]) -> str:
    return "blocked_response" if state.get("blocked") else "cache_lookup"


def _after_cache(state: AgentState, runtime: Runtime[Deps]) -> str:
    return "finalize" if state.get("cached") else "router"


def _after_router(state: AgentState, runtime: Runtime[Deps]) -> str:
    route = state.get("route", "knowledge")
    if route in ("smalltalk", "general"):
        return "direct_response"
    if route in ("tools", "memory", "creative"):
        return route
    return "context_enhancement" if state.get("needs_history") else "planner"


def _after_generate(state: AgentState, runtime: Runtime[Deps]) -> str:
    return "gate" if state.get("speculating") else "verify"


def _after_web(state: AgentState, runtime: Runtime[Deps]) -> list[str]:
    return evaluate_targets(state, runtime.context)


def _routed(fn: Any, route: Route) -> Any:
    """The node, then its branch, in one step: the node returns where the turn goes next.

    A conditional edge costs LangGraph a fresh copy of every channel of the state (about
    0.35 ms a branch here, 3 ms a knowledge turn); the branch reads the same state from
    :func:`updated` instead, the node's own update applied through the reducers.
    """

    @functools.wraps(fn)
    async def node(state: AgentState, runtime: Runtime[Deps]) -> Command[Any]:
        update = await fn(state, runtime)
        goto = route(cast(AgentState, updated(state, update)), runtime)
        return Command(update=update, goto=goto)

    return node


def build_graph(
    checkpointer: BaseCheckpointSaver[Any] | None = None, store: BaseStore | None = None
) -> CompiledStateGraph[Any, Any, Any, Any]:
    g: StateGraph[Any, Any, Any, Any] = StateGraph(AgentState, context_schema=Deps)

    def node(name: str, fn: Any, *, defer: bool = False) -> None:
        # LangGraph's overloads do not accept a typed (state, runtime) coroutine; it runs fine.
        g.add_node(name, fn, defer=defer)

    def branching(name: str, fn: Any, route: Route, to: list[str], defer: bool = False) -> None:
        # ``destinations`` only draws the graph; the node's Command decides.
        g.add_node(name, _routed(fn, route), defer=defer, destinations=tuple(to))

    branching("input_guard", input_guard, _after_guard, ["blocked_response", "cache_lookup"])
    node("blocked_response", blocked_response)
    branching("cache_lookup", cache_lookup, _after_cache, ["finalize", "router"])
    branching(
        "router",
        router,
        _after_router,
        ["direct_response", "tools", "memory", "creative", "context_enhancement", "planner"],
    )
    node("context_enhancement", context_enhancement)
    node("direct_response", direct_response)
    node("tools", tools_node)
    node("creative", creative)
    node("memory", memory_node)
    branching("planner", planner, dispatch, ["retrieve", "collect"])
    node("retrieve", retrieve)
    # Joins wait for every parallel branch of their step (defer), not just the first one.
    branching(
        "collect",
        collect,
        after_collect,
        ["retrieve", "collect", "web_search", "judge", "generate"],
        defer=True,
    )
    branching("web_search", web_search, _after_web, ["judge", "generate"])
    node("judge", judge)
    branching("generate", generate, _after_generate, ["gate", "verify"])
    branching(
        "gate", gate, after_gate, ["retrieve", "web_search", "generate", "verify"], defer=True
    )
    branching("verify", verify, after_verify, ["output_guard", "research", "generate", "fallback"])
    node("research", research)
    branching(
        "output_guard", output_guard, after_output_guard, ["finalize", "generate", "fallback"]
    )
    node("fallback", fallback)
    node("cache_store", cache_store)
    node("finalize", finalize)

    g.add_edge(START, "input_guard")
    g.add_edge("blocked_response", "finalize")
    g.add_edge("context_enhancement", "planner")
    g.add_edge("direct_response", "output_guard")
    g.add_edge("tools", "output_guard")
    g.add_edge("creative", "output_guard")
    g.add_edge("memory", "finalize")
    g.add_edge("retrieve", "collect")
    g.add_edge("judge", "gate")
    g.add_edge("research", "generate")
    g.add_edge("fallback", "finalize")
    # The answer goes out with finalize's update (agent/runner.py); the cache write follows.
    g.add_edge("finalize", "cache_store")
    g.add_edge("cache_store", END)
    return g.compile(checkpointer=checkpointer, store=store)
