"""A long answer is several Slack messages; each is noted with the queued turn as it is
posted, so a worker that takes the turn over from a dead one edits every message the
dead worker left (not only the first), posts only the missing ones, deletes the ones
its shorter answer no longer needs, and posts anew (in order) what a user deleted.

Most tests lay out what a dead worker left (its messages in the fake Slack, its notes
with the job) and let the real bot take the job over; the last ones let a real worker
on the real Redis queue die after its second part, and another one take over. The
two-process version, with a real kill, is in tests/test_team_workers_kill.py.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from slack_sdk.webhook.async_client import AsyncWebhookClient

from adapters.chat.parts import part_note
from adapters.chat.queue import Job
from adapters.chat.queue_redis import RedisTurnQueue
from adapters.slack.queued import ANSWER, ASK, REPLY_KIND, REPLY_TS, SlackBot
from adapters.slack.render import final_messages
from adapters.slack.response_url import digest
from adapters.slack.turns import incoming
from agent.coordination.redis_connection import RedisConnection
from agent.events import Final
from agent.retrieval.knowledge_base import KnowledgeBase
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.slack_chat import Message
from tests.fakes.slack_server import TEAM, FakeSlack
from tests.support.agent_support import script_answer
from tests.support.redis_support import RedisServer
from tests.support.slack_support import CHANNEL, DM, SlackHarness, slack_bot, until

pytest_plugins = ("tests.support.slack_fixtures",)

BACKUPS = "How long are Postgres backups kept?"
SENTENCE = "Postgres backups are kept for 35 days and restored from the nightly copy [1]. "
# Three paragraphs of about 8,000 characters: Slack takes 10,000 per answer message, so
# the answer is exactly three messages, one paragraph each.
PARAGRAPHS = [f"#part-{name} " + SENTENCE * 100 for name in "ABC"]
THREE_PARTS = "\n\n".join(PARAGRAPHS)
THINKING = {"type": "task_update", "id": "step-0", "title": "Thinking…", "status": "in_progress"}


def marks(messages: list[Message]) -> list[str]:
    """Which paragraphs each message shows, in thread order (an old "Thinking…": '')."""
    return [
        "".join(name for name in "ABC" if f"#part-{name}" in m.markdown + m.text) for m in messages
    ]


@pytest.fixture
async def slack(
    fake_slack: FakeSlack, sample_kb: KnowledgeBase, tmp_path: Path, fake_llm: FakeOpenAI
) -> AsyncIterator[SlackHarness]:
    """The bot, answering with the three-part answer."""
    script_answer(fake_llm, THREE_PARTS)
    async with slack_bot(fake_slack, sample_kb, tmp_path, llm=fake_llm) as harness:
        yield harness


@pytest.fixture
async def queue(slack: SlackHarness, redis_connection: RedisConnection) -> RedisTurnQueue:
    """The bot's turns noted in a real Redis (so a test reads what it noted)."""
    slack.bot.queue = RedisTurnQueue(redis_connection, "slack")
    return slack.bot.queue


async def noted(queue: RedisTurnQueue, job: Job) -> dict[str, str]:
    raw = await queue.redis.client.hgetall(queue._notes(job.id))
    return {str(k): str(v) for k, v in raw.items()}


def mention_job(
    slack: SlackHarness, root: str, notes: dict[str, str], *, channel: str = CHANNEL, **more: Any
) -> Job:
    """The job a survivor reads from the queue for a mention asked in thread ``root``."""
    message = slack.user_message(BACKUPS, channel=channel, thread_ts=root)
    asked = incoming({"team_id": TEAM, "event_id": "Ev1", "event": message})
    payload = {"message": asked.to_dict(), "question": BACKUPS, "rule_channel": channel} | more
    thread_id = f"slack:{TEAM}:{channel}:{asked.thread_root}"
    return Job(ANSWER, thread_id, payload, event_id="Ev1", id="7-0", attempt=2, notes=notes)


async def left_behind(
    slack: SlackHarness, root: str, kind: str, parts: int, *, channel: str = CHANNEL
) -> dict[str, str]:
    """What a worker that died after posting ``parts`` parts of its answer left: its
    first message (a stream, or a posted "Thinking…") and each part, all noted."""
    client = slack.bot.client
    if kind == "stream":
        first = await client.chat_startStream(
            channel=channel, thread_ts=root, recipient_team_id=TEAM,
            recipient_user_id="U1", chunks=[THINKING],
        )  # fmt: skip
    else:
        first = await client.chat_postMessage(channel=channel, thread_ts=root, text="Thinking…")
    notes = {REPLY_TS: str(first["ts"]), REPLY_KIND: kind}
    for index in range(1, parts + 1):
        old = f"#part-{'ABC'[index]} (the dead worker's) " + SENTENCE
        posted = await client.chat_postMessage(channel=channel, thread_ts=root, text=old)
        notes[part_note(index)] = str(posted["ts"])
    return notes


