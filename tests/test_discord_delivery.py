"""Getting the answer out whatever happens: long answers split within the limits, rate
limits waited out, a refused rich message replaced by plain text, a broken turn or a
failing feedback store still leaving the asker with an answer or an apology."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any, cast

from adapters.chat.feedback import SqliteFeedbackStore
from adapters.chat.services import ChatServices
from agent.events import Event, Progress, Turn
from agent.retrieval.knowledge_base import KnowledgeBase
from tests.fakes.discord_payloads import BOT_ID
from tests.fakes.discord_rest import CHANNEL_MESSAGE, EDIT_MESSAGE, FOLLOWUP, ORIGINAL
from tests.fakes.openai_server import FakeOpenAI
from tests.support.agent_support import script_answer
from tests.support.chat_support import chat_services
from tests.support.discord_support import Bot, buttons, discord_bot, has_feedback, until

BACKUPS = "How long are Postgres backups kept?"
LONG_ANSWER = "\n\n".join(
    f"{i}. Postgres 백업은 35일 동안 보관됩니다 [1]."
    + " Backups run every night at 03:00 KST and the WAL is archived all day long." * 6
    for i in range(1, 13)
)


def script_long_answer(fake_llm: FakeOpenAI) -> None:
    script_answer(fake_llm, LONG_ANSWER)


async def final_response(bot: Bot, interaction: int) -> list[dict[str, Any]]:
    """The interaction's messages (original, then followups) once the last has buttons."""

    def messages() -> list[dict[str, Any]] | None:
        original = bot.fake.original(interaction)
        found = [original, *bot.fake.followups(interaction)] if original else []
        return found if found and has_feedback(found[-1]) else None

    return await until(messages, "the whole answer")


async def test_a_long_answer_is_split_over_messages_without_losing_a_character(
    sample_kb: KnowledgeBase, tmp_path: Path, fake_llm: FakeOpenAI
) -> None:
    assert len(LONG_ANSWER) > 5000
    script_long_answer(fake_llm)
    async with (
        chat_services(sample_kb, tmp_path, llm=fake_llm) as services,
        discord_bot(services) as bot,
    ):
        messages = await final_response(bot, await bot.fake.slash(BACKUPS, private=True))
    assert len(messages) >= 3
    assert all(len(m["content"]) <= 2000 for m in messages)
    assert "".join(m["content"] for m in messages) == LONG_ANSWER
    # Sources and buttons come once, under the last piece; every piece stays private.
    assert [bool(m["embeds"]) for m in messages] == [False] * (len(messages) - 1) + [True]
    assert [bool(buttons(m)) for m in messages] == [False] * (len(messages) - 1) + [True]
    assert all(m["flags"] & 64 for m in messages)
    assert all(c.status == 200 for c in bot.fake.calls_to(FOLLOWUP))


async def test_a_long_answer_in_a_thread_is_split_the_same_way(
    sample_kb: KnowledgeBase, tmp_path: Path, fake_llm: FakeOpenAI
) -> None:
    script_long_answer(fake_llm)
    async with (
        chat_services(sample_kb, tmp_path, llm=fake_llm) as services,
        discord_bot(services) as bot,
    ):
        asked = await bot.fake.say(f"<@{BOT_ID}> {BACKUPS}")
        thread = int((await until(lambda: bot.fake.thread_of(asked), "the thread"))["id"])
        messages = await until(
            lambda: (found := bot.fake.bot_messages(thread)) and has_feedback(found[-1]) and found,
            "the whole answer",
        )
    assert "".join(m["content"] for m in messages) == LONG_ANSWER
    assert all(len(m["content"]) <= 2000 for m in messages)


