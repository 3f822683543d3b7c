"""A question that workers keep failing (a poison message) is dropped from the turn queue
after ``max_attempts``; before that, the asker is told why, once, where the answer would
have gone, in their language.

Each worker here is on the real Redis queue; the first one hangs on the question, and its
task is stopped as a crash would leave it (nothing finished, nothing acknowledged), after
which the queue hands the turn to the next worker, the real bot
(tests/test_slack_takeover_parts.py does the same for a take-over that succeeds).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import replace
from pathlib import Path

import pytest

from adapters.chat.queue import Job
from adapters.chat.queue_redis import RedisTurnQueue
from adapters.slack.turns import incoming
from agent.coordination.redis_connection import RedisConnection
from agent.retrieval.knowledge_base import KnowledgeBase
from tests.fakes.discord_payloads import BOT_ID
from tests.fakes.discord_rest import CHANNEL_MESSAGE
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.slack_server import TEAM, FakeSlack
from tests.support.chat_support import chat_services
from tests.support.discord_support import Bot, discord_bot
from tests.support.slack_support import CHANNEL, SlackHarness, slack_bot, until

pytest_plugins = ("tests.support.slack_fixtures",)

QUESTION_KO = "백업은 얼마나 오래 보관하나요?"
GAVE_UP_KO = "이 메시지는 1번 시도했지만 답하지 못했어요."
GAVE_UP_EN = "I tried 1 times and could not answer this message"
CLAIM_S = 2.0  # well above a busy event loop's pauses (see test_slack_takeover_parts)


def worker_redis(redis: RedisConnection) -> RedisConnection:
    """A Redis connection of its own, as another worker process has."""
    return RedisConnection(redis.url, prefix=redis.prefix, retry_s=redis.retry_s, timeout_s=0.5)


def poison_queue(redis: RedisConnection, stream: str) -> RedisTurnQueue:
    # One attempt: the first worker's death is one too many, so the next worker gives up.
    return RedisTurnQueue(redis, stream, claim_s=CLAIM_S, max_attempts=1)


async def die(queue: RedisTurnQueue) -> None:
    """The answers under way stop as a crash would leave them: nothing acknowledged."""
    running = list(queue._tasks.running)
    for task in running:
        task.cancel()
    await asyncio.wait(running)


async def emptied(queue: RedisTurnQueue, timeout: float = 20) -> int:
    """Wait until the queue's stream holds no entry (read or not); how many it holds."""
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        left = int(await queue.redis.client.xlen(queue._key))
        if not left or asyncio.get_running_loop().time() > deadline:
            return left
        await asyncio.sleep(0.05)


@pytest.fixture
async def slack(
    fake_slack: FakeSlack, sample_kb: KnowledgeBase, tmp_path: Path, fake_llm: FakeOpenAI
) -> AsyncIterator[SlackHarness]:
    async with slack_bot(fake_slack, sample_kb, tmp_path, llm=fake_llm) as harness:
        yield harness


@pytest.fixture
async def workers(
    redis_connection: RedisConnection,
) -> AsyncIterator[tuple[RedisTurnQueue, RedisTurnQueue]]:
    """Two Slack workers' queues, each on a Redis connection of its own."""
    connections = [worker_redis(redis_connection), worker_redis(redis_connection)]
    try:
        yield poison_queue(connections[0], "slack"), poison_queue(connections[1], "slack")
    finally:
        for redis in connections:
            await redis.aclose()


async def stalls_and_dies(queue: RedisTurnQueue, submit: Callable[[], Awaitable[None]]) -> None:
    """A worker on ``queue`` takes what ``submit`` queues, hangs on it, and dies."""
    started = asyncio.Event()

    async def stall(job: Job) -> None:
        started.set()
        await asyncio.Event().wait()

    async with queue.serving(stall):
        await submit()
        await asyncio.wait_for(started.wait(), 30)
        await die(queue)