def posts_since(fake: FakeSlack, mark: int) -> list[Any]:
    return [c for c in fake.ok_calls("chat.postMessage", "chat.startStream")[mark:]]


@pytest.mark.parametrize("kind", ["post", "stream"])
async def test_every_part_a_dead_worker_posted_is_edited_in_place(
    slack: SlackHarness, fake_slack: FakeSlack, queue: RedisTurnQueue, kind: str
) -> None:
    root = slack.next_ts()
    left = await left_behind(slack, root, kind, parts=2)
    before = len(fake_slack.ok_calls("chat.postMessage", "chat.startStream"))
    job = mention_job(slack, root, left)
    await slack.bot.handle(job)
    replies = fake_slack.replies(CHANNEL, root)
    assert [m.ts for m in replies] == [left[REPLY_TS], left["reply_part_1"], left["reply_part_2"]]
    assert marks(replies) == ["A", "B", "C"]
    assert "dead worker" not in "".join(m.text + m.markdown for m in replies)
    assert not replies[0].feedback_values() and replies[-1].feedback_values()
    assert not posts_since(fake_slack, before)  # nothing posted twice
    assert not fake_slack.calls_to("chat.delete")


async def test_only_the_parts_a_dead_worker_had_not_reached_are_posted_and_noted(
    slack: SlackHarness, fake_slack: FakeSlack, queue: RedisTurnQueue
) -> None:
    root = slack.next_ts()
    left = await left_behind(slack, root, "stream", parts=1)
    before = len(fake_slack.ok_calls("chat.postMessage", "chat.startStream"))
    job = mention_job(slack, root, left)
    await slack.bot.handle(job)
    replies = fake_slack.replies(CHANNEL, root)
    assert marks(replies) == ["A", "B", "C"]
    assert [m.ts for m in replies[:2]] == [left[REPLY_TS], left["reply_part_1"]]
    (posted,) = posts_since(fake_slack, before)  # only the third message
    assert "#part-C" in json.dumps(posted.args["blocks"])
    # Noted too: a third worker would edit it.
    assert (await noted(queue, job))["reply_part_2"] == replies[2].ts


async def test_a_shorter_answer_deletes_the_parts_beyond_it(
    fake_slack: FakeSlack,
    sample_kb: KnowledgeBase,
    tmp_path: Path,
    redis_connection: RedisConnection,
) -> None:
    # Without an LLM the answer is one short message: the dead worker's two parts go.
    async with slack_bot(fake_slack, sample_kb, tmp_path) as slack:
        queue = RedisTurnQueue(redis_connection, "slack")
        slack.bot.queue = queue
        root = slack.next_ts()
        left = await left_behind(slack, root, "post", parts=2)
        job = mention_job(slack, root, left)
        await slack.bot.handle(job)
    (reply,) = fake_slack.replies(CHANNEL, root)
    assert reply.ts == left[REPLY_TS] and "35 days" in reply.markdown and reply.feedback_values()
    deleted = [c.args["ts"] for c in fake_slack.ok_calls("chat.delete")]
    assert deleted == [left["reply_part_1"], left["reply_part_2"]]
    notes = await noted(queue, job)
    assert notes["reply_part_1"] == notes["reply_part_2"] == ""  # cleared, not stale


async def test_a_part_a_user_deleted_is_posted_anew_and_the_later_parts_follow_it(
    slack: SlackHarness, fake_slack: FakeSlack, queue: RedisTurnQueue
) -> None:
    root = slack.next_ts()
    left = await left_behind(slack, root, "post", parts=2)
    fake_slack.delete(left["reply_part_1"])  # someone deleted the answer's second message
    job = mention_job(slack, root, left)
    await slack.bot.handle(job)
    replies = fake_slack.replies(CHANNEL, root)
    # Still in order: the third message was deleted and posted again after the second.
    assert marks(replies) == ["A", "B", "C"]
    assert replies[0].ts == left[REPLY_TS]
    assert left["reply_part_2"] not in {m.ts for m in replies}
    assert [c.args["ts"] for c in fake_slack.ok_calls("chat.delete")] == [left["reply_part_2"]]
    edits = [c for c in fake_slack.calls_to("chat.update") if c.args["ts"] == left["reply_part_1"]]
    assert edits and edits[-1].error == "message_not_found"
    notes = await noted(queue, job)
    assert [notes["reply_part_1"], notes["reply_part_2"]] == [m.ts for m in replies[1:]]


