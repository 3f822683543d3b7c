"""What only the Redis record of the bot's Slack threads does: known through Redis rather
than a local copy, keys Redis expires by itself, and still known to the worker that
answered while Redis is gone. The behaviour both backends promise is in
test_slack_threads.py, run over each."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from adapters.slack.threads import SqliteThreadRecord
from adapters.slack.threads_redis import RedisThreadRecord
from agent.coordination.redis_connection import RedisConnection
from tests.support.redis_support import RedisServer

THREAD = "T1:C1:1700000000.000100"


@pytest.fixture
def local(tmp_path: Path) -> Iterator[SqliteThreadRecord]:
    record = SqliteThreadRecord(tmp_path / "one.sqlite")
    yield record
    record.close()


@pytest.fixture
def other_local(tmp_path: Path) -> Iterator[SqliteThreadRecord]:
    record = SqliteThreadRecord(tmp_path / "two.sqlite")
    yield record
    record.close()


async def test_a_thread_is_known_through_redis_not_a_local_copy(
    redis_connection: RedisConnection,
    second_redis: RedisConnection,
    local: SqliteThreadRecord,
    other_local: SqliteThreadRecord,
) -> None:
    one = RedisThreadRecord(redis_connection, local)
    two = RedisThreadRecord(second_redis, other_local)
    await one.add(THREAD)
    assert await two.has(THREAD)
    assert await local.has(THREAD)  # every add goes to the worker's own record as well
    assert not await other_local.has(THREAD)  # known through Redis, not a local copy


async def test_redis_expires_the_key_after_keep_s(
    redis_connection: RedisConnection, local: SqliteThreadRecord
) -> None:
    default = RedisThreadRecord(redis_connection, local)
    await default.add(THREAD)
    client = redis.Redis.from_url(redis_connection.url)
    ttl_s = client.ttl(redis_connection.key("slack-thread", THREAD))
    client.close()
    assert 89 * 86400 < ttl_s <= 90 * 86400


async def test_redis_down_falls_back_to_the_workers_own_record(
    redis_server: RedisServer,
    redis_connection: RedisConnection,
    second_redis: RedisConnection,
    local: SqliteThreadRecord,
    other_local: SqliteThreadRecord,
) -> None:
    one = RedisThreadRecord(redis_connection, local)
    two = RedisThreadRecord(second_redis, other_local)
    await one.add(THREAD)  # before the outage: written to Redis and the local record
    redis_server.stop()
    assert await one.has(THREAD)  # the worker that answered still knows
    assert not await two.has(THREAD)  # the other does not, until Redis is back
    await two.add("T1:C1:during")
    assert await two.has("T1:C1:during")
    redis_server.start()
    await asyncio.sleep(0.25)  # the connections' retry_s
    await two.add("T1:C1:after")
    assert await one.has("T1:C1:after")
