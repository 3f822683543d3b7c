"""Tavily's REST search API, the web search provider for a team with an API key.

Every failure surfaces as :class:`WebSearchError` whose message names the cause and the
fix (the key, the URL, the plan's limit), so the agent can tell the user in plain words.
"""

from __future__ import annotations

from typing import Any

import httpx

from agent.websearch.provider import HttpSearch, WebResult, WebSearchError, post, trim

API_KEY_VARIABLE = "TEAMRAG_WEB_SEARCH_API_KEY"
URL_VARIABLE = "TEAMRAG_WEB_SEARCH_URL"


def _score(value: Any) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        return 0.0


def _parse_results(payload: Any, max_results: int) -> list[WebResult] | None:
    """The results in a Tavily response, or None when its shape is not Tavily's."""
    if not isinstance(payload, dict) or not isinstance(payload.get("results"), list):
        return None
    results: list[WebResult] = []
    for item in payload["results"]:
        if not isinstance(item, dict):
            continue
        url, content, title = item.get("url"), item.get("content"), item.get("title")
        if not isinstance(url, str) or not url.strip():
            continue
        if not isinstance(content, str) or not content.strip():
            continue
        clean_title = title.strip() if isinstance(title, str) and title.strip() else url.strip()
        results.append(
            WebResult(
                title=clean_title,
                url=url.strip(),
                content=trim(content),
                score=_score(item.get("score")),
            )
        )
        if len(results) >= max_results:
            break
    return results


def _detail(response: httpx.Response) -> str:
    """The provider's own error message, if it sent one, for the log and the user."""
    try:
        body = response.json()
    except ValueError:
        return trim(response.text, 200)
    if isinstance(body, dict):
        detail = body.get("detail", body.get("error", body))
        if isinstance(detail, dict):
            detail = detail.get("error", detail.get("message", detail))
        return trim(str(detail), 200)
    return trim(str(body), 200)


class TavilySearch(HttpSearch):
    """Tavily's REST search API: ``POST {base_url}/search`` with a bearer key."""

    name = "tavily"

    def __init__(
        self,
        api_key: str,
        *,
        base_url: str = "https://api.tavily.com",
        timeout: float = 8.0,
        client: httpx.AsyncClient | None = None,
    ) -> None:
        if not api_key or not api_key.strip():
            raise WebSearchError(
                f"web search needs an API key; set {API_KEY_VARIABLE} or turn web search off"
            )
        super().__init__(timeout, client)
        self._api_key = api_key.strip()
        self._url = base_url.rstrip("/") + "/search"

    async def search(self, query: str, *, max_results: int = 5) -> list[WebResult]:
        query = query.strip()
        if not query:
            return []
        # Tavily accepts 1 to 20 results.
        max_results = max(1, min(int(max_results), 20))
        body = {"query": query, "max_results": max_results, "search_depth": "basic"}
        headers = {"Authorization": f"Bearer {self._api_key}"}
        response = await post(
            self._client,
            self._url,
            timeout=self._timeout,
            provider="the provider",
            variable=URL_VARIABLE,
            json=body,
            headers=headers,
        )
        self._raise_for_status(response)
        try:
            payload = response.json()
        except ValueError as exc:  # JSONDecodeError, or bytes that are not text
            raise WebSearchError(
                f"web search failed: malformed JSON from {self._url}; "
                f"check that {URL_VARIABLE} points at a Tavily-compatible API"
            ) from exc
        results = _parse_results(payload, max_results)
        if results is None:
            raise WebSearchError(
                f"web search failed: unexpected response from {self._url} (no 'results' list); "
                f"check that {URL_VARIABLE} points at a Tavily-compatible API"
            )
        return results

    def _raise_for_status(self, response: httpx.Response) -> None:
        status = response.status_code
        if 200 <= status < 300:
            return
        prefix = f"web search failed: HTTP {status} from {self._url}"
        if status in (401, 403):
            fix = f"check {API_KEY_VARIABLE}"
        elif status == 429:
            fix = "rate limited by the provider; wait a little and try again"
        elif status in (432, 433):
            # Tavily's codes for an exhausted plan or pay-as-you-go limit.
            fix = "the provider's usage limit is reached; check the plan for this API key"
        elif status >= 500:
            fix = "the provider has a problem; try again later"
        else:
            fix = "the request was rejected; check the web search settings"
        detail = _detail(response)
        shown = f" ({detail})" if detail else ""
        raise WebSearchError(f"{prefix}{shown}; {fix}")
