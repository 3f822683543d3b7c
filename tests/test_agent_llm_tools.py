"""The agent with an LLM, driven over real HTTP: web search filling a thin pool and
answering current events (against a fake search API), and tools called through the
model's tool calling."""

from __future__ import annotations

from pathlib import Path

from agent.events import Turn
from agent.retrieval.knowledge_base import KnowledgeBase
from agent.websearch.tavily import TavilySearch
from tests.fakes.openai_server import FakeOpenAI, Reply
from tests.fakes.web_search import FakeWebSearch
from tests.support.agent_support import agent, analysis, collect, review, stages, verdict


async def test_web_search_fills_a_thin_pool_and_answers_current_events(
    sample_kb: KnowledgeBase, tmp_path: Path, fake_llm: FakeOpenAI
) -> None:
    server = FakeWebSearch().start()
    web = TavilySearch("test-key", base_url=server.base_url)
    try:
        fake_llm.reply("Analysis", analysis())
        # Only one useful passage: the judge asks for the web, then is satisfied.
        fake_llm.reply("Review", review(0.2, ranking=[1], missing=["x"]), review(0.9))
        fake_llm.reply("text", "According to the web, it is sunny [1].")
        fake_llm.reply("Verdict", verdict(True))
        async with agent(sample_kb, tmp_path, llm=fake_llm, web=web) as runner:
            events, thin = await collect(runner, Turn("What is the weather in Seoul?"))
            fake_llm.reply("Analysis", analysis("current_events"))
            fake_llm.reply("Review", review(0.9))
            _, news = await collect(runner, Turn("오늘 한국 뉴스 알려줘", thread_root="news"))
        assert "web" in stages(events) and len(server.requests) == 2
        # No refined query from the router: the question minus its filler words is searched.
        assert server.requests[0]["query"] == "the weather in Seoul"
        assert server.requests[1]["query"] == "오늘 한국 뉴스"
        assert any(s.kind == "web" for s in thin.sources + news.sources)
        assert news.route == "current_events"
    finally:
        await web.aclose()
        server.stop()


async def test_without_a_web_provider_current_events_say_so(
    sample_kb: KnowledgeBase, tmp_path: Path, fake_llm: FakeOpenAI
) -> None:
    fake_llm.reply("Analysis", analysis("current_events"))
    fake_llm.reply("Review", review(0.9))
    fake_llm.reply("text", "The documents do not cover today's news.")
    fake_llm.reply("Verdict", verdict(True))
    async with agent(sample_kb, tmp_path, llm=fake_llm) as runner:
        _, final = await collect(runner, Turn("What's in the news today?"))
    assert any("Web search is not configured" in note for note in final.notes)


async def test_tools_are_called_through_tool_calling(
    sample_kb: KnowledgeBase, tmp_path: Path, fake_llm: FakeOpenAI
) -> None:
    fake_llm.reply("Analysis", analysis("tools"))
    fake_llm.reply("tools", Reply(tool_calls=[("calculator", {"expression": "1200 * 3"})]))
    fake_llm.reply("text", "1,200 × 3 = 3,600입니다.")
    async with agent(sample_kb, tmp_path, llm=fake_llm) as runner:
        _, final = await collect(runner, Turn("1,200 곱하기 3은 얼마야?"))
    assert final.route == "tools" and final.answer == "1,200 × 3 = 3,600입니다."
    tool_result = [m for m in fake_llm.chat_requests[-1]["messages"] if m["role"] == "tool"]
    assert tool_result and tool_result[0]["content"] == "3600"
    assert final.llm_calls == 3
