"""/ask over the wire: the defer comes first, progress edits follow, then the answer with
its sources embed and feedback buttons; private answers; expired interactions."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agent.retrieval.knowledge_base import KnowledgeBase
from tests.fakes.discord_payloads import BOT_ID
from tests.fakes.discord_rest import CALLBACK, CHANNEL_MESSAGE, ORIGINAL
from tests.fakes.discord_server import ALICE, GENERAL
from tests.fakes.discord_wire import EPHEMERAL
from tests.fakes.openai_server import FakeOpenAI
from tests.support.agent_support import script_answer
from tests.support.chat_support import chat_services
from tests.support.discord_support import Bot, buttons, discord_bot, embed_text, has_feedback, until

BACKUPS = "How long are Postgres backups kept?"


async def answered(bot: Bot, interaction_id: int) -> dict[str, Any]:
    """The interaction's response once it carries the feedback buttons (the final edit)."""
    return await until(
        lambda: (m := bot.fake.original(interaction_id)) is not None and has_feedback(m) and m,
        "the final answer",
    )


async def test_ask_defers_at_once_then_edits_progress_then_answers_with_sources(
    sample_kb: KnowledgeBase, tmp_path: Path
) -> None:
    async with chat_services(sample_kb, tmp_path) as services, discord_bot(services) as bot:
        interaction = await bot.fake.slash(BACKUPS)
        final = await answered(bot, interaction)

        calls = [c for c in bot.fake.calls if c.route in (CALLBACK, ORIGINAL)]
        # The first thing Discord hears is the deferred "thinking" response.
        assert calls[0].route == CALLBACK and calls[0].body == {"type": 5}
        edits = [c.body for c in calls[1:]]
        progress, last = edits[:-1], edits[-1]
        assert progress and all("⏳" in e["content"] for e in progress)
        assert "Analyzing the question" in progress[0]["content"]
        assert not any("embeds" in e for e in progress)  # no sources before the answer
        assert "35 days" in final["content"] and "[1]" in final["content"]
        assert last["content"] == final["content"]
        assert not final["flags"] & EPHEMERAL
        [embed] = final["embeds"]
        assert embed["title"] == "Sources"
        assert "**[1]** Operations handbook" in embed["description"]
        assert "p. 4" in embed["description"] and "`ops-handbook.pdf`" in embed["description"]
        up, down = buttons(final)
        assert up.startswith("teamrag:up:") and down == up.replace(":up:", ":down:")
        # The answer was stored under the id the buttons carry.
        assert await services.feedback.rate(up.split(":")[2], str(ALICE.id), "up")
        assert not bot.fake.calls_to(CHANNEL_MESSAGE)  # nothing but the interaction response


async def test_private_ask_is_ephemeral_from_the_defer_to_the_answer(
    sample_kb: KnowledgeBase, tmp_path: Path
) -> None:
    async with chat_services(sample_kb, tmp_path) as services, discord_bot(services) as bot:
        interaction = await bot.fake.slash(BACKUPS, private=True)
        final = await answered(bot, interaction)
    [defer] = bot.fake.calls_to(CALLBACK)
    assert defer.body == {"type": 5, "data": {"flags": EPHEMERAL}}
    assert final["flags"] & EPHEMERAL and "35 days" in final["content"]


async def test_korean_ask_gets_korean_progress_answer_and_headings(
    sample_kb: KnowledgeBase, tmp_path: Path
) -> None:
    async with chat_services(sample_kb, tmp_path) as services, discord_bot(services) as bot:
        interaction = await bot.fake.slash("Postgres 백업은 며칠 동안 보관되나요?", locale="ko")
        final = await answered(bot, interaction)
    first_edit = bot.fake.calls_to(ORIGINAL)[0].body
    assert "질문을 분석하는 중" in first_edit["content"]
    assert final["content"].startswith("문서에서 찾은 내용입니다.")
    assert final["embeds"][0]["title"] == "출처"


async def test_streamed_answer_text_shows_in_the_progress_edits(
    sample_kb: KnowledgeBase, tmp_path: Path, fake_llm: FakeOpenAI
) -> None:
    answer = "Postgres 백업은 매일 밤 전체 백업을 하고 35일 동안 보관됩니다 [1]."
    script_answer(fake_llm, answer)
    fake_llm.latency_s = 0.15  # slow enough for a progress edit while the answer streams
    async with (
        chat_services(sample_kb, tmp_path, llm=fake_llm) as services,
        discord_bot(services) as bot,
    ):
        interaction = await bot.fake.slash("Postgres 백업은 며칠 동안 보관되나요?")
        final = await answered(bot, interaction)
    assert final["content"] == answer
    shown = [c.body["content"] for c in bot.fake.calls_to(ORIGINAL)[:-1]]
    assert any("Postgres 백업은" in s for s in shown), shown


