"""Every message for the bot is answered exactly once; nothing else is answered at all.

Slack retries an event it thinks was missed (same event id, ``X-Slack-Retry-Num``), a
mention arrives both as ``app_mention`` and as ``message``, and bots (this one too)
write messages that look like questions.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from agent.retrieval.knowledge_base import KnowledgeBase
from tests.fakes.slack_server import BOT_ID, BOT_USER, FakeSlack
from tests.support.slack_support import (
    CHANNEL,
    DM,
    slack_bot,
    until,
)

ACCESS_EN = "How do I get production access?"
BACKUPS_KO = "Postgres 백업은 며칠 동안 보관되나요?"

pytest_plugins = ("tests.support.slack_fixtures",)


async def test_slack_retrying_a_delivery_gets_one_answer(
    fake_slack: FakeSlack, sample_kb: KnowledgeBase, tmp_path: Path
) -> None:
    async with slack_bot(fake_slack, sample_kb, tmp_path) as slack:
        message = slack.user_message(f"<@{BOT_USER}> {ACCESS_EN}")
        mention = {k: v for k, v in message.items() if k != "channel_type"}
        mention["type"] = "app_mention"
        # The first delivery and two retries of it, arriving while it is being answered.
        statuses = await asyncio.gather(
            slack.event(mention, event_id="EvRETRIED"),
            slack.event(mention, event_id="EvRETRIED", retry=1),
            slack.event(mention, event_id="EvRETRIED", retry=2),
        )
        assert list(statuses) == [200, 200, 200]  # every delivery is acknowledged
        await until(lambda: fake_slack.answered(CHANNEL, message["ts"]))
        # A later retry (after the answer) is recognised too.
        assert await slack.event(mention, event_id="EvRETRIED", retry=3) == 200
        sentinel = await slack.mention(BACKUPS_KO)
        await until(lambda: fake_slack.answered(CHANNEL, sentinel["ts"]))
    assert len(fake_slack.replies(CHANNEL, message["ts"])) == 1
    assert len(fake_slack.calls_to("chat.startStream")) == 2


async def test_bots_edits_and_deletions_are_never_answered(
    fake_slack: FakeSlack, sample_kb: KnowledgeBase, tmp_path: Path
) -> None:
    async with slack_bot(fake_slack, sample_kb, tmp_path) as slack:
        first = await slack.say(ACCESS_EN, channel=DM)
        await until(lambda: fake_slack.answered(DM, first["ts"]))
        ignored = [
            # Its own message, and another bot's, in a DM where every person is answered.
            slack.user_message(ACCESS_EN, channel=DM, user=BOT_USER, bot_id=BOT_ID),
            slack.user_message(ACCESS_EN, channel=DM, user="U0OTHERBOT", bot_id="B0OTHER"),
            slack.user_message(ACCESS_EN, channel=DM, subtype="bot_message", user="U0OTHERBOT"),
            # A person editing and deleting their question.
            {
                "type": "message",
                "subtype": "message_changed",
                "channel": DM,
                "channel_type": "im",
                "ts": slack.next_ts(),
                "message": {"user": "U0ALICE", "text": ACCESS_EN + "?", "ts": first["ts"]},
            },
            {
                "type": "message",
                "subtype": "message_deleted",
                "channel": DM,
                "channel_type": "im",
                "ts": slack.next_ts(),
                "deleted_ts": first["ts"],
            },
            # Another bot mentioning this one in a channel.
            {
                "type": "app_mention",
                "channel": CHANNEL,
                "user": "U0OTHERBOT",
                "bot_id": "B0OTHER",
                "text": f"<@{BOT_USER}> {ACCESS_EN}",
                "ts": slack.next_ts(),
            },
        ]
        for event in ignored:
            assert await slack.event(event) == 200
        sentinel = await slack.say(BACKUPS_KO, channel=DM)
        await until(lambda: fake_slack.answered(DM, sentinel["ts"]))
    answered_threads = {c.args["thread_ts"] for c in fake_slack.calls_to("chat.startStream")}
    assert answered_threads == {first["ts"], sentinel["ts"]}


async def test_fifty_mentions_at_once_are_each_answered_once(
    fake_slack: FakeSlack, sample_kb: KnowledgeBase, tmp_path: Path
) -> None:
    questions = [
        ACCESS_EN,
        BACKUPS_KO,
        "When is the on-call handover?",
        "휴가는 어떻게 신청하나요?",
    ]
    async with slack_bot(fake_slack, sample_kb, tmp_path) as slack:
        asked = await asyncio.gather(
            *(slack.mention(questions[i % len(questions)], user=f"U{i:04d}") for i in range(50))
        )
        await until(lambda: all(fake_slack.answered(CHANNEL, m["ts"]) for m in asked), timeout=120)
    for message in asked:
        (answer,) = fake_slack.replies(CHANNEL, message["ts"])
        assert answer.feedback_values() and answer.markdown
    assert len(fake_slack.calls_to("chat.startStream")) == 50
    assert len(fake_slack.calls_to("chat.stopStream")) == 50
    recipients = {c.args["recipient_user_id"] for c in fake_slack.calls_to("chat.startStream")}
    assert recipients == {f"U{i:04d}" for i in range(50)}
