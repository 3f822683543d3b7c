"""Event de-duplication, run once over each backend (the in-process memory, and a real
Redis): a retried delivery is recognised by any of its keys, for ``ttl_s``. What only
the in-process memory does is at the end; what only Redis does (two workers, an outage)
is in test_chat_dedupe_redis.py."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass

import pytest

from adapters.chat.dedupe import Deduper, LocalDeduper
from adapters.chat.dedupe_redis import RedisDeduper
from agent.coordination.redis_connection import RedisConnection


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@dataclass
class DedupeBackend:
    """One backend: ``open(ttl_s)`` makes a deduper; ``pass_time`` moves the in-process
    one's clock, or waits as long for Redis's expiry."""

    name: str
    open: Callable[[float], Deduper]
    pass_time: Callable[[float], Awaitable[None]]


@pytest.fixture(params=["local", "redis"])
async def backend(request: pytest.FixtureRequest) -> AsyncIterator[DedupeBackend]:
    if request.param == "redis":
        url: str = request.getfixturevalue("redis_url")
        redis = RedisConnection(url, prefix=f"t{uuid.uuid4().hex[:6]}:", retry_s=0.2, timeout_s=0.5)
        yield DedupeBackend("redis", lambda ttl_s: RedisDeduper(redis, ttl_s), asyncio.sleep)
        await redis.aclose()
    else:
        clock = Clock()

        async def pass_time(seconds: float) -> None:
            clock.now += seconds

        yield DedupeBackend("local", lambda ttl_s: LocalDeduper(ttl_s, clock=clock), pass_time)


@pytest.fixture
def dedupe(backend: DedupeBackend) -> Deduper:
    return backend.open(3600.0)


# -- every backend --------------------------------------------------------------------
async def test_the_second_delivery_of_an_event_is_recognised(dedupe: Deduper) -> None:
    assert await dedupe.first("Ev1", "msg:C1:1700000000.1")
    assert not await dedupe.first("Ev1", "msg:C1:1700000000.1")


async def test_a_retry_with_a_new_event_id_but_the_same_message_is_recognised(
    dedupe: Deduper,
) -> None:
    # Socket Mode redelivery after a reconnect can carry another envelope for one message.
    assert await dedupe.first("Ev1", "msg:C1:1")
    assert not await dedupe.first("Ev2", "msg:C1:1")
    assert not await dedupe.first("Ev2")  # and the new id is remembered too
    assert await dedupe.first("Ev3", "msg:C1:2")


async def test_keys_expire_after_the_ttl(backend: DedupeBackend) -> None:
    dedupe = backend.open(0.3)
    assert await dedupe.first("Ev1")
    await backend.pass_time(0.2)
    assert not await dedupe.first("Ev1")  # seen again: remembered for a full ttl again
    await backend.pass_time(0.2)
    assert not await dedupe.first("Ev1")
    await backend.pass_time(0.35)
    assert await dedupe.first("Ev1")


async def test_a_delivery_without_ids_is_answered_rather_than_dropped(dedupe: Deduper) -> None:
    assert await dedupe.first("", "")
    assert await dedupe.first()
    assert await dedupe.first("Ev1", "Ev1")  # a key given twice is one key


# -- the in-process memory only ---------------------------------------------------------
async def test_memory_is_bounded() -> None:
    """Redis bounds nothing but time: its keys expire (``maxmemory`` is the server's)."""
    dedupe = LocalDeduper(max_keys=3)
    for key in ("a", "b", "c", "d"):
        assert await dedupe.first(key)
    assert await dedupe.first("a")  # the oldest was forgotten to keep the bound
    assert not await dedupe.first("d")
