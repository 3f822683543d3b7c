"""De-duplication shared by every worker: :class:`RedisDeduper` (the in-process twin is
:class:`adapters.chat.dedupe.LocalDeduper`)."""

from __future__ import annotations

import redis.asyncio as aredis

from adapters.chat.dedupe import LocalDeduper
from agent.coordination.redis_connection import RedisConnection

# KEYS: the delivery's keys. ARGV: ttl ms. Checking and remembering every key in one
# step: two workers handed the same delivery at the same moment cannot both find it
# new. Keys already seen are remembered again for a full ttl, as LocalDeduper does.
_FIRST = """
local fresh = 1
for _, key in ipairs(KEYS) do
  if redis.call('exists', key) == 1 then fresh = 0 end
end
for _, key in ipairs(KEYS) do
  redis.call('set', key, '1', 'PX', ARGV[1])
end
return fresh
"""


class RedisDeduper:
    """Keys remembered in Redis for ``ttl_s``, shared by every worker.

    Each worker also keeps the keys in a :class:`LocalDeduper` (in memory, cheap), so
    while Redis is unreachable, or after it restarted empty, it still recognises the
    deliveries it already took. Only a retry that reaches another worker during an
    outage may then be answered twice: better than not at all.
    """

    def __init__(self, redis: RedisConnection, ttl_s: float = 3600.0) -> None:
        self._redis = redis
        self._ttl_ms = max(1, int(ttl_s * 1000))
        self._local = LocalDeduper(ttl_s)
        self._script = redis.client.register_script(_FIRST)

    async def first(self, *keys: str) -> bool:
        wanted = [self._redis.key("dedupe", k) for k in dict.fromkeys(keys) if k]
        if not wanted:
            return True  # nothing to recognise a retry by: answer rather than drop
        # Looked at before, remembered only after Redis answered: concurrent calls in
        # this process must leave the decision to Redis, or two of them could each see
        # the other's key here while Redis admits neither.
        seen_here = self._local.seen(*keys)

        async def on_redis(client: aredis.Redis) -> bool:
            fresh = bool(await self._script(keys=wanted, args=[self._ttl_ms], client=client))
            await self._local.first(*keys)
            return fresh and not seen_here

        return await self._redis.attempt(
            on_redis, lambda: self._local.first(*keys), what="de-duplicating an event"
        )
