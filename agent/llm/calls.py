"""The LLM factory and the three ways the graph calls a model.

Two models, as the router seed says: a fast one for routing and checks, a
strong one for answers. Every call returns its token usage, and every failure
(timeout, HTTP error, 429 after the client's retries, malformed output)
becomes one :class:`LLMError`, so nodes have a single thing to catch before
falling back to their deterministic stand-in. Structured and streamed calls go
straight to the endpoint unless LangSmith traces them (``agent/llm/direct.py``).
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool
from pydantic import BaseModel, ValidationError

from agent.llm.direct import complete, direct_endpoint, stream
from agent.llm.endpoint import EndpointError, on_sent

T = TypeVar("T", bound=BaseModel)
R = TypeVar("R")

# How long a streamed answer may go without a chunk when the model names no timeout.
STREAM_QUIET_S = 60.0

# Internal calls must not leak into LangGraph's "messages" stream: only the answer is streamed.
_HIDDEN: RunnableConfig = {"tags": ["nostream"]}


class LLMError(Exception):
    """The model could not give a usable reply; ``kind`` says why, for the Final's notes."""

    def __init__(self, kind: str, detail: str, status: int | None = None) -> None:
        super().__init__(f"{kind}: {detail}")
        self.kind = kind
        self.detail = detail
        self.status = status  # the endpoint's HTTP status, when it answered with an error


# Names in a route map that mean "one of the two configured models", not a model id.
FAST_ALIASES = frozenset({"fast", "small"})
CHAT_ALIASES = frozenset({"chat", "strong"})


@dataclass(frozen=True)
class LLMs:
    fast: BaseChatModel
    chat: BaseChatModel
    fast_name: str = "fast"
    chat_name: str = "chat"
    # Builds a client for any other model name on the same endpoint (the route map's).
    factory: Callable[[str], BaseChatModel] | None = None
    # Closes the connections every model made here shares (see :meth:`aclose`).
    closing: Callable[[], Awaitable[None]] | None = field(default=None, compare=False, repr=False)
    _made: dict[str, BaseChatModel] = field(default_factory=dict, compare=False, repr=False)

    async def aclose(self) -> None:
        """Close the HTTP connections to the endpoint, once the agent is done with it."""
        if self.closing is not None:
            await self.closing()

    def named(self, name: str) -> tuple[BaseChatModel, str]:
        """The client for ``name`` and its real model name; aliases name the two models,
        and without a factory an unknown name falls back to the chat model."""
        if name in FAST_ALIASES or name == self.fast_name:
            return self.fast, self.fast_name
        if name in CHAT_ALIASES or name == self.chat_name or self.factory is None:
            return self.chat, self.chat_name
        if name not in self._made:  # one client (and HTTP pool) per model, built once
            self._made[name] = self.factory(name)
        return self._made[name], name


def openai_llms(
    *,
    fast_model: str,
    chat_model: str,
    base_url: str | None,
    api_key: str | None,
    timeout_s: float = 30.0,
    max_retries: int = 2,
) -> LLMs:
    """ChatOpenAI clients for any OpenAI-compatible endpoint (OpenAI, vLLM, Ollama...)."""
    from langchain_openai import ChatOpenAI

    from agent.llm.endpoint import ChatEndpoint
    from agent.llm.sdk_client import PlainChatClient

    key = api_key or "not-needed"
    # One SDK client and one endpoint (each a connection pool) for every model.
    client = PlainChatClient(
        api_key=key, base_url=base_url, timeout=timeout_s, max_retries=max_retries
    )
    endpoint = ChatEndpoint(str(client.base_url), key, timeout_s=timeout_s, max_retries=max_retries)

    async def close() -> None:
        await endpoint.aclose()
        await client.close()

    def make(model: str, temperature: float) -> ChatOpenAI:
        return ChatOpenAI(
            model=model,
            base_url=base_url,
            api_key=key,
            temperature=temperature,
            timeout=timeout_s,
            max_retries=max_retries,
            # With a custom base_url the usage chunk must be asked for explicitly.
            stream_usage=True,
            root_async_client=client,
            async_client=client.plain_completions(endpoint),
            # Its per-chunk guard wraps every chunk in a task of its own (40 % of a
            # streamed answer's client CPU); stream_text keeps one deadline per stream.
            stream_chunk_timeout=None,
        )

    return LLMs(
        make(fast_model, 0.0),
        make(chat_model, 0.2),
        fast_model,
        chat_model,
        factory=lambda name: make(name, 0.2),
        closing=close,
    )


