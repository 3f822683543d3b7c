"""One Redis connection for every piece of shared state, and the rule for when it fails.

A bot must keep answering when Redis goes away: a missed rate-limit count or a
cache miss costs little, silence costs the user. So every Redis operation goes
through :meth:`RedisConnection.attempt`, which runs it, or, when Redis is unreachable,
runs the caller's in-process fallback instead. After a failure the connection stays
"down" for ``retry_s`` (no caller waits on a dead server's timeouts meanwhile),
then the next operation tries Redis again. The first failure and the recovery
are logged once each, not once per call.
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Awaitable, Callable
from typing import TypeVar

import redis
import redis.asyncio as aredis
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from agent.plumbing.urls import redact_url

log = logging.getLogger(__name__)

T = TypeVar("T")

# What "Redis is unreachable" looks like; anything else (a wrong command, bad data) is a bug
# and propagates.
UNREACHABLE: tuple[type[BaseException], ...] = (RedisConnectionError, RedisTimeoutError, OSError)


class RedisUnavailableError(Exception):
    """Redis cannot be reached at start; the message names the URL, the cause and the fix."""


class RedisConnection:
    """The shared Redis clients, key naming and outage state of one process.

    ``client`` (asyncio) decodes replies to ``str``; ``sync_client`` (for code that
    runs in worker threads, like the answer cache) returns ``bytes``, because it
    stores vectors. Every key starts with ``prefix`` so that several deployments (or
    test runs) can share one server.
    """

    def __init__(
        self,
        url: str,
        *,
        prefix: str = "teamrag:",
        retry_s: float = 5.0,
        timeout_s: float = 2.0,
        max_connections: int = 1000,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.url = url
        self.shown_url = redact_url(url)  # for logs and errors: never with its password
        self.prefix = prefix
        self.retry_s = retry_s
        self.timeout_s = timeout_s
        self._clock = clock
        # A blocking pool: past max_connections a call waits for a free connection. The
        # default pool (100) fails the call instead, which a busy worker (every answer
        # polls its lock and heartbeats its queue entry) would take for an outage.
        pool = aredis.BlockingConnectionPool.from_url(
            url,
            max_connections=max_connections,
            timeout=timeout_s,
            decode_responses=True,
            socket_timeout=timeout_s,
            socket_connect_timeout=timeout_s,
            # A pooled connection that died with a restarted server is replaced and the
            # command sent again, once: not an outage. (Timeouts are not retried: a dead
            # server would cost each call twice the timeout.)
            retry_on_error=[redis.ConnectionError],
        )
        self.client: aredis.Redis = aredis.Redis(connection_pool=pool)
        self.sync_client: redis.Redis = redis.Redis.from_url(
            url,
            socket_timeout=timeout_s,
            socket_connect_timeout=timeout_s,
            retry_on_error=[redis.ConnectionError],
        )
        self._down_until = 0.0
        self._down = False
        # Names this process among the workers (queue consumer name, lock owner).
        self.worker_id = uuid.uuid4().hex[:12]

    def key(self, *parts: str) -> str:
        return self.prefix + ":".join(parts)

    @property
    def down(self) -> bool:
        """True while the connection waits out ``retry_s`` after a failure."""
        return self._down and self._clock() < self._down_until

    async def attempt(
        self,
        operation: Callable[[aredis.Redis], Awaitable[T]],
        fallback: Callable[[], Awaitable[T]],
        *,
        what: str,
    ) -> T:
        """``operation`` on Redis; ``fallback`` (in-process) while Redis is unreachable."""
        if self.down:
            return await fallback()
        try:
            result = await operation(self.client)
        except UNREACHABLE as exc:
            self.failed(exc, what)
            return await fallback()
        self.worked()
        return result

    def attempt_sync(
        self, operation: Callable[[redis.Redis], T], fallback: Callable[[], T], *, what: str
    ) -> T:
        """:meth:`attempt` for synchronous callers (code running in a worker thread)."""
        if self.down:
            return fallback()
        try:
            result = operation(self.sync_client)
        except UNREACHABLE as exc:
            self.failed(exc, what)
            return fallback()
        self.worked()
        return result

    def failed(self, exc: BaseException, what: str) -> None:
        """Mark Redis down for ``retry_s``; log the first failure of an outage."""
        if not self._down:
            log.warning(
                "Redis at %s unreachable (%s: %s) while %s; using in-process state "
                "(rate limits, cache, de-duplication, locks) and trying again every %.0f s",
                self.shown_url,
                type(exc).__name__,
                exc,
                what,
                self.retry_s,
            )
        self._down = True
        self._down_until = self._clock() + self.retry_s

    def worked(self) -> None:
        if self._down:
            self._down = False
            log.warning("Redis at %s is back; shared state resumed", self.shown_url)

    async def problem(self) -> str | None:
        """None when Redis answers a PING, else why not (for /readyz and ``doctor``)."""
        try:
            await self.client.ping()
        except UNREACHABLE as exc:
            return f"{type(exc).__name__}: {exc}"
        return None

    async def check(self) -> None:
        """Fail at start, with the fix, when Redis cannot be reached at all."""
        reason = await self.problem()
        if reason is not None:
            raise RedisUnavailableError(
                f"REDIS_URL {self.shown_url} unreachable: {reason}; start Redis there, or unset "
                "REDIS_URL to keep the shared state in-process (one worker only)"
            )

    async def aclose(self) -> None:
        await self.client.aclose()
        await self.client.connection_pool.disconnect()  # given to the client, so not closed by it
        self.sync_client.close()
