"""Allowed channels and roles, and the channel rules: a refused asker hears why (privately
for /ask), the agent never runs for them, and a channel's scopes reach the search."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from adapters.chat.channels import ChannelRule, ChannelRules
from adapters.discord.options import DiscordOptions
from agent.events import Final
from agent.retrieval.knowledge_base import KnowledgeBase
from tests.fakes.discord_payloads import BOT_ID
from tests.fakes.discord_rest import CALLBACK, ORIGINAL, START_THREAD
from tests.fakes.discord_server import ENGINEER_ROLE, GENERAL, NO_THREADS
from tests.fakes.discord_wire import EPHEMERAL
from tests.support.chat_support import chat_services
from tests.support.discord_support import Bot, discord_bot, has_feedback, until

BACKUPS = "How long are Postgres backups kept?"
NOT_HERE = "I am not set up to answer in this channel. Please ask an admin."
NO_ROLE = "I only answer members with certain roles. Please ask an admin."


async def refusal(bot: Bot, interaction: int) -> dict[str, Any]:
    return await until(lambda: bot.fake.original(interaction), "the refusal")


async def answer(bot: Bot, interaction: int) -> dict[str, Any]:
    return await until(
        lambda: (m := bot.fake.original(interaction)) is not None and has_feedback(m) and m,
        "the answer",
    )


async def test_ask_outside_the_allowed_channels_is_refused_privately(
    sample_kb: KnowledgeBase, tmp_path: Path
) -> None:
    options = DiscordOptions(allowed_channels=frozenset({NO_THREADS}))
    async with (
        chat_services(sample_kb, tmp_path) as services,
        discord_bot(services, options) as bot,
    ):
        refused = await refusal(bot, await bot.fake.slash(BACKUPS, channel=GENERAL))
        allowed = await answer(bot, await bot.fake.slash(BACKUPS, channel=NO_THREADS))
    assert refused["content"] == NOT_HERE and refused["flags"] & EPHEMERAL
    assert [c.body["type"] for c in bot.fake.calls_to(CALLBACK)] == [4, 5]  # no defer, no run
    assert len(bot.fake.calls_to(ORIGINAL)) >= 2  # only the allowed one was edited
    assert "35 days" in allowed["content"]


async def test_a_thread_counts_as_its_parent_channel(
    sample_kb: KnowledgeBase, tmp_path: Path
) -> None:
    options = DiscordOptions(allowed_channels=frozenset({GENERAL}))
    async with (
        chat_services(sample_kb, tmp_path) as services,
        discord_bot(services, options) as bot,
    ):
        asked = await bot.fake.say(f"<@{BOT_ID}> {BACKUPS}")
        thread = int((await until(lambda: bot.fake.thread_of(asked), "the thread"))["id"])
        await bot.fake.say("And the Redis snapshots?", channel=thread)
        answers = await until(
            lambda: (
                len(done := [m for m in bot.fake.bot_messages(thread) if has_feedback(m)]) == 2
                and done
            ),
            "two answers in the thread",
        )
    assert "35 days" in answers[0]["content"]


async def test_members_without_an_allowed_role_are_refused(
    sample_kb: KnowledgeBase, tmp_path: Path
) -> None:
    options = DiscordOptions(allowed_roles=frozenset({ENGINEER_ROLE}))
    async with (
        chat_services(sample_kb, tmp_path) as services,
        discord_bot(services, options) as bot,
    ):
        refused = await refusal(bot, await bot.fake.slash(BACKUPS))
        allowed = await answer(bot, await bot.fake.slash(BACKUPS, roles=(ENGINEER_ROLE,)))
        mention = await bot.fake.say(f"<@{BOT_ID}> {BACKUPS}")
        reply = await until(
            lambda: [m for m in bot.fake.bot_messages(GENERAL) if "message_reference" in m],
            "the refusal",
        )
    assert refused["content"] == NO_ROLE and refused["flags"] & EPHEMERAL
    assert "35 days" in allowed["content"]
    assert reply[0]["content"] == NO_ROLE
    assert reply[0]["message_reference"]["message_id"] == str(mention)
    assert not bot.fake.calls_to(START_THREAD)


async def test_dms_are_refused_when_channels_or_roles_are_restricted(
    sample_kb: KnowledgeBase, tmp_path: Path
) -> None:
    options = DiscordOptions(allowed_roles=frozenset({ENGINEER_ROLE}))
    async with (
        chat_services(sample_kb, tmp_path) as services,
        discord_bot(services, options) as bot,
    ):
        asked = await bot.fake.say(BACKUPS, dm=True)
        dm = int(bot.fake.message(asked)["channel_id"])
        reply = await until(lambda: bot.fake.bot_messages(dm), "the refusal")
    assert reply[0]["content"] == NO_ROLE and not has_feedback(reply[0])


async def test_a_channel_ruled_out_is_refused_in_korean_for_a_korean_question(
    sample_kb: KnowledgeBase, tmp_path: Path
) -> None:
    rules = ChannelRules(channels={str(GENERAL): ChannelRule(answer=False)})
    async with (
        chat_services(sample_kb, tmp_path, rules=rules) as services,
        discord_bot(services) as bot,
    ):
        refused = await refusal(bot, await bot.fake.slash("Postgres 백업은 며칠 보관되나요?"))
    assert refused["content"].startswith("이 채널에서는 답변하지 않도록")
    assert refused["flags"] & EPHEMERAL


async def test_a_channels_scopes_limit_what_its_questions_search(
    sample_kb: KnowledgeBase, tmp_path: Path
) -> None:
    # The samples are all in the default scope; this channel may only search "legal".
    rules = ChannelRules(channels={str(NO_THREADS): ChannelRule(scopes=frozenset({"legal"}))})
    async with (
        chat_services(sample_kb, tmp_path, rules=rules) as services,
        discord_bot(services) as bot,
    ):
        scoped = await answer(bot, await bot.fake.slash(BACKUPS, channel=NO_THREADS))
        open_ = await answer(bot, await bot.fake.slash(BACKUPS, channel=GENERAL))
    assert not scoped["embeds"] and "35 days" not in scoped["content"]
    assert open_["embeds"] and "35 days" in open_["content"]


async def test_a_thread_answers_with_its_parent_channels_features(
    sample_kb: KnowledgeBase, tmp_path: Path
) -> None:
    # docs/discord.md: "a thread follows its parent channel's rule", its features too.
    rules = ChannelRules(channels={str(GENERAL): ChannelRule(features={"rerank": False})})
    finals: list[Final] = []
    async with (
        chat_services(sample_kb, tmp_path, rules=rules, finals=finals) as services,
        discord_bot(services) as bot,
    ):
        asked = await bot.fake.say(f"<@{BOT_ID}> {BACKUPS}")  # answered in a new thread
        thread = int((await until(lambda: bot.fake.thread_of(asked), "the thread"))["id"])
        await until(lambda: finals, "the first answer")
        await bot.fake.say("And the Redis snapshots?", channel=thread)  # a follow-up there
        await answer(bot, await bot.fake.slash(BACKUPS, channel=thread))  # /ask in it
        await bot.fake.say(f"<@{BOT_ID}> {BACKUPS}", channel=NO_THREADS)  # no section
        await until(lambda: len(finals) == 4, "four answers")
    ruled = [f for f in finals if f.features["rerank"] is False]
    assert len(ruled) == 3 and {f.thread_id.split(":")[2] for f in ruled} == {str(thread)}