def usage_of(message: BaseMessage | None) -> dict[str, int]:
    meta = getattr(message, "usage_metadata", None) or {}
    return {
        "prompt_tokens": int(meta.get("input_tokens", 0)),
        "completion_tokens": int(meta.get("output_tokens", 0)),
    }


def _classify(exc: BaseException) -> LLMError:
    import openai

    if isinstance(exc, LLMError):
        return exc
    if isinstance(exc, EndpointError):
        if exc.status == 429:
            return LLMError("rate_limited", "the model endpoint kept answering 429", 429)
        return LLMError(exc.kind, exc.detail, exc.status)
    if isinstance(exc, openai.APITimeoutError | TimeoutError):
        return LLMError("timeout", "the model did not answer in time")
    if isinstance(exc, openai.RateLimitError):
        return LLMError("rate_limited", "the model endpoint kept answering 429")
    if isinstance(exc, openai.APIStatusError):
        status = exc.status_code
        return LLMError("http_error", f"HTTP {status} from the model endpoint", status)
    if isinstance(exc, openai.APIConnectionError):
        return LLMError("unreachable", "cannot connect to the model endpoint")
    return LLMError("malformed", f"{type(exc).__name__}: {str(exc)[:200]}")


def _strict(node: Any) -> Any:
    """OpenAI's strict structured output: every object closed, every property required,
    no defaults (an optional field is a nullable type instead)."""
    if isinstance(node, dict):
        node = {k: _strict(v) for k, v in node.items() if k != "default"}
        if node.get("type") == "object" and "properties" in node:
            node["additionalProperties"] = False
            node["required"] = list(node["properties"])
        return node
    if isinstance(node, list):
        return [_strict(item) for item in node]
    return node


@functools.cache
def response_format(schema: type[BaseModel]) -> dict[str, Any]:
    """The ``response_format`` for ``schema``, built once: langchain's
    ``with_structured_output`` rebuilds and re-parses it on every call (~10 ms)."""
    return {
        "type": "json_schema",
        "json_schema": {
            "name": schema.__name__,
            "schema": _strict(schema.model_json_schema()),
            "strict": True,
        },
    }


async def once_sent(call: Coroutine[Any, Any, R]) -> asyncio.Task[R]:
    """Start an LLM call (of this module) and return its task once the request has left
    this process, or once the call has ended if it never got that far.

    Work started beside a call (a search while the model routes) should not hold up the
    request itself: on a shared core a search thread started first delays the request's
    bytes by milliseconds, which the whole turn then waits for."""
    sent = asyncio.Event()
    token = on_sent.set(sent.set)
    try:
        task = asyncio.create_task(call)  # the task copies the context, and with it on_sent
    finally:
        on_sent.reset(token)
    waiter = asyncio.ensure_future(sent.wait())
    try:
        await asyncio.wait({task, waiter}, return_when=asyncio.FIRST_COMPLETED)
    except BaseException:
        task.cancel()
        raise
    finally:
        waiter.cancel()
    return task


