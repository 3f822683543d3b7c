"""Mentions, threads, follow-ups and DMs over the wire, and the messages the bot ignores."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from adapters.chat.channels import ChannelRule, ChannelRules
from agent.retrieval.knowledge_base import KnowledgeBase
from tests.fakes.discord_payloads import BOT_ID, BOT_ROLE_ID, MESSAGE_CONTENT_INTENT
from tests.fakes.discord_rest import CHANNEL_MESSAGE, EDIT_MESSAGE, START_THREAD
from tests.fakes.discord_server import BOB, GENERAL, NO_THREADS, OTHER_BOT
from tests.fakes.openai_server import FakeOpenAI
from tests.support.agent_support import request_text, script_answer
from tests.support.chat_support import chat_services
from tests.support.discord_support import Bot, discord_bot, embed_text, has_feedback, until

MENTION = f"<@{BOT_ID}>"
BACKUPS = "How long are Postgres backups kept?"


async def final_in(bot: Bot, channel: int, count: int = 1) -> list[dict[str, Any]]:
    """The bot's answers in ``channel`` once ``count`` of them carry feedback buttons."""
    return await until(
        lambda: (
            len(done := [m for m in bot.fake.bot_messages(channel) if has_feedback(m)]) >= count
            and done
        ),
        f"{count} answer(s) in channel {channel}",
    )


async def test_mention_opens_a_thread_named_after_the_question_and_answers_there(
    sample_kb: KnowledgeBase, tmp_path: Path
) -> None:
    async with chat_services(sample_kb, tmp_path) as services, discord_bot(services) as bot:
        asked = await bot.fake.say(f"{MENTION} {BACKUPS}")
        thread = await until(lambda: bot.fake.thread_of(asked), "the thread")
        [answer] = await final_in(bot, int(thread["id"]))
        # The bot's own messages come back over the gateway and it must not answer them:
        # once a later question is answered, such a reply would have been posted.
        later = await bot.fake.say(f"{MENTION} Is there a deploy freeze?")
        await final_in(bot, int((await until(lambda: bot.fake.thread_of(later), "thread"))["id"]))
        assert len(bot.fake.bot_messages(int(thread["id"]))) == 1
    assert thread["name"] == BACKUPS and int(thread["parent_id"]) == GENERAL
    assert "35 days" in answer["content"] and "Sources" in embed_text(answer)
    assert "message_reference" not in answer  # the thread starts from the question
    posts = [c for c in bot.fake.calls_to(CHANNEL_MESSAGE) if thread["id"] in c.path]
    # "Thinking" at once, then progress edits, the last edit being the answer.
    assert posts[0].body["content"] == "⏳ Thinking…"
    edits = [c.body["content"] for c in bot.fake.calls_to(EDIT_MESSAGE) if thread["id"] in c.path]
    assert "Analyzing the question" in edits[0] and edits[-1] == answer["content"]
    assert not bot.fake.bot_messages(GENERAL)  # nothing posted in the channel itself


async def test_korean_mention_gets_a_korean_thread_name_within_100_characters(
    sample_kb: KnowledgeBase, tmp_path: Path
) -> None:
    question = "Postgres 백업은 며칠 동안 보관되나요? " + "그리고 복구 절차는 어떻게 되나요? " * 5
    async with chat_services(sample_kb, tmp_path) as services, discord_bot(services) as bot:
        asked = await bot.fake.say(f"{MENTION} {question}")
        thread = await until(lambda: bot.fake.thread_of(asked), "the thread")
        [answer] = await final_in(bot, int(thread["id"]))
    assert len(thread["name"]) == 100 and thread["name"].startswith("Postgres 백업은 며칠")
    assert thread["name"].endswith("…")
    assert answer["content"].startswith("문서에서 찾은 내용입니다.")


async def test_follow_up_in_the_bots_thread_needs_no_mention_and_has_the_history(
    sample_kb: KnowledgeBase, tmp_path: Path, fake_llm: FakeOpenAI
) -> None:
    script_answer(fake_llm, "Postgres backups are kept for 35 days [1].")
    async with (
        chat_services(sample_kb, tmp_path, llm=fake_llm) as services,
        discord_bot(services) as bot,
    ):
        asked = await bot.fake.say(f"{MENTION} {BACKUPS}")
        thread = int((await until(lambda: bot.fake.thread_of(asked), "the thread"))["id"])
        await final_in(bot, thread)
        first_calls = len(fake_llm.chat_requests)
        await bot.fake.say("And what about the Redis snapshots?", channel=thread)
        await final_in(bot, thread, count=2)
    follow_up = "\n".join(request_text(r) for r in fake_llm.chat_requests[first_calls:])
    assert "Redis snapshots" in follow_up
    assert BACKUPS in follow_up  # the thread's earlier question came along as history
    assert len(bot.fake.calls_to(START_THREAD)) == 1  # no second thread


async def test_follow_ups_are_left_alone_when_the_rule_says_so_or_they_talk_to_others(
    sample_kb: KnowledgeBase, tmp_path: Path
) -> None:
    rules = ChannelRules(channels={str(GENERAL): ChannelRule(follow_ups=False)})
    async with (
        chat_services(sample_kb, tmp_path, rules=rules) as services,
        discord_bot(services) as bot,
    ):
        asked = await bot.fake.say(f"{MENTION} {BACKUPS}")
        thread = int((await until(lambda: bot.fake.thread_of(asked), "the thread"))["id"])
        await final_in(bot, thread)
        await bot.fake.say("And the Redis snapshots?", channel=thread)  # follow-ups are off
        # A mention in the same thread is still answered: once it is, the follow-up
        # above would have been answered too if it were going to be.
        await bot.fake.say(f"{MENTION} And the Redis snapshots?", channel=thread)
        await final_in(bot, thread, count=2)
    assert len(bot.fake.bot_messages(thread)) == 2


