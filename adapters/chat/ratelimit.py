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

import math
import time
from collections import deque
from collections.abc import Callable
from typing import Protocol

from adapters.chat.phrases import phrase


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
