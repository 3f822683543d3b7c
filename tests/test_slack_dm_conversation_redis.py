"""A Slack DM conversation recorded in a real Redis: the worker that takes the next DM
message finds the conversation another worker (on another host, with its own SQLite
file) answered in; starting over and the idle time hold across workers too."""

from __future__ import annotations

from pathlib import Path

from adapters.slack.dm import SqliteDmConversations
from adapters.slack.dm_redis import RedisDmConversations
from adapters.slack.turns import Incoming
from agent.coordination.redis_connection import RedisConnection

DM = "D0DMREDIS"


def dm_message(ts: str, thread_ts: str | None = None) -> Incoming:
    return Incoming("T1", "T1", DM, "im", "U0ALICE", "hi", ts, thread_ts, f"Ev{ts}")


def host(redis: RedisConnection, folder: Path, now: list[float]) -> RedisDmConversations:
    """One worker on its own machine: its own SQLite file, the shared Redis."""
    local = SqliteDmConversations(folder / "slack_dm.sqlite", continue_s=1800, clock=lambda: now[0])
    return RedisDmConversations(redis, local, continue_s=1800, clock=lambda: now[0])


async def test_the_next_dm_message_continues_the_conversation_on_another_host(
    redis_connection: RedisConnection, second_redis: RedisConnection, tmp_path: Path
) -> None:
    now = [1000.0]
    one, two = host(redis_connection, tmp_path / "a", now), host(second_redis, tmp_path / "b", now)
    first = await one.place(dm_message("1.0"))
    assert first.conversation == "1.0"
    await one.active(first)  # host a answered the first message
    now[0] += 60
    second = await two.place(dm_message("2.0"))  # host b takes the next one
    assert second.conversation == "1.0"
    await two.active(second)
    # A reply in the second message's thread joins the conversation, on either host.
    assert (await one.place(dm_message("3.0", thread_ts="2.0"))).conversation == "1.0"
    # After the idle time a new message starts a new conversation.
    now[0] += 1800
    assert (await one.place(dm_message("4.0"))).conversation == "4.0"


async def test_starting_over_on_one_host_starts_over_on_every_host(
    redis_connection: RedisConnection, second_redis: RedisConnection, tmp_path: Path
) -> None:
    now = [1000.0]
    one, two = host(redis_connection, tmp_path / "a", now), host(second_redis, tmp_path / "b", now)
    await one.active(await one.place(dm_message("1.0")))
    await two.forget(dm_message("2.0"))
    assert (await one.place(dm_message("3.0"))).conversation == "3.0"
