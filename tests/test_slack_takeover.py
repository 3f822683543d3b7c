"""A turn taken over from a dead worker finishes the reply that worker left (its ts is
in ``job.notes``, as the queue hands it over) instead of posting a second one: a stream,
a posted "Thinking…" message, an ``/ask`` placeholder, or one deleted meanwhile.

The two-worker version, with a real kill, is in tests/test_team_workers_kill.py.
"""

from __future__ import annotations

from pathlib import Path

from adapters.chat.queue import Job
from adapters.slack.queued import ANSWER, ASK, REPLY_KIND, REPLY_TS
from adapters.slack.turns import incoming
from agent.retrieval.knowledge_base import KnowledgeBase
from tests.fakes.slack_server import TEAM, FakeSlack
from tests.support.slack_support import CHANNEL, SlackHarness, slack_bot, until

BACKUPS = "How long are Postgres backups kept?"
THINKING = {"type": "task_update", "id": "step-0", "title": "Thinking…", "status": "in_progress"}

pytest_plugins = ("tests.support.slack_fixtures",)


def taken_over(slack: SlackHarness, thread_ts: str | None, **notes: str) -> Job:
    """The job a survivor reads from the queue for a mention asked in ``thread_ts``."""
    message = slack.user_message(BACKUPS, thread_ts=thread_ts)
    asked = incoming({"team_id": TEAM, "event_id": "Ev1", "event": message})
    payload = {"message": asked.to_dict(), "question": BACKUPS, "rule_channel": CHANNEL}
    thread_id = f"slack:{TEAM}:{CHANNEL}:{asked.thread_root}"
    return Job(ANSWER, thread_id, payload, event_id="Ev1", id="7-0", attempt=2, notes=notes)


async def test_a_stream_a_dead_worker_left_is_finished_with_the_answer(
    fake_slack: FakeSlack, sample_kb: KnowledgeBase, tmp_path: Path
) -> None:
    async with slack_bot(fake_slack, sample_kb, tmp_path) as slack:
        root = slack.next_ts()
        left = await slack.bot.client.chat_startStream(
            channel=CHANNEL,
            thread_ts=root,
            recipient_team_id=TEAM,
            recipient_user_id="U1",
            chunks=[THINKING],
        )
        await slack.bot.handle(taken_over(slack, root, reply_ts=left["ts"], reply_kind="stream"))
    (reply,) = fake_slack.replies(CHANNEL, root)
    assert reply.ts == left["ts"] and reply.feedback_values()
    assert "35 days" in reply.markdown
    assert all(status == "complete" for _, status in reply.tasks.values()), reply.tasks
    assert len(fake_slack.calls_to("chat.startStream")) == 1  # only the dead worker's


async def test_a_posted_thinking_message_is_edited_into_the_answer(
    fake_slack: FakeSlack, sample_kb: KnowledgeBase, tmp_path: Path
) -> None:
    async with slack_bot(fake_slack, sample_kb, tmp_path) as slack:
        root = slack.next_ts()
        left = await slack.bot.client.chat_postMessage(
            channel=CHANNEL, thread_ts=root, text="Thinking…"
        )
        await slack.bot.handle(taken_over(slack, root, reply_ts=left["ts"], reply_kind="post"))
    (reply,) = fake_slack.replies(CHANNEL, root)
    assert reply.ts == left["ts"] and reply.feedback_values() and "35 days" in reply.markdown
    assert not fake_slack.calls_to("chat.startStream")


async def test_a_left_reply_deleted_meanwhile_gives_way_to_a_new_one(
    fake_slack: FakeSlack, sample_kb: KnowledgeBase, tmp_path: Path
) -> None:
    async with slack_bot(fake_slack, sample_kb, tmp_path) as slack:
        root = slack.next_ts()
        job = taken_over(slack, root, **{REPLY_TS: "1.000009", REPLY_KIND: "stream"})
        await slack.bot.handle(job)
    (reply,) = fake_slack.replies(CHANNEL, root)
    assert reply.feedback_values() and "35 days" in reply.markdown
    assert fake_slack.calls_to("chat.appendStream")[0].error == "message_not_found"


async def test_an_ask_placeholder_a_dead_worker_posted_becomes_the_answer(
    fake_slack: FakeSlack, sample_kb: KnowledgeBase, tmp_path: Path
) -> None:
    async with slack_bot(fake_slack, sample_kb, tmp_path) as slack:
        left = await slack.bot.client.chat_postMessage(channel=CHANNEL, text=BACKUPS)
        body = {"team_id": TEAM, "channel_id": CHANNEL, "user_id": "U1", "trigger_id": "t1",
                "response_url": fake_slack.response_url("t1")}  # fmt: skip
        payload = {"body": body, "private": False, "question": BACKUPS}
        job = Job(ASK, f"slack:{TEAM}:{CHANNEL}:t1", payload, id="8-0", attempt=2,
                  notes={REPLY_TS: left["ts"], REPLY_KIND: "post"})  # fmt: skip
        await slack.bot.handle(job)
        answer = await until(lambda: fake_slack.answered(CHANNEL, None))
    assert [m.ts for m in answer] == [left["ts"]] and "35 days" in answer[0].markdown
    assert len(fake_slack.calls_to("chat.postMessage")) == 1  # only the dead worker's
