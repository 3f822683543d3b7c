"""TavilySearch against a local Tavily-shaped server, over real HTTP."""

from __future__ import annotations

import socket
from collections.abc import AsyncIterator, Iterator

import httpx
import pytest
import pytest_asyncio

from agent.websearch.provider import (
    MAX_CONTENT_CHARS,
    WebResult,
    WebSearchError,
    WebSearchProvider,
)
from agent.websearch.tavily import TavilySearch
from tests.fakes.web_search import FakeWebSearch


@pytest.fixture
def fake_web() -> Iterator[FakeWebSearch]:
    server = FakeWebSearch().start()
    yield server
    server.stop()


# The tests run in a loop per test; the client must be closed in the loop that opened it.
@pytest_asyncio.fixture(loop_scope="function")
async def tavily(fake_web: FakeWebSearch) -> AsyncIterator[TavilySearch]:
    search = TavilySearch(fake_web.api_key, base_url=fake_web.base_url, timeout=2.0)
    yield search
    await search.aclose()


async def test_results_are_parsed(fake_web: FakeWebSearch, tavily: TavilySearch) -> None:
    results = await tavily.search("서울 날씨", max_results=3)
    assert len(results) == 2
    assert all(isinstance(r, WebResult) for r in results)
    assert results[0].title == "서울 날씨 - Wikipedia"
    assert results[0].url.startswith("https://en.wikipedia.org/wiki/")
    assert "서울 날씨" in results[0].content
    assert results[0].score == pytest.approx(0.91)
    assert fake_web.requests == [{"query": "서울 날씨", "max_results": 3, "search_depth": "basic"}]
    assert fake_web.headers[0]["Authorization"] == "Bearer test-key"


async def test_it_is_a_web_search_provider(tavily: TavilySearch) -> None:
    provider: WebSearchProvider = tavily
    assert provider.name == "tavily"
    assert isinstance(tavily, WebSearchProvider)


async def test_empty_content_is_dropped_and_long_content_trimmed(
    fake_web: FakeWebSearch, tavily: TavilySearch
) -> None:
    fake_web.results = [
        {"title": "Empty", "url": "https://a.example", "content": "   ", "score": 0.9},
        {"title": "No content", "url": "https://b.example", "score": 0.8},
        {"title": "Long", "url": "https://c.example", "content": "word " * 1000, "score": "x"},
        {"url": "https://d.example", "content": "untitled but useful"},
        {"title": "No url", "content": "dropped"},
        "not an object",  # type: ignore[list-item]  # Tavily never sends this; we must cope
    ]
    results = await tavily.search("anything")
    assert [r.url for r in results] == ["https://c.example", "https://d.example"]
    long = results[0]
    assert len(long.content) <= MAX_CONTENT_CHARS
    assert long.content.endswith("…")
    assert long.score == 0.0
    assert results[1].title == "https://d.example"


async def test_max_results_is_respected(fake_web: FakeWebSearch, tavily: TavilySearch) -> None:
    fake_web.results = [
        {"title": f"r{i}", "url": f"https://e.example/{i}", "content": f"result {i}"}
        for i in range(10)
    ]
    assert len(await tavily.search("many", max_results=4)) == 4
    assert fake_web.requests[-1]["max_results"] == 4


async def test_blank_query_makes_no_request(fake_web: FakeWebSearch, tavily: TavilySearch) -> None:
    assert await tavily.search("   ") == []
    assert fake_web.requests == []


async def test_wrong_key_names_the_setting(fake_web: FakeWebSearch) -> None:
    async with TavilySearch("wrong-key", base_url=fake_web.base_url) as search:
        with pytest.raises(WebSearchError) as caught:
            await search.search("anything")
    message = str(caught.value)
    assert "HTTP 401" in message
    assert fake_web.base_url in message
    assert "TEAMRAG_WEB_SEARCH_API_KEY" in message
    assert "wrong-key" not in message


def test_missing_key_is_refused_up_front() -> None:
    with pytest.raises(WebSearchError, match="TEAMRAG_WEB_SEARCH_API_KEY"):
        TavilySearch("")


@pytest.mark.parametrize(
    ("status", "hint"), [(500, "try again later"), (429, "rate limited"), (432, "usage limit")]
)
async def test_server_errors(
    fake_web: FakeWebSearch, tavily: TavilySearch, status: int, hint: str
) -> None:
    fake_web.fail_with = status
    with pytest.raises(WebSearchError) as caught:
        await tavily.search("anything")
    assert f"HTTP {status}" in str(caught.value)
    assert hint in str(caught.value)
    assert "injected failure" in str(caught.value)


async def test_timeout(fake_web: FakeWebSearch) -> None:
    fake_web.delay = 2.0
    async with TavilySearch(fake_web.api_key, base_url=fake_web.base_url, timeout=0.2) as search:
        with pytest.raises(WebSearchError, match=r"timed out after 0\.2s"):
            await search.search("slow")


@pytest.mark.parametrize("body", ["{not json", '{"answer": "no results key"}', "[]"])
async def test_malformed_response(fake_web: FakeWebSearch, tavily: TavilySearch, body: str) -> None:
    fake_web.raw_body = body
    with pytest.raises(WebSearchError, match=r"malformed JSON|unexpected response"):
        await tavily.search("anything")


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


async def test_server_down() -> None:
    base_url = f"http://127.0.0.1:{_closed_port()}"
    async with TavilySearch("test-key", base_url=base_url) as search:
        with pytest.raises(WebSearchError, match="could not reach") as caught:
            await search.search("anything")
    assert base_url in str(caught.value)


async def test_a_shared_client_is_left_open(fake_web: FakeWebSearch) -> None:
    async with httpx.AsyncClient() as client:
        search = TavilySearch(fake_web.api_key, base_url=fake_web.base_url, client=client)
        assert len(await search.search("shared")) == 2
        await search.aclose()
        assert not client.is_closed