@pytest.mark.parametrize("kind", ["post", "stream"])
async def test_a_first_message_a_user_deleted_is_posted_anew_and_its_parts_follow_it(
    slack: SlackHarness, fake_slack: FakeSlack, queue: RedisTurnQueue, kind: str
) -> None:
    root = slack.next_ts()
    left = await left_behind(slack, root, kind, parts=2)
    fake_slack.delete(left[REPLY_TS])
    job = mention_job(slack, root, left)
    await slack.bot.handle(job)
    replies = fake_slack.replies(CHANNEL, root)
    assert marks(replies) == ["A", "B", "C"]  # the old parts went: they were above it
    assert not {left["reply_part_1"], left["reply_part_2"]} & {m.ts for m in replies}
    notes = await noted(queue, job)
    assert [notes[REPLY_TS], notes["reply_part_1"], notes["reply_part_2"]] == [
        m.ts for m in replies
    ]


async def test_an_ask_answer_left_in_the_channel_gets_its_parts_in_its_thread_once(
    slack: SlackHarness, fake_slack: FakeSlack, queue: RedisTurnQueue
) -> None:
    client = slack.bot.client
    question = await client.chat_postMessage(channel=CHANNEL, text=BACKUPS)  # the dead worker's
    ts = str(question["ts"])
    part = await client.chat_postMessage(channel=CHANNEL, thread_ts=ts, text="#part-B (old)")
    body = {"team_id": TEAM, "channel_id": CHANNEL, "user_id": "U1", "trigger_id": "t1",
            "response_url": fake_slack.response_url("t1")}  # fmt: skip
    notes = {REPLY_TS: ts, REPLY_KIND: "post", part_note(1): str(part["ts"])}
    job = Job(ASK, f"slack:{TEAM}:{CHANNEL}:t1", {"body": body, "private": False,
              "question": BACKUPS}, id="8-0", attempt=2, notes=notes)  # fmt: skip
    await slack.bot.handle(job)
    (answer,) = fake_slack.replies(CHANNEL, None)
    assert answer.ts == ts and marks([answer]) == ["A"]
    in_thread = fake_slack.replies(CHANNEL, ts)
    assert [m.ts for m in in_thread][:1] == [part["ts"]] and marks(in_thread) == ["B", "C"]
    assert in_thread[-1].feedback_values()


async def test_the_assistant_pane_answer_is_taken_over_part_by_part(
    slack: SlackHarness, fake_slack: FakeSlack, queue: RedisTurnQueue
) -> None:
    root = slack.next_ts()
    left = await left_behind(slack, root, "stream", parts=2, channel=DM)
    before = len(fake_slack.ok_calls("chat.postMessage", "chat.startStream"))
    job = mention_job(slack, root, left, channel=DM, status_steps=True)
    await slack.bot.handle(job)
    replies = fake_slack.replies(DM, root)
    assert [m.ts for m in replies] == [left[REPLY_TS], left["reply_part_1"], left["reply_part_2"]]
    assert marks(replies) == ["A", "B", "C"] and not posts_since(fake_slack, before)
    statuses = [c.args["status"] for c in fake_slack.calls_to("assistant.threads.setStatus")]
    assert len(statuses) > 2 and statuses[-1] == ""  # the pane's steps, then cleared


async def test_notes_that_cannot_be_kept_never_stop_the_answer(
    slack: SlackHarness,
    fake_slack: FakeSlack,
    redis_server: RedisServer,
    redis_connection: RedisConnection,
    caplog: pytest.LogCaptureFixture,
) -> None:
    slack.bot.queue = RedisTurnQueue(redis_connection, "slack")
    root = slack.next_ts()
    job = replace(mention_job(slack, root, {}), attempt=1)
    redis_server.stop()  # every note of this answer fails
    try:
        await slack.bot.handle(job)
    finally:
        redis_server.start()
    replies = fake_slack.replies(CHANNEL, root)
    assert marks(replies) == ["A", "B", "C"] and replies[-1].feedback_values()
    assert "unreachable" in caplog.text and "while noting a turn's reply" in caplog.text


# --- /ask through its response URL: five uses, nothing editable -------------------------


async def private_ask_left(fake: FakeSlack, key: str, said: list[str], **notes: str) -> Job:
    """A private ``/ask`` whose dead worker sent ``said`` through its response URL."""
    url = fake.response_url(key)
    for text in said:  # the real uses, which Slack counts
        assert (await AsyncWebhookClient(url).send(text=text)).status_code == 200
    body = {"team_id": TEAM, "channel_id": CHANNEL, "user_id": "U1", "trigger_id": key,
            "response_url": url}  # fmt: skip
    payload = {"body": body, "private": True, "question": BACKUPS}
    return Job(ASK, f"slack:{TEAM}:{CHANNEL}:{key}", payload, id="9-0", attempt=2, notes=notes)


