"""When Slack says no: the answer still arrives, in a plainer form if need be.

Streaming not available, a stream that expired, blocks Slack refuses, a 429, a status
Slack will not set, an answer longer than one message, a draft rewritten after it was
streamed, a feedback store that fails, an agent that breaks.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from adapters.chat.feedback import SqliteFeedbackStore
from adapters.slack.render import ANSWER_PIECE
from agent.events import Event, Progress, Turn
from agent.retrieval.knowledge_base import KnowledgeBase
from tests.fakes.openai_server import FakeOpenAI, Reply
from tests.fakes.slack_limits import block_problems
from tests.fakes.slack_server import FakeSlack
from tests.support.agent_support import script_answer, verdict
from tests.support.slack_support import (
    CHANNEL,
    slack_bot,
    until,
)

BACKUPS_KO = "Postgres 백업은 며칠 동안 보관되나요?"
ACCESS_EN = "How do I get production access?"

pytest_plugins = ("tests.support.slack_fixtures",)


def _script_answer(fake: FakeOpenAI, *texts: str) -> None:
    script_answer(fake, *texts)


async def test_when_streaming_is_not_available_it_posts_and_edits_and_stops_trying(
    fake_slack: FakeSlack, sample_kb: KnowledgeBase, tmp_path: Path
) -> None:
    fake_slack.fail("chat.startStream", "unknown_method", times=None)
    async with slack_bot(fake_slack, sample_kb, tmp_path) as slack:
        first = await slack.mention(BACKUPS_KO)
        answer = (await until(lambda: fake_slack.answered(CHANNEL, first["ts"])))[0]
        second = await slack.mention(ACCESS_EN)
        await until(lambda: fake_slack.answered(CHANNEL, second["ts"]))
    assert "35 days" in answer.markdown and answer.edits >= 1
    assert answer.blocks[0]["type"] == "markdown" and answer.feedback_values()
    # Slack said the method does not exist: the second answer did not try again.
    assert len(fake_slack.calls_to("chat.startStream")) == 1


async def test_a_stream_that_fails_once_falls_back_for_that_answer_only(
    fake_slack: FakeSlack, sample_kb: KnowledgeBase, tmp_path: Path
) -> None:
    fake_slack.fail("chat.startStream", "internal_error")  # once: not a missing feature
    async with slack_bot(fake_slack, sample_kb, tmp_path) as slack:
        first = await slack.mention(BACKUPS_KO)
        posted = (await until(lambda: fake_slack.answered(CHANNEL, first["ts"])))[0]
        second = await slack.mention(ACCESS_EN)
        streamed = (await until(lambda: fake_slack.answered(CHANNEL, second["ts"])))[0]
    assert posted.state == "posted" and posted.edits >= 1 and "35 days" in posted.markdown
    assert streamed.state == "stopped" and "14 days" in streamed.markdown  # streaming again


@pytest.mark.parametrize("expired", [["chat.appendStream", "chat.stopStream"], ["chat.stopStream"]])
async def test_an_expired_stream_is_finished_by_editing_its_message(
    fake_slack: FakeSlack, sample_kb: KnowledgeBase, tmp_path: Path, expired: list[str]
) -> None:
    for method in expired:
        fake_slack.fail(method, "message_not_in_streaming_state", times=None)
    async with slack_bot(fake_slack, sample_kb, tmp_path) as slack:
        asked = await slack.mention(BACKUPS_KO)
        answer = (await until(lambda: fake_slack.answered(CHANNEL, asked["ts"])))[0]
    stream_ts = fake_slack.ok_calls("chat.startStream")[0]
    assert answer.ts == fake_slack.messages[answer.ts].ts
    assert fake_slack.calls_to("chat.update")[-1].args["ts"] == answer.ts
    assert (
        stream_ts.method == "chat.startStream"
        and len(fake_slack.replies(CHANNEL, asked["ts"])) == 1
    )
    assert "35 days" in answer.markdown and answer.feedback_values()
    assert not fake_slack.calls_to("chat.postMessage")  # edited in place, no second message


async def test_refused_blocks_fall_back_to_a_plain_message_that_says_why(
    fake_slack: FakeSlack, sample_kb: KnowledgeBase, tmp_path: Path
) -> None:
    async with slack_bot(fake_slack, sample_kb, tmp_path, streaming=False) as slack:
        fake_slack.fail("chat.update", "invalid_blocks", times=None)
        asked = await slack.mention(ACCESS_EN)
        plain = await until(
            lambda: [m for m in fake_slack.replies(CHANNEL, asked["ts"]) if not m.blocks]
        )
    assert plain[0].text.startswith("I had an answer but could not send it in full format")
    assert "14 days" in plain[0].text and "Sources\n[1] Team FAQ" in plain[0].text


async def test_a_429_waits_as_long_as_slack_says_then_retries(
    fake_slack: FakeSlack, sample_kb: KnowledgeBase, tmp_path: Path
) -> None:
    fake_slack.fail("chat.startStream", status=429, retry_after=1)
    async with slack_bot(fake_slack, sample_kb, tmp_path) as slack:
        asked = await slack.mention(BACKUPS_KO)
        answer = (await until(lambda: fake_slack.answered(CHANNEL, asked["ts"])))[0]
    limited, retried = fake_slack.calls_to("chat.startStream")
    assert limited.status == 429 and retried.status == 200 and retried.error is None
    assert retried.at - limited.at >= 1.0  # Retry-After: 1
    assert "35 days" in answer.markdown  # and it was still streamed, not downgraded
    assert answer.tasks


async def test_a_thread_status_slack_refuses_does_not_stop_the_answer(
    fake_slack: FakeSlack, sample_kb: KnowledgeBase, tmp_path: Path
) -> None:
    fake_slack.fail("assistant.threads.setStatus", "missing_scope", times=None)
    async with slack_bot(fake_slack, sample_kb, tmp_path) as slack:
        asked = await slack.mention(ACCESS_EN)
        await until(lambda: fake_slack.answered(CHANNEL, asked["ts"]))
        statuses = await until(lambda: fake_slack.calls_to("assistant.threads.setStatus")[1:])
    assert statuses[-1].args["status"] == ""  # it still tried to clear it


async def test_a_long_answer_is_split_into_messages_slack_accepts_and_nothing_is_lost(
    fake_slack: FakeSlack, sample_kb: KnowledgeBase, tmp_path: Path, fake_llm: FakeOpenAI
) -> None:
    paragraph = (
        "Postgres 백업은 매일 밤 03:00에 전체 백업을 하고 WAL을 계속 보관합니다 [1]. "
        "Backups are kept for 35 days, and any moment can be restored [1].\n\n"
    )
    # A code block longer than one message: it is cut, closed and reopened as SQL.
    code = "```sql\nSELECT pg_start_backup('nightly');\n" + "-- step\n" * 1400 + "```\n\n"
    long_answer = (paragraph * 70 + code + paragraph * 60).strip()
    assert len(long_answer) > 2 * ANSWER_PIECE
    _script_answer(fake_llm, long_answer)
    async with slack_bot(fake_slack, sample_kb, tmp_path, llm=fake_llm) as slack:
        asked = await slack.mention(BACKUPS_KO)
        await until(lambda: fake_slack.answered(CHANNEL, asked["ts"]), timeout=60)
    messages = fake_slack.replies(CHANNEL, asked["ts"])
    assert len(messages) >= 3
    assert not [c for c in fake_slack.calls if c.error]  # Slack accepted every call
    for message in messages:
        assert not block_problems(message.blocks)
    # Read in order, the messages say the whole answer (fences closed and reopened aside).
    said = "".join(m.markdown for m in messages).replace("``````sql\n", "")
    assert said.replace("\n", "") == long_answer.replace("\n", "")
    # The first message was streamed; the sources and buttons are on the last one only.
    assert messages[0].state == "stopped" and messages[0].stream_text
    assert messages[-1].feedback_values() and not any(m.feedback_values() for m in messages[:-1])
    assert all("_(계속)_" in m.block_texts() for m in messages[:-1])  # a Korean question


async def test_a_rewritten_draft_replaces_what_was_streamed(
    fake_slack: FakeSlack, sample_kb: KnowledgeBase, tmp_path: Path, fake_llm: FakeOpenAI
) -> None:
    _script_answer(
        fake_llm,
        "Backups are kept forever, trust me.",
        "Postgres backups are kept for 35 days [1].",
    )
    # The check of the first draft takes a while, so the draft is on screen meanwhile.
    fake_llm.reply("Verdict", Reply(content=verdict(False), delay=0.5), verdict(True))
    async with slack_bot(fake_slack, sample_kb, tmp_path, llm=fake_llm) as slack:
        asked = await slack.mention("How long are Postgres backups kept?")
        answer = (await until(lambda: fake_slack.answered(CHANNEL, asked["ts"])))[0]
    streamed = fake_slack.calls_to("chat.startStream", "chat.appendStream")
    assert any("forever" in json.dumps(c.args) for c in streamed)  # the first draft was shown
    assert answer.markdown == "Postgres backups are kept for 35 days [1]."
    assert "forever" not in "".join(answer.block_texts()) + answer.text
    assert fake_slack.calls_to("chat.update")[-1].args["ts"] == answer.ts  # replaced in place


async def test_an_answer_is_still_sent_when_the_feedback_store_fails(
    fake_slack: FakeSlack, sample_kb: KnowledgeBase, tmp_path: Path
) -> None:
    async with slack_bot(fake_slack, sample_kb, tmp_path) as slack:
        assert isinstance(slack.services.feedback, SqliteFeedbackStore)
        slack.services.feedback.close()  # every remember() now raises
        asked = await slack.mention(ACCESS_EN)
        answer = (
            await until(
                lambda: [
                    m for m in fake_slack.replies(CHANNEL, asked["ts"]) if m.state == "stopped"
                ]
            )
        )[0]
    assert "14 days" in answer.markdown and not answer.feedback_values()
    assert "Sources" in answer.block_texts()[0]


async def test_a_broken_agent_still_gets_the_asker_a_reason(
    fake_slack: FakeSlack, sample_kb: KnowledgeBase, tmp_path: Path
) -> None:
    async def broken(turn: Turn) -> AsyncIterator[Event]:
        yield Progress("analyze", "Analyzing the question…")  # and then nothing: no Final

    async with slack_bot(fake_slack, sample_kb, tmp_path) as slack:
        slack.services.run = broken  # stands in for an agent that breaks its promise
        asked = await slack.mention(ACCESS_EN)
        reason = await until(
            lambda: [m for m in fake_slack.replies(CHANNEL, asked["ts"]) if "went wrong" in m.text]
        )
        statuses = await until(lambda: fake_slack.calls_to("assistant.threads.setStatus")[1:])
    assert reason[0].text.startswith("Sorry, something went wrong while answering.")
    assert statuses[-1].args["status"] == ""
