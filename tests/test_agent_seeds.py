"""Issue 15 through the real graph and the local fake OpenAI server: the route-to-model
map, the creative path's bounded tool loop, per-request and per-channel feature flags,
the hallucination policy, the turn's path, the keyless web search and summarize_url."""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import httpx
import pytest

from adapters.chat.channels import load_channel_rules, under_rule
from agent.config import AgentConfig, Features
from agent.events import Turn
from agent.retrieval.knowledge_base import KnowledgeBase
from agent.tools.errors import ToolError
from agent.tools.pages import FetchLimits, check_url, pinned, summarize_url
from agent.websearch.duckduckgo import DuckDuckGoSearch
from agent.websearch.provider import WebSearchError, search_terms
from tests.fakes.duckduckgo import FakeDuckDuckGo
from tests.fakes.openai_server import FakeOpenAI, Reply
from tests.support.agent_support import (
    agent,
    analysis,
    collect,
    review,
    script_answer,
    stages,
    verdict,
)


def models_of(llm: FakeOpenAI, task: str) -> list[str]:
    return [call.model for call in llm.calls if call.task == task]


async def test_the_route_map_picks_the_model_that_writes_the_answer(
    sample_kb: KnowledgeBase, tmp_path: Path, fake_llm: FakeOpenAI
) -> None:
    config = AgentConfig(route_models={"knowledge": "mid-model", "knowledge:complex": "big-model"})
    script_answer(fake_llm, "Backups are kept 35 days [1].", "Long answer [1].")
    fake_llm.reply("Analysis", analysis(), analysis(complexity="complex"))
    async with agent(sample_kb, tmp_path, llm=fake_llm, config=config) as runner:
        _, simple = await collect(runner, Turn("How long are backups kept?"))
        _, hard = await collect(runner, Turn("Compare backup retention", thread_root="t2"))
    assert models_of(fake_llm, "text") == ["mid-model", "big-model"]
    assert set(models_of(fake_llm, "Analysis")) == {"fast-model"}
    assert (simple.model, hard.model) == ("mid-model", "big-model")
    assert "mid-model" in simple.usage_by_model and simple.complexity == "moderate"
    assert hard.complexity == "complex" and hard.confidence == 0.95


async def test_a_general_route_mapped_to_another_model_is_answered_by_it(
    sample_kb: KnowledgeBase, tmp_path: Path, fake_llm: FakeOpenAI
) -> None:
    fake_llm.reply("Analysis", analysis("general", reply="Paris."))
    fake_llm.reply("text", "Paris is the capital of France.")
    async with agent(sample_kb, tmp_path, llm=fake_llm) as runner:
        _, unmapped = await collect(runner, Turn("hello there, capital of France?"))
    assert unmapped.answer == "Paris." and unmapped.model == "fast-model"
    assert fake_llm.round_trips() == 1
    fake_llm.reset()
    fake_llm.reply("Analysis", analysis("general", reply="Paris."))
    fake_llm.reply("text", "Paris is the capital of France.")
    config = AgentConfig(route_models={"general": "small-model"})
    async with agent(sample_kb, tmp_path / "b", llm=fake_llm, config=config) as runner:
        _, mapped = await collect(runner, Turn("hello there, capital of France?"))
    assert mapped.answer == "Paris is the capital of France." and mapped.model == "small-model"
    assert models_of(fake_llm, "text") == ["small-model"]


def _creative_script(llm: FakeOpenAI, *calls: tuple[str, dict[str, Any]]) -> None:
    """The model calls ``calls`` one per round, then writes the draft citing [1]."""
    rounds = list(calls)

    def answer(body: dict[str, Any]) -> Reply:
        done = sum(1 for m in body["messages"] if m.get("role") == "tool")
        if body.get("tools") and done < len(rounds):
            return Reply(tool_calls=[rounds[done]])
        return Reply(content="환영합니다! 인수인계는 매주 월요일이에요 [1].")

    llm.reply("Analysis", analysis("creative", confidence=0.9))
    llm.script["tools"] = answer
    llm.script["text"] = answer


