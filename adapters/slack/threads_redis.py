"""The threads the bot takes part in, known to workers on every host (Redis); the
record itself and the machine's SQLite twin are in :mod:`adapters.slack.threads`."""

from __future__ import annotations

import redis.asyncio as aredis

from adapters.slack.threads import ThreadRecord
from agent.coordination.redis_connection import RedisConnection


class RedisThreadRecord:
    """The record in Redis, so any worker knows a reply in a bot thread is for the bot.

    One key per thread, expiring ``keep_s`` after the last answer there. Every add
    also goes to ``fallback`` (the machine's own record, one small write per answer):
    during a Redis outage a worker then still recognises the threads it answered in,
    instead of ignoring every follow-up until Redis is back.
    """

    def __init__(
        self, redis: RedisConnection, fallback: ThreadRecord, *, keep_s: float = 90 * 86400.0
    ) -> None:
        self._redis = redis
        self._fallback = fallback
        self._keep_ms = max(1, int(keep_s * 1000))

    async def add(self, key: str) -> None:
        await self._fallback.add(key)

        async def on_redis(client: aredis.Redis) -> None:
            await client.set(self._redis.key("slack-thread", key), "1", px=self._keep_ms)

        async def nothing() -> None:
            return None  # already in the fallback

        await self._redis.attempt(on_redis, nothing, what="recording a bot thread")

    async def has(self, key: str) -> bool:
        async def on_redis(client: aredis.Redis) -> bool:
            return bool(await client.exists(self._redis.key("slack-thread", key)))

        return await self._redis.attempt(
            on_redis, lambda: self._fallback.has(key), what="looking up a bot thread"
        )