async def test_a_private_ask_whose_progress_spent_three_uses_still_gets_its_whole_answer(
    slack: SlackHarness, fake_slack: FakeSlack, queue: RedisTurnQueue
) -> None:
    said = ["step one", "step two", "step three"]
    await slack.bot.handle(await private_ask_left(fake_slack, "k1", said, url_uses="3"))
    calls = [c for c in fake_slack.calls_to("response_url") if c.args["key"] == "k1"]
    assert len(calls) == 5 and all(c.status == 200 for c in calls), [c.error for c in calls]
    rich, plain = calls[3:]  # no progress: the two uses left are the answer's
    assert "#part-A" in rich.args["text"] and rich.args["replace_original"] is True
    assert "#part-B" in plain.args["text"] and "#part-C" in plain.args["text"]
    assert "blocks" not in plain.args


async def test_a_private_ask_taken_over_sends_only_what_the_asker_does_not_see_yet(
    slack: SlackHarness, fake_slack: FakeSlack, queue: RedisTurnQueue
) -> None:
    shown = digest(final_messages(Final(THREE_PARTS), answer_id=None)[0])
    job = await private_ask_left(
        fake_slack, "k2", ["step one", "#part-A"], url_uses="2", url_shown=shown
    )
    await slack.bot.handle(job)
    calls = [c for c in fake_slack.calls_to("response_url") if c.args["key"] == "k2"][2:]
    assert [c.status for c in calls] == [200, 200]
    second, third = calls  # no progress over the answer, no first part again
    assert "#part-B" in second.args["text"] and second.args["replace_original"] is False
    assert "#part-C" in third.args["text"] and "feedback_buttons" in json.dumps(third.args)
    notes = await noted(queue, job)
    assert notes["url_uses"] == "4" and len(notes["url_shown"].split(",")) == 3


async def test_a_different_answer_replaces_the_last_message_a_dead_worker_showed(
    slack: SlackHarness, fake_slack: FakeSlack, queue: RedisTurnQueue
) -> None:
    job = await private_ask_left(
        fake_slack, "k3", ["an older answer"], url_uses="1", url_shown="0123456789abcdef"
    )
    await slack.bot.handle(job)
    calls = [c for c in fake_slack.calls_to("response_url") if c.args["key"] == "k3"][1:]
    assert "#part-A" in calls[0].args["text"] and calls[0].args["replace_original"] is True
    assert all(c.status == 200 for c in calls) and len(calls) == 3


# --- a real worker dies on the real queue after its second message ---------------------


def second_worker(redis: RedisConnection) -> RedisConnection:
    return RedisConnection(redis.url, prefix=redis.prefix, retry_s=redis.retry_s, timeout_s=0.5)


async def test_a_worker_dying_after_part_two_leaves_each_part_once_after_the_take_over(
    slack: SlackHarness, fake_slack: FakeSlack, redis_connection: RedisConnection
) -> None:
    connections = [second_worker(redis_connection), second_worker(redis_connection)]
    # A claim time well above a busy event loop's pauses, or the first worker would take
    # its own turn over from itself.
    a, b = (
        replace(slack.bot, queue=RedisTurnQueue(redis, "slack", claim_s=2.0))
        for redis in connections
    )
    root = slack.next_ts()
    message = slack.user_message(f"<@U> {BACKUPS}", thread_ts=root)
    asked = incoming({"team_id": TEAM, "event_id": "Ev9", "event": message})
    # The third message never gets out of the first worker: it dies sending it.
    fake_slack.hold("chat.postMessage", when=lambda args: "#part-C" in json.dumps(args))
    try:
        async with a.serving():
            await a.take(asked, BACKUPS)
            await until(lambda: fake_slack.held("chat.postMessage"), what="the third message")
            await die(a)
        assert marks(fake_slack.replies(CHANNEL, root)) == ["A", "B"]
        async with b.serving():
            await until(lambda: fake_slack.answered(CHANNEL, root), what="the take-over")
    finally:
        for redis in connections:
            await redis.aclose()
    replies = fake_slack.replies(CHANNEL, root)
    assert marks(replies) == ["A", "B", "C"], [m.text[:40] for m in replies]
    assert replies[0].state == "stopped" and replies[-1].feedback_values()
    assert all(status == "complete" for _, status in replies[0].tasks.values()), replies[0].tasks
    assert "Thinking" not in json.dumps([m.blocks for m in replies])
    # The survivor posted only the third message; the first two are the dead worker's.
    assert [c.method for c in fake_slack.ok_calls("chat.postMessage", "chat.startStream")] == [
        "chat.startStream",
        "chat.postMessage",
        "chat.postMessage",
    ]


async def die(worker: SlackBot) -> None:
    """Stop a worker's answers as a crash would: no reply finished, nothing acknowledged."""
    assert isinstance(worker.queue, RedisTurnQueue)
    running = list(worker.queue._tasks.running)
    for task in running:
        task.cancel()
    await asyncio.wait(running)
