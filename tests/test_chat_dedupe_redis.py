"""What only the Redis de-duplication does: shared by two workers, exactly once under
concurrent deliveries, keys Redis expires by itself, and the local memory while Redis is
gone. The behaviour both backends promise is in test_chat_dedupe.py, run over each."""

from __future__ import annotations

import asyncio

import redis

from adapters.chat.dedupe_redis import RedisDeduper
from agent.coordination.redis_connection import RedisConnection
from tests.support.redis_support import RedisServer


async def test_two_workers_answer_one_delivery_once(
    redis_connection: RedisConnection, second_redis: RedisConnection
) -> None:
    one, two = RedisDeduper(redis_connection), RedisDeduper(second_redis)
    assert await one.first("Ev1", "msg:C1:1")
    assert not await two.first("Ev1", "msg:C1:1")  # the retry reached the other worker
    assert not await two.first("Ev2", "msg:C1:1")  # a new envelope for the same message
    assert not await one.first("Ev2")  # and its new id was remembered too
    assert await two.first("Ev3", "msg:C1:2")


async def test_concurrent_deliveries_to_both_workers_make_exactly_one_first(
    redis_connection: RedisConnection, second_redis: RedisConnection
) -> None:
    one, two = RedisDeduper(redis_connection), RedisDeduper(second_redis)
    for event in range(5):
        results = await asyncio.gather(
            *(d.first(f"Ev{event}", f"msg:C{event}:{n % 3}") for n in range(10) for d in (one, two))
        )
        assert results.count(True) == 1, results


async def test_redis_expires_the_keys_by_itself(redis_connection: RedisConnection) -> None:
    dedupe = RedisDeduper(redis_connection, ttl_s=0.3)
    assert await dedupe.first("Ev1")
    client = redis.Redis.from_url(redis_connection.url)
    assert 0 < client.pttl(redis_connection.key("dedupe", "Ev1")) <= 300
    client.close()


async def test_redis_down_remembers_locally_and_back_shares_again(
    redis_server: RedisServer, redis_connection: RedisConnection, second_redis: RedisConnection
) -> None:
    one, two = RedisDeduper(redis_connection), RedisDeduper(second_redis)
    assert await one.first("Ev0")
    redis_server.stop()
    assert not await one.first("Ev0")  # taken before the outage, by this worker
    assert await one.first("Ev1")
    assert not await one.first("Ev1")  # this worker still recognises its own retries
    redis_server.start()  # empty: it forgot Ev0 and never saw Ev1
    await asyncio.sleep(0.25)  # the connections' retry_s
    assert not await one.first("Ev1")
    assert await one.first("Ev2")
    assert not await two.first("Ev2")  # shared again
