"""The chat completions endpoint on the wire: one aiohttp session, the SDK's retry rules.

The structured and streamed calls of a turn (Analysis, Review, the answer, Verdict) are
where its time between LLM round trips goes. Through the ``openai`` SDK each call spent
1.3 ms of client CPU building, sending and parsing (its request options, httpx models,
the anyio connection pool) against 0.5 ms for the same request over aiohttp, and a
knowledge turn has four of them on its critical path (benchmarks/README.md). So those
calls go out here, as the same JSON body langchain built. Calls LangChain makes itself
(tool calls, traced runs) keep the SDK.

Failures keep the SDK's rules: connection errors, timeouts, 408, 409, 429 and 5xx are
retried ``max_retries`` times, 0.5 s doubling to 8 s with a quarter of jitter, or what the
endpoint's ``Retry-After`` asks for when that is under a minute.
"""

from __future__ import annotations

import asyncio
import json
import logging
import random
from collections.abc import AsyncIterator, Callable
from contextvars import ContextVar
from email.utils import parsedate_to_datetime
from time import time
from types import SimpleNamespace
from typing import Any

import aiohttp

# One line a request, as httpx writes it for the SDK's: the turn's thread is on it.
log = logging.getLogger(__name__)

# Called once the current task's request body has been handed to the socket.
on_sent: ContextVar[Callable[[], None] | None] = ContextVar("teamrag_on_sent", default=None)

_RETRIED = frozenset({408, 409, 429})
_RETRY_AFTER_MAX_S = 60.0


class EndpointError(Exception):
    """The endpoint gave no usable reply; ``kind`` is ``timeout``, ``unreachable``,
    ``http_error`` (``status`` says which) or ``malformed``, as :class:`agent.llm.calls.LLMError`
    names them."""

    def __init__(self, kind: str, detail: str, status: int | None = None) -> None:
        super().__init__(f"{kind}: {detail}")
        self.kind = kind
        self.detail = detail
        self.status = status


async def _body_sent(session: Any, context: SimpleNamespace, params: Any) -> None:
    sent = on_sent.get()
    if sent is not None:
        sent()


def retry_wait(attempt: int, headers: Any = None) -> float:
    """Seconds to wait before retry number ``attempt + 1``: the endpoint's ``Retry-After``
    (or ``retry-after-ms``) when it is under a minute, else the SDK's back-off."""
    asked = _retry_after(headers) if headers is not None else None
    if asked is not None and 0 <= asked <= _RETRY_AFTER_MAX_S:
        return asked
    return min(0.5 * 2.0**attempt, 8.0) * (1 - 0.25 * random.random())


def _retry_after(headers: Any) -> float | None:
    milliseconds = headers.get("retry-after-ms")
    if milliseconds is not None:
        try:
            return float(milliseconds) / 1000
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return float(value)
    except ValueError:
        pass
    try:
        return parsedate_to_datetime(value).timestamp() - time()
    except (TypeError, ValueError):
        return None


def _retried(response: aiohttp.ClientResponse) -> bool:
    told = response.headers.get("x-should-retry")
    if told in ("true", "false"):
        return told == "true"
    return response.status in _RETRIED or response.status >= 500


async def _error_detail(response: aiohttp.ClientResponse) -> str:
    """HTTP status and the endpoint's own message, when it sent one."""
    text = (await response.text(errors="replace"))[:500]
    try:
        message = json.loads(text)["error"]["message"]
    except (ValueError, KeyError, TypeError):
        message = text.strip()
    return f"HTTP {response.status} from the model endpoint" + (f": {message}" if message else "")


