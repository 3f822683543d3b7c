"""The team deployment end to end (``tests/support/team_fixtures.py``): an event delivered twice,
a thread's turns on two workers, Redis going away, the rate limit, channel scopes and DM
conversations, whichever worker answers. The tests that kill a worker are in
``test_team_workers_kill.py``.
"""

from __future__ import annotations

import asyncio
import re
import uuid

from adapters.chat.phrases import phrase
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.slack_chat import Message
from tests.fakes.slack_server import BOT_USER
from tests.support.agent_support import analysis, request_text
from tests.support.redis_support import RedisServer
from tests.support.slack_support import until
from tests.support.team_support import (
    FALCON,
    Asker,
    World,
    answered,
    app_mention,
    ask,
    calls_about,
    sources_of,
    texts,
)
from tests.support.workers_support import Team, slack_id, tagged_answers, tags_in

pytest_plugins = ("tests.support.team_fixtures",)


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
