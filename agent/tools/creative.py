"""The creative path's tools (seed 004's ALL_TOOLS, plus the team's own documents).

Built per turn, because ``search_documents`` searches this channel's scopes and every
tool records what it found so the draft's ``[n]`` citations map to real sources. A tool
never raises into the loop: a failure becomes the text ``error: ...`` the model reads,
so it can correct its call or carry on without it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import httpx
from langchain_core.tools import BaseTool, StructuredTool

from agent.retrieval.knowledge_base import KnowledgeBase, SearchOptions
from agent.state import PoolItem, pool_item
from agent.tools.calculator import calculate as _calculate
from agent.tools.clock import current_datetime
from agent.tools.errors import ToolError
from agent.tools.pages import FetchLimits, summarize_url
from agent.websearch.provider import WebSearchError, WebSearchProvider

DOCUMENT_HITS = 4
WEB_HITS = 4


@dataclass
class ToolBox:
    """What the tools need for one turn, and the sources they found (numbered in order)."""

    kb: KnowledgeBase
    scopes: frozenset[str] | None
    web: WebSearchProvider | None
    timezone: str
    limits: FetchLimits
    client: httpx.AsyncClient
    found: list[PoolItem] = field(default_factory=list)

    def _number(self, item: PoolItem) -> int:
        for n, known in enumerate(self.found, start=1):
            if known["id"] == item["id"]:
                return n
        self.found.append(item)
        return len(self.found)

    async def search_documents(self, query: str) -> str:
        options = SearchOptions(k=DOCUMENT_HITS, scopes=self.scopes, neighbours=0)
        hits = await asyncio.to_thread(self.kb.search, query, options)
        if not hits:
            return "no matching team documents"
        lines = []
        for hit in hits:
            item = pool_item(hit, query)
            where = f", {item['locator']}" if item["locator"] else ""
            lines.append(f"[{self._number(item)}] {item['title']}{where}: {item['text'][:800]}")
        return "\n".join(lines)

    async def search_web(self, query: str) -> str:
        if self.web is None:
            return "error: web search is off (TEAMRAG_WEB_SEARCH=false); use the team documents"
        try:
            results = await self.web.search(query, max_results=WEB_HITS)
        except WebSearchError as exc:
            return f"error: {exc}"
        if not results:
            return "no web results"
        lines = []
        for r in results:
            item = PoolItem(
                id=r.url, doc_id="", text=r.content, title=r.title, source=r.url, locator="",
                page=None, heading="", link=r.url, score=r.score, kind="web", found_by=query,
            )  # fmt: skip
            lines.append(f"[{self._number(item)}] {r.title} ({r.url}): {r.content}")
        return "\n".join(lines)

    async def summarize_url(self, url: str) -> str:
        return await summarize_url(url, self.limits, self.client)

    async def calculate(self, expression: str) -> str:
        return _calculate(expression)

    async def get_datetime(self, timezone: str = "") -> str:
        return current_datetime(timezone or self.timezone)

    def tools(self) -> list[BaseTool]:
        """The LangChain tools the model is offered; descriptions are written for it."""
        specs: list[tuple[Callable[..., Awaitable[str]], str, str]] = [
            (
                self.search_documents,
                "search_documents",
                "Search the team's own documents (handbooks, runbooks, policies). Use it for "
                "any fact about the team, so the draft is right; cite results as [n].",
            ),
            (
                self.search_web,
                "search_web",
                "Search the public web for current or general facts; cite results as [n].",
            ),
            (
                self.summarize_url,
                "summarize_url",
                "Fetch a public web page by URL and return its main text.",
            ),
            (
                self.calculate,
                "calculate",
                "Evaluate arithmetic exactly, e.g. '1200 * 3' or '15% of 240'.",
            ),
            (
                self.get_datetime,
                "get_datetime",
                "Today's date, time and weekday; optional IANA timezone such as 'Asia/Seoul'.",
            ),
        ]
        return [
            StructuredTool.from_function(coroutine=fn, name=name, description=description)
            for fn, name, description in specs
        ]

    async def run(self, name: str, args: dict[str, Any]) -> str:
        """Run one tool call; every failure comes back as ``error: ...`` for the model."""
        by_name = {tool.name: tool for tool in self.tools()}
        tool = by_name.get(name)
        if tool is None:
            return f"error: unknown tool {name!r}; tools are {', '.join(by_name)}"
        try:
            return str(await tool.ainvoke(args))
        except ToolError as exc:
            return f"error: {exc}"
        except Exception as exc:  # bad arguments, a broken page: the model reads why
            return f"error: {type(exc).__name__}: {str(exc)[:200]}"
