"""A small Tavily-shaped search server for tests, over real HTTP.

``POST /search`` checks the bearer key (401 otherwise) and answers with
scripted results, or by default two plausible results built from the query.
It can be told to fail with a status, answer slowly, or send a broken body.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from tests.fakes.background import BackgroundApp


def default_results(query: str) -> list[dict[str, Any]]:
    slug = "-".join(query.lower().split())[:60] or "empty"
    return [
        {
            "title": f"{query} - Wikipedia",
            "url": f"https://en.wikipedia.org/wiki/{slug}",
            "content": f"An overview of {query}: background, recent developments and sources.",
            "score": 0.91,
        },
        {
            "title": f"Latest news about {query}",
            "url": f"https://news.example.com/{slug}",
            "content": f"Reporting on {query} from the past week, with quotes and analysis.",
            "score": 0.78,
        },
    ]


@dataclass
class FakeWebSearch:
    """Start with :meth:`start`; ``base_url`` is then ``http://127.0.0.1:PORT``."""

    api_key: str = "test-key"
    # None: two results built from each query; a list: returned as is.
    results: list[dict[str, Any]] | None = None
    fail_with: int | None = None
    delay: float = 0.0
    # Sent instead of JSON with status 200, to test a malformed response.
    raw_body: str | None = None
    requests: list[dict[str, Any]] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)
    base_url: str = ""
    _server: BackgroundApp | None = None

    async def _search(self, request: web.Request) -> web.Response:
        body = await request.json()
        self.requests.append(body)
        self.headers.append(dict(request.headers))
        if self.delay:
            await asyncio.sleep(self.delay)
        if request.headers.get("Authorization") != f"Bearer {self.api_key}":
            return web.json_response(
                {"detail": {"error": "Unauthorized: missing or invalid API key."}}, status=401
            )
        if self.fail_with is not None:
            return web.json_response(
                {"detail": {"error": "injected failure"}}, status=self.fail_with
            )
        if self.raw_body is not None:
            return web.Response(text=self.raw_body, content_type="application/json")
        query = str(body.get("query", ""))
        results = self.results if self.results is not None else default_results(query)
        return web.json_response(
            {
                "query": query,
                "answer": None,
                "images": [],
                "results": results[: int(body.get("max_results", 5))],
                "response_time": 0.01,
            }
        )

    def start(self) -> FakeWebSearch:
        app = web.Application()
        app.router.add_post("/search", self._search)
        self._server = BackgroundApp(app, handler_cancellation=True)
        self.base_url = self._server.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.stop()
