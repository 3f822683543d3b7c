"""Answer every delivery once: remember the ids of events already taken.

Slack retries an event it thinks was not acknowledged (``X-Slack-Retry-Num``),
Socket Mode redelivers after a reconnect, and a Discord gateway resume can replay
a message. The adapters ask :meth:`Deduper.first` with the platform's event id
(and the message id, which is the same across retries of one message) before
doing any work. :class:`LocalDeduper` serves one process;
:class:`~adapters.chat.dedupe_redis.RedisDeduper` shares the memory between workers.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Protocol


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
