"""Thread locks on a real Redis shared by two "workers" (two connections): order across workers,
expiry of a dead worker's lease, fencing of a holder whose lease was taken, and turns that
go on while Redis is stopped and started again."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
import redis

from agent.coordination.locks import LockLostError
from agent.coordination.locks_redis import RedisThreadLocks
from agent.coordination.redis_connection import RedisConnection
from agent.events import Turn
from agent.retrieval.knowledge_base import KnowledgeBase
from tests.conftest import REPO
from tests.fakes.openai_server import FakeOpenAI
from tests.support.agent_support import agent, script_answer
from tests.support.redis_support import RedisServer

THREAD = "slack:T1:C1:1700000000.1"


def raw(connection: RedisConnection) -> redis.Redis:
    return redis.Redis.from_url(connection.url, decode_responses=True)


def value(client: redis.Redis, key: str) -> str:
    return str(client.get(key) or "")


async def test_two_workers_serialise_one_thread_and_not_two(
    redis_connection: RedisConnection, second_redis: RedisConnection
) -> None:
    one, two = RedisThreadLocks(redis_connection), RedisThreadLocks(second_redis)
    events: list[str] = []

    async def turn(locks: RedisThreadLocks, thread: str, name: str) -> None:
        async with locks.hold(thread):
            events.append(f"{name}+")
            await asyncio.sleep(0.15)
            events.append(f"{name}-")

    first = asyncio.create_task(turn(one, THREAD, "a"))
    await asyncio.sleep(0.03)
    await asyncio.gather(first, turn(two, THREAD, "b"), turn(two, "slack:T1:C1:2", "c"))
    assert events.index("a-") < events.index("b+")  # b (the other worker) waited for a
    assert events.index("c+") < events.index("a-")  # another thread did not wait
    client = raw(redis_connection)
    assert client.exists(one.lock_key(THREAD)) == 0  # released, not left to expire
    assert int(client.get(one.fence_key(THREAD)) or 0) == 2  # one token per grant
    client.close()


async def test_the_lease_value_names_the_worker_and_the_token(
    redis_connection: RedisConnection,
) -> None:
    locks = RedisThreadLocks(redis_connection)
    client = raw(redis_connection)
    for token in (1, 2):
        async with locks.hold(THREAD):
            assert client.get(locks.lock_key(THREAD)) == f"{redis_connection.worker_id}:{token}"
            ttl_ms = client.pttl(locks.lock_key(THREAD))
            assert 0 < ttl_ms <= 30_000
    client.close()


async def test_waiters_of_one_process_queue_in_order_and_one_polls_redis(
    redis_connection: RedisConnection, second_redis: RedisConnection
) -> None:
    ours, theirs = RedisThreadLocks(redis_connection), RedisThreadLocks(second_redis)
    client = raw(redis_connection)
    order: list[int] = []

    async def waiter(n: int) -> None:
        async with ours.hold(THREAD):
            order.append(n)

    async with theirs.hold(THREAD):
        client.config_resetstat()
        waiters = []
        for n in range(10):
            waiters.append(asyncio.create_task(waiter(n)))
            await asyncio.sleep(0)  # each one queues before the next
        await asyncio.sleep(0.4)
    await asyncio.gather(*waiters)
    assert order == list(range(10))
    calls = int(client.info("commandstats").get("cmdstat_evalsha", {}).get("calls", 0))
    client.close()
    # One poller (backoff 10 ms doubling to 200 ms: about 6 polls in 0.4 s) plus one grant
    # and one release each; ten pollers would make 60 polls or more.
    assert calls < 40, calls


async def test_a_dead_workers_lease_lapses_by_itself(redis_connection: RedisConnection) -> None:
    locks = RedisThreadLocks(redis_connection)
    client = raw(redis_connection)
    # A worker that took the thread and crashed: its lease is never renewed.
    client.set(locks.lock_key(THREAD), "crashed:1", px=300)
    client.close()
    start = time.monotonic()
    async with asyncio.timeout(3), locks.hold(THREAD):
        waited = time.monotonic() - start
    assert 0.2 < waited < 1.0


async def test_a_killed_worker_process_leaves_no_lock_behind(
    redis_connection: RedisConnection,
) -> None:
    script = (
        "import asyncio, sys\n"
        "from agent.coordination.redis_connection import RedisConnection\n"
        "from agent.coordination.locks_redis import RedisThreadLocks\n"
        "async def main():\n"
        "    redis = RedisConnection(sys.argv[1], prefix=sys.argv[2])\n"
        "    async with RedisThreadLocks(redis, ttl_s=0.6).hold(sys.argv[3]):\n"
        "        print('held', flush=True)\n"
        "        await asyncio.sleep(60)\n"
        "asyncio.run(main())\n"
    )
    holder = subprocess.Popen(
        [sys.executable, "-c", script, redis_connection.url, redis_connection.prefix, THREAD],
        stdout=subprocess.PIPE,
        text=True,
        cwd=REPO,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        locks = RedisThreadLocks(redis_connection)
        with pytest.raises(TimeoutError):  # renewed while the worker lives: we wait
            async with asyncio.timeout(0.8), locks.hold(THREAD):
                pass
        holder.kill()
        holder.wait(10)
        start = time.monotonic()
        async with asyncio.timeout(3), locks.hold(THREAD):
            pass
        assert time.monotonic() - start < 1.0  # within one lease of the kill
    finally:
        holder.kill()


async def test_a_holder_whose_lease_was_taken_is_fenced_out(
    redis_connection: RedisConnection, second_redis: RedisConnection
) -> None:
    stale, fresh = RedisThreadLocks(redis_connection, ttl_s=0.3), RedisThreadLocks(second_redis)
    client = raw(redis_connection)
    reached_the_end = False

    async def stale_turn() -> None:
        nonlocal reached_the_end
        async with stale.hold(THREAD):
            # As if the event loop stalled past the lease: it lapses, the other worker takes it.
            client.delete(stale.lock_key(THREAD))
            async with fresh.hold(THREAD):
                await asyncio.sleep(0.5)  # the stale holder's renewal runs meanwhile
                assert client.get(stale.lock_key(THREAD)) == f"{second_redis.worker_id}:2"
            await asyncio.sleep(0.5)
            reached_the_end = True  # would write a stale checkpoint here

    with pytest.raises(LockLostError, match="another worker took the thread"):
        await stale_turn()
    assert not reached_the_end
    client.close()


async def test_fencing_cancels_only_the_holder_and_it_can_go_on(
    redis_connection: RedisConnection, second_redis: RedisConnection
) -> None:
    stale, fresh = RedisThreadLocks(redis_connection, ttl_s=0.3), RedisThreadLocks(second_redis)
    client = raw(redis_connection)
    taken = asyncio.Event()

    async def take_over() -> None:
        client.delete(stale.lock_key(THREAD))
        async with fresh.hold(THREAD):
            taken.set()
            await asyncio.sleep(0.3)

    async def stale_turn() -> str:
        try:
            async with stale.hold(THREAD):
                other = asyncio.create_task(take_over())
                await asyncio.sleep(5)
        except LockLostError:
            await other  # the task is not left cancelled: it can still await
            return "fenced"
        return "finished"

    async with asyncio.timeout(3):
        assert await stale_turn() == "fenced"
    assert taken.is_set()
    async with asyncio.timeout(3), stale.hold(THREAD):  # later turns take it as usual
        assert value(client, stale.lock_key(THREAD)).startswith(redis_connection.worker_id)
    client.close()


async def test_a_lapsed_lease_nobody_took_is_taken_back(redis_connection: RedisConnection) -> None:
    locks = RedisThreadLocks(redis_connection, ttl_s=0.3)
    client = raw(redis_connection)
    async with locks.hold(THREAD):
        value = client.get(locks.lock_key(THREAD))
        client.delete(locks.lock_key(THREAD))  # as after a Redis restart without data
        await asyncio.sleep(0.25)
        assert client.get(locks.lock_key(THREAD)) == value
    assert client.exists(locks.lock_key(THREAD)) == 0
    client.close()


async def test_an_outside_cancellation_releases_and_is_not_a_lost_lock(
    redis_connection: RedisConnection,
) -> None:
    locks = RedisThreadLocks(redis_connection, ttl_s=0.3)

    async def turn() -> None:
        async with locks.hold(THREAD):
            await asyncio.sleep(5)

    task = asyncio.create_task(turn())
    await asyncio.sleep(0.2)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    client = raw(redis_connection)
    assert client.exists(locks.lock_key(THREAD)) == 0
    client.close()


async def test_a_cancelled_waiter_leaves_no_lease(
    redis_connection: RedisConnection, second_redis: RedisConnection
) -> None:
    ours, theirs = RedisThreadLocks(redis_connection), RedisThreadLocks(second_redis)
    async with theirs.hold(THREAD):
        with pytest.raises(TimeoutError):
            async with asyncio.timeout(0.2), ours.hold(THREAD):
                pass
    start = time.monotonic()
    async with asyncio.timeout(3), theirs.hold(THREAD):
        assert time.monotonic() - start < 0.1


async def test_redis_stopped_mid_hold_lets_turns_finish_and_go_on(
    redis_server: RedisServer, redis_connection: RedisConnection, second_redis: RedisConnection
) -> None:
    locks = RedisThreadLocks(redis_connection, ttl_s=0.3)
    events: list[str] = []

    async def turn(name: str, hold: float) -> None:
        async with locks.hold(THREAD):
            events.append(f"{name}+")
            await asyncio.sleep(hold)
            events.append(f"{name}-")

    first = asyncio.create_task(turn("a", 0.6))
    await asyncio.sleep(0.05)
    redis_server.stop()  # renewals fail while "a" holds; it must still finish
    async with asyncio.timeout(5):
        await asyncio.gather(first, turn("b", 0.05))  # in-process order still holds
    assert events == ["a+", "a-", "b+", "b-"]
    assert redis_connection.down

    # Back again (empty): after retry_s, locks are shared through Redis once more.
    redis_server.start()
    await asyncio.sleep(0.25)
    theirs = RedisThreadLocks(second_redis)
    async with locks.hold(THREAD):
        with pytest.raises(TimeoutError):
            async with asyncio.timeout(0.2), theirs.hold(THREAD):
                pass
    async with asyncio.timeout(1), theirs.hold(THREAD):
        pass


async def test_release_after_redis_came_back_mid_hold(
    redis_server: RedisServer, redis_connection: RedisConnection, second_redis: RedisConnection
) -> None:
    locks, theirs = RedisThreadLocks(redis_connection, ttl_s=0.3), RedisThreadLocks(second_redis)
    async with locks.hold(THREAD):
        redis_server.stop()
        await asyncio.sleep(0.15)  # a renewal fails: the connection goes down
        redis_server.start()
        await asyncio.sleep(0.4)  # retry_s passes; a renewal takes the lost lease back
        client = raw(redis_connection)
        assert value(client, locks.lock_key(THREAD)).startswith(redis_connection.worker_id)
        client.close()
    start = time.monotonic()
    async with asyncio.timeout(3), theirs.hold(THREAD):  # released: no wait for expiry
        assert time.monotonic() - start < 0.1


def test_a_lease_must_expire(redis_connection: RedisConnection) -> None:
    with pytest.raises(ValueError, match="must expire"):
        RedisThreadLocks(redis_connection, ttl_s=0)


async def test_keys_are_per_prefix(redis_connection: RedisConnection) -> None:
    other = RedisConnection(redis_connection.url, prefix=f"x{uuid.uuid4().hex[:4]}:")
    try:
        a, b = RedisThreadLocks(redis_connection), RedisThreadLocks(other)
        async with a.hold(THREAD), asyncio.timeout(1), b.hold(THREAD):
            pass  # two deployments on one server do not block each other
    finally:
        await other.aclose()


async def test_a_fenced_out_turn_ends_with_a_stated_reason_not_a_stale_write(
    redis_connection: RedisConnection,
    second_redis: RedisConnection,
    kb: KnowledgeBase,
    fake_llm: FakeOpenAI,
    tmp_path: Path,
) -> None:
    """The runner's side of fencing: the asker is told, in plain words, to ask again."""
    script_answer(fake_llm, "The handover is at 10:00 [1].")
    fake_llm.latency_s = 0.6
    turn = Turn(text="When is the on-call handover?", platform="slack", thread_root="1.0")
    async with agent(kb, tmp_path, llm=fake_llm) as runner:
        runner.locks = RedisThreadLocks(redis_connection, ttl_s=0.3)
        fresh = RedisThreadLocks(second_redis)
        client = raw(redis_connection)

        async def take_over() -> None:
            await asyncio.sleep(0.3)  # the turn holds the lock and waits on the LLM
            # Its lease "lapsed" and another worker took the thread, in one step (as the
            # acquire script does), so the stale renewal cannot take it back in between.
            token = client.incr(fresh.fence_key(turn.thread_id))
            client.set(fresh.lock_key(turn.thread_id), f"{second_redis.worker_id}:{token}", px=2000)
            await asyncio.sleep(0.5)

        other = asyncio.create_task(take_over())
        final = await runner.ask(turn)
        await other
        client.close()
    assert final.route == "error" and final.degraded
    assert "another worker took this conversation over" in final.answer
