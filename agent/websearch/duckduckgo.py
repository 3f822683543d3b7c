"""Keyless web search: DuckDuckGo's HTML endpoint, over httpx (seed 004 searches with it).

The ``ddgs`` package was the first choice, but its engines hard-code their URLs and send
through ``primp``, so no setting points it at a local server and tests could not reach
it over real HTTP. This provider does the one request it needs (``POST {base}/html/``
with the query) and reads the result list; ``TEAMRAG_DUCKDUCKGO_URL`` moves the base.
Failures surface as :class:`WebSearchError` like Tavily's, naming the cause.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qs, urljoin, urlparse

import httpx

from agent.websearch.provider import HttpSearch, WebResult, WebSearchError, post, trim

URL_VARIABLE = "TEAMRAG_DUCKDUCKGO_URL"
DEFAULT_URL = "https://html.duckduckgo.com"
# DuckDuckGo answers a client without a browser-like agent with an empty page.
_HEADERS = {"User-Agent": "Mozilla/5.0 (compatible; teamrag; +https://github.com/teamrag)"}


def _target(href: str, base: str) -> str:
    """The result's real URL: DuckDuckGo wraps it in ``/l/?uddg=<url>``."""
    absolute = urljoin(base, href)
    parsed = urlparse(absolute)
    if parsed.path.startswith("/l/"):
        wrapped = parse_qs(parsed.query).get("uddg")
        if wrapped:
            return wrapped[0]
    return absolute


def _text(node: Any) -> str:
    return " ".join(" ".join(node.itertext()).split()) if node is not None else ""


def parse_results(page: str, base: str, max_results: int) -> list[WebResult]:
    """Title, URL and snippet of each organic result; ads (``y.js``) are skipped."""
    import lxml.html

    if not page.strip():
        return []
    tree = lxml.html.fromstring(page)
    results: list[WebResult] = []
    for body in tree.xpath("//div[contains(@class, 'result__body')]"):
        links = body.xpath(".//a[contains(@class, 'result__a')]")
        if not links:
            continue
        url = _target(links[0].get("href", ""), base)
        if "/y.js" in url or not url.startswith(("http://", "https://")):
            continue
        snippets = body.xpath(".//*[contains(@class, 'result__snippet')]")
        snippet = _text(snippets[0]) if snippets else ""
        title = _text(links[0]) or url
        results.append(WebResult(title=title, url=url, content=trim(snippet or title)))
        if len(results) >= max_results:
            break
    return results


class DuckDuckGoSearch(HttpSearch):
    """Web search with no key: the default provider when web search is switched on."""

    name = "duckduckgo"

    def __init__(
        self,
        *,
        base_url: str = DEFAULT_URL,
        timeout: float = 8.0,
        client: httpx.AsyncClient | None = None,
    ) -> None:
        super().__init__(timeout, client)
        self._base = base_url.rstrip("/") + "/"
        self._url = self._base + "html/"

    async def search(self, query: str, *, max_results: int = 5) -> list[WebResult]:
        query = query.strip()
        if not query:
            return []
        response = await post(
            self._client,
            self._url,
            timeout=self._timeout,
            provider="DuckDuckGo",
            variable=URL_VARIABLE,
            data={"q": query, "b": ""},
            headers=_HEADERS,
        )
        if response.status_code in (202, 403, 429):
            # DuckDuckGo's answer to too many automated searches from one address.
            raise WebSearchError(
                f"web search was refused by DuckDuckGo (HTTP {response.status_code}, rate "
                "limited); wait a little, or set TEAMRAG_WEB_SEARCH_API_KEY to use Tavily"
            )
        if response.status_code >= 300:
            raise WebSearchError(
                f"web search failed: HTTP {response.status_code} from {self._url}; try again later"
            )
        try:
            return parse_results(response.text, self._base, max(1, int(max_results)))
        except Exception as exc:  # lxml on a page that is not HTML
            raise WebSearchError(
                f"web search failed: unreadable page from {self._url} ({type(exc).__name__})"
            ) from exc
