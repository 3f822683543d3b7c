"""One sync of a source at a time across every worker that shares Redis: a lease per
source (the protocol and the machine's file lock are in :mod:`agent.sources.locks`)."""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import AsyncIterator

import redis.asyncio as aredis

from agent.coordination.redis_connection import RedisConnection
from agent.sources.locks import FileSyncLock

# Compare-and-act in one step: between a GET and a DEL the lease could change hands.
_RELEASE = (
    "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end return 0"
)
_RENEW = (
    "if redis.call('get', KEYS[1]) == ARGV[1] then "
    "return redis.call('pexpire', KEYS[1], ARGV[2]) end return 0"
)


class RedisSyncLock:
    """A Redis lease per source, renewed while the sync runs, so a worker that dies
    mid-sync frees the source after ``ttl_s``. While Redis is unreachable the file lock
    applies (one machine's processes still take turns)."""

    def __init__(self, redis: RedisConnection, local: FileSyncLock, *, ttl_s: float = 60.0) -> None:
        self.redis = redis
        self.local = local
        self.ttl_ms = int(ttl_s * 1000)

    def key(self, name: str) -> str:
        return self.redis.key("source-sync", name)

    @contextlib.asynccontextmanager
    async def hold(self, name: str) -> AsyncIterator[bool]:
        key, value = self.key(name), f"{self.redis.worker_id}:{uuid.uuid4().hex}"

        async def take(client: aredis.Redis) -> bool | None:
            return bool(await client.set(key, value, nx=True, px=self.ttl_ms))

        async def unshared() -> bool | None:
            return None

        taken = await self.redis.attempt(take, unshared, what="taking a source's sync lock")
        if taken is None:
            async with self.local.hold(name) as mine:
                yield mine
            return
        if not taken:
            yield False
            return
        renewal = asyncio.create_task(self._renew(key, value))
        try:
            yield True
        finally:
            renewal.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await renewal

            async def release(client: aredis.Redis) -> None:
                await client.eval(_RELEASE, 1, key, value)

            async def lapse() -> None:
                return None  # the lease expires by itself

            await self.redis.attempt(release, lapse, what="releasing a source's sync lock")

    async def _renew(self, key: str, value: str) -> None:
        while True:
            await asyncio.sleep(self.ttl_ms / 3000)

            async def renew(client: aredis.Redis) -> None:
                await client.eval(_RENEW, 1, key, value, str(self.ttl_ms))

            async def nothing() -> None:
                return None

            await self.redis.attempt(renew, nothing, what="renewing a source's sync lock")
