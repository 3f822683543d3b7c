"""Structured and streamed calls made straight on the wire, past LangChain's run
machinery and the SDK, when nothing needs either.

A ``ChatOpenAI`` call goes through LangChain's callback managers, run ids, message
chunks and generation objects, then the SDK's request pipeline: about 1 ms of CPU a
structured call and 2.3 ms a short streamed answer in LangChain, 1.3 ms a call in the
SDK (benchmarks/README.md), spent between a turn's LLM round trips, which is where every
millisecond is waited for. The request is still the one ``ChatOpenAI`` builds
(``_get_request_payload``: its parameters, its model-specific rules), sent by
:class:`agent.llm.endpoint.ChatEndpoint` with the SDK's retries and timeouts. When LangSmith
tracing is on, calls go the LangChain way so that each appears in the trace.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage

from agent.llm.endpoint import ChatEndpoint

# Arguments of the SDK's ``create`` that never reach the request's body.
_NOT_BODY = ("extra_body", "extra_headers", "extra_query", "timeout")


def direct_endpoint(model: BaseChatModel) -> ChatEndpoint | None:
    """The endpoint ``model`` itself calls (``openai_llms`` gave it ours), or None to call
    it through LangChain (another kind of model, or tracing on)."""
    # Read off ``agent.llm.sdk_client.PlainCompletions`` without importing it: that module
    # brings the whole SDK (half a second at start) to a process that may use no LLM.
    endpoint = getattr(getattr(model, "async_client", None), "endpoint", None)
    if not isinstance(endpoint, ChatEndpoint) or _tracing():
        return None
    return endpoint


def _tracing() -> bool:
    from langsmith.utils import tracing_is_enabled

    return bool(tracing_is_enabled())


def _body(model: BaseChatModel, messages: Sequence[BaseMessage], **kwargs: Any) -> dict[str, Any]:
    """The JSON ``ainvoke`` would send: ChatOpenAI's own payload, ``extra_body`` merged in
    as the SDK merges it."""
    payload: dict[str, Any] = model._get_request_payload(list(messages), **kwargs)  # type: ignore[attr-defined]
    body = {k: v for k, v in payload.items() if k not in _NOT_BODY}
    return body | dict(payload.get("extra_body") or {})


async def complete(
    endpoint: ChatEndpoint,
    model: BaseChatModel,
    messages: Sequence[BaseMessage],
    **kwargs: Any,
) -> tuple[str, dict[str, int]]:
    """A whole reply's text and token usage."""
    reply = await endpoint.complete(_body(model, messages, **kwargs))
    choices = reply.get("choices") or [{}]
    content = (choices[0].get("message") or {}).get("content") or ""
    return str(content), _usage(reply.get("usage"))


async def stream(
    endpoint: ChatEndpoint,
    model: BaseChatModel,
    messages: Sequence[BaseMessage],
    usage: dict[str, int],
) -> AsyncIterator[str]:
    """The reply's text pieces as they arrive; ``usage`` is filled in from the last chunk."""
    body = _body(model, messages, stream=True, stream_options={"include_usage": True})
    async for chunk in endpoint.stream(body):
        if chunk.get("usage"):
            usage.update(_usage(chunk["usage"]))
        for choice in chunk.get("choices") or ():
            text = (choice.get("delta") or {}).get("content")
            if text:
                yield text


def _usage(usage: dict[str, Any] | None) -> dict[str, int]:
    """The endpoint's usage object in the shape :func:`agent.llm.calls.usage_of` gives."""
    usage = usage or {}
    return {
        "prompt_tokens": int(usage.get("prompt_tokens") or 0),
        "completion_tokens": int(usage.get("completion_tokens") or 0),
    }