async def test_a_creative_request_drafts_with_tools_and_cites_the_documents(
    sample_kb: KnowledgeBase, tmp_path: Path, fake_llm: FakeOpenAI
) -> None:
    _creative_script(
        fake_llm,
        ("search_documents", {"query": "onboarding"}),
        ("calculate", {"expression": "1/0"}),  # a failing tool: fed back, not raised
    )
    async with agent(sample_kb, tmp_path, llm=fake_llm) as runner:
        events, final = await collect(runner, Turn("신규 입사자 환영 메시지 초안 써줘"))
    assert final.route == "creative" and final.model == "chat-model"
    assert final.answer.startswith("환영합니다") and final.sources
    assert stages(events).count("tool_call") == 2 and "tool_error" in stages(events)
    last = fake_llm.chat_requests[-1]["messages"]
    assert any(m.get("role") == "tool" and m["content"].startswith("error:") for m in last)
    assert any("calculate failed" in note for note in final.notes)
    assert [s["node"] for s in final.path if s["node"] == "creative"] == ["creative"]
    assert fake_llm.round_trips() == 4  # routing, then three tool-loop rounds


async def test_the_tool_loop_is_bounded(
    sample_kb: KnowledgeBase, tmp_path: Path, fake_llm: FakeOpenAI
) -> None:
    def forever(body: dict[str, Any]) -> Reply:
        if body.get("tools"):
            return Reply(tool_calls=[("get_datetime", {})])
        return Reply(content="Here is the draft.")

    fake_llm.reply("Analysis", analysis("creative"))
    fake_llm.script["tools"] = forever
    fake_llm.script["text"] = forever
    config = AgentConfig(max_tool_rounds=2)
    async with agent(sample_kb, tmp_path, llm=fake_llm, config=config) as runner:
        _, final = await collect(runner, Turn("write a welcome message for the new on-call"))
    with_tools = [b for b in fake_llm.chat_requests if b.get("tools")]
    assert len(with_tools) == 2 and final.answer == "Here is the draft."
    assert "tool loop stopped after 2 rounds" in final.notes
    assert not fake_llm.chat_requests[-1].get("tools")


async def test_a_model_without_tool_calling_drafts_without_tools(
    sample_kb: KnowledgeBase, tmp_path: Path, fake_llm: FakeOpenAI
) -> None:
    """Like an Ollama or vLLM model served without tool support: HTTP 400 to ``tools``."""

    def no_tools(body: dict[str, Any]) -> Reply:
        return Reply(status=400) if body.get("tools") else Reply(content="A draft, no tools.")

    fake_llm.reply("Analysis", analysis("creative"))
    fake_llm.script["tools"] = no_tools
    fake_llm.script["text"] = no_tools
    async with agent(sample_kb, tmp_path, llm=fake_llm) as runner:
        _, final = await collect(runner, Turn("draft an announcement for the release"))
    assert final.answer == "A draft, no tools." and not final.degraded
    assert any("refused tool calling (HTTP 400)" in note for note in final.notes)


async def test_a_failing_model_on_the_creative_path_says_so_and_offers_documents(
    sample_kb: KnowledgeBase, tmp_path: Path, fake_llm: FakeOpenAI
) -> None:
    fake_llm.reply("Analysis", analysis("creative"))
    fake_llm.reply("tools", Reply(status=500))
    async with agent(sample_kb, tmp_path, llm=fake_llm) as runner:
        _, final = await collect(runner, Turn("write a welcome message for onboarding"))
    assert final.degraded and final.route == "creative"
    assert final.answer.startswith("The language model did not answer")


async def test_without_an_llm_a_draft_request_says_a_model_is_needed(
    sample_kb: KnowledgeBase, tmp_path: Path
) -> None:
    async with agent(sample_kb, tmp_path) as runner:
        _, final = await collect(runner, Turn("신규 입사자 온보딩 안내문 초안 써줘"))
    assert final.route == "creative" and "언어 모델" in final.answer
    assert final.sources and final.mode == "extractive"


async def test_request_flags_override_and_the_block_policy_refuses(
    sample_kb: KnowledgeBase, tmp_path: Path, fake_llm: FakeOpenAI
) -> None:
    fake_llm.reply("Analysis", analysis())
    fake_llm.reply("Review", review(0.9))
    fake_llm.reply("text", "Made up [1].")
    fake_llm.reply("Verdict", verdict(False, "not supported"))
    flags = {"self_refine": False, "hallucination_policy": "block", "active_retrieval": False}
    async with agent(sample_kb, tmp_path, llm=fake_llm) as runner:
        _, final = await collect(runner, Turn("How long are backups kept?", features=flags))
    assert final.answer.startswith("I couldn't write an answer the sources support")
    assert final.features["hallucination_policy"] == "block"
    assert final.features["sufficiency_loop"] is False and final.features["self_refine"] is False
    assert fake_llm.calls_by_task()["text"] == 1  # no rewrite


