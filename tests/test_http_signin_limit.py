"""The sign-in limit's rules (lock, growth, cap, forgetting, what a success clears) on
the in-process limiter with a test clock, and the same rules on the Redis one."""

from __future__ import annotations

import asyncio

import pytest

from adapters.http.passwords import PasswordChecks, PasswordChecksBusy
from adapters.http.signin_limit import LocalSignInLimiter, SignInPolicy
from adapters.http.signin_limit_redis import RedisSignInLimiter
from agent.coordination.redis_connection import RedisConnection

POLICY = SignInPolicy(per_account=2, per_address=3, lockout_s=10, max_lockout_s=35, window_s=100)


async def test_locks_grow_to_the_cap_and_are_forgotten() -> None:
    now = [0.0]
    limiter = LocalSignInLimiter(POLICY, clock=lambda: now[0])
    await limiter.failed("minji", "10.0.0.1")
    assert await limiter.wait("minji", "10.0.0.1") is None
    await limiter.failed("minji", "10.0.0.1")
    assert await limiter.wait("minji", "10.0.0.1") == 10  # allowance reached: first lock
    assert await limiter.wait("jisoo", "10.0.0.2") is None  # other account, other address
    for expected in (20, 35, 35):  # doubles with each failure after a lock, up to the cap
        now[0] += 40
        await limiter.failed("minji", "10.0.0.2")
        assert await limiter.wait("minji", "10.0.0.3") == expected
    now[0] += 35 + 100  # the lock ended and the window passed: forgotten
    await limiter.failed("minji", "10.0.0.4")
    assert await limiter.wait("minji", "10.0.0.4") is None


async def test_a_right_password_clears_the_account_not_the_address() -> None:
    now = [0.0]
    limiter = LocalSignInLimiter(POLICY, clock=lambda: now[0])
    for name in ("a", "b"):
        await limiter.failed(name, "10.0.0.1")
    await limiter.succeeded("a")
    await limiter.failed("a", "10.0.0.1")  # the address's third: locked
    assert await limiter.wait("c", "10.0.0.1") == 10
    assert await limiter.wait("a", "10.0.0.9") is None  # a's count started again at 1


async def test_off_means_off() -> None:
    limiter = LocalSignInLimiter(SignInPolicy(per_account=0, per_address=0))
    for _ in range(50):
        await limiter.failed("minji", "10.0.0.1")
    assert await limiter.wait("minji", "10.0.0.1") is None


async def test_the_redis_limiter_keeps_the_same_rules(redis_connection: RedisConnection) -> None:
    policy = SignInPolicy(
        per_account=2, per_address=100, lockout_s=0.4, max_lockout_s=0.7, window_s=100
    )
    limiter = RedisSignInLimiter(redis_connection, policy)
    await limiter.failed("minji", "10.0.0.1")
    assert await limiter.wait("minji", "10.0.0.1") is None
    await limiter.failed("minji", "10.0.0.1")
    first = await limiter.wait("minji", "10.0.0.2")
    assert first is not None and 0 < first <= 0.4
    await asyncio.sleep(first + 0.02)
    assert await limiter.wait("minji", "10.0.0.2") is None
    await limiter.failed("minji", "10.0.0.2")
    second = await limiter.wait("minji", "10.0.0.2")
    assert second is not None and 0.4 < second <= 0.7  # doubled (0.8), capped at 0.7
    await limiter.succeeded("minji")
    assert await limiter.wait("minji", "10.0.0.2") is None


async def test_password_checks_past_the_waiting_room_are_refused_at_once() -> None:
    checks = PasswordChecks(1, waiting=1)
    release = asyncio.Event()
    loop = asyncio.get_running_loop()
    started = asyncio.Event()

    def slow(stored: str | None, given: str) -> bool:
        loop.call_soon_threadsafe(started.set)
        asyncio.run_coroutine_threadsafe(release.wait(), loop).result()
        return True

    running = asyncio.create_task(checks.run(slow, None, "x"))
    await started.wait()
    waiting = asyncio.create_task(checks.run(slow, None, "x"))
    await asyncio.sleep(0)  # let it take its place in the queue
    with pytest.raises(PasswordChecksBusy):
        await checks.run(slow, None, "x")
    release.set()
    assert await running and await waiting
    checks.close()
