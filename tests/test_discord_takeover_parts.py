"""A long Discord answer is several messages (2,000 characters each); each is noted with
the queued turn as it is sent, so a process that takes the turn over from a dead one
edits every message the dead one left (a mention's thread messages, an ``/ask``'s
original response and followups), sends only the missing ones, deletes those beyond a
shorter answer, and sends anew (in order) what a user deleted.

The bot here runs on the real Redis queue; "dying" is its answer's task stopping as a
crash would leave it (nothing finished, nothing acknowledged), after which the queue
hands the turn over. The two-process version, with a real kill, is in
tests/test_discord_workers.py.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from adapters.chat.parts import part_note
from adapters.chat.queue import Job
from adapters.chat.queue_redis import RedisTurnQueue
from adapters.discord.queued_messages import (
    REPLY_CHANNEL,
    REPLY_ID,
    ReplyTarget,
    answer_message,
    message_job,
)
from adapters.discord.turns import Place
from agent.cache.answer_sqlite import SqliteAnswerCache
from agent.coordination.redis_connection import RedisConnection
from agent.retrieval.knowledge_base import KnowledgeBase
from tests.fakes.discord_payloads import BOT_ID
from tests.fakes.discord_rest import (
    CHANNEL_MESSAGE,
    DELETE_FOLLOWUP,
    DELETE_MESSAGE,
    EDIT_FOLLOWUP,
    FOLLOWUP,
)
from tests.fakes.discord_server import ALICE, GENERAL, GUILD_ID
from tests.fakes.openai_server import FakeOpenAI
from tests.support.agent_support import script_answer
from tests.support.chat_support import chat_services
from tests.support.discord_support import Bot, discord_bot, has_feedback, until
from tests.support.redis_support import RedisServer

BACKUPS = "How long are Postgres backups kept?"
SENTENCE = "Postgres backups are kept for 35 days and restored from the nightly copy [1]. "
# Three paragraphs of about 1,700 characters: the answer is three messages, one each.
PARAGRAPHS = [f"#part-{name} " + SENTENCE * 22 for name in "ABC"]
THREE_PARTS = "\n\n".join(PARAGRAPHS)
CLAIM_S = 2.0  # well above a busy event loop's pauses (see test_slack_takeover_parts)


def marks(messages: list[dict[str, Any]]) -> list[str]:
    """Which paragraphs each message shows, in order ('' for one showing none)."""
    return ["".join(n for n in "ABC" if f"#part-{n}" in m["content"]) for m in messages]


def with_part(name: str) -> Callable[[Any], bool]:
    return lambda body: f"#part-{name}" in json.dumps(body)


@asynccontextmanager
async def queued_bot(
    kb: KnowledgeBase, folder: Path, redis: RedisConnection, llm: FakeOpenAI | None = None
) -> AsyncIterator[tuple[Bot, RedisTurnQueue]]:
    """The bot with its turns in the real Redis queue."""
    queue = RedisTurnQueue(redis, "discord", claim_s=CLAIM_S)
    async with chat_services(kb, folder, llm=llm) as services:
        services.queue_for = lambda platform: queue
        async with discord_bot(services) as bot:
            yield bot, queue


async def die(queue: RedisTurnQueue) -> None:
    """The answers under way stop as a crash would leave them: nothing acknowledged, so
    the queue hands each over after the claim time."""
    running = list(queue._tasks.running)
    for task in running:
        task.cancel()
    await asyncio.wait(running)


async def killed_at_the_last_followup(
    bot: Bot, queue: RedisTurnQueue, *, private: bool | None = None
) -> int:
    """An /ask whose answer is three messages, the worker killed while sending the third."""
    bot.fake.hold(FOLLOWUP, when=with_part("C"))
    interaction = await bot.fake.slash(BACKUPS, private=private)
    await until(lambda: bot.fake.held(FOLLOWUP), "the second followup to be sent")
    await die(queue)
    return interaction


def forget_answers(folder: Path) -> None:
    """Empty the answer cache, so the turn taken over gets a newly written answer."""
    cache = SqliteAnswerCache(folder / "cache.sqlite")
    try:
        cache.clear()
    finally:
        cache.close()


def answered(bot: Bot, interaction: int) -> list[dict[str, Any]] | None:
    """An /ask's messages (the original, then its followups) once the last is the answer."""
    original = bot.fake.original(interaction)
    if original is None:
        return None
    found = [original, *bot.fake.followups(interaction)]
    return found if has_feedback(found[-1]) else None


