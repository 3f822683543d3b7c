"""Answer every delivery once: remember the ids of events already taken.

Slack retries an event it thinks was not acknowledged (``X-Slack-Retry-Num``),
Socket Mode redelivers after a reconnect, and a Discord gateway resume can replay
a message. The adapters ask :meth:`Deduper.first` with the platform's event id
(and the message id, which is the same across retries of one message) before
doing any work. :class:`LocalDeduper` serves one process; :class:`RedisDeduper`
shares the memory between workers.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Protocol

import redis.asyncio as aredis

from agent.shared.link import RedisLink


class Deduper(Protocol):
    async def first(self, *keys: str) -> bool:
        """True the first time any of ``keys`` is seen; False if one was seen before.

        All keys are remembered either way, so a retry that carries only one of them
        (a new event id for the same message, say) is still recognised.
        """
        ...


class LocalDeduper:
    """Keys remembered for ``ttl_s`` (Slack retries within minutes), at most ``max_keys``."""

    def __init__(
        self,
        ttl_s: float = 3600.0,
        max_keys: int = 100_000,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._ttl_s = ttl_s
        self._max_keys = max_keys
        self._clock = clock
        self._seen: OrderedDict[str, float] = OrderedDict()

    async def first(self, *keys: str) -> bool:
        now = self._clock()
        self._expire(now)
        wanted = [k for k in keys if k]
        if not wanted:
            return True  # nothing to recognise a retry by: answer rather than drop
        fresh = not any(k in self._seen for k in wanted)
        for key in wanted:
            self._seen[key] = now
            self._seen.move_to_end(key)
        while len(self._seen) > self._max_keys:
            self._seen.popitem(last=False)
        return fresh

    def seen(self, *keys: str) -> bool:
        """Whether one of ``keys`` was seen, without remembering them."""
        self._expire(self._clock())
        return any(k in self._seen for k in keys if k)

    def _expire(self, now: float) -> None:
        while self._seen:
            key, seen_at = next(iter(self._seen.items()))
            if now - seen_at < self._ttl_s:
                return
            del self._seen[key]


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

    def __init__(self, link: RedisLink, ttl_s: float = 3600.0) -> None:
        self._link = link
        self._ttl_ms = max(1, int(ttl_s * 1000))
        self._local = LocalDeduper(ttl_s)
        self._script = link.client.register_script(_FIRST)

    async def first(self, *keys: str) -> bool:
        wanted = [self._link.key("dedupe", k) for k in dict.fromkeys(keys) if k]
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

        return await self._link.attempt(
            on_redis, lambda: self._local.first(*keys), what="de-duplicating an event"
        )
