"""Two ``teamrag discord`` processes, one shard each, with empty data folders of their own,
sharing only a real Redis (the turn queue), Postgres and a Chroma server, against the fake
Discord: a process killed mid-answer loses nothing, because the other one finishes the
answer, once: through the interaction's webhook for ``/ask`` (the deferred "thinking…"
becomes the answer), through the REST API for a mention (the dead process's "Thinking…"
message in the thread becomes the answer).

One pair of processes serves the module; a test that kills one leaves the next test to
start it again."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.fakes.discord_payloads import BOT_ID
from tests.fakes.discord_rest import (
    CHANNEL_MESSAGE,
    EDIT_FOLLOWUP,
    FOLLOWUP,
    ORIGINAL,
    START_THREAD,
)
from tests.fakes.discord_server import GENERAL, GUILD_ID
from tests.fakes.openai_server import FakeOpenAI
from tests.support.deployment import Deployment, Plan
from tests.support.discord_support import has_feedback, loading, until
from tests.support.shards_support import Shards
from tests.support.workers_support import tagged_answers

REDIS_DB = 4  # apart from the team test's and the database other Redis tests flush
DOCS = {"public": {"handbook.md": "# Operations handbook\n\nPostgres backups are kept for "
                   "35 days. The nightly full backup runs at 03:00.\n"}}  # fmt: skip


@pytest.fixture(scope="module")
def deployment_plan() -> Plan:
    return Plan(REDIS_DB, DOCS, discord_shards=True)


@pytest.fixture
def shards(hosts: Deployment) -> Shards:
    """Both processes running (again, after a test killed one)."""
    return hosts.shards


async def test_a_shard_process_killed_mid_answer_loses_nothing(
    shards: Shards, fake_llm: FakeOpenAI
) -> None:
    tagged_answers(fake_llm)
    fake_llm.latency_s = 1.0  # three round trips: the answer is under way for seconds
    fake = shards.fake
    before = {m["id"] for m in fake.bot_messages(GENERAL)}
    marks = {w.name: len(w.log(0)) for w in shards.workers}
    edits = len(fake.calls_to(ORIGINAL))
    interaction = await fake.slash("How long are backups kept? #dkill-1")
    victim, survivor = await shards.answering(f"discord:{GUILD_ID}:{GENERAL}:{interaction}")
    # Killed once its progress shows in the deferred response.
    await until(lambda: len(fake.calls_to(ORIGINAL)) > edits, f"progress\n{shards.logs()}")
    victim.kill()
    await until(
        lambda: has_feedback(fake.original(interaction)),
        f"the survivor to finish the answer\n{shards.logs()}",
        timeout=60,
    )
    original = fake.original(interaction)
    assert original is not None and not loading(original)
    assert "#dkill-1: Backups are kept for 35 days" in original["content"], original
    assert "taking over turn" in survivor.log(0)[marks[survivor.name] :], survivor.log()
    # Once: no followup, and nothing in the channel but the response (no fallback post).
    assert not fake.followups(interaction), shards.logs()
    new = [m["id"] for m in fake.bot_messages(GENERAL) if m["id"] not in before]
    assert new == [original["id"]], shards.logs()
    await until(shards.drained, f"the entry to finish\n{shards.logs()}")


async def test_a_shard_process_killed_answering_a_mention_loses_nothing(
    shards: Shards, fake_llm: FakeOpenAI
) -> None:
    tagged_answers(fake_llm)
    fake_llm.latency_s = 1.0
    fake = shards.fake
    before = {m["id"] for m in fake.bot_messages(GENERAL)}
    marks = {w.name: len(w.log(0)) for w in shards.workers}
    asked = await fake.say(f"<@{BOT_ID}> How long are backups kept? #dmention-1")
    # Answered in the thread started from the message, which has the message's id.
    victim, survivor = await shards.answering(f"discord:{GUILD_ID}:{asked}:{asked}")
    # Killed once its "Thinking…" is in the thread and noted with the queued turn.
    left = await until(
        lambda: shards.noted_reply(fake.bot_messages(asked)),
        f"the victim's reply to be noted\n{shards.logs()}",
    )
    victim.kill()
    await until(
        lambda: any(has_feedback(m) for m in fake.bot_messages(asked)),
        f"the survivor to finish the answer\n{shards.logs()}",
        timeout=60,
    )
    # The survivor edited the dead process's message: one bot message, the answer.
    (reply,) = fake.bot_messages(asked)
    assert reply["id"] == left and has_feedback(reply), (reply, shards.logs())
    assert "#dmention-1: Backups are kept for 35 days" in reply["content"], reply
    assert "Thinking" not in reply["content"]
    assert "taking over turn" in survivor.log(0)[marks[survivor.name] :], survivor.log()
    assert f"taking over reply {left}" in survivor.log(0), survivor.log()
    thread = fake.thread_of(asked)
    assert thread is not None and int(thread["parent_id"]) == GENERAL
    # One thread (the survivor found it open), nothing posted in the channel itself.
    opened = [c for c in fake.calls_to(START_THREAD) if str(asked) in c.path]
    assert len(opened) == 1, shards.logs()
    assert [m for m in fake.bot_messages(GENERAL) if m["id"] not in before] == []
    await until(shards.drained, f"the entry to finish\n{shards.logs()}")


# Three paragraphs of about 1,700 characters: the answer is three messages, one each.
SENTENCE = "Postgres backups are kept for 35 days and restored from the nightly copy [1]. "
THREE_PARTS = "\n\n".join(f"#part-{name} " + SENTENCE * 22 for name in "ABC")


def marks(messages: list[dict[str, Any]]) -> list[str]:
    """Which paragraphs each message shows, in order ('' for one showing none)."""
    return ["".join(n for n in "ABC" if f"#part-{n}" in m["content"]) for m in messages]


def part_c(body: Any) -> bool:
    return "#part-C" in json.dumps(body)


async def test_a_process_killed_after_part_two_of_a_mention_answer_leaves_each_part_once(
    shards: Shards, fake_llm: FakeOpenAI
) -> None:
    tagged_answers(fake_llm, THREE_PARTS)
    fake = shards.fake
    # The third message never leaves the first process: it is killed while sending it.
    fake.hold(CHANNEL_MESSAGE, when=part_c)
    asked = await fake.say(f"<@{BOT_ID}> How long are backups kept? #dparts-1")
    victim, survivor = await shards.answering(f"discord:{GUILD_ID}:{asked}:{asked}")
    await until(lambda: fake.held(CHANNEL_MESSAGE), f"the third message\n{shards.logs()}")
    left = fake.bot_messages(asked)
    assert marks(left) == ["A", "B"], shards.logs()
    victim.kill()
    replies = await until(
        lambda: (found := fake.bot_messages(asked)) and has_feedback(found[-1]) and found,
        f"the survivor to finish the answer\n{shards.logs()}",
        timeout=60,
    )
    fake.release()
    assert marks(replies) == ["A", "B", "C"], shards.logs()
    # The dead process's two messages became the answer's first two; only the third is new.
    assert [m["id"] for m in replies[:2]] == [m["id"] for m in left], shards.logs()
    assert not any("Thinking" in m["content"] for m in replies)
    assert "#dparts-1: #part-A" in replies[0]["content"]
    assert "taking over turn" in survivor.log(0), survivor.log()
    await until(shards.drained, f"the entry to finish\n{shards.logs()}")


async def test_a_process_killed_after_an_ask_answers_first_followup_leaves_each_part_once(
    shards: Shards, fake_llm: FakeOpenAI
) -> None:
    tagged_answers(fake_llm, THREE_PARTS)
    fake = shards.fake
    fake.hold(FOLLOWUP, when=part_c)
    interaction = await fake.slash("How long are backups kept? #dparts-2")
    victim, survivor = await shards.answering(f"discord:{GUILD_ID}:{GENERAL}:{interaction}")
    await until(lambda: fake.held(FOLLOWUP), f"the second followup\n{shards.logs()}")
    (followup,) = fake.followups(interaction)
    victim.kill()

    def answer() -> list[dict[str, Any]] | None:
        original = fake.original(interaction)
        found = [original, *fake.followups(interaction)] if original else []
        return found if found and has_feedback(found[-1]) else None

    messages = await until(answer, f"the survivor to finish\n{shards.logs()}", timeout=60)
    fake.release()
    assert marks(messages) == ["A", "B", "C"], shards.logs()
    assert messages[1]["id"] == followup["id"], shards.logs()  # edited, not sent again
    edits = [c.status for c in fake.calls_to(EDIT_FOLLOWUP) if f"token-{interaction}" in c.path]
    assert edits == [200], shards.logs()
    assert "taking over turn" in survivor.log(0), survivor.log()
    await until(shards.drained, f"the entry to finish\n{shards.logs()}")
