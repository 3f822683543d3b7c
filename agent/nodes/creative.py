"""Seed 004's creative and general agents.

``creative``: drafts (announcements, welcome messages, emails, translations) with an
LLM bound to tools: the team's documents, the web, a page reader, a calculator and the
clock. The tool-calling loop is bounded (``max_tool_rounds``); each call is a progress
step; a tool's failure is fed back to the model as text. A model or endpoint without
tool calling (an HTTP 400 to a request with tools, as some Ollama and vLLM models give)
drafts without tools instead of failing. Without an LLM it says that drafting needs
one and offers the documents that match the request.

``general``: a general question the documents need not answer, from the small model
with no tools (normally the routing call's own reply: no extra trip).
"""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
from langchain_core.messages import BaseMessage, HumanMessage, ToolMessage
from langgraph.runtime import Runtime

from agent.deps import Deps
from agent.llm.calls import LLMError, invoke_with_tools, stream_text
from agent.llm.route_models import model_for
from agent.nodes.answering import renumber
from agent.nodes.common import degraded, features_of, llm_used, persona_of, timed
from agent.prompts import creative_messages
from agent.retrieval.knowledge_base import SearchOptions
from agent.state import AgentState, PoolItem, pool_item
from agent.tools.creative import ToolBox
from agent.tools.pages import FetchLimits
from agent.wording import replies
from agent.wording.progress import emit, report

# HTTP statuses with which an endpoint refuses the ``tools`` parameter itself.
NO_TOOL_SUPPORT = frozenset({400, 404, 422, 501})
_ANSWER_NOW = {
    "ko": "도구 사용 한도에 도달했어요. 지금까지 찾은 내용으로 초안을 완성하세요.",
    "en": "The tool budget is spent. Finish the draft with what you have found.",
}


def _scopes(state: AgentState) -> frozenset[str] | None:
    scopes = state["turn"]["scopes"]
    return frozenset(scopes) if scopes else None


async def _offer_documents(state: AgentState, deps: Deps, intro: str) -> dict[str, Any]:
    """The honest answer without a model: say so, and list the documents that match."""
    options = SearchOptions(k=3, scopes=_scopes(state), neighbours=0)
    hits = await asyncio.to_thread(deps.kb.search, state["question"], options)
    items = [pool_item(hit, state["question"]) for hit in hits]
    if not items:
        return {"answer": replies.text("creative_nothing", state["language"]), "grounded": True}
    lines = [intro]
    for n, item in enumerate(items, start=1):
        where = f" ({item['locator']})" if item["locator"] else ""
        lines.append(f"- [{n}] {item['title']}{where}")
    return {"answer": "\n".join(lines), "sources": items, "grounded": True}


def _today(deps: Deps) -> str:
    return deps.clock().astimezone().strftime("%Y-%m-%d (%A)")


async def _draft_without_tools(
    state: AgentState, deps: Deps, model: Any, name: str
) -> tuple[str, dict[str, int]]:
    """A plain streamed draft: for a model without tool calling."""
    messages = creative_messages(
        state["question"], state["language"], _today(deps), persona_of(state, deps), tools=False
    )
    emit({"type": "draft_start", "speculative": False})
    return await stream_text(model, messages, lambda t: emit({"type": "token", "text": t}))


@timed("creative")
async def creative(state: AgentState, runtime: Runtime[Deps]) -> dict[str, Any]:
    deps = runtime.context
    config, language = deps.config, state["language"]
    report("draft", language)
    if deps.llms is None:
        return await _offer_documents(state, deps, replies.text("creative_needs_llm", language))
    model, name = model_for(
        deps.llms, config.route_models, "creative", state.get("complexity", "moderate")
    )
    web = deps.web if features_of(state, deps).web_search else None
    limits = FetchLimits(config.fetch_max_bytes, config.fetch_timeout_s, config.allow_private_urls)
    usage = {"prompt_tokens": 0, "completion_tokens": 0}
    calls, rounds, notes = 0, 0, []
    async with httpx.AsyncClient(timeout=config.fetch_timeout_s) as client:
        box = ToolBox(deps.kb, _scopes(state), web, config.timezone, limits, client)
        tools = box.tools()
        messages: list[BaseMessage] = creative_messages(
            state["question"], language, _today(deps), persona_of(state, deps)
        )
        try:
            while True:
                if rounds >= config.max_tool_rounds:
                    # The bound: one last call, without tools, to finish with what was found.
                    notes.append(f"tool loop stopped after {rounds} rounds")
                    messages.append(HumanMessage(_ANSWER_NOW.get(language, _ANSWER_NOW["en"])))
                    emit({"type": "draft_start", "speculative": False})
                    text, used = await stream_text(
                        model, messages, lambda t: emit({"type": "token", "text": t})
                    )
                    calls += 1
                    usage = {k: usage[k] + used[k] for k in usage}
                    break
                try:
                    reply, used = await invoke_with_tools(model, tools, messages)
                except LLMError as exc:
                    if rounds or exc.status not in NO_TOOL_SUPPORT:
                        raise
                    notes.append(
                        f"{name} refused tool calling (HTTP {exc.status}); drafted without"
                    )
                    text, used = await _draft_without_tools(state, deps, model, name)
                    calls += 1
                    usage = {k: usage[k] + used[k] for k in usage}
                    break
                calls += 1
                usage = {k: usage[k] + used[k] for k in usage}
                if not reply.tool_calls:
                    text = str(reply.content)
                    break
                rounds += 1
                messages.append(reply)
                for call in reply.tool_calls:
                    report("tool_call", language, name=call["name"])
                    result = await box.run(call["name"], call["args"])
                    if result.startswith("error:"):
                        report("tool_error", language, name=call["name"])
                        notes.append(f"tool {call['name']} failed: {result[7:][:160]}")
                    messages.append(ToolMessage(result, tool_call_id=call["id"] or call["name"]))
        except LLMError as exc:
            intro = replies.text("creative_failed", language)
            offered = await _offer_documents(state, deps, intro)
            used_so_far = llm_used(usage, name, calls) if calls else {}
            return offered | used_so_far | degraded(exc.kind) | {"tool_rounds": rounds}
    answer, cited = _cited(text, box.found)
    done = {"answer": answer, "sources": cited, "grounded": True, "answer_model": name}
    return done | llm_used(usage, name, calls) | {"notes": notes, "tool_rounds": rounds}


def _cited(text: str, found: list[PoolItem]) -> tuple[str, list[PoolItem]]:
    """Keep the draft's citations that point at something a tool found."""
    if not found:
        return text, []
    return renumber(text, found)
