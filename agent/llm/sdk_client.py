"""The OpenAI SDK client teamrag hands to langchain-openai: plain JSON both ways.

LangChain calls it for tool calls and traced runs; the turn's other calls go out through
:mod:`agent.llm.endpoint` (``PlainCompletions.endpoint``).

langchain-openai builds each chat request as JSON-ready dicts, and reads each reply and
streamed chunk as a dict (``model_dump``). Between the two, the SDK walks every request
through its type-driven transform (0.3 ms a call, more with long passages in the prompt)
and builds a pydantic model of every reply and every streamed chunk, which langchain
dumps back into a dict: half of the client's CPU per token of a streamed answer. Here
the request's body goes out as langchain built it (the SDK's own ``extra_body``, the same
bytes on the wire) and replies come back as the JSON the endpoint sent. Retries,
timeouts, errors and every other endpoint stay the SDK's own.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import openai
from openai.resources.chat.completions import AsyncCompletions
from openai.types.chat import ChatCompletion, ChatCompletionChunk

from agent.llm.endpoint import ChatEndpoint, on_sent

if TYPE_CHECKING:  # the SDK's own HTTP library, which it brings with it
    import httpx2

_AS_SENT: tuple[type, ...] = (ChatCompletion, ChatCompletionChunk)
# Arguments of ``create`` that are not part of the request's body.
_REQUEST_OPTIONS = ("model", "stream", "extra_headers", "extra_query", "timeout")


_BODY_SENT = "http11.send_request_body.complete"


async def _tell_when_sent(request: httpx2.Request) -> None:
    """Ask httpcore to report the request's progress when the caller wants to know."""
    sent = on_sent.get()
    if sent is None:
        return

    async def trace(event: str, info: dict[str, Any]) -> None:
        if event == _BODY_SENT:
            sent()

    request.extensions["trace"] = trace


class PlainChatClient(openai.AsyncOpenAI):
    """``AsyncOpenAI`` whose chat completions and chunks arrive as dicts, and which says
    when a request has left (:data:`on_sent`)."""

    def __init__(self, **kwargs: Any) -> None:
        hooks = {"request": [_tell_when_sent]}
        super().__init__(**kwargs, http_client=openai.DefaultAsyncHttpxClient(event_hooks=hooks))

    def _process_response_data(self, *, data: object, cast_to: Any, response: Any) -> Any:
        if cast_to in _AS_SENT and isinstance(data, dict):
            return data
        return super()._process_response_data(data=data, cast_to=cast_to, response=response)

    def plain_completions(self, endpoint: ChatEndpoint) -> PlainCompletions:
        """What langchain-openai's ``async_client`` should be for this client; ``endpoint``
        is the same endpoint for the calls that skip LangChain."""
        return PlainCompletions(self.chat.completions, endpoint)


def _as_sent(params: dict[str, Any]) -> dict[str, Any]:
    """``create``'s arguments with the body moved into ``extra_body``, which the SDK sends
    as it is; ``messages`` is required by the signature and replaced by the real one."""
    options = {key: params[key] for key in _REQUEST_OPTIONS if key in params}
    body = {k: v for k, v in params.items() if k not in _REQUEST_OPTIONS and k != "extra_body"}
    return options | {"messages": [], "extra_body": body | dict(params.get("extra_body") or {})}


class _RawCompletions:
    def __init__(self, raw: Any) -> None:
        self._raw = raw

    async def create(self, **params: Any) -> Any:
        return await self._raw.create(**_as_sent(params))


class PlainCompletions:
    """The two calls langchain-openai makes on ``async_client``: ``create`` (streaming)
    and ``with_raw_response.create`` (a whole reply), and the ``endpoint`` the direct
    calls use (:mod:`agent.llm.direct`)."""

    def __init__(self, completions: AsyncCompletions, endpoint: ChatEndpoint) -> None:
        self._completions = completions
        self.endpoint = endpoint
        self.with_raw_response = _RawCompletions(completions.with_raw_response)

    async def create(self, **params: Any) -> Any:
        return await self._completions.create(**_as_sent(params))
