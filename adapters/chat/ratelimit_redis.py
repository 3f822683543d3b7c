"""The question limit shared by every worker: :class:`RedisRateLimiter` (the in-process
twin is :class:`adapters.chat.ratelimit.LocalRateLimiter`)."""

from __future__ import annotations

import itertools

import redis.asyncio as aredis

from adapters.chat.ratelimit import LocalRateLimiter
from agent.coordination.redis_connection import RedisConnection

# KEYS: the user's log (a sorted set of admitted times, ms). ARGV: window ms, limit,
# a unique member. Trimming, counting and adding in one step: two workers admitting
# the same user at once cannot both see "19 of 20" and both go ahead. Redis's own
# clock (TIME) is the one clock every worker shares, whatever their machines' skew.
# Returns -1 (admitted) or the milliseconds until the oldest logged question leaves
# the window.
_ADMIT = """
local t = redis.call('time')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local window, limit = tonumber(ARGV[1]), tonumber(ARGV[2])
redis.call('zremrangebyscore', KEYS[1], '-inf', now - window)
if redis.call('zcard', KEYS[1]) >= limit then
  local oldest = redis.call('zrange', KEYS[1], 0, 0, 'WITHSCORES')
  return tonumber(oldest[2]) + window - now
end
redis.call('zadd', KEYS[1], now, ARGV[3])
redis.call('pexpire', KEYS[1], window)
return -1
"""


class RedisRateLimiter:
    """The limit shared by every worker; its own :class:`LocalRateLimiter` while Redis
    is unreachable (then each worker limits on its own)."""

    def __init__(self, redis: RedisConnection, per_minute: int, *, window_s: float = 60.0) -> None:
        self._local = LocalRateLimiter(per_minute, window_s=window_s)
        self._redis = redis
        self._window_ms = max(1, int(window_s * 1000))
        self._script = redis.client.register_script(_ADMIT)
        self._serial = itertools.count()

    @property
    def per_minute(self) -> int:
        return self._local.per_minute

    async def admit(self, key: str) -> float | None:
        if not self.per_minute:
            return None
        redis_key = self._redis.key("rate", key)
        # Two questions in one millisecond are two entries, not one.
        member = f"{self._redis.worker_id}:{next(self._serial)}"
        args: list[str | int] = [self._window_ms, self.per_minute, member]

        async def on_redis(client: aredis.Redis) -> float | None:
            wait_ms = int(await self._script(keys=[redis_key], args=args, client=client))
            return None if wait_ms < 0 else max(wait_ms, 1) / 1000

        return await self._redis.attempt(
            on_redis, lambda: self._local.admit(key), what="checking the rate limit"
        )