async def test_expired_interaction_is_answered_in_the_channel(
    sample_kb: KnowledgeBase, tmp_path: Path
) -> None:
    async with chat_services(sample_kb, tmp_path) as services, discord_bot(services) as bot:
        interaction = await bot.fake.slash(BACKUPS, expired=True)
        message = await until(
            lambda: next((m for m in bot.fake.bot_messages(GENERAL) if has_feedback(m)), None),
            "the answer in the channel",
        )
    [defer] = bot.fake.calls_to(CALLBACK)
    assert defer.status == 404  # 10062 Unknown interaction
    assert bot.fake.original(interaction) is None
    assert message["content"].startswith(f"<@{ALICE.id}> ")  # so the asker finds it
    assert "35 days" in message["content"] and "Sources" in embed_text(message)
    # Only the asker is pinged, whatever the answer quotes.
    posts = [c.body for c in bot.fake.calls_to(CHANNEL_MESSAGE)]
    assert posts and all(p["allowed_mentions"] == {"users": [ALICE.id], "parse": []} for p in posts)


async def test_token_dying_mid_answer_moves_the_answer_to_the_channel(
    sample_kb: KnowledgeBase, tmp_path: Path
) -> None:
    async with chat_services(sample_kb, tmp_path) as services, discord_bot(services) as bot:
        # The defer and one progress edit go through; then the token is gone (50027).
        interaction = await bot.fake.slash(BACKUPS, token_uses=1)
        message = await until(
            lambda: next((m for m in bot.fake.bot_messages(GENERAL) if has_feedback(m)), None),
            "the answer in the channel",
        )
    statuses = [c.status for c in bot.fake.calls_to(ORIGINAL)]
    assert statuses[0] == 200 and statuses[-1] == 401
    stuck = bot.fake.original(interaction)
    assert stuck is not None and "⏳" in stuck["content"]  # left at its last progress
    assert "35 days" in message["content"] and message["content"].startswith(f"<@{ALICE.id}>")
    assert len([m for m in bot.fake.bot_messages(GENERAL) if has_feedback(m)]) == 1


async def test_an_answer_outliving_the_15_minute_token_goes_to_the_channel(
    sample_kb: KnowledgeBase, tmp_path: Path
) -> None:
    async with chat_services(sample_kb, tmp_path) as services, discord_bot(services) as bot:
        # The interaction's id says it is older than the 15 minutes its token lives (as
        # after a long turn): the adapter does not spend calls on a token known to be dead.
        await bot.fake.slash(BACKUPS, age_s=15 * 60 + 5)
        message = await until(
            lambda: next((m for m in bot.fake.bot_messages(GENERAL) if has_feedback(m)), None),
            "the answer in the channel",
        )
    assert [c.status for c in bot.fake.calls_to(CALLBACK)] == [200]
    assert not bot.fake.calls_to(ORIGINAL)  # no call made on a token known to be dead
    assert "35 days" in message["content"]


async def test_private_ask_with_an_expired_interaction_is_answered_by_dm(
    sample_kb: KnowledgeBase, tmp_path: Path
) -> None:
    async with chat_services(sample_kb, tmp_path) as services, discord_bot(services) as bot:
        await bot.fake.slash(BACKUPS, private=True, expired=True)
        dm = await until(lambda: bot.fake.dm_channels.get(ALICE.id), "a DM channel")
        message = await until(
            lambda: next((m for m in bot.fake.bot_messages(dm) if has_feedback(m)), None),
            "the answer in the DM",
        )
        assert "35 days" in message["content"]
        # A private question stays private: nothing was posted anywhere but the DM.
        posted_to = {c.path for c in bot.fake.calls_to(CHANNEL_MESSAGE)}
        assert posted_to == {f"/api/v10/channels/{dm}/messages"}


async def test_ask_in_a_dm_is_answered(sample_kb: KnowledgeBase, tmp_path: Path) -> None:
    async with chat_services(sample_kb, tmp_path) as services, discord_bot(services) as bot:
        interaction = await bot.fake.slash(BACKUPS, dm=True)
        final = await answered(bot, interaction)
    assert "35 days" in final["content"]
    assert int(final["author"]["id"]) == BOT_ID