async def test_slack_says_once_in_the_thread_why_a_poison_question_is_dropped(
    slack: SlackHarness, fake_slack: FakeSlack, workers: tuple[RedisTurnQueue, RedisTurnQueue]
) -> None:
    first, second = workers
    root = slack.next_ts()
    message = slack.user_message(f"<@U> {QUESTION_KO}", thread_ts=root)
    asked = incoming({"team_id": TEAM, "event_id": "EvPoison", "event": message})
    await stalls_and_dies(first, lambda: replace(slack.bot, queue=first).take(asked, QUESTION_KO))
    async with replace(slack.bot, queue=second).serving():
        told = await until(lambda: fake_slack.replies(CHANNEL, root), what="the reason")
        left = await emptied(second)
    replies = fake_slack.replies(CHANNEL, root)
    assert left == 0, "the poison question is still queued"
    assert len(replies) == len(told) == 1, [m.text for m in replies]  # said once
    assert replies[0].text.startswith(GAVE_UP_KO), replies[0].text  # in the asker's language
    # The second worker did not try to answer it again (no "Thinking…" was opened).
    assert [c.method for c in fake_slack.ok_calls("chat.postMessage", "chat.startStream")] == [
        "chat.postMessage"
    ]


@asynccontextmanager
async def discord_on_redis(
    kb: KnowledgeBase, folder: Path, llm: FakeOpenAI, redis: RedisConnection
) -> AsyncIterator[tuple[Bot, RedisTurnQueue]]:
    """The Discord bot with its turns on the real Redis queue."""
    queue = poison_queue(redis, "discord")
    async with chat_services(kb, folder, llm=llm) as services:
        services.queue_for = lambda platform: queue
        async with discord_bot(services) as bot:
            yield bot, queue


async def test_discord_says_once_why_a_poison_mention_is_dropped(
    sample_kb: KnowledgeBase,
    tmp_path: Path,
    fake_llm: FakeOpenAI,
    redis_connection: RedisConnection,
) -> None:
    async with discord_on_redis(sample_kb, tmp_path, fake_llm, redis_connection) as (bot, queue):
        # The process dies as it posts its "Thinking…": nothing of it is in the thread.
        bot.fake.hold(CHANNEL_MESSAGE)
        asked = await bot.fake.say(f"<@{BOT_ID}> How long are Postgres backups kept?")
        await until(lambda: bot.fake.held(CHANNEL_MESSAGE), what="the first reply")
        await die(queue)
        # The same process reads the turn again after the claim time, as another would.
        told = await until(lambda: bot.fake.bot_messages(asked), what="the reason")
        left = await emptied(queue)
        replies = bot.fake.bot_messages(asked)
    assert left == 0, "the poison question is still queued"
    assert len(replies) == len(told) == 1, replies
    assert replies[0]["content"].startswith(GAVE_UP_EN), replies[0]


async def test_slack_tells_a_private_ask_through_its_response_url(
    slack: SlackHarness, fake_slack: FakeSlack, workers: tuple[RedisTurnQueue, RedisTurnQueue]
) -> None:
    first, second = workers
    slack.bot.queue = first  # the worker that takes the command queues it on Redis
    keys: list[str] = []

    async def ask() -> None:
        status, _, key = await slack.command(f"-p {QUESTION_KO}")
        assert status == 200
        keys.append(key)

    await stalls_and_dies(first, ask)
    async with replace(slack.bot, queue=second).serving():
        await until(lambda: fake_slack.calls_to("response_url"), what="the reason")
        left = await emptied(second)
    assert left == 0, "the poison question is still queued"
    (told,) = [c for c in fake_slack.calls_to("response_url") if c.args["key"] == keys[0]]
    assert told.args["text"].startswith(GAVE_UP_KO), told.args
    assert told.args["response_type"] == "ephemeral"  # private, as the question was


async def test_discord_tells_an_ask_in_its_interaction_response(
    sample_kb: KnowledgeBase,
    tmp_path: Path,
    fake_llm: FakeOpenAI,
    redis_connection: RedisConnection,
) -> None:
    async with discord_on_redis(sample_kb, tmp_path, fake_llm, redis_connection) as (bot, queue):
        # The process dies while the model is thinking (not for long: the fake model
        # server's stop waits for the request in flight).
        fake_llm.latency_s = 3.0
        try:
            interaction = await bot.fake.slash(QUESTION_KO, private=True)
            await until(lambda: fake_llm.chat_requests, what="the turn to reach the model")
            await die(queue)
        finally:
            fake_llm.latency_s = 0.0

        def reason() -> str | None:
            original = bot.fake.original(interaction)
            content = str(original["content"]) if original else ""
            return content if "1번" in content else None

        told = await until(reason, what="the reason in the interaction's response")
        left = await emptied(queue)
    assert left == 0, "the poison question is still queued"
    assert told.startswith(GAVE_UP_KO), told
    assert not bot.fake.followups(interaction)
