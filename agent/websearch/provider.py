"""Web search, behind a small protocol so the provider can be swapped or left out.

None is configured by default. The agent falls back to it when the knowledge base
returns too few documents, and for questions about current events. Every failure
surfaces as :class:`WebSearchError` whose message names the cause and the fix, so
the agent can tell the user in plain words and carry on with what it has.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Protocol, Self, runtime_checkable

import httpx

__all__ = [
    "MAX_CONTENT_CHARS",
    "HttpSearch",
    "WebResult",
    "WebSearchError",
    "WebSearchProvider",
]

# Enough for a paragraph of evidence; more crowds the LLM's context with one page.
MAX_CONTENT_CHARS = 1500


@dataclass(frozen=True)
class WebResult:
    title: str
    url: str
    content: str
    score: float = 0.0


class WebSearchError(Exception):
    """Web search failed; the message names the cause and the fix."""


class HttpSearch:
    """A provider's HTTP client: a client passed in belongs to the caller (shared pools),
    one made here is closed by :meth:`aclose` or on leaving ``async with``."""

    def __init__(self, timeout: float, client: httpx.AsyncClient | None) -> None:
        self._timeout = timeout
        self._owns_client = client is None
        self._client = client if client is not None else httpx.AsyncClient(timeout=timeout)

    async def aclose(self) -> None:
        if self._owns_client:
            await self._client.aclose()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()


@runtime_checkable
class WebSearchProvider(Protocol):
    name: str

    async def search(self, query: str, *, max_results: int = 5) -> list[WebResult]: ...


def trim(text: str, limit: int = MAX_CONTENT_CHARS) -> str:
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    # Cut at a word boundary unless that would throw away most of the text (no spaces in CJK).
    space = cut.rfind(" ")
    if space > limit * 0.8:
        cut = cut[:space]
    return cut.rstrip() + "…"


# Conversational filler a search engine does without ("오늘 한국 뉴스 알려줘" -> "오늘 한국 뉴스").
_FILLER = re.compile(
    r"\b(?:please|pls|can you|could you|would you|tell me|show me|let me know|search for|"
    r"look up|find out|i want to know|i'd like to know|what(?:'s| is| are)|about)\b"
    r"|(?:알려\s?줘요?|알려\s?주세요|알려\s?줄래|찾아\s?줘요?|찾아\s?주세요|검색해\s?줘요?|"
    r"검색해\s?주세요|궁금해요?|좀|혹시|부탁해요?)",
    re.IGNORECASE,
)


def search_terms(question: str) -> str:
    """Seed 002/004's query refiner without an LLM: the question minus filler words."""
    stripped = _FILLER.sub(" ", question)
    stripped = " ".join(stripped.replace("?", " ").replace("？", " ").split())
    return stripped or question.strip()


async def post(
    client: httpx.AsyncClient,
    url: str,
    *,
    timeout: float,
    provider: str,
    variable: str,
    **request: Any,
) -> httpx.Response:
    """POST to a search provider; a timeout or a network failure becomes a
    :class:`WebSearchError` that names the provider, the URL and the variable to check."""
    try:
        return await client.post(url, timeout=timeout, **request)
    except httpx.TimeoutException as exc:
        raise WebSearchError(
            f"web search timed out after {timeout:g}s calling {url}; "
            f"{provider} is slow or unreachable, try again later"
        ) from exc
    except (httpx.HTTPError, httpx.InvalidURL) as exc:
        raise WebSearchError(
            f"web search could not reach {url} ({type(exc).__name__}: {exc}); "
            f"check the network and {variable}"
        ) from exc