async def test_a_mention_whose_process_died_after_part_two_shows_each_part_once(
    sample_kb: KnowledgeBase,
    tmp_path: Path,
    fake_llm: FakeOpenAI,
    redis_connection: RedisConnection,
) -> None:
    script_answer(fake_llm, THREE_PARTS)
    async with queued_bot(sample_kb, tmp_path, redis_connection, fake_llm) as (bot, queue):
        bot.fake.hold(CHANNEL_MESSAGE, when=with_part("C"))
        asked = await bot.fake.say(f"<@{BOT_ID}> {BACKUPS}")
        await until(lambda: bot.fake.held(CHANNEL_MESSAGE), "the third message to be sent")
        await die(queue)
        left = bot.fake.bot_messages(asked)
        assert marks(left) == ["A", "B"]
        replies = await until(
            lambda: (found := bot.fake.bot_messages(asked)) and has_feedback(found[-1]) and found,
            "the answer taken over",
        )
    assert marks(replies) == ["A", "B", "C"]
    assert [m["id"] for m in replies[:2]] == [m["id"] for m in left]  # edited, not re-sent
    assert not any("Thinking" in m["content"] for m in replies)
    sent = [c for c in bot.fake.calls_to(CHANNEL_MESSAGE) if str(asked) in c.path]
    assert [marks([c.body])[0] for c in sent if c.status == 200] == ["", "B", "C"]


async def test_an_ask_whose_process_died_after_a_followup_shows_each_part_once(
    sample_kb: KnowledgeBase,
    tmp_path: Path,
    fake_llm: FakeOpenAI,
    redis_connection: RedisConnection,
) -> None:
    script_answer(fake_llm, THREE_PARTS)
    async with queued_bot(sample_kb, tmp_path, redis_connection, fake_llm) as (bot, queue):
        interaction = await killed_at_the_last_followup(bot, queue, private=True)
        (followup,) = bot.fake.followups(interaction)
        answer = await until(lambda: answered(bot, interaction), "the answer taken over")
    assert marks(answer) == ["A", "B", "C"]
    assert answer[1]["id"] == followup["id"]  # edited through the webhook, not sent again
    assert [c.status for c in bot.fake.calls_to(EDIT_FOLLOWUP)] == [200]
    assert all(m["flags"] & 64 for m in answer)  # still private


async def test_a_followup_a_user_deleted_is_sent_anew_before_the_rest(
    sample_kb: KnowledgeBase,
    tmp_path: Path,
    fake_llm: FakeOpenAI,
    redis_connection: RedisConnection,
) -> None:
    script_answer(fake_llm, THREE_PARTS)
    async with queued_bot(sample_kb, tmp_path, redis_connection, fake_llm) as (bot, queue):
        interaction = await killed_at_the_last_followup(bot, queue)
        (gone,) = bot.fake.followups(interaction)
        bot.fake.delete(int(gone["id"]))
        answer = await until(lambda: answered(bot, interaction), "the answer taken over")
    assert marks(answer) == ["A", "B", "C"] and answer[1]["id"] != gone["id"]
    assert [c.status for c in bot.fake.calls_to(EDIT_FOLLOWUP)] == [404]


async def test_a_shorter_answer_deletes_the_followups_beyond_it(
    sample_kb: KnowledgeBase,
    tmp_path: Path,
    fake_llm: FakeOpenAI,
    redis_connection: RedisConnection,
) -> None:
    script_answer(fake_llm, THREE_PARTS)
    async with queued_bot(sample_kb, tmp_path, redis_connection, fake_llm) as (bot, queue):
        interaction = await killed_at_the_last_followup(bot, queue)
        # The turn taken over is answered anew, in one message this time.
        forget_answers(tmp_path)
        script_answer(fake_llm, "Postgres backups are kept for 35 days [1].")
        original = await until(
            lambda: has_feedback(found := bot.fake.original(interaction)) and found,
            "the answer taken over",
        )
        await until(lambda: not bot.fake.followups(interaction), "the followup to go")
    assert original["content"] == "Postgres backups are kept for 35 days [1]."
    assert [c.status for c in bot.fake.calls_to(DELETE_FOLLOWUP)] == [204]


# --- a dead process's leftovers laid out by hand -----------------------------------------


async def left_in_a_thread(bot: Bot, asked: int, parts: int) -> dict[str, str]:
    """What a process that died after sending ``parts`` parts of its answer to a mention
    left: the thread it opened, its "Thinking…" and each part, all noted."""
    bot.fake.new_thread(GENERAL, asked, BACKUPS, 1440)
    first = bot.fake.post_as_bot(asked, "⏳ Thinking…", [])
    notes = {REPLY_ID: str(first), REPLY_CHANNEL: str(asked)}
    for index in range(1, parts + 1):
        old = bot.fake.post_as_bot(asked, f"#part-{'ABC'[index]} (the dead process's)", [])
        notes[part_note(index)] = str(old)
    return notes


def mention_job(bot: Bot, asked: int, notes: dict[str, str]) -> Job:
    where = ReplyTarget(GUILD_ID, GENERAL, asked, thread_name=BACKUPS)
    rule = bot.client.teamrag.services.rules.for_channel(str(GENERAL))
    turn = Place(GUILD_ID, asked, GENERAL).turn(
        BACKUPS, root=asked, user=ALICE.id, message=asked, rule=rule
    )
    return replace(message_job(where, turn, "en"), id="7-0", attempt=2, notes=notes)


