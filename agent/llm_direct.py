"""Structured and streamed calls made straight on the SDK client, past LangChain's run
machinery, when nothing needs that machinery.

A ``ChatOpenAI`` call goes through LangChain's callback managers, run ids, message
chunks and generation objects before and after the HTTP request: about 1 ms of CPU a
structured call and 2.3 ms a short streamed answer on top of the SDK's own work
(benchmarks/README.md), spent between a turn's LLM round trips, which is where every
millisecond is waited for. The request is still the one ``ChatOpenAI`` builds
(``_get_request_payload``: its parameters, its model-specific rules), sent through the
same SDK client with its retries and timeouts. When LangSmith tracing is on, calls go the
LangChain way so that each appears in the trace.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage

from agent.llm_client import PlainCompletions


def direct_completions(model: BaseChatModel) -> PlainCompletions | None:
    """The completions endpoint ``model`` itself calls (``openai_llms`` gave it ours), or
    None to call it through LangChain (another kind of model, or tracing on)."""
    completions = getattr(model, "async_client", None)
    if not isinstance(completions, PlainCompletions) or _tracing():
        return None
    return completions


def _tracing() -> bool:
    from langsmith.utils import tracing_is_enabled

    return bool(tracing_is_enabled())


def _payload(model: BaseChatModel, messages: Sequence[BaseMessage], **kwargs: Any) -> Any:
    # ChatOpenAI's own request builder: the body matches what ``ainvoke`` would send.
    return model._get_request_payload(list(messages), **kwargs)  # type: ignore[attr-defined]


async def complete(
    completions: PlainCompletions,
    model: BaseChatModel,
    messages: Sequence[BaseMessage],
    **kwargs: Any,
) -> tuple[str, dict[str, int]]:
    """A whole reply's text and token usage."""
    reply = await completions.create(**_payload(model, messages, **kwargs))
    choices = reply.get("choices") or [{}]
    content = (choices[0].get("message") or {}).get("content") or ""
    return str(content), _usage(reply.get("usage"))


async def stream(
    completions: PlainCompletions,
    model: BaseChatModel,
    messages: Sequence[BaseMessage],
    usage: dict[str, int],
) -> AsyncIterator[str]:
    """The reply's text pieces as they arrive; ``usage`` is filled in from the last chunk."""
    payload = _payload(model, messages, stream=True, stream_options={"include_usage": True})
    chunks = await completions.create(**payload)
    async for chunk in chunks:
        if chunk.get("usage"):
            usage.update(_usage(chunk["usage"]))
        for choice in chunk.get("choices") or ():
            text = (choice.get("delta") or {}).get("content")
            if text:
                yield text


def _usage(usage: dict[str, Any] | None) -> dict[str, int]:
    """The endpoint's usage object in the shape :func:`agent.llm.usage_of` gives."""
    usage = usage or {}
    return {
        "prompt_tokens": int(usage.get("prompt_tokens") or 0),
        "completion_tokens": int(usage.get("completion_tokens") or 0),
    }
