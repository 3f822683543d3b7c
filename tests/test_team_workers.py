"""The team deployment end to end: two ``teamrag slack`` worker processes, each with an
empty data folder of its own, sharing only a real Redis, Postgres and Chroma server.

One pair of workers serves the whole module (starting one loads the encoder and the
graph); a test that kills a worker leaves the next test to start it again. Every
test works in a workspace of its own, so no answer comes from another test's cache,
and a worker's log is in every failure message.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import time
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import psycopg
import pytest
import redis

from adapters.chat.phrases import phrase
from agent.retrieval.embeddings import UniversalSentenceEncoder
from tests.agent_support import analysis, request_text
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.slack_server import BOT_USER, FakeSlack, Message
from tests.redis_support import RedisServer
from tests.servers import chroma_server
from tests.slack_support import SlackSender, until
from tests.workers_support import (
    Team,
    ingest,
    noted_reply,
    postgres_or_skip,
    slack_id,
    tagged_answers,
    tags_in,
    worker_env,
    write_docs,
)

CLAIM_S = 2.0  # a dead worker's turn is taken over after this long
LIMIT = 2  # questions per user per minute, across both workers
REDIS_DB = 3  # apart from the database the other Redis tests flush

DOCS = {
    "public": {
        "handbook.md": "# Operations handbook\n\nPostgres backups are kept for 35 days. The "
        "nightly full backup runs at 03:00 and is copied to a second region.\n",
    },
    "alpha": {
        "falcon-launch.md": "# Falcon launch plan\n\nProject Falcon launches on March 3. "
        "The launch checklist and the Falcon rollout are owned by the alpha team.\n",
    },
    "beta": {
        "falcon-budget.md": "# Falcon budget review\n\nProject Falcon has a budget of 2 "
        "million won. The Falcon cost review is owned by the beta team.\n",
    },
}
FALCON = "What is the plan for Project Falcon?"


@dataclass
class World:
    team: Team
    slack: FakeSlack
    redis_url: str
    general: str  # channel ids: default rule (the public scope), and one per scope
    alpha: str
    beta: str


@pytest.fixture(scope="module")
async def world(
    tmp_path_factory: pytest.TempPathFactory,
    embedder: UniversalSentenceEncoder,
    redis_server: RedisServer,
    fake_llm_server: FakeOpenAI,
) -> AsyncIterator[World]:
    folder = tmp_path_factory.mktemp("team")
    if redis_server.process is None:
        redis_server.start()
    redis_url = f"redis://127.0.0.1:{redis_server.port}/{REDIS_DB}"
    redis.Redis.from_url(redis_url).flushdb()
    database_url = postgres_or_skip()
    schema = f"t_{uuid.uuid4().hex[:12]}"  # the shared catalog of this run
    general, alpha, beta = slack_id("C"), slack_id("C"), slack_id("C")
    channels = f'[channels.{alpha}]\nscopes = ["alpha"]\n[channels.{beta}]\nscopes = ["beta"]\n'
    slack = FakeSlack().start()
    try:
        with chroma_server(folder / "chroma") as chroma_url:
            docs = write_docs(folder / "docs", DOCS)
            # Through a host of its own: the workers' data folders stay empty of documents.
            ingest(folder / "ingesting-host", chroma_url, embedder, docs,
                   database_url=database_url, schema=schema)  # fmt: skip
            env = worker_env(
                redis_url=redis_url,
                chroma_url=chroma_url,
                slack=slack,
                llm=fake_llm_server,
                database_url=database_url,
                queue_claim_s=CLAIM_S,
                rate_limit_per_minute=LIMIT,
                redis_retry_s=0.5,
                channels=channels,
                chat_update_interval_s=0.05,
                default_scope="public",
                catalog_schema=schema,
            )
            team = await Team.start(slack, env, folder / "workers")
            try:
                yield World(team, slack, redis_url, general, alpha, beta)
            finally:
                await team.close()
    finally:
        slack.stop()
        with psycopg.connect(database_url, autocommit=True) as db:
            db.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")


@pytest.fixture
async def team(world: World, fake_llm: FakeOpenAI, redis_server: RedisServer) -> Team:
    """Both workers running (again, after a test killed one), a clean fake Slack."""
    if redis_server.process is None:
        redis_server.start()
    world.slack.reset()
    await world.team.ensure_up()
    return world.team


@dataclass(frozen=True)
class Asker:
    """Who asks where. Each test asks in a workspace of its own (so no answer comes from
    another test's cache) and as a user of its own (the rate limit counts per user)."""

    team: str
    channel: str
    user: str = field(default_factory=lambda: slack_id("U"))


async def ask(
    sender: SlackSender,
    text: str,
    asker: Asker,
    *,
    thread_ts: str | None = None,
    mention: bool = True,
) -> dict[str, Any]:
    """A message to the bot as Slack delivers it: a mention comes as ``app_mention`` and
    as ``message`` (two event ids, one message); a thread reply as ``message`` only."""
    message = sender.user_message(
        f"<@{BOT_USER}> {text}" if mention else text,
        channel=asker.channel,
        user=asker.user,
        thread_ts=thread_ts,
    )
    message["team"] = asker.team
    if mention:
        assert await sender.event(app_mention(message), team=asker.team) == 200
    assert await sender.event(message, team=asker.team) == 200
    return message


def app_mention(message: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in message.items() if k != "channel_type"} | {"type": "app_mention"}


def texts(messages: list[Message]) -> list[str]:
    return [m.markdown or m.text for m in messages]


def sources_of(message: Message) -> str:
    return "\n".join(message.block_texts())


def calls_about(llm: FakeOpenAI, task: str, tag: str) -> list[dict[str, Any]]:
    return [c.body for c in llm.calls if c.task == task and tag in request_text(c.body)]


async def answered(world: World, asked: dict[str, Any], team: Team) -> list[Message]:
    thread = (str(asked["channel"]), str(asked["ts"]))
    return await until(lambda: world.slack.answered(*thread), what=f"an answer\n{team.logs()}")


async def test_the_same_event_delivered_to_both_workers_is_answered_once(
    world: World, team: Team, fake_llm: FakeOpenAI
) -> None:
    tagged_answers(fake_llm)
    asker = Asker(slack_id("T"), world.general)
    a, b = team.sender(0), team.sender(1)
    message = a.user_message(
        f"<@{BOT_USER}> How long are backups kept? #dup-1", channel=asker.channel, user=asker.user
    )
    message["team"] = asker.team
    mention = app_mention(message)
    ids = (f"Ev{uuid.uuid4().hex[:10]}", f"Ev{uuid.uuid4().hex[:10]}")
    # Every delivery at once, to both workers, and Slack's retry of each on top.
    statuses = await asyncio.gather(
        *(
            sender.event(event, event_id=event_id, team=asker.team, retry=retry)
            for sender in (a, b)
            for event, event_id in ((mention, ids[0]), (message, ids[1]))
            for retry in (None, 1)
        )
    )
    assert set(statuses) == {200}
    thread = (world.general, message["ts"])
    await until(lambda: world.slack.answered(*thread), what=f"the answer\n{team.logs()}")
    await asyncio.sleep(1.5)  # a second answer would have opened its reply by now
    answers = world.slack.answered(*thread)
    assert len(answers) == 1 and len(world.slack.replies(*thread)) == 1, team.logs()
    assert tags_in(texts(answers)) == ["#dup-1"]
    assert len(calls_about(fake_llm, "Analysis", "#dup-1")) == 1, team.logs()  # one run


async def test_two_messages_of_a_thread_on_two_workers_are_answered_in_order_with_history(
    world: World, team: Team, fake_llm: FakeOpenAI
) -> None:
    tagged_answers(fake_llm)
    fake_llm.latency_s = 0.4  # the first turn is still under way when the second arrives
    asker = Asker(slack_id("T"), world.general)
    first = await ask(team.sender(0), "How long are backups kept? #ord-1", asker)
    thread = (world.general, first["ts"])
    await until(lambda: world.slack.replies(*thread), what=f"the first reply\n{team.logs()}")
    await ask(
        team.sender(1),
        "And when does the nightly one run? #ord-2",
        asker,
        thread_ts=first["ts"],
        mention=False,
    )
    await until(
        lambda: len(world.slack.answered(*thread)) == 2, what=f"both answers\n{team.logs()}"
    )
    answers = world.slack.answered(*thread)
    assert tags_in(texts(answers)) == ["#ord-1", "#ord-2"], team.logs()
    assert len(world.slack.replies(*thread)) == 2
    # One at a time: the second reply opened after the first answer was complete.
    calls = world.slack.calls
    closed = next(
        i
        for i, c in enumerate(calls)
        if c.method == "chat.stopStream" and c.args.get("ts") == answers[0].ts
    )
    opened = [
        i
        for i, c in enumerate(calls)
        if c.method == "chat.startStream" and c.args.get("thread_ts") == first["ts"]
    ]
    assert len(opened) == 2 and closed < opened[1], team.logs()
    # Shared history: the second turn's model saw the first exchange, whichever worker ran it.
    (second,) = calls_about(fake_llm, "Analysis", "#ord-2")
    seen = request_text(second)
    assert "User: How long are backups kept? #ord-1" in seen
    assert "Assistant: #ord-1: Backups are kept for 35 days" in seen, seen


async def test_redis_stopped_and_restarted_mid_run_answers_everything_and_crashes_nothing(
    world: World, team: Team, fake_llm: FakeOpenAI, redis_server: RedisServer
) -> None:
    tagged_answers(fake_llm)
    workspace = slack_id("T")
    marks = [len(w.log(0)) for w in team.workers]

    async def round_of(label: str) -> list[tuple[str, str]]:
        asked = await asyncio.gather(
            *(
                ask(
                    team.sender(i % 2),
                    f"How long are backups kept? #{label}-{i}",
                    Asker(workspace, world.general),
                )
                for i in range(4)
            )
        )
        threads = [(world.general, m["ts"]) for m in asked]
        await until(
            lambda: all(world.slack.answered(*t) for t in threads),
            timeout=30,
            what=f"every {label} answer\n{team.logs()}",
        )
        return threads

    # Redis goes away while a turn is being answered, then questions come during the outage.
    fake_llm.latency_s = 0.5
    asker = Asker(workspace, world.general)
    mid = await ask(team.sender(0), "How long are backups kept? #mid-1", asker)
    bound = f"[thread=slack:{asker.team}:{asker.channel}:{mid['ts']} "
    await until(lambda: any(bound in w.log(0) for w in team.workers), what=team.logs())
    redis_server.stop()
    try:
        during = [(world.general, mid["ts"]), *await round_of("down")]
    finally:
        redis_server.start()
    fake_llm.latency_s = 0.0
    await asyncio.sleep(1.0)  # past TEAMRAG_REDIS_RETRY_S: the next operation tries Redis
    after = await round_of("up")
    await asyncio.sleep(0.5)
    for thread in during + after:
        assert len(world.slack.answered(*thread)) == 1, (thread, team.logs())
    assert all(w.alive for w in team.workers), team.logs()
    assert team.tracebacks() == [], team.logs()
    new_logs = "\n".join(w.log(0)[mark:] for w, mark in zip(team.workers, marks, strict=True))
    assert "unreachable" in new_logs and "is back" in new_logs, new_logs


async def test_the_rate_limit_holds_across_workers(
    world: World, team: Team, fake_llm: FakeOpenAI
) -> None:
    tagged_answers(fake_llm)
    asker = Asker(slack_id("T"), world.general)
    for n in (1, 2):
        asked = await ask(team.sender(0), f"How long are backups kept? #rate-{n}", asker)
        await answered(world, asked, team)
    third = await ask(team.sender(1), "백업은 며칠 동안 보관되나요? #rate-3", asker)
    thread = (world.general, third["ts"])
    (reply,) = await until(lambda: world.slack.replies(*thread), what=f"a reply\n{team.logs()}")
    limited = re.escape(phrase("rate_limited", "ko", seconds=999)).replace("999", r"(\d+)")
    found = re.fullmatch(limited, reply.text)
    assert found and 0 < int(found.group(1)) <= 60, (reply.text, team.logs())
    await asyncio.sleep(0.5)
    assert world.slack.answered(*thread) == [] and not calls_about(fake_llm, "Analysis", "#rate-3")


async def test_a_channels_scope_is_respected_whichever_worker_answers(
    world: World, team: Team, fake_llm: FakeOpenAI
) -> None:
    tagged_answers(fake_llm, "Here is what the documents say about Falcon [1].")
    fake_llm.reply("Analysis", analysis(variations=["Falcon launch", "Falcon budget"]))
    workspace = slack_id("T")

    async def answers_in(channel: str) -> list[Message]:
        asked = await asyncio.gather(
            *(
                ask(
                    team.sender(i),
                    f"{FALCON} #{channel}-{i}",
                    Asker(workspace, channel),
                )
                for i in (0, 1)
            )
        )
        threads = [(channel, m["ts"]) for m in asked]
        await until(
            lambda: all(world.slack.answered(*t) for t in threads),
            what=f"the answers in {channel}\n{team.logs()}",
        )
        return [world.slack.answered(*t)[0] for t in threads]

    alpha = await answers_in(world.alpha)
    shown_to_alpha = [request_text(c.body) for c in fake_llm.calls]
    beta = await answers_in(world.beta)
    for answer in alpha:
        assert "Falcon launch plan" in sources_of(answer), (sources_of(answer), team.logs())
        assert "budget" not in sources_of(answer).lower(), sources_of(answer)
    for answer in beta:  # the other scope's document is found where it may be seen
        assert "Falcon budget review" in sources_of(answer), (sources_of(answer), team.logs())
        assert "launch plan" not in sources_of(answer).lower(), sources_of(answer)
    # Nor was the other scope's text ever shown to the model for the alpha channel.
    assert shown_to_alpha and not any("2 million won" in text for text in shown_to_alpha)


async def test_a_dm_conversation_goes_on_when_another_host_takes_the_next_message(
    world: World, team: Team, fake_llm: FakeOpenAI
) -> None:
    """Which conversation a DM message continues is kept where every host reads it: the
    worker taking the next message has no record of the first in its own data folder."""
    tagged_answers(fake_llm)
    asker = Asker(slack_id("T"), slack_id("D"))
    first = await ask(team.sender(0), "How long are backups kept? #dmh-1", asker, mention=False)
    await answered(world, first, team)
    bound = f"[thread=slack:{asker.team}:{asker.channel}:{first['ts']} "
    answerer = next(i for i, w in enumerate(team.workers) if bound in w.log(0))
    # A new DM message (not a thread reply), to the worker that did not answer the first.
    second = await ask(
        team.sender(1 - answerer), "And when does the nightly one run? #dmh-2", asker,
        mention=False,
    )  # fmt: skip
    await answered(world, second, team)
    (call,) = calls_about(fake_llm, "Analysis", "#dmh-2")
    seen = request_text(call)
    assert "User: How long are backups kept? #dmh-1" in seen, (seen, team.logs())
    assert "Assistant: #dmh-1: Backups are kept for 35 days" in seen, seen


# The two tests that kill a worker come last: each leaves one to start again.


async def test_a_worker_killed_mid_answer_leaves_no_lock_and_its_turn_is_finished(
    world: World, team: Team, fake_llm: FakeOpenAI
) -> None:
    tagged_answers(fake_llm)
    fake_llm.latency_s = 1.0  # three round trips: the turn is well under way for seconds
    asker = Asker(slack_id("T"), world.general)
    asked = await ask(team.sender(0), "How long are backups kept? #kill-1", asker)
    # Whichever worker read the question from the queue logs its steps with the thread id.
    bound = f"[thread=slack:{asker.team}:{asker.channel}:{asked['ts']} "
    victim = await until(
        lambda: next((w for w in team.workers if bound in w.log(0)), None),
        what=f"a worker to start answering\n{team.logs()}",
    )
    (survivor,) = [w for w in team.workers if w is not victim]
    thread = (world.general, asked["ts"])
    # Killed once its "Thinking…" reply is posted and noted with the queued turn.
    left = await until(
        lambda: noted_reply(world.redis_url, world.slack.replies(*thread)),
        what=f"the victim's reply to be noted\n{team.logs()}",
    )
    victim.kill()
    killed = time.monotonic()
    await until(
        lambda: world.slack.answered(*thread),
        timeout=60,
        what=f"the survivor to finish the turn\n{team.logs()}",
    )
    took_over_s = time.monotonic() - killed
    # The survivor's answer replaced the dead worker's reply: one bot message, not stuck.
    (reply,) = world.slack.replies(*thread)
    assert reply.ts == left and reply.feedback_values(), (reply, team.logs())
    assert tags_in(texts([reply])) == ["#kill-1"], reply
    assert all(status == "complete" for _, status in reply.tasks.values()), reply.tasks
    # A next message in the thread is answered promptly: nothing of the dead worker holds it.
    fake_llm.latency_s = 0.0
    asked_next = time.monotonic()
    follow_up = "And when does the nightly one run? #kill-2"
    to_survivor = team.sender(team.workers.index(survivor))
    await ask(to_survivor, follow_up, asker, thread_ts=asked["ts"], mention=False)
    await until(
        lambda: len(world.slack.answered(*thread)) == 2,
        timeout=10,
        what=f"the next answer\n{team.logs()}",
    )
    next_s = time.monotonic() - asked_next
    assert tags_in(texts(world.slack.answered(*thread))) == ["#kill-1", "#kill-2"], team.logs()
    assert "taking over turn" in survivor.log(0), survivor.log()
    assert f"taking over reply {left} (stream)" in survivor.log(0), survivor.log()
    assert next_s < 5, f"{next_s:.1f} s for the next answer\n{team.logs()}"
    # Taken over after the claim time, then answered in three round trips; a lock of the
    # dead worker's that outlives the claim time shows here as the difference.
    assert took_over_s < 2 * CLAIM_S + 3 * 1.0 + 4, (
        f"the dead worker's turn took {took_over_s:.1f} s to finish\n{survivor.log()}"
    )
    # Nothing left behind once the last turn's housekeeping (after its answer) is done.
    client = redis.Redis.from_url(world.redis_url)
    try:
        await until(
            lambda: not list(client.scan_iter(match=f"*lock:*{asked['ts']}")),
            timeout=5,
            what=f"the thread's lock to go\n{team.logs()}",
        )
        for stream in client.scan_iter(match="*queue:slack", _type="stream"):
            for group in client.xinfo_groups(stream):
                assert group["pending"] == 0, (stream, group, team.logs())
    finally:
        client.close()


# Three paragraphs of about 8,000 characters: Slack takes 10,000 per answer message, so
# the answer is three messages, one paragraph each.
SENTENCE = "Postgres backups are kept for 35 days and restored from the nightly copy [1]. "
THREE_PARTS = "\n\n".join(f"#part-{name} " + SENTENCE * 100 for name in "ABC")


def noted_parts(redis_url: str) -> list[str]:
    """The ts of every reply part noted with a queued Slack turn."""
    client = redis.Redis.from_url(redis_url, decode_responses=True)
    try:
        return [
            ts
            for key in client.scan_iter(match="*queue:slack:notes:*")
            for name, ts in client.hgetall(key).items()
            if name.startswith("reply_part_") and ts
        ]
    finally:
        client.close()


async def test_a_worker_killed_after_part_two_of_three_leaves_each_part_once(
    world: World, team: Team, fake_llm: FakeOpenAI
) -> None:
    tagged_answers(fake_llm, THREE_PARTS)
    asker = Asker(slack_id("T"), world.general)
    # The third message never leaves the first worker: it is killed while sending it.
    world.slack.hold("chat.postMessage", when=lambda args: "#part-C" in json.dumps(args))
    asked = await ask(team.sender(0), "How long are backups kept? #parts-1", asker)
    thread = (world.general, asked["ts"])
    bound = f"[thread=slack:{asker.team}:{asker.channel}:{asked['ts']} "
    victim = await until(
        lambda: next((w for w in team.workers if bound in w.log(0)), None),
        what=f"a worker to start answering\n{team.logs()}",
    )
    (survivor,) = [w for w in team.workers if w is not victim]
    await until(
        lambda: world.slack.held("chat.postMessage"),
        what=f"the victim to send the third message\n{team.logs()}",
    )
    left = world.slack.replies(*thread)
    assert [m.ts for m in left[1:]] == noted_parts(world.redis_url), team.logs()  # part 2 noted
    victim.kill()
    replies = await until(
        lambda: (found := world.slack.replies(*thread)) and found[-1].feedback_values() and found,
        timeout=60,
        what=f"the survivor to finish the answer\n{team.logs()}",
    )
    said = [m.markdown + m.text for m in replies]
    assert [[f"#part-{n}" in t for n in "ABC"] for t in said] == [
        [True, False, False], [False, True, False], [False, False, True]
    ], team.logs()  # fmt: skip
    # The dead worker's two messages became the answer's first two; only the third is new.
    assert [m.ts for m in replies[:2]] == [m.ts for m in left], team.logs()
    assert "Thinking" not in json.dumps([(m.blocks, m.tasks) for m in replies])
    assert all(status == "complete" for _, status in replies[0].tasks.values()), replies[0].tasks
    assert tags_in(said[:1]) == ["#parts-1"]
    assert "taking over turn" in survivor.log(0), survivor.log()


async def test_questions_acknowledged_by_a_worker_that_dies_at_once_are_still_answered(
    world: World, team: Team, fake_llm: FakeOpenAI
) -> None:
    """HTTP 200 tells Slack the event arrived: it will not send it again. So by then the
    question must be in the durable queue, not in a task of the worker that said 200."""
    tagged_answers(fake_llm)
    victim = team.workers[1]
    workspace = slack_id("T")
    asked = await asyncio.gather(
        *(
            ask(
                team.sender(1),
                f"How long are backups kept? #ack-{i}",
                Asker(workspace, world.general),
            )
            for i in range(20)
        )
    )
    victim.kill()  # the moment every delivery was acknowledged
    threads = [(world.general, m["ts"]) for m in asked]

    def unanswered() -> list[tuple[str, str]]:
        return [t for t in threads if not world.slack.answered(*t)]

    with contextlib.suppress(AssertionError):
        await until(lambda: not unanswered(), timeout=2 * CLAIM_S + 8)
    assert not unanswered(), f"{len(unanswered())} of 20 lost\n{team.logs()}"
