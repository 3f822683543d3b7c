"""``/ask`` answered through its response URL (a private question; a private channel or DM
the bot cannot post in) shows the agent's steps, within the five uses Slack allows."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

from adapters.chat.live import RunTurn
from adapters.slack.response_url import PROGRESS_UPDATES
from agent.events import Event, Progress, Turn
from agent.retrieval.knowledge_base import KnowledgeBase
from tests.fakes.slack_server import Call, FakeSlack
from tests.support.slack_support import slack_bot, until
from tests.test_slack_commands import answers_through_urls

pytest_plugins = ("tests.support.slack_fixtures",)


def paced(run: RunTurn) -> RunTurn:
    """The real agent, each step taking a little longer than the bot's update interval
    (50 ms in the tests), as steps do on a real LLM: every step could be shown."""

    async def steps(turn: Turn) -> AsyncIterator[Event]:
        async for event in run(turn):
            if isinstance(event, Progress):
                await asyncio.sleep(0.12)
            yield event

    return steps


def uses(fake: FakeSlack, key: str) -> list[Call]:
    return [c for c in fake.calls_to("response_url") if c.args["key"] == key]


def progress_texts(call: Call) -> str:
    return "\n".join(
        e.get("text", "") for b in call.args["blocks"] if b["type"] == "context"
        for e in b["elements"]
    )  # fmt: skip


async def test_a_private_ask_shows_its_steps_then_the_answer_in_five_uses_at_most(
    fake_slack: FakeSlack, sample_kb: KnowledgeBase, tmp_path: Path
) -> None:
    async with slack_bot(fake_slack, sample_kb, tmp_path) as slack:
        slack.services.run = paced(slack.services.run)
        _, ack, key = await slack.command("-p Postgres 백업은 며칠 동안 보관되나요?")
        (answer,) = await until(lambda: answers_through_urls(fake_slack))
    used = uses(fake_slack, key)
    progress, final = used[:-1], used[-1]
    assert ack["text"] == "생각하는 중…"
    assert final is answer and len(used) <= 5 and all(c.status == 200 for c in used)
    assert 2 <= len(progress) <= PROGRESS_UPDATES  # several steps shown, three at most
    # Each update takes the place of the last (the first, of the ack's "Thinking…").
    assert all(c.args["replace_original"] is True for c in used)
    assert all(c.args["response_type"] == "ephemeral" for c in used)
    assert "질문을 분석하는 중" in progress_texts(progress[0])
    assert len({progress_texts(c) for c in progress}) == len(progress)  # a new step each
    assert "35 days" in final.args["blocks"][0]["text"]


async def test_ask_in_a_private_channel_without_the_bot_shows_progress_in_the_channel(
    fake_slack: FakeSlack, sample_kb: KnowledgeBase, tmp_path: Path
) -> None:
    fake_slack.fail("chat.postMessage", "channel_not_found")  # the bot is not a member
    async with slack_bot(fake_slack, sample_kb, tmp_path) as slack:
        slack.services.run = paced(slack.services.run)
        _, ack, key = await slack.command("How do I get production access?", channel="G0PRIVATE")
        (answer,) = await until(lambda: answers_through_urls(fake_slack))
    used = uses(fake_slack, key)
    assert ack == {} and used[-1] is answer and 3 <= len(used) <= 5
    # Nothing to replace before the first update; then each replaces the one before.
    assert [c.args["replace_original"] for c in used] == [False] + [True] * (len(used) - 1)
    assert all(c.args["response_type"] == "in_channel" for c in used)
    assert "Analyzing the question" in progress_texts(used[0])
    assert "14 days" in answer.args["blocks"][0]["text"]