async def structured(
    model: BaseChatModel, schema: type[T], messages: Sequence[BaseMessage]
) -> tuple[T, dict[str, int]]:
    """A JSON-schema reply parsed into ``schema``, with the call's usage.

    The format goes in ``extra_body``: the same request on the wire, but langchain then
    calls ``chat.completions.create`` instead of the SDK's ``parse``, which re-validates
    the schema and builds generic parsed models, and the SDK's type-driven transform
    skips the schema. We parse the JSON ourselves either way; 35 % less client CPU a call
    (3.9 -> 2.5 ms against a local server answering at once)."""
    body = {"response_format": response_format(schema)}
    try:
        endpoint = direct_endpoint(model)
        if endpoint is not None:
            content, usage = await complete(endpoint, model, messages, extra_body=body)
        else:
            reply = await model.bind(extra_body=body).ainvoke(list(messages), config=_HIDDEN)
            content, usage = str(reply.content), usage_of(reply)
    except Exception as exc:
        raise _classify(exc) from exc
    try:
        return schema.model_validate_json(content), usage
    except ValidationError as exc:
        raise LLMError("malformed", f"the reply did not match {schema.__name__}") from exc


async def stream_text(
    model: BaseChatModel, messages: Sequence[BaseMessage], on_token: Callable[[str], None]
) -> tuple[str, dict[str, int]]:
    """Stream a text reply, handing each piece to ``on_token``; returns the text and usage.

    A stream that goes quiet for the model's timeout fails like a call that did: an
    endpoint's keep-alive comments reset the HTTP read timeout, not this one."""
    parts: list[str] = []
    usage = {"prompt_tokens": 0, "completion_tokens": 0}
    quiet_s = float(getattr(model, "request_timeout", None) or STREAM_QUIET_S)
    loop = asyncio.get_running_loop()
    relay = _Coalesced(on_token, loop)
    endpoint = direct_endpoint(model)
    pieces = (
        stream(endpoint, model, messages, usage)
        if endpoint is not None
        else _langchain_pieces(model, messages, usage)
    )
    try:
        async with asyncio.timeout(quiet_s) as quiet:
            async for text in pieces:
                quiet.reschedule(loop.time() + quiet_s)
                parts.append(text)
                relay(text)
    except Exception as exc:
        raise _classify(exc) from exc
    finally:
        relay.flush()
    return "".join(parts), usage


async def _langchain_pieces(
    model: BaseChatModel, messages: Sequence[BaseMessage], usage: dict[str, int]
) -> AsyncIterator[str]:
    """:func:`agent.llm.direct.stream` through LangChain (traced): the same pieces."""
    async for chunk in model.astream(list(messages), config=_HIDDEN):
        if isinstance(chunk, AIMessageChunk):
            if chunk.usage_metadata:
                usage.update(usage_of(chunk))
            text = chunk.text
            if text:
                yield text


class _Coalesced:
    """Hands pieces on as they come, joining those that arrive together.

    Pieces read from one network read (a burst a buffering proxy releases, or a fast
    model's) arrive in one turn of the event loop; relayed one by one, each is an event
    through the graph's stream and the runner's queue, all of it waited for once the
    call has ended. A piece that arrives alone is handed on in the next turn of the
    loop."""

    def __init__(self, on_token: Callable[[str], None], loop: asyncio.AbstractEventLoop) -> None:
        self._on_token = on_token
        self._loop = loop
        self._pending: list[str] = []

    def __call__(self, text: str) -> None:
        if not self._pending:
            self._loop.call_soon(self.flush)
        self._pending.append(text)

    def flush(self) -> None:
        if self._pending:
            text = "".join(self._pending)
            self._pending.clear()
            self._on_token(text)


async def invoke_with_tools(
    model: BaseChatModel, tools: Sequence[BaseTool], messages: Sequence[BaseMessage]
) -> tuple[AIMessage, dict[str, int]]:
    try:
        reply = await model.bind_tools(list(tools)).ainvoke(list(messages), config=_HIDDEN)
    except Exception as exc:
        raise _classify(exc) from exc
    if not isinstance(reply, AIMessage):
        raise LLMError("malformed", "the tool call reply was not a message")
    return reply, usage_of(reply)
