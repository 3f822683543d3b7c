"""The agent with an LLM, driven over real HTTP: what it remembers. A user's facts
across threads (and forgotten on request), overlapping turns of one thread in order,
a thread after a restart, and thread memory on Postgres."""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path

from agent.events import Turn
from agent.retrieval.knowledge_base import KnowledgeBase
from tests.fakes.openai_server import FakeOpenAI
from tests.support.agent_support import (
    agent,
    analysis,
    answer_everything,
    collect,
    request_text,
    review,
    verdict,
)
from tests.support.postgres_support import postgres_or_skip


async def test_user_facts_are_remembered_across_threads_and_forgotten(
    sample_kb: KnowledgeBase, tmp_path: Path, fake_llm: FakeOpenAI
) -> None:
    fake_llm.reply(
        "Analysis",
        analysis("smalltalk", reply="반가워요!", facts=[("team", "결제팀 소속")]),
        analysis(),
    )
    fake_llm.reply("Review", review(0.9))
    fake_llm.reply("text", "Backups are kept for 35 days [1].")
    fake_llm.reply("Verdict", verdict(True))
    async with agent(sample_kb, tmp_path, llm=fake_llm) as runner:
        show = "내 정보 뭐 기억하고 있어?"
        await collect(runner, Turn("안녕, 저는 결제팀 소속이에요", thread_root="one", user="u1"))
        _, shown = await collect(runner, Turn(show, thread_root="two", user="u1"))
        _, other = await collect(runner, Turn(show, thread_root="3", user="u2"))
        await collect(runner, Turn("How long are backups kept?", thread_root="four", user="u1"))
        _, forgot = await collect(runner, Turn("내 정보 잊어줘", thread_root="five", user="u1"))
        _, after = await collect(runner, Turn("what do you remember about me?", user="u1"))
    assert shown.route == "memory" and "결제팀 소속" in shown.answer
    assert "결제팀" not in other.answer  # another user's memory is separate
    answer_request = next(c.body for c in fake_llm.calls if c.task == "text")
    assert "결제팀 소속" in request_text(answer_request)  # the profile reached the prompt
    assert "1" in forgot.answer and "결제팀" not in after.answer


async def test_two_overlapping_turns_in_one_thread_are_answered_in_order(
    sample_kb: KnowledgeBase, tmp_path: Path, fake_llm: FakeOpenAI
) -> None:
    answer_everything(fake_llm)
    fake_llm.latency_s = 0.1
    async with agent(sample_kb, tmp_path, llm=fake_llm) as runner:
        first = asyncio.create_task(runner.ask(Turn("How long are Postgres backups kept?")))
        await asyncio.sleep(0.05)  # the second message arrives while the first is answered
        second = asyncio.create_task(runner.ask(Turn("Where is the on-call handover?")))
        one, two = await asyncio.gather(first, second)
        state = await runner.graph.aget_state({"configurable": {"thread_id": one.thread_id}})
    assert one.route == two.route == "knowledge"
    assert two.timings.get("waited_for_thread", 0) > 0
    contents = [m.content for m in state.values["messages"]]
    assert contents[0] == "How long are Postgres backups kept?"
    assert contents[2] == "Where is the on-call handover?" and len(contents) == 4
    analyses = [c.body for c in fake_llm.calls if c.task == "Analysis"]
    assert "How long are Postgres backups kept?" in request_text(analyses[1])


async def test_thread_memory_survives_a_restart(
    sample_kb: KnowledgeBase, tmp_path: Path, fake_llm: FakeOpenAI
) -> None:
    answer_everything(fake_llm)
    async with agent(sample_kb, tmp_path, llm=fake_llm) as runner:
        await collect(runner, Turn("How long are Postgres backups kept?", thread_root="r"))
    async with agent(sample_kb, tmp_path, llm=fake_llm) as restarted:
        await collect(restarted, Turn("And the WAL archive?", thread_root="r"))
    analyses = [c.body for c in fake_llm.calls if c.task == "Analysis"]
    assert "How long are Postgres backups kept?" in request_text(analyses[1])
    assert "Backups are kept for 35 days" in request_text(analyses[1])


async def test_thread_memory_on_postgres(
    sample_kb: KnowledgeBase, tmp_path: Path, fake_llm: FakeOpenAI
) -> None:
    url = postgres_or_skip()
    answer_everything(fake_llm)
    thread = f"pg-{uuid.uuid4().hex[:8]}"
    async with agent(sample_kb, tmp_path, llm=fake_llm, database_url=url) as runner:
        await collect(runner, Turn("How long are Postgres backups kept?", thread_root=thread))
    async with agent(sample_kb, tmp_path / "other", llm=fake_llm, database_url=url) as again:
        await collect(again, Turn("And the WAL archive?", thread_root=thread))
    analyses = [c.body for c in fake_llm.calls if c.task == "Analysis"]
    assert "How long are Postgres backups kept?" in request_text(analyses[1])