async def test_a_reply_to_someone_else_in_the_bots_thread_is_not_for_the_bot(
    sample_kb: KnowledgeBase, tmp_path: Path
) -> None:
    async with chat_services(sample_kb, tmp_path) as services, discord_bot(services) as bot:
        asked = await bot.fake.say(f"{MENTION} {BACKUPS}")
        thread = int((await until(lambda: bot.fake.thread_of(asked), "the thread"))["id"])
        await final_in(bot, thread)
        await bot.fake.say(f"<@{BOB.id}> can you check this?", channel=thread)
        await bot.fake.say("What about the Redis snapshots?", channel=thread)  # a follow-up
        await final_in(bot, thread, count=2)
    assert len(bot.fake.bot_messages(thread)) == 2


async def test_direct_message_is_answered_in_the_dm(
    sample_kb: KnowledgeBase, tmp_path: Path
) -> None:
    async with chat_services(sample_kb, tmp_path) as services, discord_bot(services) as bot:
        asked = await bot.fake.say(BACKUPS, dm=True)
        dm = int(bot.fake.message(asked)["channel_id"])
        [answer] = await final_in(bot, dm)
    assert "35 days" in answer["content"] and "message_reference" not in answer
    assert not bot.fake.calls_to(START_THREAD)


async def test_where_threads_are_not_allowed_the_answer_is_an_inline_reply(
    sample_kb: KnowledgeBase, tmp_path: Path
) -> None:
    async with chat_services(sample_kb, tmp_path) as services, discord_bot(services) as bot:
        asked = await bot.fake.say(f"{MENTION} {BACKUPS}", channel=NO_THREADS)
        [answer] = await final_in(bot, NO_THREADS)
    [attempt] = bot.fake.calls_to(START_THREAD)
    assert attempt.status == 403  # 50013 Missing Permissions
    assert answer["message_reference"]["message_id"] == str(asked)
    assert "35 days" in answer["content"]


async def test_mentioning_the_bots_role_counts_as_a_mention(
    sample_kb: KnowledgeBase, tmp_path: Path
) -> None:
    async with chat_services(sample_kb, tmp_path) as services, discord_bot(services) as bot:
        asked = await bot.fake.say(f"<@&{BOT_ROLE_ID}> {BACKUPS}")
        thread = await until(lambda: bot.fake.thread_of(asked), "the thread")
        await final_in(bot, int(thread["id"]))
    assert thread["name"] == BACKUPS  # the role mention is not part of the question


async def test_a_bare_mention_is_asked_for_a_question(
    sample_kb: KnowledgeBase, tmp_path: Path
) -> None:
    async with chat_services(sample_kb, tmp_path) as services, discord_bot(services) as bot:
        asked = await bot.fake.say(MENTION)
        reply = await until(lambda: bot.fake.bot_messages(GENERAL), "the reply")
    assert reply[0]["content"].startswith("How can I help?")
    assert reply[0]["message_reference"]["message_id"] == str(asked)
    assert not bot.fake.calls_to(START_THREAD)


async def test_bots_and_system_messages_are_never_answered(
    sample_kb: KnowledgeBase, tmp_path: Path
) -> None:
    async with chat_services(sample_kb, tmp_path) as services, discord_bot(services) as bot:
        await bot.fake.say(f"{MENTION} {BACKUPS}", person=OTHER_BOT)
        await bot.fake.say(f"{MENTION} pinned a message", message_type=6)  # CHANNEL_PINNED
        await bot.fake.say(BACKUPS)  # in a channel, without a mention: not for the bot
        # A real question last: once it is answered, the ones above would have been.
        asked = await bot.fake.say(f"{MENTION} Is there a deploy freeze?", person=BOB)
        thread = await until(lambda: bot.fake.thread_of(asked), "the thread")
        await final_in(bot, int(thread["id"]))
    assert len(bot.fake.calls_to(START_THREAD)) == 1
    assert not bot.fake.bot_messages(GENERAL)


async def test_mentions_and_dms_work_without_the_message_content_intent(
    sample_kb: KnowledgeBase, tmp_path: Path
) -> None:
    async with (
        chat_services(sample_kb, tmp_path) as services,
        discord_bot(services, message_content=False) as bot,
    ):
        asked = await bot.fake.say(f"{MENTION} {BACKUPS}")
        thread = await until(lambda: bot.fake.thread_of(asked), "the thread")
        [answer] = await final_in(bot, int(thread["id"]))
    assert not bot.fake.gateway.identifies[0]["intents"] & MESSAGE_CONTENT_INTENT
    assert "35 days" in answer["content"]


async def test_a_message_replayed_after_a_resume_is_answered_once(
    sample_kb: KnowledgeBase, tmp_path: Path
) -> None:
    async with chat_services(sample_kb, tmp_path) as services, discord_bot(services) as bot:
        asked = await bot.fake.say(BACKUPS, dm=True)
        dm = int(bot.fake.message(asked)["channel_id"])
        await final_in(bot, dm)
        await bot.fake.reconnect(replay=[asked], guild_id=None)
        await until(lambda: bot.fake.gateway.resumes() == 1, "the client to resume")
        # Another DM after the replay: once it is answered, the replay would have been.
        await bot.fake.say("Is there a deploy freeze?", dm=True)
        answers = await final_in(bot, dm, count=2)
    assert len(bot.fake.bot_messages(dm)) == 2
    assert "35 days" in answers[0]["content"] and "35 days" not in answers[1]["content"]