async def test_the_warn_policy_shows_the_draft_under_a_warning(
    sample_kb: KnowledgeBase, tmp_path: Path, fake_llm: FakeOpenAI
) -> None:
    fake_llm.reply("Analysis", analysis())
    fake_llm.reply("Review", review(0.9))
    fake_llm.reply("text", "Backups are kept forever [1].")
    fake_llm.reply("Verdict", verdict(False, "not supported"))
    flags = {"self_refine": False, "hallucination_policy": "warn"}
    async with agent(sample_kb, tmp_path, llm=fake_llm) as runner:
        _, final = await collect(runner, Turn("How long are backups kept?", features=flags))
    assert final.answer.startswith("⚠️ Warning") and "kept forever [1]" in final.answer


async def test_an_unknown_flag_ends_in_a_final_that_names_it(
    sample_kb: KnowledgeBase, tmp_path: Path
) -> None:
    async with agent(sample_kb, tmp_path) as runner:
        _, final = await collect(runner, Turn("hello", features={"turbo": True}))
    assert final.route == "error" and "turbo" in final.notes[0]


async def test_routing_off_searches_every_message(
    sample_kb: KnowledgeBase, tmp_path: Path, fake_llm: FakeOpenAI
) -> None:
    script_answer(fake_llm, "Hello [1].", analyses=[analysis("smalltalk", reply="Hi!")])
    async with agent(sample_kb, tmp_path, llm=fake_llm) as runner:
        _, final = await collect(runner, Turn("hi", features={"routing": False}))
    assert final.route == "knowledge" and any("routing is off" in n for n in final.notes)


async def test_the_path_records_each_node_and_its_decision(
    sample_kb: KnowledgeBase, tmp_path: Path, fake_llm: FakeOpenAI
) -> None:
    script_answer(fake_llm, "Backups are kept 35 days [1].")
    async with agent(sample_kb, tmp_path, llm=fake_llm) as runner:
        _, final = await collect(runner, Turn("How long are backups kept?"))
    nodes = [step["node"] for step in final.path]
    assert nodes[:3] == ["input_guard", "cache_lookup", "router"] and "verify" in nodes
    router = next(s for s in final.path if s["node"] == "router")
    assert router["route"] == "knowledge" and router["confidence"] == 0.95
    assert next(s for s in final.path if s["node"] == "planner")["k"] == 6
    assert next(s for s in final.path if s["node"] == "verify")["grade"] == 0.95


def test_channel_features_apply_under_the_request_flags() -> None:
    rules = load_channel_rules(
        None, '[channels.C1.features]\nweb_search = false\nhallucination_policy = "warn"\n'
    )
    turn = Turn("hi", channel="C1", features={"hallucination_policy": "block"})
    flags = under_rule(turn, rules.for_channel("C1")).features
    assert flags == {"web_search": False, "hallucination_policy": "block"}
    assert Features().overridden(flags).hallucination_policy == "block"
    with pytest.raises(Exception, match="unknown feature"):
        load_channel_rules(None, "[channels.C1.features]\nturbo = true\n")


# --- keyless web search and summarize_url, over real HTTP ---------------------------------


@pytest.fixture
def ddg() -> Any:
    server = FakeDuckDuckGo().start()
    yield server
    server.stop()


async def test_duckduckgo_results_are_read_and_ads_skipped(ddg: FakeDuckDuckGo) -> None:
    search = DuckDuckGoSearch(base_url=ddg.base_url)
    try:
        results = await search.search("한국 뉴스", max_results=5)
    finally:
        await search.aclose()
    assert ddg.forms == [{"q": "한국 뉴스", "b": ""}]
    assert [r.url for r in results] == ["https://news.example.com/a", "https://wiki.example.org/b"]
    assert results[0].content == "Latest on 한국 뉴스 ."


async def test_duckduckgo_rate_limiting_is_a_stated_error(ddg: FakeDuckDuckGo) -> None:
    ddg.fail_with = 429
    search = DuckDuckGoSearch(base_url=ddg.base_url)
    try:
        with pytest.raises(WebSearchError, match="rate limited"):
            await search.search("x")
    finally:
        await search.aclose()


