"""LangSmith tracing: on when its environment variables say so, with the turn's thread and
place on the trace; off otherwise. The real langsmith client posts to a local fake."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest
from langchain_core.tracers.langchain import wait_for_all_tracers
from langsmith import run_trees
from langsmith import utils as ls_utils

from agent.events import Turn
from agent.retrieval.knowledge_base import KnowledgeBase
from tests.agent_support import agent, analysis, collect
from tests.fakes.langsmith_server import FakeLangSmith
from tests.fakes.openai_server import FakeOpenAI

TURN = Turn(
    "hello", platform="slack", workspace="T1", channel="C1", thread_root="1700.1", user="U1"
)


def _forget_langsmith_settings() -> None:
    """langsmith reads its environment once per process; make it read it again."""
    ls_utils.get_env_var.cache_clear()
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
    fake_llm.reply("Analysis", analysis("smalltalk", reply="Hi!"))
    async with agent(sample_kb, tmp_path, llm=fake_llm) as runner:
        _, final = await collect(runner, TURN)
    await asyncio.to_thread(wait_for_all_tracers)
    assert final.answer == "Hi!"
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
    fake_llm.reply("Analysis", analysis("smalltalk", reply="Hi!"))
    async with agent(sample_kb, tmp_path, llm=fake_llm) as runner:
        await collect(runner, TURN)
    await asyncio.to_thread(wait_for_all_tracers)
    assert langsmith.runs == {}
