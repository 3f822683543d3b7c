"""*Ask teamrag* on a message, over the wire: the message command (type 3, the message in
``resolved.messages``) answers the message, with its citations, only to the one who
picked it; in Korean for a Korean message; inside a thread, as part of that thread's
conversation."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from adapters.chat.services import ChatServices
from adapters.discord.commands import ASK_MESSAGE
from agent.retrieval.knowledge_base import KnowledgeBase
from tests.fakes.discord_payloads import BOT_ID
from tests.fakes.discord_rest import CALLBACK, CHANNEL_MESSAGE
from tests.fakes.discord_server import ALICE, BOB, GENERAL, GUILD_ID
from tests.fakes.discord_wire import EPHEMERAL
from tests.support.chat_support import chat_services
from tests.support.discord_support import Bot, buttons, discord_bot, has_feedback, until

BACKUPS_KO = "Postgres 백업은 며칠 동안 보관되나요?"
BACKUPS_EN = "How long are Postgres backups kept?"
RESTORE_LOG = "ERROR: restore from backup failed"


async def answered(bot: Bot, interaction_id: int) -> dict[str, Any]:
    return await until(
        lambda: (m := bot.fake.original(interaction_id)) is not None and has_feedback(m) and m,
        "the answer to the message command",
    )


async def thread_of_answer(services: ChatServices, message: dict[str, Any], question: str) -> str:
    """The conversation an answer was given in, read back through its feedback record."""
    answer_id = buttons(message)[0].split(":")[2]
    assert await services.feedback.rate(answer_id, str(ALICE.id), "up")
    [entry] = [e for e in services.feedback.entries(None) if e.answer.question == question]
    return entry.answer.thread_id


async def test_the_message_command_is_registered_beside_ask(
    sample_kb: KnowledgeBase, tmp_path: Path
) -> None:
    async with chat_services(sample_kb, tmp_path) as services, discord_bot(services) as bot:
        synced = {(c["name"], c["type"]) for c in bot.fake.commands[None]}
    assert synced == {("ask", 1), (ASK_MESSAGE, 3)}
    [menu] = [c for c in bot.fake.commands[None] if c["type"] == 3]
    assert menu["name_localizations"]["ko"] == "teamrag에게 묻기"


async def test_a_korean_message_is_answered_in_korean_with_citations_only_to_the_asker(
    sample_kb: KnowledgeBase, tmp_path: Path
) -> None:
    async with chat_services(sample_kb, tmp_path) as services, discord_bot(services) as bot:
        pasted = await bot.fake.say(BACKUPS_KO, person=BOB)  # a customer's question, pasted
        interaction = await bot.fake.message_command(ASK_MESSAGE, pasted, locale="en-US")
        final = await answered(bot, interaction)
        thread_id = await thread_of_answer(services, final, BACKUPS_KO)
    [defer] = bot.fake.calls_to(CALLBACK)
    assert defer.body == {"type": 5, "data": {"flags": EPHEMERAL}}
    assert final["flags"] & EPHEMERAL and int(final["author"]["id"]) == BOT_ID
    assert final["content"].startswith("문서에서 찾은 내용입니다.")  # the message's language
    assert "35" in final["content"] and "[1]" in final["content"]
    assert final["embeds"][0]["title"] == "출처"
    assert thread_id == f"discord:{GUILD_ID}:{GENERAL}:{pasted}"  # rooted at the message
    assert not bot.fake.calls_to(CHANNEL_MESSAGE)  # nothing posted in the channel


async def test_a_message_in_a_thread_is_answered_in_that_threads_conversation(
    sample_kb: KnowledgeBase, tmp_path: Path
) -> None:
    async with chat_services(sample_kb, tmp_path) as services, discord_bot(services) as bot:
        asked = await bot.fake.say(f"<@{BOT_ID}> {BACKUPS_EN}")
        thread = int((await until(lambda: bot.fake.thread_of(asked), "the thread"))["id"])
        mention_answer = await until(
            lambda: next((m for m in bot.fake.bot_messages(thread) if has_feedback(m)), None),
            "the mention's answer",
        )
        log = await bot.fake.say(RESTORE_LOG, person=BOB, channel=thread)
        interaction = await bot.fake.message_command(ASK_MESSAGE, log)
        final = await answered(bot, interaction)
        by_mention = await thread_of_answer(services, mention_answer, BACKUPS_EN)
        by_menu = await thread_of_answer(services, final, RESTORE_LOG)
    assert by_menu == by_mention == f"discord:{GUILD_ID}:{thread}:{thread}"
    assert final["flags"] & EPHEMERAL and final["embeds"]