async def test_the_router_refined_query_is_searched_without_a_key(
    sample_kb: KnowledgeBase, tmp_path: Path, fake_llm: FakeOpenAI, ddg: FakeDuckDuckGo
) -> None:
    plan = analysis("current_events") | {"web_query": "한국 뉴스 오늘"}
    script_answer(fake_llm, "오늘의 뉴스입니다 [1].", analyses=[plan])
    search = DuckDuckGoSearch(base_url=ddg.base_url)
    try:
        async with agent(sample_kb, tmp_path, llm=fake_llm, web=search) as runner:
            _, final = await collect(runner, Turn("오늘 한국 뉴스 좀 알려줘"))
    finally:
        await search.aclose()
    assert [f["q"] for f in ddg.forms] == ["한국 뉴스 오늘"]
    web = next(s for s in final.path if s["node"] == "web_search")
    assert web["found"] == 2 and final.route == "current_events"


def test_without_an_llm_the_web_query_drops_filler_words() -> None:
    assert search_terms("오늘 한국 뉴스 좀 알려줘") == "오늘 한국 뉴스"
    assert search_terms("Can you tell me the weather in Seoul?") == "the weather in Seoul"


@pytest.mark.parametrize(
    "url",
    [
        "http://10.0.0.5/admin",
        "http://172.16.3.4/",
        "http://172.31.255.1/",
        "http://192.168.1.1/",
        "http://127.0.0.1:8080/",
        "http://[::1]/",
        "http://169.254.169.254/latest/meta-data/",
        "http://[fe80::1]/",
        "http://localhost/",
        "file:///etc/passwd",
    ],
)
async def test_summarize_url_refuses_private_and_local_addresses(url: str) -> None:
    with pytest.raises(ToolError):
        await check_url(url, allow_private=False)


async def test_summarize_url_reads_a_page_within_its_limits(ddg: FakeDuckDuckGo) -> None:
    async with httpx.AsyncClient() as client:
        allowed = FetchLimits(allow_private=True)
        text = await summarize_url(f"{ddg.base_url}/moved", allowed, client)
        assert "Handover happens every Monday" in text
        with pytest.raises(ToolError, match=r"loopback.*TEAMRAG_ALLOW_PRIVATE_URLS"):
            await summarize_url(f"{ddg.base_url}/page", FetchLimits(), client)
        # Only the first bytes are read: the later paragraph never arrives.
        tiny = FetchLimits(max_bytes=200, allow_private=True)
        try:
            start = await summarize_url(f"{ddg.base_url}/page", tiny, client)
        except ToolError:
            start = ""
        assert "Escalate" not in start


async def test_summarize_url_connects_to_the_address_it_checked(
    ddg: FakeDuckDuckGo, monkeypatch: pytest.MonkeyPatch
) -> None:
    """DNS rebinding: a name that resolves to a good address when checked and to another
    when connected must not reach the other. The first lookup is the one used."""
    port = urlparse(ddg.base_url).port
    real = socket.getaddrinfo
    lookups: list[str] = []

    def rebinding(host: str, *args: Any, **kwargs: Any) -> Any:
        if host != "rebind.test":
            return real(host, *args, **kwargs)
        lookups.append(host)
        address = "127.0.0.1" if len(lookups) == 1 else "10.255.255.1"
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (address, port))]

    monkeypatch.setattr(socket, "getaddrinfo", rebinding)
    async with httpx.AsyncClient() as client:
        allowed = FetchLimits(allow_private=True, timeout_s=5)
        text = await summarize_url(f"http://rebind.test:{port}/page", allowed, client)
    assert "Handover happens every Monday" in text
    assert lookups == ["rebind.test"]  # one lookup: the connection went where it said


def test_a_pinned_request_keeps_the_host_name_for_the_server_and_tls() -> None:
    target, headers, extensions = pinned("https://docs.example.com/a?b=1", "93.184.216.34")
    assert target == "https://93.184.216.34/a?b=1"
    assert headers == {"Host": "docs.example.com"}
    assert extensions == {"sni_hostname": "docs.example.com"}
    target, headers, _ = pinned("http://h.example:8080/x", "2001:db8::1")
    assert target == "http://[2001:db8::1]:8080/x" and headers == {"Host": "h.example:8080"}
