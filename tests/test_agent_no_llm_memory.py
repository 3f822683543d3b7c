"""The agent with no LLM (extractive mode, the embedded default) and what it remembers:
a user's facts across threads (and forgotten), follow-ups answered from the thread, a
long thread kept bounded, overlapping turns in order, and pruning after the Final.
"""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

import pytest

from agent.config import AgentConfig, Features
from agent.events import Final, Turn
from agent.retrieval.knowledge_base import KnowledgeBase
from agent.runner import Runner
from agent.wording import replies
from tests.support.agent_support import BACKUPS, agent, stages
from tests.support.extractive_support import CITATION, HANDOVER, ask, thread_values

# --- memory ---------------------------------------------------------------------------


async def test_user_memory_is_shared_across_threads_and_can_be_forgotten(
    runner: Runner,
) -> None:
    _, told = await ask(runner, "저는 결제팀 소속이에요", thread="intro")
    assert "결제팀" in told.answer
    _, shown = await ask(runner, "내 정보 뭐 기억하고 있어?", thread="later")
    assert shown.route == "memory" and "결제팀" in shown.answer
    _, stranger = await ask(runner, "내 정보 뭐 기억하고 있어?", thread="x", user="someone-else")
    assert "결제팀" not in stranger.answer
    _, forgot = await ask(runner, "잊어줘", thread="later")
    assert forgot.route == "memory"
    _, after = await ask(runner, "내 정보 뭐 기억하고 있어?", thread="third")
    assert "결제팀" not in after.answer and after.answer == replies.text("memory_empty", "ko")


async def test_english_forget_removes_what_was_remembered(runner: Runner) -> None:
    await ask(runner, "I'm on the payments team.", thread="en1")
    _, shown = await ask(runner, "What do you remember about me?", thread="en2")
    assert "payments" in shown.answer.lower()
    _, forgot = await ask(runner, "Forget everything about me.", thread="en2")
    assert forgot.route == "memory"
    _, after = await ask(runner, "What do you remember about me?", thread="en3")
    assert "payments" not in after.answer.lower()


async def test_user_memory_switched_off_says_so(sample_kb: KnowledgeBase, tmp_path: Path) -> None:
    config = AgentConfig(features=Features(user_memory=False))
    async with agent(sample_kb, tmp_path, config=config) as runner:
        await ask(runner, "저는 결제팀 소속이에요", thread="intro")
        _, shown = await ask(runner, "내 정보 뭐 기억하고 있어?", thread="later")
    assert shown.route == "memory" and "결제팀" not in shown.answer
    assert shown.answer == replies.text("memory_off", "ko")


# --- threads ----------------------------------------------------------------------------


async def test_follow_up_is_context_dependent_and_never_cached(runner: Runner) -> None:
    follow_up = "그럼 그건 어디서 해요?"
    await ask(runner, BACKUPS, thread="main")
    events, final = await ask(runner, follow_up, thread="main")
    assert final.route == "knowledge" and not final.cached
    assert "rewrite" in stages(events)
    assert (await thread_values(runner, "main"))["needs_history"] is True
    # The follow-up's answer was not stored: the same words elsewhere mean something else.
    _, elsewhere = await ask(runner, follow_up, thread="other")
    assert not elsewhere.cached
    # Nor is an answer stored for those words served to the thread's follow-up.
    _, repeated = await ask(runner, follow_up, thread="main")
    assert not repeated.cached and repeated.route != "cached"


def first_quote(answer: str) -> str:
    return next(line for line in answer.splitlines() if line.startswith("> "))


@pytest.mark.parametrize(
    ("first", "follow_up", "answer", "said_before"),
    [
        (BACKUPS, "Redis는요?", "Redis", "Postgres backups are kept for 35 days"),
        ("How do I get access to production?", "Who approves it?",
         "Your team lead approves the request", "Production access is granted"),
    ],
)  # fmt: skip
async def test_a_follow_up_quotes_what_it_asks_not_the_previous_answer_again(
    runner: Runner, first: str, follow_up: str, answer: str, said_before: str
) -> None:
    _, earlier = await ask(runner, first, thread="follow")
    assert said_before in first_quote(earlier.answer)
    _, final = await ask(runner, follow_up, thread="follow")
    assert first_quote(final.answer).startswith(f"> {answer}"), final.answer
    assert final.sources and CITATION.search(final.answer)


async def test_a_follow_up_that_names_no_topic_is_answered_from_the_thread_topic(
    runner: Runner,
) -> None:
    """A bare "Are there exceptions?" asks about the freeze just discussed; the passage's
    "except fixes for a SEV1 incident" answers it (the stems differ: exception, except)."""
    await ask(runner, "What is the year-end deploy freeze?", thread="freeze")
    _, final = await ask(runner, "Are there exceptions?", thread="freeze")
    assert not final.answer.startswith(replies.text("not_covered", "en")), final.answer
    assert "except fixes for a SEV1 incident" in first_quote(final.answer)
    assert final.sources and CITATION.search(final.answer)


async def test_long_thread_keeps_a_bounded_history_with_a_summary(runner: Runner) -> None:
    for i in range(30):
        _, final = await ask(runner, f"{i}+{i}는?", thread="long")
        assert final.route == "tools" and str(2 * i) in final.answer
    values = await thread_values(runner, "long")
    messages = values["messages"]
    assert isinstance(messages, list)
    assert 2 <= len(messages) <= AgentConfig().history_keep_messages + 1
    assert messages[-2].content == "29+29는?" and "58" in messages[-1].content
    assert values.get("summary")


async def test_overlapping_turns_on_one_thread_run_in_the_order_they_started(
    runner: Runner,
) -> None:
    thread = "busy"
    first, second = await asyncio.gather(
        runner.ask(Turn(BACKUPS, thread_root=thread)),
        runner.ask(Turn(HANDOVER, thread_root=thread)),
    )
    assert "35 days" in first.answer and "Monday" in second.answer
    assert "total" in first.timings and "total" in second.timings
    messages = (await thread_values(runner, thread))["messages"]
    assert isinstance(messages, list)
    assert [(m.type, m.content) for m in messages] == [
        ("human", BACKUPS),
        ("ai", first.answer),
        ("human", HANDOVER),
        ("ai", second.answer),
    ]


async def test_a_caller_that_stops_reading_at_the_final_still_gets_its_thread_pruned(
    sample_kb: KnowledgeBase, tmp_path: Path
) -> None:
    """Chat adapters stop at the Final; the pruning after it must run to its end."""
    async with agent(sample_kb, tmp_path) as runner:
        questions = ("백업은 며칠 보관되나요?", "온콜 인수인계는 언제?", "Who approves access?")
        for question in questions:
            async for event in runner.run(Turn(question, thread_root="stops-early")):
                if isinstance(event, Final):
                    break
        await runner.wait_idle()
    with sqlite3.connect(tmp_path / "memory.sqlite") as db:
        (count,) = db.execute(
            "SELECT count(*) FROM checkpoints WHERE thread_id = ?",
            ("cli:local:terminal:stops-early",),
        ).fetchone()
    assert count == 1
