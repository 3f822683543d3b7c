"""The short routes the router sends a message down: smalltalk and general replies,
tools (calculation, date and time) and memory ("what do you remember about me?").

Each answers without the documents and goes on to the output guard (memory straight to
finalize, which also stores the facts a user stated).
"""

from __future__ import annotations

from typing import Any

from langchain_core.messages import BaseMessage, ToolMessage
from langgraph.runtime import Runtime

from agent.deps import Deps
from agent.llm.calls import LLMError, invoke_with_tools, stream_text
from agent.llm.route_models import model_for, model_name_for
from agent.memory.profile import (
    Fact,
    forget,
    kind_named,
    recall,
    user_namespace,
)
from agent.nodes.common import (
    degraded,
    features_of,
    llm_used,
    persona_of,
    timed,
)
from agent.prompts import general_messages, tools_messages
from agent.routing.intent import memory_command
from agent.state import AgentState
from agent.tools import (
    TOOLS,
    ToolError,
    calculate,
    current_datetime,
    find_expression,
)
from agent.wording import replies
from agent.wording.progress import emit, report


@timed("direct_response")
async def direct_response(state: AgentState, runtime: Runtime[Deps]) -> dict[str, Any]:
    """Smalltalk and general replies. The routing call wrote them with the fast model (one
    trip); a route map that names another model for the route has that model answer."""
    deps = runtime.context
    language, route = state["language"], state.get("route", "smalltalk")
    reply = state.get("reply") or replies.smalltalk(state["question"], language)
    if deps.llms is None or not state.get("reply"):
        return {"answer": reply, "grounded": True}
    mapped = model_name_for(deps.config.route_models, route, state.get("complexity", "simple"))
    model, name = deps.llms.named(mapped) if mapped else (deps.llms.fast, deps.llms.fast_name)
    if name == deps.llms.fast_name:
        return {"answer": reply, "grounded": True, "answer_model": name}
    messages = general_messages(state["question"], language, persona_of(state, deps))
    emit({"type": "draft_start", "speculative": False})
    try:
        text, usage = await stream_text(
            model, messages, lambda t: emit({"type": "token", "text": t})
        )
    except LLMError as exc:  # the routing call's own reply still answers
        return {"answer": reply, "grounded": True, "answer_model": deps.llms.fast_name} | degraded(
            exc.kind
        )
    done = {"answer": text, "grounded": True, "answer_model": name}
    return done | llm_used(usage, name)


def _run_tool(name: str, args: dict[str, Any], timezone: str) -> str:
    try:
        if name == "calculator":
            return calculate(str(args.get("expression", "")))
        if name == "current_datetime":
            return current_datetime(str(args.get("timezone") or timezone))
    except ToolError as exc:
        return f"error: {exc}"
    return f"error: unknown tool {name}"


def _local_tool_answer(question: str, language: str, timezone: str) -> str:
    expression = find_expression(question)
    try:
        if expression:
            return f"{expression} = {calculate(expression)}"
        return current_datetime(timezone)
    except ToolError as exc:
        return replies.text("tool_failed", language, reason=str(exc))


@timed("tools")
async def tools_node(state: AgentState, runtime: Runtime[Deps]) -> dict[str, Any]:
    """Calculation and date/time through tool calling; local tools when there is no LLM."""
    deps = runtime.context
    language, timezone = state["language"], deps.config.timezone
    report("tools", language)
    if deps.llms is None:
        answer = _local_tool_answer(state["question"], language, timezone)
        return {"answer": answer, "grounded": True}
    persona = persona_of(state, deps)
    client, model = model_for(
        deps.llms, deps.config.route_models, "tools", state.get("complexity", "simple")
    )
    messages: list[BaseMessage] = tools_messages(state["question"], language, timezone, persona)
    usage = {"prompt_tokens": 0, "completion_tokens": 0}
    calls = 0
    try:
        for _ in range(3):  # a tool round, then the answer; bounded like every loop here
            reply, used = await invoke_with_tools(client, TOOLS, messages)
            calls += 1
            usage = {k: usage[k] + used[k] for k in usage}
            if not reply.tool_calls:
                answered = {"answer": str(reply.content), "grounded": True, "answer_model": model}
                return answered | llm_used(usage, model, calls)
            messages.append(reply)
            for call in reply.tool_calls:
                result = _run_tool(call["name"], call["args"], timezone)
                messages.append(ToolMessage(result, tool_call_id=call["id"] or call["name"]))
        raise LLMError("malformed", "the model kept calling tools")
    except LLMError as exc:
        answer = _local_tool_answer(state["question"], language, timezone)
        used = llm_used(usage, model, calls)
        return {"answer": answer, "grounded": True} | used | degraded(exc.kind)


@timed("memory")
async def memory_node(state: AgentState, runtime: Runtime[Deps]) -> dict[str, Any]:
    """'What do you remember about me?' and 'forget it', from the per-user store."""
    language = state["language"]
    report("memory", language)
    if runtime.store is None or not features_of(state, runtime.context).user_memory:
        return {"answer": replies.text("memory_off", language), "grounded": True}
    namespace = user_namespace(state["turn"]["workspace"], state["turn"]["user"])
    if memory_command(state["question"]) == "forget":
        removed = await forget(runtime.store, namespace, kind_named(state["question"]))
        return {"answer": replies.text("memory_forgot", language, n=removed), "grounded": True}
    stated = remembered_facts(state)
    if stated:  # "remember that I'm on the payments team": finalize stores it
        told = "; ".join(f.text for f in stated)
        return {"answer": replies.text("memory_saved", language, facts=told), "grounded": True}
    facts = await recall(runtime.store, namespace)
    if not facts:
        return {"answer": replies.text("memory_empty", language), "grounded": True}
    lines = [replies.text("memory_list", language), *(f"- {f.text}" for f in facts)]
    return {"answer": "\n".join(lines), "grounded": True}


def remembered_facts(state: AgentState) -> list[Fact]:
    return [Fact(kind=f["kind"], text=f["text"]) for f in state.get("user_facts", [])]  # type: ignore[arg-type]