async def test_a_thread_message_a_user_deleted_is_sent_anew_and_the_later_parts_follow_it(
    sample_kb: KnowledgeBase,
    tmp_path: Path,
    fake_llm: FakeOpenAI,
    redis_connection: RedisConnection,
) -> None:
    script_answer(fake_llm, THREE_PARTS)
    async with queued_bot(sample_kb, tmp_path, redis_connection, fake_llm) as (bot, queue):
        asked = bot.fake.post_as_bot(GENERAL, "(the question)", [])
        left = await left_in_a_thread(bot, asked, parts=2)
        bot.fake.delete(int(left["reply_part_1"]))  # someone deleted the second message
        job = mention_job(bot, asked, left)
        await answer_message(bot.client.teamrag, bot.client, queue, job)
    replies = bot.fake.bot_messages(asked)
    # In order: the third message was deleted and sent again after the second.
    assert marks(replies) == ["A", "B", "C"] and has_feedback(replies[-1])
    assert str(replies[0]["id"]) == left[REPLY_ID]
    deleted = [c.path.rsplit("/", 1)[-1] for c in bot.fake.calls_to(DELETE_MESSAGE)]
    assert deleted == [left["reply_part_2"]]
    notes = await queue.redis.client.hgetall(queue._notes(job.id))
    assert [notes["reply_part_1"], notes["reply_part_2"]] == [m["id"] for m in replies[1:]]


async def test_a_shorter_answer_deletes_the_thread_messages_beyond_it(
    sample_kb: KnowledgeBase, tmp_path: Path, redis_connection: RedisConnection
) -> None:
    # Without an LLM the answer is one short message: the dead process's two parts go.
    async with queued_bot(sample_kb, tmp_path, redis_connection) as (bot, queue):
        asked = bot.fake.post_as_bot(GENERAL, "(the question)", [])
        left = await left_in_a_thread(bot, asked, parts=2)
        await answer_message(bot.client.teamrag, bot.client, queue, mention_job(bot, asked, left))
    (reply,) = bot.fake.bot_messages(asked)
    assert str(reply["id"]) == left[REPLY_ID] and "35 days" in reply["content"]
    assert has_feedback(reply)
    deleted = [c.path.rsplit("/", 1)[-1] for c in bot.fake.calls_to(DELETE_MESSAGE)]
    assert deleted == [left["reply_part_1"], left["reply_part_2"]]


async def test_notes_that_cannot_be_kept_never_stop_the_answer(
    sample_kb: KnowledgeBase,
    tmp_path: Path,
    fake_llm: FakeOpenAI,
    redis_server: RedisServer,
    redis_connection: RedisConnection,
    caplog: pytest.LogCaptureFixture,
) -> None:
    script_answer(fake_llm, THREE_PARTS)
    async with queued_bot(sample_kb, tmp_path, redis_connection, fake_llm) as (bot, _queue):
        asked = bot.fake.post_as_bot(GENERAL, "(the question)", [])
        bot.fake.new_thread(GENERAL, asked, BACKUPS, 1440)
        job = replace(mention_job(bot, asked, {}), attempt=1)
        # Its own connection, as another process would have (the bot's reader is on the other).
        redis = RedisConnection(redis_connection.url, prefix=redis_connection.prefix, timeout_s=0.5)
        redis_server.stop()  # every note of this answer fails
        try:
            noting = RedisTurnQueue(redis, "discord")
            await answer_message(bot.client.teamrag, bot.client, noting, job)
        finally:
            redis_server.start()
            await redis.aclose()
    replies = bot.fake.bot_messages(asked)
    assert marks(replies) == ["A", "B", "C"] and has_feedback(replies[-1])
    assert "while noting a turn's reply" in caplog.text


# --- one process, two passes -------------------------------------------------------------


async def test_a_refused_rich_answer_is_sent_plainly_in_the_places_it_had_reached(
    sample_kb: KnowledgeBase, tmp_path: Path, fake_llm: FakeOpenAI
) -> None:
    script_answer(fake_llm, THREE_PARTS)
    async with (
        chat_services(sample_kb, tmp_path, llm=fake_llm) as services,
        discord_bot(services) as bot,
    ):
        # The last message carries the sources: Discord refuses it, once.
        bot.fake.fail(CHANNEL_MESSAGE, status=400, code=50035, message="Invalid Form Body",
                      when=lambda body: bool(body.get("embeds")))  # fmt: skip
        asked = await bot.fake.say(BACKUPS, dm=True)
        dm = int(bot.fake.message(asked)["channel_id"])
        await until(
            lambda: any("I had an answer" in m["content"] for m in bot.fake.bot_messages(dm)),
            "the plain answer",
        )
    replies = bot.fake.bot_messages(dm)
    said = "".join(m["content"] for m in replies)
    # The plain text took the rich messages' places: each paragraph once, in order.
    assert [said.count(f"#part-{n}") for n in "ABC"] == [1, 1, 1], [
        m["content"][:30] for m in replies
    ]
    assert said.index("#part-A") < said.index("#part-B") < said.index("#part-C")
    assert not any(m["embeds"] for m in replies)
    assert not bot.fake.calls_to(DELETE_MESSAGE)  # edited where they were, nothing re-sent
