"""Stops that cancel work sitting in a real Redis call, when that call swallows the first
cancellation: the turn deadline, the lock's fencing and the queue's drain at shutdown
each cancel again until the work has really stopped."""

from __future__ import annotations

import asyncio
import contextlib
import uuid

import pytest

from adapters.chat.queue import Job, LocalTurnQueue, Tasks
from agent.coordination.locks import LockLostError
from agent.coordination.locks_redis import RedisThreadLocks
from agent.coordination.redis_connection import RedisConnection
from agent.plumbing.stopping import cancel_until_done, deadline

THREAD = "slack:T1:C1:1700000000.9"


class Work:
    """A body that waits in Redis (BLPOP on a key nobody fills) and swallows the first
    cancellation there, as a library call around a socket timeout can; then it keeps
    waiting in Redis, and would reach its end (a stale write) only if nobody stopped it."""

    def __init__(self, redis: RedisConnection, *, swallow: int = 1) -> None:
        self.redis = redis
        self.key = redis.key("stopping", uuid.uuid4().hex)
        self.swallow = swallow
        self.swallowed = 0
        self.in_redis = asyncio.Event()
        self.reached_the_end = False

    async def run(self) -> None:
        for _ in range(20):  # 6 s in all
            self.in_redis.set()
            try:  # inside the connection's 0.5 s socket timeout
                await self.redis.client.blpop([self.key], timeout=0.3)
            except asyncio.CancelledError:
                if self.swallowed >= self.swallow:
                    raise
                self.swallowed += 1
        self.reached_the_end = True


async def test_a_deadline_cancels_again_when_a_redis_call_swallowed_it(
    redis_connection: RedisConnection,
) -> None:
    work = Work(redis_connection)
    with pytest.raises(TimeoutError):
        async with deadline(0.2, again_every_s=0.2):
            await work.run()
    assert work.swallowed == 1 and not work.reached_the_end
    task = asyncio.current_task()
    assert task is not None and task.cancelling() == 0  # it can go on awaiting
    await asyncio.sleep(0)


async def test_a_body_that_swallowed_the_deadline_and_ended_is_still_a_timeout(
    redis_connection: RedisConnection,
) -> None:
    work = Work(redis_connection)

    async def swallow_then_return() -> None:
        try:
            await redis_connection.client.blpop([work.key], timeout=0.3)
        except asyncio.CancelledError:
            return  # as if the answer were complete

    with pytest.raises(TimeoutError):
        async with deadline(0.1):
            await swallow_then_return()


async def test_an_outside_cancellation_inside_a_deadline_stays_a_cancellation(
    redis_connection: RedisConnection,
) -> None:
    work = Work(redis_connection, swallow=0)

    async def turn() -> None:
        async with deadline(30):
            await work.run()

    task = asyncio.create_task(turn())
    await work.in_redis.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


async def test_fencing_cancels_again_until_the_holder_left_its_body(
    redis_connection: RedisConnection,
) -> None:
    other = RedisConnection(
        redis_connection.url, prefix=redis_connection.prefix, retry_s=0.2, timeout_s=2
    )
    stale, fresh = RedisThreadLocks(redis_connection, ttl_s=0.3), RedisThreadLocks(other)
    work = Work(redis_connection)
    release = asyncio.Event()

    async def take_over() -> None:
        await redis_connection.client.delete(stale.lock_key(THREAD))
        async with fresh.hold(THREAD):
            await release.wait()

    try:
        async with asyncio.timeout(5):
            with pytest.raises(LockLostError):
                async with stale.hold(THREAD):
                    taker = asyncio.create_task(take_over())
                    await work.run()
            assert work.swallowed == 1 and not work.reached_the_end
            release.set()
            await taker
    finally:
        await other.aclose()


async def test_the_drain_at_shutdown_cancels_a_job_again(redis_connection: RedisConnection) -> None:
    work = Work(redis_connection)
    queue = LocalTurnQueue(drain_s=0.1)

    async def handler(job: Job) -> None:
        await work.run()

    async with asyncio.timeout(5):
        async with queue.serving(handler):
            await queue.submit(Job("ask", THREAD, {}))
            await work.in_redis.wait()
    assert work.swallowed == 1 and not work.reached_the_end


async def test_a_job_that_never_stops_is_left_after_the_give_up_time(
    redis_connection: RedisConnection, caplog: pytest.LogCaptureFixture
) -> None:
    work = Work(redis_connection, swallow=10**6)  # swallows every cancellation
    tasks = Tasks()
    tasks.start(work.run())
    await work.in_redis.wait()
    async with asyncio.timeout(5):
        await tasks.drain(0, give_up_s=0.3)
    assert len(tasks.running) == 1 and "did not stop when cancelled" in caplog.text
    (left,) = tasks.running
    work.swallow = 0  # let it go, so the test leaves nothing running
    assert not await cancel_until_done({left}, again_every_s=0.1, give_up_s=5)
    with contextlib.suppress(asyncio.CancelledError):
        await left
