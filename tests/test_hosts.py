"""Several hosts that share only Redis, Postgres and Chroma: no lost or stuck answers.

Two ``teamrag slack`` workers and two ``teamrag discord`` processes (one shard each) run
as hosts of their own: each has an empty data folder no other process uses. Documents
are ingested by the real ``teamrag ingest`` on yet another host (its own folder), before
the workers start and while they run. What must hold:

- a Slack question and a Discord question are answered with citations of documents
  none of the answering hosts ever had on its disk;
- the process answering each is killed mid-answer in turn: the other one finishes it,
  in the same message, once; nothing is left at "Thinking…";
- a document ingested on the other host while the workers run is found by the next
  question on any worker, without a restart, and the shared answer cache does not
  serve the "not in the documents" answer given before the ingest.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.fakes.discord_payloads import BOT_ID
from tests.fakes.discord_server import GUILD_ID
from tests.fakes.openai_server import FakeOpenAI, Reply
from tests.fakes.slack_chat import Message
from tests.fakes.slack_server import BOT_USER
from tests.support.agent_support import analysis, request_text, review, verdict
from tests.support.deployment import Deployment, Plan
from tests.support.discord_support import embed_text, has_feedback
from tests.support.discord_support import until as discord_until
from tests.support.slack_support import until
from tests.support.workers_support import (
    ingest_command,
    noted_reply,
    slack_id,
    tagged_answers,
    tags_in,
    write_docs,
)

REDIS_DB = 5  # apart from the other worker tests' and the database other Redis tests flush
DOCS = {"public": {"handbook.md": "# Operations handbook\n\nPostgres backups are kept for "
                   "35 days. The nightly full backup runs at 03:00.\n"}}  # fmt: skip
LATE = {"public": {"kestrel.md": "# Kestrel rollout plan\n\nProject Kestrel rolls out on "
                   "May 5, one region a day, starting with Seoul.\n"}}  # fmt: skip
KESTREL = "When does Project Kestrel roll out?"


@pytest.fixture(scope="module")
def deployment_plan() -> Plan:
    return Plan(REDIS_DB, DOCS, slack_workers=True, discord_shards=True)


async def slack_ask(hosts: Deployment, worker: int, text: str, team: str) -> tuple[str, str]:
    """A mention in a channel of workspace ``team``, sent to Slack worker ``worker``; the
    thread of its answer (channel, ts)."""
    sender = hosts.team.sender(worker)
    channel = slack_id("C")
    message = sender.user_message(f"<@{BOT_USER}> {text}", channel=channel, user=slack_id("U"))
    message["team"] = team
    mention = {k: v for k, v in message.items() if k != "channel_type"} | {"type": "app_mention"}
    assert await sender.event(mention, team=team) == 200
    return channel, str(message["ts"])


def sources_of(message: Message) -> str:
    return "\n".join(message.block_texts())


def answer_text(message: Message) -> str:
    return message.markdown or message.text


async def test_hosts_with_empty_data_folders_answer_with_citations_through_a_kill_each(
    hosts: Deployment, fake_llm: FakeOpenAI
) -> None:
    tagged_answers(fake_llm)
    fake_llm.latency_s = 1.0  # three round trips: each answer is under way for seconds
    slack, fake, team = hosts.slack, hosts.shards.fake, hosts.team
    redis_url = hosts.shards.redis_url
    marks = {w.name: len(w.log(0)) for w in hosts.workers}

    # Slack: the worker answering is killed once its reply is posted and noted.
    workspace = slack_id("T")
    thread = await slack_ask(hosts, 1, "How long are backups kept? #hostslack-1", workspace)
    bound = f"[thread=slack:{workspace}:{thread[0]}:{thread[1]} "
    victim = await until(
        lambda: next((w for w in team.workers if bound in w.log(0)), None),
        what=f"a Slack worker to start answering\n{team.logs()}",
    )
    left = await until(
        lambda: noted_reply(redis_url, slack.replies(*thread)),
        what=f"the Slack reply to be noted\n{team.logs()}",
    )
    victim.kill()
    await until(lambda: slack.answered(*thread), timeout=60, what=f"the answer\n{team.logs()}")
    (reply,) = slack.replies(*thread)
    assert reply.ts == left and reply.feedback_values(), (reply, team.logs())
    assert tags_in([answer_text(reply)]) == ["#hostslack-1"], reply
    assert all(status == "complete" for _, status in reply.tasks.values()), reply.tasks
    assert "Operations handbook" in sources_of(reply), (sources_of(reply), team.logs())

    # Discord: the same for a mention, on the other platform's processes.
    asked = await fake.say(f"<@{BOT_ID}> How long are backups kept? #hostdiscord-1")
    shard, survivor = await hosts.shards.answering(f"discord:{GUILD_ID}:{asked}:{asked}")
    posted = await discord_until(
        lambda: hosts.shards.noted_reply(fake.bot_messages(asked)),
        f"the Discord reply to be noted\n{hosts.shards.logs()}",
    )
    shard.kill()
    await discord_until(
        lambda: any(has_feedback(m) for m in fake.bot_messages(asked)),
        f"the survivor to finish the answer\n{hosts.shards.logs()}",
        timeout=60,
    )
    (message,) = fake.bot_messages(asked)
    assert message["id"] == posted, (message, hosts.shards.logs())
    assert "#hostdiscord-1: Backups are kept for 35 days" in message["content"], message
    assert "Thinking" not in message["content"]
    assert "Operations handbook" in embed_text(message), embed_text(message)
    assert "taking over turn" in survivor.log(0)[marks[survivor.name] :], survivor.log()
    await discord_until(hosts.shards.drained, f"the entry to finish\n{hosts.shards.logs()}")

    # Nothing of the knowledge base ever was on an answering host's disk.
    for worker in hosts.workers:
        kept = sorted(p.name for p in worker.data_dir.iterdir())
        assert not {"catalog.sqlite3", "keyword", "chroma"} & set(kept), (worker.name, kept)
        assert worker.data_dir != hosts.ingesting_host


def knows_kestrel(body: dict[str, Any]) -> bool:
    """Whether the model was shown the late document (the question alone does not say
    when Kestrel rolls out)."""
    return "May 5" in request_text(body)


def script_kestrel(llm: FakeOpenAI) -> None:
    """An honest model: without the Kestrel document the evidence does not cover the
    question, and the answer says the documents do not tell (a grounded statement
    about what they say, so it passes the check); with it, the date, cited."""
    llm.reply("Analysis", analysis())
    llm.script["Review"] = lambda body: Reply(content=review(0.9 if knows_kestrel(body) else 0.1))
    llm.script["text"] = lambda body: Reply(
        content="Project Kestrel rolls out on May 5 [1]."
        if knows_kestrel(body)
        else "The documents do not say when Project Kestrel rolls out [1]."
    )
    llm.reply("Verdict", verdict(True))


async def test_a_document_ingested_on_another_host_is_answered_at_once_and_not_from_cache(
    hosts: Deployment, fake_llm: FakeOpenAI
) -> None:
    script_kestrel(fake_llm)
    slack, fake = hosts.slack, hosts.shards.fake
    started = {w.name: (w.starts, w.process.pid if w.process else 0) for w in hosts.workers}
    # One workspace and channel for both questions: the same cache scope, the same text.
    workspace, channel, user = slack_id("T"), slack_id("C"), slack_id("U")

    async def ask_slack(worker: int) -> Message:
        sender = hosts.team.sender(worker)
        message = sender.user_message(f"<@{BOT_USER}> {KESTREL}", channel=channel, user=user)
        message["team"] = workspace
        mention = {k: v for k, v in message.items() if k != "channel_type"}
        assert await sender.event(mention | {"type": "app_mention"}, team=workspace) == 200
        thread = (channel, str(message["ts"]))
        answers = await until(
            lambda: slack.answered(*thread), timeout=60, what=f"an answer\n{hosts.logs()}"
        )
        return answers[0]

    before = await ask_slack(0)
    assert "May 5" not in answer_text(before) and "Kestrel" not in sources_of(before), before
    ingest_command(hosts.env, hosts.ingesting_host, write_docs(hosts.docs / "late", LATE))

    after = await ask_slack(1)
    assert "May 5" in answer_text(after), (answer_text(after), hosts.logs())
    assert "Kestrel rollout plan" in sources_of(after), sources_of(after)
    asked = await fake.say(f"<@{BOT_ID}> {KESTREL}")
    answered = await discord_until(
        lambda: [m for m in fake.bot_messages(asked) if has_feedback(m)],
        f"the Discord answer\n{hosts.shards.logs()}",
        timeout=60,
    )
    assert "May 5" in answered[0]["content"], answered[0]
    assert "Kestrel rollout plan" in embed_text(answered[0]), embed_text(answered[0])
    # Found at once by the running processes: none was started again.
    assert {w.name: (w.starts, w.process.pid if w.process else 0) for w in hosts.workers} == (
        started
    )
    assert all(w.alive for w in hosts.workers), hosts.logs()
