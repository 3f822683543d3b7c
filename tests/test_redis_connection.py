"""The Redis connection: operations on the real server, the in-process fallback while it is
gone, one warning per outage, and recovery when it returns."""

from __future__ import annotations

import asyncio
import logging

import pytest
import redis.asyncio as aredis

from agent.coordination.redis_connection import RedisConnection, RedisUnavailableError
from tests.support.redis_support import RedisServer
from tests.support.servers import free_port


async def _incr(client: aredis.Redis) -> str:
    return str(await client.incr("k"))


async def _local() -> str:
    return "local"


async def test_runs_on_redis_then_falls_back_during_an_outage_and_recovers(
    redis_server: RedisServer, redis_connection: RedisConnection, caplog: pytest.LogCaptureFixture
) -> None:
    assert await redis_connection.attempt(_incr, _local, what="counting") == "1"
    redis_server.stop()
    with caplog.at_level(logging.WARNING, logger="agent.coordination.redis_connection"):
        assert await redis_connection.attempt(_incr, _local, what="counting") == "local"
        assert redis_connection.down
        assert await redis_connection.attempt(_incr, _local, what="counting") == "local"
        warnings = [r.getMessage() for r in caplog.records]
        assert len(warnings) == 1, warnings  # one line per outage, not per call
        assert "unreachable" in warnings[0] and "counting" in warnings[0]
        redis_server.start()
        await asyncio.sleep(0.25)  # retry_s of the fixture's connection
        assert await redis_connection.attempt(_incr, _local, what="counting") == "1"  # a new server
        assert any("is back" in r.getMessage() for r in caplog.records)
    assert not redis_connection.down


def test_sync_attempt_falls_back_too(
    redis_server: RedisServer, redis_connection: RedisConnection
) -> None:
    assert redis_connection.attempt_sync(lambda r: r.set("a", "b"), lambda: False, what="x") is True
    redis_server.stop()
    assert (
        redis_connection.attempt_sync(lambda r: r.get("a"), lambda: b"local", what="x") == b"local"
    )
    redis_server.start()


async def test_a_wrong_command_is_a_bug_not_an_outage(redis_connection: RedisConnection) -> None:
    async def wrong(client: aredis.Redis) -> str:
        return str(await client.execute_command("NO-SUCH-COMMAND"))  # type: ignore[no-untyped-call]

    with pytest.raises(Exception, match="unknown command"):
        await redis_connection.attempt(wrong, _local, what="x")
    assert not redis_connection.down


async def test_check_names_the_url_and_the_fix() -> None:
    redis = RedisConnection(f"redis://127.0.0.1:{free_port()}/0", timeout_s=0.5)
    try:
        with pytest.raises(RedisUnavailableError, match="unset REDIS_URL") as raised:
            await redis.check()
        assert "unreachable" in str(raised.value) and "127.0.0.1" in str(raised.value)
    finally:
        await redis.aclose()


def test_keys_carry_the_prefix(redis_connection: RedisConnection) -> None:
    assert redis_connection.key("dedupe", "slack:1").startswith(redis_connection.prefix)
    assert redis_connection.key("a", "b").endswith("a:b")


async def test_a_busy_worker_waits_for_a_connection_instead_of_seeing_an_outage(
    redis_url: str,
) -> None:
    """300 calls at once (a worker with many answers under way) exceed redis-py's default
    pool of 100; none may fall back as if Redis were gone.

    The connect timeout is generous here: what is under test is waiting for a pooled
    connection, and a loaded CI machine may take more than the fixture's 0.5 s to open
    a hundred sockets to the test's own server."""
    redis = RedisConnection(redis_url, prefix="busy:", retry_s=0.2, timeout_s=10.0)

    async def slow(client: aredis.Redis) -> str:
        await client.blpop(["nothing-here"], timeout=0.3)
        return "redis"

    try:
        results = await asyncio.gather(
            *(redis.attempt(slow, _local, what="waiting") for _ in range(300))
        )
    finally:
        await redis.aclose()
    assert results.count("redis") == 300 and not redis.down


async def test_the_password_never_reaches_a_message() -> None:
    redis = RedisConnection(f"redis://:s3cret@127.0.0.1:{free_port()}/0", timeout_s=0.5)
    try:
        with pytest.raises(RedisUnavailableError) as raised:
            await redis.check()
    finally:
        await redis.aclose()
    assert "s3cret" not in str(raised.value) and ":***@127.0.0.1" in str(raised.value)


async def test_a_restart_between_calls_is_not_taken_for_an_outage(
    redis_server: RedisServer, redis_connection: RedisConnection
) -> None:
    """Pooled connections die with the server. After a restart, the next call on one of
    them reconnects and goes through: not a fallback to in-process state (a per-worker
    rate limit, say) for ``retry_s`` because the first command met a closed socket."""
    assert await redis_connection.attempt(_incr, _local, what="counting") == "1"
    assert redis_connection.attempt_sync(lambda r: r.incr("s"), lambda: -1, what="counting") == 1
    redis_server.stop()
    redis_server.start()
    assert await redis_connection.attempt(_incr, _local, what="counting") == "1"  # a new server
    assert redis_connection.attempt_sync(lambda r: r.incr("s"), lambda: -1, what="counting") == 1
    assert not redis_connection.down