class ChatEndpoint:
    """``POST {base_url}/chat/completions`` with JSON bodies, whole or streamed (SSE).

    One session (and connection pool) per event loop; :meth:`aclose` at shutdown."""

    def __init__(self, base_url: str, api_key: str, *, timeout_s: float, max_retries: int) -> None:
        self.url = base_url.rstrip("/") + "/chat/completions"
        self._headers = {"Authorization": f"Bearer {api_key}", "Content-Type": "application/json"}
        # Like the SDK's timeout: for connecting and for each read, not for the whole reply.
        self._timeout = aiohttp.ClientTimeout(
            total=None, sock_connect=timeout_s, sock_read=timeout_s
        )
        self.max_retries = max_retries
        self._session: aiohttp.ClientSession | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    def _session_here(self) -> aiohttp.ClientSession:
        loop = asyncio.get_running_loop()
        if self._session is None or self._session.closed or self._loop is not loop:
            if self._session is not None and not self._session.closed:
                # Made in an event loop that has ended: its connections cannot be closed
                # from this one. Detached, it is closed without them.
                self._session.detach()
            tracing = aiohttp.TraceConfig()
            tracing.on_request_chunk_sent.append(_body_sent)
            self._session = aiohttp.ClientSession(
                timeout=self._timeout, trace_configs=[tracing], raise_for_status=False
            )
            self._loop = loop
        return self._session

    async def aclose(self) -> None:
        if self._session is not None and not self._session.closed:
            if self._loop is asyncio.get_running_loop():
                await self._session.close()
            else:
                self._session.detach()
        self._session = None

    async def complete(self, body: dict[str, Any]) -> dict[str, Any]:
        """The endpoint's JSON reply to a request for a whole answer."""
        response = await self._post(body)
        async with response:
            try:
                reply: dict[str, Any] = json.loads(await response.read())
            except ValueError as exc:
                raise EndpointError("malformed", "the endpoint's reply is not JSON") from exc
            except (TimeoutError, aiohttp.ClientError) as exc:
                raise _broken(exc) from exc
        return reply

    async def stream(self, body: dict[str, Any]) -> AsyncIterator[dict[str, Any]]:
        """Each chunk of a streamed answer (server-sent events), until ``[DONE]``."""
        response = await self._post(body)
        async with response:
            try:
                async for data in _events(response.content):
                    if data == b"[DONE]":
                        return
                    chunk = json.loads(data)
                    if isinstance(chunk, dict) and chunk.get("error"):
                        detail = str((chunk["error"] or {}).get("message") or chunk["error"])
                        raise EndpointError("http_error", f"the stream failed: {detail[:300]}")
                    yield chunk
            except ValueError as exc:
                raise EndpointError("malformed", "a streamed chunk is not JSON") from exc
            except (TimeoutError, aiohttp.ClientError) as exc:
                raise _broken(exc) from exc

    async def _post(self, body: dict[str, Any]) -> aiohttp.ClientResponse:
        """The response (status below 400) after the SDK's retries, else the last error."""
        # Korean stays UTF-8 on the wire: half the bytes of \u escapes.
        payload = json.dumps(body, ensure_ascii=False).encode("utf-8")
        session = self._session_here()
        attempt = 0
        while True:
            try:
                response = await session.post(self.url, data=payload, headers=self._headers)
            except (TimeoutError, aiohttp.ClientError, OSError) as exc:
                failure, wait_s = _broken(exc, self.url), retry_wait(attempt)
                failure.__cause__ = exc
            else:
                log.info(
                    'HTTP Request: POST %s "HTTP/1.1 %d %s"',
                    self.url,
                    response.status,
                    response.reason,
                )
                if response.status < 400:
                    return response
                async with response:
                    failure = EndpointError(
                        "http_error", await _error_detail(response), response.status
                    )
                    if not _retried(response):
                        raise failure
                    wait_s = retry_wait(attempt, response.headers)
            if attempt >= self.max_retries:
                raise failure
            attempt += 1
            await asyncio.sleep(wait_s)


def _broken(exc: BaseException, url: str = "") -> EndpointError:
    """A timeout or a connection that failed (aiohttp's read timeouts are both)."""
    if isinstance(exc, TimeoutError):
        return EndpointError("timeout", "the model did not answer in time")
    where = f" to {url}" if url else ""
    return EndpointError("unreachable", f"connection{where} failed: {type(exc).__name__}: {exc}")


async def _events(content: aiohttp.StreamReader) -> AsyncIterator[bytes]:
    """The ``data`` of each server-sent event; comments (keep-alives), ``event:`` and
    ``id:`` lines are skipped. Lines are split here, so no chunk size limits a line."""
    buffered = b""
    data: list[bytes] = []
    async for piece in content.iter_any():
        buffered += piece
        *lines, buffered = buffered.split(b"\n")
        for raw in lines:
            line = raw.rstrip(b"\r")
            if not line:  # the blank line ends an event
                if data:
                    yield b"\n".join(data)
                    data = []
            elif line.startswith(b"data:"):
                data.append(line[5:].removeprefix(b" "))
    if buffered.rstrip(b"\r").startswith(b"data:"):
        data.append(buffered.rstrip(b"\r")[5:].removeprefix(b" "))
    if data:
        yield b"\n".join(data)
