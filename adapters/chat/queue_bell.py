"""Waking the jobs that wait for their thread's turn (:mod:`adapters.chat.queue_redis`).

A queued job of a conversation may only run once every earlier job of that thread is
done, on whichever worker. Asking Redis over and over whether it is our turn cost a
busy worker 7 % of its CPU (a profile under ``make bench-team``), so a finished job now
rings a bell instead: its worker wakes its own waiters at once, and the queue's FINISH
script publishes the thread on a Redis channel that every worker listens to. A waiter
still looks again every ``recheck_s`` on its own: a message missed while a listener
reconnects costs that long, never a stuck thread.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable

from agent.coordination.redis_connection import UNREACHABLE, RedisConnection

log = logging.getLogger(__name__)


class ThreadBell:
    """Per-thread wake-ups for the jobs of this worker that wait for their turn."""

    def __init__(self, redis: RedisConnection, channel: str, *, recheck_s: float = 1.0) -> None:
        self.redis = redis
        self.channel = channel
        self.recheck_s = recheck_s
        self._waiting: dict[str, set[asyncio.Event]] = {}

    def ring(self, thread_id: str) -> None:
        """A job of ``thread_id`` finished: every waiter of that thread looks again."""
        for waiter in self._waiting.get(thread_id, ()):
            waiter.set()

    async def wait_until(self, thread_id: str, may_run: Callable[[], Awaitable[bool]]) -> None:
        """Return once ``may_run()`` says yes, asking again each time the thread's bell
        rings (or ``recheck_s`` passes)."""
        woken = asyncio.Event()
        self._waiting.setdefault(thread_id, set()).add(woken)
        try:
            # Cleared before asking, so a ring that lands during the question is not lost.
            woken.clear()
            while not await may_run():
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(woken.wait(), self.recheck_s)
                woken.clear()
        finally:
            waiters = self._waiting[thread_id]
            waiters.discard(woken)
            if not waiters:
                del self._waiting[thread_id]

    async def listen(self, stop: asyncio.Event) -> None:
        """Ring for every thread another worker finished, until ``stop`` is set."""
        while not stop.is_set():
            pubsub = self.redis.client.pubsub(ignore_subscribe_messages=True)
            try:
                await pubsub.subscribe(self.channel)
                while not stop.is_set():
                    # Inside the socket timeout, so a quiet channel is not a dead server.
                    message = await pubsub.get_message(timeout=self.redis.timeout_s / 2)
                    if message is not None and message.get("type") == "message":
                        self.ring(str(message["data"]))
            except UNREACHABLE as exc:
                # Waiters fall back on looking again every recheck_s meanwhile.
                self.redis.failed(exc, "listening for finished turns")
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(stop.wait(), self.redis.retry_s)
            except Exception:  # a deaf listener only slows turns down; say so and retry
                log.exception("listening for finished turns failed; trying again")
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(stop.wait(), self.redis.retry_s)
            finally:
                with contextlib.suppress(Exception):
                    await pubsub.aclose()  # type: ignore[no-untyped-call]