async def test_a_rate_limited_edit_is_retried_after_retry_after(
    sample_kb: KnowledgeBase, tmp_path: Path
) -> None:
    async with chat_services(sample_kb, tmp_path) as services, discord_bot(services) as bot:
        bot.fake.fail(ORIGINAL, status=429, retry_after=0.4)
        messages = await final_response(bot, await bot.fake.slash(BACKUPS))
    edits = bot.fake.calls_to(ORIGINAL)
    assert edits[0].status == 429 and edits[1].status == 200
    assert edits[1].at - edits[0].at >= 0.4  # discord.py waited as told before retrying
    assert edits[1].body == edits[0].body  # the same edit, not a skipped one
    assert "35 days" in messages[0]["content"]


async def test_a_rate_limited_message_post_is_retried_and_the_answer_arrives(
    sample_kb: KnowledgeBase, tmp_path: Path
) -> None:
    async with chat_services(sample_kb, tmp_path) as services, discord_bot(services) as bot:
        bot.fake.fail(CHANNEL_MESSAGE, status=429, retry_after=0.3)
        asked = await bot.fake.say(BACKUPS, dm=True)
        dm = int(bot.fake.message(asked)["channel_id"])
        [answer] = await until(
            lambda: [m for m in bot.fake.bot_messages(dm) if has_feedback(m)], "the answer"
        )
    posts = bot.fake.calls_to(CHANNEL_MESSAGE)
    assert [p.status for p in posts[:2]] == [429, 200]
    assert posts[1].at - posts[0].at >= 0.3
    assert len(bot.fake.bot_messages(dm)) == 1  # retried, not posted twice
    assert "35 days" in answer["content"]


async def test_when_discord_refuses_the_rich_answer_it_is_sent_as_plain_text(
    sample_kb: KnowledgeBase, tmp_path: Path
) -> None:
    async with chat_services(sample_kb, tmp_path) as services, discord_bot(services) as bot:
        bot.fake.fail(
            EDIT_MESSAGE,
            status=400,
            code=50035,
            message="Invalid Form Body",
            when=lambda body: bool(body.get("embeds")),
        )
        asked = await bot.fake.say(BACKUPS, dm=True)
        dm = int(bot.fake.message(asked)["channel_id"])
        [message] = await until(
            lambda: [
                m for m in bot.fake.bot_messages(dm) if m["content"].startswith("I had an answer")
            ],
            "the plain answer",
        )
    assert "35 days" in message["content"]
    assert "[1] Operations handbook" in message["content"] and "p. 4" in message["content"]
    assert not message["embeds"] and not buttons(message)


async def test_a_broken_event_stream_still_tells_the_asker(tmp_path: Path) -> None:
    async def broken(turn: Turn) -> AsyncIterator[Event]:
        yield Progress("analyze", "Analyzing the question…")
        raise RuntimeError("the agent's stream broke")  # the runner never ends like this

    feedback = SqliteFeedbackStore(tmp_path / "feedback.sqlite")
    try:
        async with discord_bot(ChatServices(broken, feedback, update_interval_s=0.05)) as bot:
            asked = await bot.fake.say(BACKUPS, dm=True)
            dm = int(bot.fake.message(asked)["channel_id"])
            [message] = await until(
                lambda: [m for m in bot.fake.bot_messages(dm) if "went wrong" in m["content"]],
                "the apology",
            )
    finally:
        feedback.close()
    assert message["content"].startswith("Sorry, something went wrong")
    assert len(bot.fake.bot_messages(dm)) == 1  # the progress message became the apology


async def test_an_answer_the_feedback_store_cannot_keep_goes_out_without_buttons(
    sample_kb: KnowledgeBase, tmp_path: Path
) -> None:
    async with chat_services(sample_kb, tmp_path) as services, discord_bot(services) as bot:
        cast(SqliteFeedbackStore, services.feedback).close()  # every write now fails
        interaction = await bot.fake.slash(BACKUPS)
        answer = await until(
            lambda: next(
                (c.body for c in bot.fake.calls_to(ORIGINAL) if c.body.get("embeds")), None
            ),
            "the answer",
        )
    assert "35 days" in answer["content"] and not buttons(answer)
    original = bot.fake.original(interaction)
    assert original is not None and original["content"] == answer["content"]
