"""Small LangGraph graphs on a real checkpointer, for the thread memory tests: one that
answers every question, one that also trims the thread as the agent does, and how a
test asks them and reads a thread back."""

from __future__ import annotations

import uuid
from typing import Any

from langchain_core.messages import AIMessage, HumanMessage, RemoveMessage
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.graph.state import CompiledStateGraph

from agent.memory.trimming import select_for_trim


def build_graph(checkpointer: BaseCheckpointSaver[Any]) -> CompiledStateGraph[Any]:
    """One node that answers every question; what a turn leaves in the thread."""

    def answer(state: MessagesState) -> dict[str, Any]:
        question = state["messages"][-1].text
        return {"messages": [AIMessage(f"answer {len(state['messages'])}: {question}")]}

    builder = StateGraph(MessagesState)
    builder.add_node("answer", answer)
    builder.add_edge(START, "answer")
    builder.add_edge("answer", END)
    return builder.compile(checkpointer=checkpointer)


def build_trimming_graph(checkpointer: BaseCheckpointSaver[Any]) -> CompiledStateGraph[Any]:
    """Like `build_graph`, but keeps the thread to its last 6 messages, as the agent will."""

    def answer(state: MessagesState) -> dict[str, Any]:
        reply = AIMessage(f"answer: {state['messages'][-1].text}", id=str(uuid.uuid4()))
        dropped = select_for_trim([*state["messages"], reply], keep_last=6)
        return {"messages": [reply, *(RemoveMessage(id=str(m.id)) for m in dropped)]}

    builder = StateGraph(MessagesState)
    builder.add_node("answer", answer)
    builder.add_edge(START, "answer")
    builder.add_edge("answer", END)
    return builder.compile(checkpointer=checkpointer)


def config(thread_id: str) -> RunnableConfig:
    return {"configurable": {"thread_id": thread_id}}


async def ask(graph: CompiledStateGraph[Any], thread_id: str, text: str) -> list[str]:
    result = await graph.ainvoke({"messages": [HumanMessage(text)]}, config(thread_id))
    return [m.text for m in result["messages"]]


async def thread_texts(graph: CompiledStateGraph[Any], thread_id: str) -> list[str]:
    state = await graph.aget_state(config(thread_id))
    return [m.text for m in state.values.get("messages", [])]
