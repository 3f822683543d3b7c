"""Every log line written during a turn names its thread, even from a library deep in
the graph (the HTTP client calling the model), and concurrent turns never swap their ids."""

from __future__ import annotations

import asyncio
import logging
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from agent.events import Final, Turn
from agent.plumbing import log_context
from agent.plumbing.log_context import LogContextFilter
from agent.retrieval.knowledge_base import KnowledgeBase
from tests.fakes.openai_server import FakeOpenAI, Reply
from tests.support.agent_support import agent, analysis, collect, review, verdict


def _by_question(body: dict[str, Any]) -> Reply:
    """Smalltalk for the greeting, a plain knowledge route for anything else."""
    last = str(body["messages"][-1]["content"])
    if last.rstrip().endswith("hello"):
        return Reply(content=analysis("smalltalk", reply="Hi!"))
    return Reply(content=analysis())


@pytest.fixture
def captured(caplog: pytest.LogCaptureFixture) -> pytest.LogCaptureFixture:
    caplog.handler.addFilter(LogContextFilter())
    caplog.set_level(logging.INFO)
    return caplog


def model_requests(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    """The HTTP client's line per model request (its logger's name varies by version)."""
    return [
        r
        for r in caplog.records
        if r.getMessage().startswith("HTTP Request: POST") and "/chat/completions" in r.getMessage()
    ]


async def test_concurrent_turns_log_under_their_own_thread_id(
    sample_kb: KnowledgeBase,
    tmp_path: Path,
    fake_llm: FakeOpenAI,
    captured: pytest.LogCaptureFixture,
) -> None:
    fake_llm.script["Analysis"] = _by_question
    fake_llm.reply("Review", review(0.9))
    fake_llm.reply("text", "Backups are kept for 35 days [1].")
    fake_llm.reply("Verdict", verdict(True))
    fake_llm.latency_s = 0.05  # the two turns' calls interleave
    greeting = Turn("hello", thread_root="greeting")
    question = Turn("How long are Postgres backups kept?", thread_root="question")
    async with agent(sample_kb, tmp_path, llm=fake_llm) as runner:
        with log_context.bind(event_id="Ev1"):  # what an adapter binds before running
            (_, hello), (_, answer) = await asyncio.gather(
                collect(runner, greeting), collect(runner, question)
            )
    assert (hello.route, answer.route) == ("smalltalk", "knowledge")
    model_calls = model_requests(captured)
    per_thread = Counter(getattr(r, "thread_id", None) for r in model_calls)
    assert per_thread == {
        greeting.thread_id: hello.llm_calls,
        question.thread_id: answer.llm_calls,
    }
    assert {getattr(r, "event_id", None) for r in model_calls} == {"Ev1"}
    assert log_context.current() == {}  # nothing leaks out of the turns


async def test_a_failed_turn_is_logged_under_its_thread(
    sample_kb: KnowledgeBase,
    tmp_path: Path,
    fake_llm: FakeOpenAI,
    captured: pytest.LogCaptureFixture,
) -> None:
    fake_llm.reply("Analysis", Reply(content=analysis(), delay=1.0))
    async with agent(sample_kb, tmp_path, llm=fake_llm) as runner:
        runner.turn_timeout_s = 0.3
        turn = Turn("How long are backups kept?", thread_root="slow")
        _, final = await collect(runner, turn)
    assert final.route == "error"
    # The one error Final (the HTTP adapter's failures use it too).
    assert final == Final.failed(turn, final.notes[0], mode="llm", timings=final.timings)
    (failure,) = [r for r in captured.records if r.getMessage().startswith("turn failed")]
    assert getattr(failure, "thread_id", None) == "cli:local:terminal:slow"


def test_a_failed_turn_says_why_in_the_askers_language() -> None:
    turn = Turn("Postgres 백업은 며칠 보관되나요?", thread_root="t1")
    final = Final.failed(turn, "the answer took longer than 3 s")
    assert (final.route, final.language, final.degraded) == ("error", "ko", True)
    assert "the answer took longer than 3 s" in final.answer
    assert final.notes == ["the answer took longer than 3 s"]
    assert final.thread_id == turn.thread_id and final.covered is None
