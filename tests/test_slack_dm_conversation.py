"""A Slack DM goes on as one conversation: a new DM message shortly after the bot's last
answer continues it (the model sees the earlier question), a reply in its thread too,
and "새 질문" or the idle time starts a new one."""

from __future__ import annotations

from pathlib import Path

from adapters.slack.dm import SqliteDmConversations, start_over
from adapters.slack.turns import Incoming
from agent.retrieval.knowledge_base import KnowledgeBase
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.slack_server import TEAM, FakeSlack
from tests.support.agent_support import request_text, script_answer
from tests.support.slack_support import DM, slack_bot, until

pytest_plugins = ("tests.support.slack_fixtures",)

BACKUPS = "How long are Postgres backups kept?"
SNAPSHOTS = "And what about the Redis snapshots?"
NEW_TOPIC = "Redis 스냅샷은 얼마나 보관하나요?"


def shown_since(llm: FakeOpenAI, start: int) -> str:
    """Everything the model was shown from request ``start`` on."""
    return "\n".join(request_text(r) for r in llm.chat_requests[start:])


async def test_a_dm_message_continues_the_last_answers_conversation_until_a_new_question(
    fake_slack: FakeSlack, sample_kb: KnowledgeBase, tmp_path: Path, fake_llm: FakeOpenAI
) -> None:
    script_answer(fake_llm, "Postgres backups are kept for 35 days [1].")
    async with slack_bot(fake_slack, sample_kb, tmp_path, llm=fake_llm) as slack:
        first = await slack.say(BACKUPS, channel=DM)
        await until(lambda: fake_slack.answered(DM, first["ts"]))
        start = len(fake_llm.chat_requests)
        second = await slack.say(SNAPSHOTS, channel=DM)  # a new message, not a thread reply
        await until(lambda: fake_slack.answered(DM, second["ts"]))
        continued = shown_since(fake_llm, start)
        start = len(fake_llm.chat_requests)
        await slack.say("Which one is kept longer?", channel=DM, thread_ts=second["ts"])
        await until(lambda: len(fake_slack.answered(DM, second["ts"])) == 2)
        in_thread = shown_since(fake_llm, start)
        start = len(fake_llm.chat_requests)
        third = await slack.say(f"새 질문: {NEW_TOPIC}", channel=DM)
        await until(lambda: fake_slack.answered(DM, third["ts"]))
        started_over = shown_since(fake_llm, start)
    assert SNAPSHOTS in continued and BACKUPS in continued  # the first question as history
    assert BACKUPS in in_thread and SNAPSHOTS in in_thread  # the reply joins it too
    assert NEW_TOPIC in started_over and "새 질문" not in started_over
    assert BACKUPS not in started_over and SNAPSHOTS not in started_over


def dm_message(ts: str, thread_ts: str | None = None) -> Incoming:
    return Incoming(TEAM, TEAM, DM, "im", "U0ALICE", "hi", ts, thread_ts, f"Ev{ts}")


async def test_after_the_idle_time_a_dm_message_starts_a_new_conversation(
    tmp_path: Path,
) -> None:
    now = [1000.0]
    record = SqliteDmConversations(tmp_path / "dm.sqlite", continue_s=1800, clock=lambda: now[0])
    first = await record.place(dm_message("1.0"))
    await record.active(first)
    now[0] += 1799
    assert (await record.place(dm_message("2.0"))).conversation == "1.0"
    now[0] += 1800  # since the last answer
    assert (await record.place(dm_message("3.0"))).conversation == "3.0"
    # A reply in a thread no DM conversation knows (the assistant pane's) stays its own.
    assert (await record.place(dm_message("4.0", thread_ts="0.5"))).conversation is None


def test_the_words_that_start_over() -> None:
    assert start_over("새 질문: 배포는 언제?") == (True, "배포는 언제?")
    assert start_over("New question - when can we deploy?") == (True, "when can we deploy?")
    assert start_over("새질문") == (True, "")
    assert start_over("What is a new question?") == (False, "What is a new question?")


async def test_a_dm_message_sent_while_the_last_is_answered_continues_it(
    fake_slack: FakeSlack, sample_kb: KnowledgeBase, tmp_path: Path, fake_llm: FakeOpenAI
) -> None:
    # The conversation is recorded when a message is taken, not only once it is answered:
    # "and the Redis ones?" typed while the bot still writes the first answer belongs to it.
    script_answer(fake_llm, "Postgres backups are kept for 35 days [1].")
    fake_llm.latency_s = 0.3  # the first answer is under way when the second arrives
    async with slack_bot(fake_slack, sample_kb, tmp_path, llm=fake_llm) as slack:
        first = await slack.say(BACKUPS, channel=DM)
        await until(lambda: fake_slack.replies(DM, first["ts"]), what="the first reply")
        assert not fake_slack.answered(DM, first["ts"])
        second = await slack.say(SNAPSHOTS, channel=DM)
        await until(lambda: fake_slack.answered(DM, second["ts"]), what="the second answer")
        asked_second = [
            request_text(r) for r in fake_llm.chat_requests if SNAPSHOTS in request_text(r)
        ]
    assert asked_second and BACKUPS in "\n".join(asked_second), asked_second  # as history
