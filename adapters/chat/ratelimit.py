"""Per-user question limit: at most ``per_minute`` questions in any sliding minute.

A sliding-window log (the times of the admitted questions) rather than a fixed
per-minute counter: a fixed window lets a user ask twice the limit across a
minute boundary. Every question counts, answered from the cache or not: the
limit protects the team's LLM budget and the bot's fairness, and a flood of
cheap questions still fills the chat and the queue. Refused questions are not
logged, so a user who keeps trying is let in as soon as the window allows.

Keys are ``f"{platform}:{workspace}:{user}"``: the limit is per user and per workspace.
"""

from __future__ import annotations

import itertools
import math
import time
from collections import deque
from collections.abc import Callable
from typing import Protocol

import redis.asyncio as aredis

from adapters.chat.phrases import phrase
from agent.shared.link import RedisLink


class RateLimiter(Protocol):
    async def admit(self, key: str) -> float | None:
        """None: go ahead (and the question is counted); else seconds until ``key`` may
        ask again (nothing counted)."""
        ...


def refusal(wait_s: float, language: str) -> str:
    """The message to a limited user, in their language, with whole seconds to wait."""
    return phrase("rate_limited", language, seconds=max(1, math.ceil(wait_s)))


class LocalRateLimiter:
    """The limit within one process; ``per_minute`` 0 turns it off."""

    def __init__(
        self,
        per_minute: int,
        *,
        window_s: float = 60.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if per_minute < 0 or window_s <= 0:
            raise ValueError(
                f"rate limit {per_minute} per {window_s} s: use a count >= 0 (0 = off) "
                "and a window > 0"
            )
        self.per_minute = per_minute
        self.window_s = window_s
        self._clock = clock
        self._log: dict[str, deque[float]] = {}
        self._calls = 0

    async def admit(self, key: str) -> float | None:
        if not self.per_minute:
            return None
        now = self._clock()
        self._calls += 1
        if self._calls % 1000 == 0:
            self._sweep(now)
        times = self._log.setdefault(key, deque())
        while times and times[0] <= now - self.window_s:
            times.popleft()
        if len(times) >= self.per_minute:
            return times[0] + self.window_s - now
        times.append(now)
        return None

    def _sweep(self, now: float) -> None:
        """Forget users with nothing in the window, so memory follows active users only."""
        since = now - self.window_s
        idle = [key for key, times in self._log.items() if not times or times[-1] <= since]
        for key in idle:
            del self._log[key]


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

    def __init__(self, link: RedisLink, per_minute: int, *, window_s: float = 60.0) -> None:
        self._local = LocalRateLimiter(per_minute, window_s=window_s)
        self._link = link
        self._window_ms = max(1, int(window_s * 1000))
        self._script = link.client.register_script(_ADMIT)
        self._serial = itertools.count()

    @property
    def per_minute(self) -> int:
        return self._local.per_minute

    async def admit(self, key: str) -> float | None:
        if not self.per_minute:
            return None
        redis_key = self._link.key("rate", key)
        # Two questions in one millisecond are two entries, not one.
        member = f"{self._link.worker_id}:{next(self._serial)}"
        args: list[str | int] = [self._window_ms, self.per_minute, member]

        async def on_redis(client: aredis.Redis) -> float | None:
            wait_ms = int(await self._script(keys=[redis_key], args=args, client=client))
            return None if wait_ms < 0 else max(wait_ms, 1) / 1000

        return await self._link.attempt(
            on_redis, lambda: self._local.admit(key), what="checking the rate limit"
        )
