"""The per-user question limit: a sliding window, in-process and shared by two workers on
a real Redis, the wait it reports, and the local limit while Redis is gone."""

from __future__ import annotations

import asyncio
import time
import uuid

import pytest
import redis

from adapters.chat.phrases import phrase
from adapters.chat.ratelimit import LocalRateLimiter, refusal
from adapters.chat.ratelimit_redis import RedisRateLimiter
from agent.coordination.redis_connection import RedisConnection
from tests.support.redis_support import RedisServer

USER = "slack:T1:U1"


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


async def test_local_window_slides_and_says_how_long_to_wait() -> None:
    clock = Clock()
    limiter = LocalRateLimiter(3, clock=clock)
    for _ in range(3):
        assert await limiter.admit(USER) is None
        clock.now += 10
    assert await limiter.admit(USER) == pytest.approx(30.0)  # the first leaves at 1060
    assert await limiter.admit("slack:T1:U2") is None  # others are not limited
    assert await limiter.admit("slack:T2:U1") is None  # nor the same id in another workspace
    clock.now += 29
    assert await limiter.admit(USER) == pytest.approx(1.0)  # refusals are not counted
    clock.now += 1
    assert await limiter.admit(USER) is None  # the window slid past the first question
    assert await limiter.admit(USER) == pytest.approx(10.0)


async def test_local_off_bad_input_and_memory() -> None:
    off = LocalRateLimiter(0)
    assert all([await off.admit(USER) is None for _ in range(100)])
    with pytest.raises(ValueError, match="0 = off"):
        LocalRateLimiter(-1)
    clock = Clock()
    limiter = LocalRateLimiter(1, clock=clock)
    for n in range(999):
        await limiter.admit(f"slack:T1:U{n}")
    clock.now += 61
    await limiter.admit(USER)  # the 1000th call sweeps users with an empty window
    assert list(limiter._log) == [USER]


async def test_two_workers_share_the_limit(
    redis_connection: RedisConnection, second_redis: RedisConnection
) -> None:
    one = RedisRateLimiter(redis_connection, 3, window_s=0.6)
    two = RedisRateLimiter(second_redis, 3, window_s=0.6)
    before_first = time.monotonic()
    assert await one.admit(USER) is None
    after_first = time.monotonic()
    await asyncio.sleep(0.2)
    assert await two.admit(USER) is None
    assert await one.admit(USER) is None
    before = time.monotonic()
    wait = await two.admit(USER)  # the fourth in the window, on either worker
    after = time.monotonic()
    assert wait is not None  # until the first question leaves the window:
    assert 0.6 - (after - before_first) - 0.002 <= wait <= 0.6 - (before - after_first) + 0.002
    assert await one.admit("slack:T1:U2") is None
    await asyncio.sleep(wait + 0.01)  # the first question left the window: one more
    assert await one.admit(USER) is None
    wait = await two.admit(USER)
    assert wait is not None and 0.1 < wait <= 0.25  # until the second one (at 0.2) leaves


async def test_concurrent_questions_from_both_workers_admit_exactly_the_limit(
    redis_connection: RedisConnection, second_redis: RedisConnection
) -> None:
    one, two = RedisRateLimiter(redis_connection, 5), RedisRateLimiter(second_redis, 5)
    results = await asyncio.gather(*(w.admit(USER) for _ in range(10) for w in (one, two)))
    assert sum(r is None for r in results) == 5
    assert all(r is None or 59 < r <= 60 for r in results)


async def test_off_writes_nothing(redis_connection: RedisConnection) -> None:
    limiter = RedisRateLimiter(redis_connection, 0)
    assert all([await limiter.admit(USER) is None for _ in range(50)])
    client = redis.Redis.from_url(redis_connection.url)
    assert client.dbsize() == 0
    client.close()


async def test_redis_down_keeps_a_local_limit_and_back_shares_again(
    redis_server: RedisServer, redis_connection: RedisConnection, second_redis: RedisConnection
) -> None:
    one, two = RedisRateLimiter(redis_connection, 2), RedisRateLimiter(second_redis, 2)
    assert await one.admit(USER) is None
    redis_server.stop()
    assert await one.admit(USER) is None  # counted locally from here on
    assert await one.admit(USER) is None
    wait = await one.admit(USER)
    assert wait is not None and 59 < wait <= 60  # still limited, by this worker alone
    redis_server.start()
    await asyncio.sleep(0.25)  # the connections' retry_s
    user = f"slack:T1:{uuid.uuid4().hex[:6]}"
    assert await one.admit(user) is None
    assert await two.admit(user) is None
    assert await one.admit(user) is not None  # shared again


def test_the_refusal_says_when_in_the_users_language() -> None:
    assert refusal(2.1, "ko") == phrase("rate_limited", "ko", seconds=3)
    assert "3초" in refusal(2.1, "ko")
    assert "in 1 s" in refusal(0.01, "en")  # never "0"
    assert "{seconds}" not in refusal(40, "en") and "40" in refusal(40, "en")
    assert phrase("thinking", "en") == "Thinking…"  # phrases without values are unchanged
