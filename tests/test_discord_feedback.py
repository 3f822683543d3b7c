"""Feedback buttons: a click is recorded with the answer (and its conversation), thanked
privately in the clicker's language, and still works after the bot restarts."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agent.retrieval.knowledge_base import KnowledgeBase
from tests.fakes.discord_payloads import BOT_ID
from tests.fakes.discord_rest import CALLBACK
from tests.fakes.discord_server import ALICE, BOB, GENERAL, GUILD_ID, FakeDiscord
from tests.fakes.discord_wire import EPHEMERAL
from tests.support.chat_support import chat_services
from tests.support.discord_support import Bot, buttons, discord_bot, has_feedback, until

BACKUPS = "How long are Postgres backups kept?"


async def asked(bot: Bot, **options: Any) -> tuple[int, dict[str, Any]]:
    interaction = await bot.fake.slash(BACKUPS, **options)
    answer = await until(
        lambda: (m := bot.fake.original(interaction)) is not None and has_feedback(m) and m,
        "the answer",
    )
    return interaction, answer


def thanks(bot: Bot, click: int) -> dict[str, Any] | None:
    """The ephemeral reply to a click (the click's interaction response)."""
    return bot.fake.original(click)


async def test_thumbs_up_is_recorded_with_the_answer_and_thanked_privately(
    sample_kb: KnowledgeBase, tmp_path: Path
) -> None:
    async with chat_services(sample_kb, tmp_path) as services, discord_bot(services) as bot:
        interaction, answer = await asked(bot)
        up, _ = buttons(answer)
        click = await bot.fake.click(int(answer["id"]), up, person=BOB)
        reply = await until(lambda: thanks(bot, click), "the thanks")
        [entry] = services.feedback.entries("up")
    assert reply["content"] == "Thanks for the feedback!" and reply["flags"] & EPHEMERAL
    assert entry.voter == str(BOB.id)
    assert entry.answer.question == BACKUPS and "35 days" in entry.answer.answer
    # A /ask in a channel is a conversation of its own: its root is the interaction.
    assert entry.answer.thread_id == f"discord:{GUILD_ID}:{GENERAL}:{interaction}"
    assert entry.answer.user == str(ALICE.id)
    assert entry.answer.sources[0]["locator"] == "p. 4"


async def test_thumbs_down_in_korean_is_thanked_in_korean(
    sample_kb: KnowledgeBase, tmp_path: Path
) -> None:
    async with chat_services(sample_kb, tmp_path) as services, discord_bot(services) as bot:
        _, answer = await asked(bot)
        _, down = buttons(answer)
        click = await bot.fake.click(int(answer["id"]), down, locale="ko")
        reply = await until(lambda: thanks(bot, click), "the thanks")
        assert [e.rating for e in services.feedback.entries(None)] == ["down"]
    assert reply["content"].startswith("의견 감사합니다.")


async def test_a_vote_on_an_answer_the_bot_no_longer_knows_says_so(
    sample_kb: KnowledgeBase, tmp_path: Path
) -> None:
    async with chat_services(sample_kb, tmp_path) as services, discord_bot(services) as bot:
        row = {"type": 2, "style": 2, "custom_id": "teamrag:up:0123456789abcdef"}
        old = bot.fake.post_as_bot(
            GENERAL, "an answer from long ago", [{"type": 1, "components": [row]}]
        )
        click = await bot.fake.click(old, "teamrag:up:0123456789abcdef")
        reply = await until(lambda: thanks(bot, click), "the reply")
        assert services.feedback.entries(None) == []
    assert reply["content"].startswith("I could not find this answer any more")


async def test_buttons_keep_working_after_the_bot_restarts(
    sample_kb: KnowledgeBase, tmp_path: Path
) -> None:
    fake = FakeDiscord().start()
    try:
        async with chat_services(sample_kb, tmp_path) as services:
            async with discord_bot(services, fake=fake) as bot:
                _, answer = await asked(bot)
            async with discord_bot(services, fake=fake) as restarted:
                up, _ = buttons(answer)
                click = await restarted.fake.click(int(answer["id"]), up)
                reply = await until(lambda: thanks(restarted, click), "the thanks")
            assert [e.rating for e in services.feedback.entries(None)] == ["up"]
    finally:
        fake.stop()
    assert reply["content"] == "Thanks for the feedback!"


async def test_a_click_delivered_twice_is_recorded_and_answered_once(
    sample_kb: KnowledgeBase, tmp_path: Path
) -> None:
    async with chat_services(sample_kb, tmp_path) as services, discord_bot(services) as bot:
        _, answer = await asked(bot)
        up, _ = buttons(answer)
        click = await bot.fake.click(int(answer["id"]), up)
        await until(lambda: thanks(bot, click), "the thanks")
        await bot.fake.reconnect(replay=[click])
        await until(lambda: bot.fake.gateway.resumes() == 1, "the client to resume")
        # A second, fresh click after the replay: once it is thanked, the replay was handled.
        second = await bot.fake.click(int(answer["id"]), up, person=BOB)
        await until(lambda: thanks(bot, second), "the second thanks")
    replies = [c for c in bot.fake.calls_to(CALLBACK) if str(click) in c.path]
    assert len(replies) == 1
    assert int(answer["author"]["id"]) == BOT_ID
