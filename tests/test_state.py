"""`updated`: the state a node's branch reads, computed as LangGraph will hold it.

Nodes that route themselves (a Command instead of a conditional edge) read the state
after their own update from :func:`agent.state.updated`; if it disagreed with LangGraph's
reducers, a branch would send the turn somewhere the state does not say.
"""

from __future__ import annotations

from typing import Any, cast

from langchain_core.messages import AIMessage, HumanMessage
from langgraph.graph import END, START, StateGraph

from agent.state import RESET, AgentState, PoolItem, updated


def item(chunk: str, score: float = 0.5) -> PoolItem:
    return PoolItem(
        id=chunk,
        doc_id="d",
        text=chunk,
        title="t",
        source="s.md",
        locator="",
        page=None,
        heading="",
        link=None,
        score=score,
        kind="document",
        found_by="q",
    )


BEFORE: dict[str, Any] = {
    "messages": [HumanMessage("hi", id="m1")],
    "route": "knowledge",
    "pool": [item("a")],
    "seen": ["a"],
    "timings": {"router": 2.0, "model": "x"},
    "path": [{"node": "router"}],
    "notes": ["first"],
    "llm_calls": 1,
    "usage_by_model": {"fast": {"prompt_tokens": 3}},
}
UPDATE: dict[str, Any] = {
    "messages": [AIMessage("hello", id="m2")],
    "route": "smalltalk",
    "pool": [item("a", 0.9), item("b")],
    "seen": ["b"],
    "timings": {"router": 1.5, "model": "y", "planner": 3.0},
    "path": [{"node": "planner"}],
    "notes": RESET,
    "llm_calls": 2,
    "usage_by_model": {"fast": {"prompt_tokens": 4}, "chat": {"prompt_tokens": 1}},
    "answer": "new key",
}


def test_reducer_keys_merge_and_the_others_are_replaced() -> None:
    after = updated(BEFORE, UPDATE)
    assert after["route"] == "smalltalk" and after["answer"] == "new key"
    assert [i["id"] for i in after["pool"]] == ["a", "b"]  # de-duplicated, the first kept
    assert after["pool"][0]["score"] == 0.5
    assert after["seen"] == ["a", "b"]
    assert after["timings"] == {"router": 3.5, "model": "y", "planner": 3.0}
    assert after["path"] == [{"node": "router"}, {"node": "planner"}]
    assert after["notes"] == []  # RESET starts the list over
    assert after["llm_calls"] == 3
    assert after["usage_by_model"] == {"fast": {"prompt_tokens": 7}, "chat": {"prompt_tokens": 1}}
    assert [m.id for m in after["messages"]] == ["m1", "m2"]
    assert BEFORE["seen"] == ["a"] and BEFORE["route"] == "knowledge"  # not mutated


async def test_it_agrees_with_what_langgraph_holds_after_the_node() -> None:
    seen: dict[str, Any] = {}

    async def first(state: AgentState) -> dict[str, Any]:
        seen["before"] = dict(state)
        return UPDATE

    async def second(state: AgentState) -> dict[str, Any]:
        seen["after"] = dict(state)
        return {}

    graph = StateGraph(AgentState)
    graph.add_node("first", first)
    graph.add_node("second", second)
    graph.add_edge(START, "first")
    graph.add_edge("first", "second")
    graph.add_edge("second", END)
    await graph.compile().ainvoke(cast(AgentState, BEFORE))
    assert updated(seen["before"], UPDATE) == seen["after"]
