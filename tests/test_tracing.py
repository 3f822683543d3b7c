"""LangSmith tracing: on when its environment variables say so, with the turn's thread and
place on the trace; off otherwise. The real langsmith client posts to a local fake."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from langchain_core.messages import HumanMessage, SystemMessage
from langsmith import run_trees
from langsmith import utils as ls_utils

from agent.events import Turn
from agent.llm.calls import openai_llms, stream_text, structured
from agent.llm.direct import direct_endpoint
from agent.llm.schemas import Analysis
from agent.retrieval.knowledge_base import KnowledgeBase
from tests.fakes.langsmith_server import FakeLangSmith
from tests.fakes.openai_server import FakeOpenAI, Reply
from tests.support.agent_support import agent, analysis, collect

HELLO = "Hello! Ask me anything about the team's documents."
TURN = Turn(
    "hello", platform="slack", workspace="T1", channel="C1", thread_root="1700.1", user="U1"
)


def flush() -> None:
    """What ``langchain_core``'s ``wait_for_all_tracers`` does, with a time limit: a sender
    that died would otherwise make the test hang instead of fail."""
    client = run_trees._CLIENT
    if client is not None:
        client.flush(timeout=10)


def _forget_langsmith_settings() -> None:
    """langsmith reads its environment once per process; make it read it again."""
    ls_utils.get_env_var.cache_clear()  # type: ignore[attr-defined]  # lru_cache'd overloads
    ls_utils.get_tracer_project.cache_clear()


@pytest.fixture
def langsmith(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeLangSmith]:
    """A fake LangSmith the client is pointed at; tracing itself is left to each test."""
    server = FakeLangSmith().start()
    monkeypatch.setenv("LANGSMITH_ENDPOINT", server.url)
    monkeypatch.setenv("LANGSMITH_API_KEY", "test-key")
    monkeypatch.setenv("LANGSMITH_PROJECT", "teamrag-test")
    monkeypatch.setattr(run_trees, "_CLIENT", None)  # one cached client per process
    _forget_langsmith_settings()
    try:
        yield server
    finally:
        client = run_trees._CLIENT
        if client is not None:
            client.cleanup(timeout=5)  # stops its background thread
        monkeypatch.undo()
        _forget_langsmith_settings()  # the next tests see tracing off again
        server.stop()


async def test_a_turn_is_traced_with_its_thread_and_place(
    sample_kb: KnowledgeBase,
    tmp_path: Path,
    fake_llm: FakeOpenAI,
    langsmith: FakeLangSmith,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("LANGSMITH_TRACING", "true")
    fake_llm.reply("Analysis", analysis("smalltalk", reply=HELLO))
    async with agent(sample_kb, tmp_path, llm=fake_llm) as runner:
        _, final = await collect(runner, TURN)
    await asyncio.to_thread(flush)
    assert final.answer == HELLO
    (turn,) = langsmith.named("teamrag turn")
    metadata = turn["extra"]["metadata"]
    assert metadata["thread_id"] == TURN.thread_id == final.thread_id
    assert {k: metadata[k] for k in ("platform", "workspace", "channel", "user")} == {
        "platform": "slack",
        "workspace": "T1",
        "channel": "C1",
        "user": "U1",
    }
    assert "slack" in turn["tags"] and turn["session_name"] == "teamrag-test"
    assert turn.get("end_time") and not turn.get("parent_run_id")
    in_trace = [r for r in langsmith.runs.values() if r.get("trace_id") == turn["trace_id"]]
    assert any(r.get("run_type") == "llm" for r in in_trace)  # the model call, nested
    assert langsmith.api_keys == {"test-key"}


async def test_without_langsmith_tracing_nothing_is_sent(
    sample_kb: KnowledgeBase, tmp_path: Path, fake_llm: FakeOpenAI, langsmith: FakeLangSmith
) -> None:
    fake_llm.reply("Analysis", analysis("smalltalk", reply=HELLO))
    async with agent(sample_kb, tmp_path, llm=fake_llm) as runner:
        await collect(runner, TURN)
    await asyncio.to_thread(flush)
    assert langsmith.runs == {}


async def test_model_calls_skip_langchains_run_machinery_only_when_nothing_traces_them(
    fake_llm: FakeOpenAI, langsmith: FakeLangSmith, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Untraced, a call goes straight to the endpoint (agent/llm/direct.py); traced, through
    LangChain, so that it shows in the trace. The request on the wire is the same."""
    llms = openai_llms(
        fast_model="fast", chat_model="chat", base_url=fake_llm.base_url, api_key="k"
    )
    messages = [SystemMessage("문서로만 답하세요."), HumanMessage("백업은 며칠 보관되나요?")]

    async def calls() -> tuple[object, ...]:
        fake_llm.reply("Analysis", analysis(variations=["백업 보관 기간"]))
        fake_llm.reply("text", Reply(content="35일 동안 보관됩니다 [1].", usage=(30, 8)))
        return (
            await structured(llms.fast, Analysis, messages),
            await stream_text(llms.chat, messages, lambda _: None),
        )

    assert direct_endpoint(llms.fast) is not None
    direct = await calls()
    await asyncio.to_thread(flush)
    assert langsmith.runs == {}
    monkeypatch.setenv("LANGSMITH_TRACING", "true")
    _forget_langsmith_settings()
    assert direct_endpoint(llms.fast) is None
    traced = await calls()
    await asyncio.to_thread(flush)
    assert traced == direct
    await llms.aclose()
    assert fake_llm.chat_requests[:2] == fake_llm.chat_requests[2:]
    llm_runs = [r for r in langsmith.runs.values() if r.get("run_type") == "llm"]
    assert len(llm_runs) == 2


def test_tracing_set_in_the_env_file_reaches_langchain(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """LangChain reads os.environ only; a team puts LANGSMITH_* in .env (Settings reads it)."""
    from bots.common import export_tracing
    from bots.settings import Settings

    names = ("LANGSMITH_TRACING", "LANGSMITH_API_KEY", "LANGSMITH_PROJECT")
    for name in names:
        monkeypatch.setenv(name, "placeholder")  # so that monkeypatch restores the absence
        monkeypatch.delenv(name)
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".env").write_text(
        "LANGSMITH_TRACING=true\nLANGSMITH_API_KEY=lsv2-key\nLANGSMITH_PROJECT=team\n"
    )
    try:
        export_tracing(Settings())
        assert [os.environ.get(n) for n in names] == ["true", "lsv2-key", "team"]
    finally:
        for name in names:
            os.environ.pop(name, None)
    (tmp_path / ".env").write_text("LANGSMITH_TRACING=true\n")  # no key: nothing exported
    export_tracing(Settings())
    assert "LANGSMITH_TRACING" not in os.environ
