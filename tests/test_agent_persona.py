"""A channel's persona line reaches every prompt that speaks to the user, and the answer
cache never hands one persona's answer to another (over real HTTP to the fake LLM)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agent.events import Turn
from agent.prompts import PERSONA
from agent.retrieval.knowledge_base import KnowledgeBase
from tests.fakes.openai_server import FakeOpenAI, Reply
from tests.support.agent_support import agent, analysis, collect, script_answer

PAYMENTS = "You are the payments team's assistant. Answer formally and cite every claim."
ONCALL = "You are the on-call helper of the platform team. Be terse."
QUESTION = "How long are Postgres backups kept?"


def system_prompt(body: dict[str, Any]) -> str:
    return str(body["messages"][0]["content"])


def prompts_of(fake: FakeOpenAI, task: str) -> list[str]:
    return [system_prompt(call.body) for call in fake.calls if call.task == task]


async def test_the_turn_persona_replaces_the_default_in_the_answer_and_router_prompts(
    sample_kb: KnowledgeBase, tmp_path: Path, fake_llm: FakeOpenAI
) -> None:
    script_answer(fake_llm, "Backups are kept for 35 days [1].")
    async with agent(sample_kb, tmp_path, llm=fake_llm) as runner:
        _, final = await collect(runner, Turn(QUESTION, persona=PAYMENTS))
    assert final.answer == "Backups are kept for 35 days [1]." and not final.degraded
    (answer,) = prompts_of(fake_llm, "text")
    (routing,) = prompts_of(fake_llm, "Analysis")  # it writes the smalltalk replies
    assert answer.startswith(PAYMENTS) and PERSONA not in answer
    assert routing.startswith(PAYMENTS)
    assert "Answer rules" in answer  # the persona replaces one line, not the rules


async def test_without_a_turn_persona_the_process_persona_or_the_default_is_used(
    sample_kb: KnowledgeBase, tmp_path: Path, fake_llm: FakeOpenAI
) -> None:
    fake_llm.reply("Analysis", analysis("smalltalk", reply="Hello!"))
    async with agent(sample_kb, tmp_path, llm=fake_llm) as runner:
        await collect(runner, Turn("hello", thread_root="a"))
        runner.deps.persona = ONCALL  # what TEAMRAG_PERSONA sets for the whole process
        await collect(runner, Turn("hello", thread_root="b"))
        await collect(runner, Turn("hello", thread_root="c", persona=PAYMENTS))
    first, second, third = prompts_of(fake_llm, "Analysis")
    assert first.startswith(PERSONA)
    assert second.startswith(ONCALL)
    assert third.startswith(PAYMENTS)


async def test_the_tools_answer_speaks_with_the_persona(
    sample_kb: KnowledgeBase, tmp_path: Path, fake_llm: FakeOpenAI
) -> None:
    fake_llm.reply("Analysis", analysis("tools"))
    fake_llm.reply("tools", Reply(tool_calls=[("calculator", {"expression": "2 * 3"})]))
    fake_llm.reply("text", "2 × 3 = 6.")
    async with agent(sample_kb, tmp_path, llm=fake_llm) as runner:
        _, final = await collect(runner, Turn("What is 2 times 3?", persona=ONCALL))
    assert final.route == "tools" and final.answer == "2 × 3 = 6."
    assert all(
        p.startswith(ONCALL) for p in prompts_of(fake_llm, "tools") + prompts_of(fake_llm, "text")
    )


async def test_the_cache_keeps_answers_apart_by_persona(
    sample_kb: KnowledgeBase, tmp_path: Path, fake_llm: FakeOpenAI
) -> None:
    script_answer(fake_llm, "Formally: 35 days [1].", "35 days [1].", "Kept 35 days [1].")
    async with agent(sample_kb, tmp_path, llm=fake_llm) as runner:
        _, formal = await collect(runner, Turn(QUESTION, thread_root="1", persona=PAYMENTS))
        _, terse = await collect(runner, Turn(QUESTION, thread_root="2", persona=ONCALL))
        _, plain = await collect(runner, Turn(QUESTION, thread_root="3"))
        _, formal_again = await collect(runner, Turn(QUESTION, thread_root="4", persona=PAYMENTS))
        _, plain_again = await collect(runner, Turn(QUESTION, thread_root="5"))
    assert not (formal.cached or terse.cached or plain.cached)
    assert (formal.answer, terse.answer, plain.answer) == (
        "Formally: 35 days [1].",
        "35 days [1].",
        "Kept 35 days [1].",
    )
    assert formal_again.cached and formal_again.answer == formal.answer
    assert plain_again.cached and plain_again.answer == plain.answer
    assert fake_llm.calls_by_task()["text"] == 3  # one written answer per persona
