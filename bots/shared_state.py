"""Where each piece of shared state lives: in Redis when ``REDIS_URL`` is set, else in
this process (or a file in the data folder).

One builder per piece, each taking the process's :class:`RedisConnection` or None. The
Redis versions fall back to their local twin while Redis is unreachable, so the
choice made here at start-up holds for the whole run.

Backend twins are named by one rule, here and everywhere else (the catalog, the
sources, the Slack bot's records):

- modules: ``x.py`` holds the protocol and the local twin, ``x_redis.py`` and
  ``x_postgres.py`` the shared ones; a local twin too big to share ``x.py`` with its
  protocol is ``x_sqlite.py`` (``agent/cache/answer_sqlite.py``,
  ``agent/retrieval/catalog_sqlite.py``), and the Lua scripts of ``x_redis.py``, when
  they outgrow it, are ``x_redis_scripts.py``;
- classes: the prefix says where the state lives: ``Local*`` in this process's memory
  (gone at a restart), ``Sqlite*`` a SQLite file in the data folder, ``File*`` lock files
  in the data folder, ``Redis*`` and ``Postgres*`` the servers.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

from adapters.chat.dedupe import Deduper, LocalDeduper
from adapters.chat.dedupe_redis import RedisDeduper
from adapters.chat.feedback import SqliteFeedbackStore
from adapters.chat.feedback_redis import RedisFeedbackStore
from adapters.chat.queue import LocalTurnQueue, TurnQueue
from adapters.chat.queue_redis import RedisTurnQueue
from adapters.chat.ratelimit import LocalRateLimiter, RateLimiter
from adapters.chat.ratelimit_redis import RedisRateLimiter
from adapters.chat.usage import SqliteUsageStore
from adapters.chat.usage_redis import RedisUsageStore
from agent.cache import AnswerCache, SqliteAnswerCache
from agent.cache.answer_redis import RedisAnswerCache
from agent.config import AgentConfig
from agent.coordination.locks import FileThreadLocks, ThreadLocks
from agent.coordination.locks_redis import RedisThreadLocks
from agent.coordination.redis_connection import RedisConnection
from bots.settings import Settings


@asynccontextmanager
async def open_redis(settings: Settings) -> AsyncIterator[RedisConnection | None]:
    """The process's Redis connection, checked at start (``RedisUnavailableError`` names the
    fix); None without ``REDIS_URL``."""
    if not settings.redis_url:
        yield None
        return
    redis = RedisConnection(
        settings.redis_url, retry_s=settings.redis_retry_s, timeout_s=settings.redis_timeout_s
    )
    try:
        await redis.check()
        yield redis
    finally:
        await redis.aclose()


def answer_cache(
    settings: Settings, config: AgentConfig, redis: RedisConnection | None
) -> tuple[AnswerCache, SqliteAnswerCache]:
    """The cache the agent uses, and the SQLite file behind it (to close at the end)."""
    local = SqliteAnswerCache(
        settings.data_dir / "answer_cache.sqlite",
        threshold=config.cache_threshold,
        ttl_s=config.cache_ttl_s,
    )
    if redis is None:
        return local, local
    shared = RedisAnswerCache(
        redis, local, threshold=config.cache_threshold, ttl_s=config.cache_ttl_s
    )
    return shared, local


def thread_locks(settings: Settings, redis: RedisConnection | None) -> ThreadLocks | None:
    """One run at a time per thread: across workers with Redis; across the processes of
    one machine when they share the embedded memory file; else the runner's own lock."""
    if redis is not None:
        # A dead worker's lease lapses no later than its queued turn is taken over, so the
        # worker taking it over does not wait on the dead one's lock.
        return RedisThreadLocks(redis, ttl_s=settings.queue_claim_s)
    if settings.database_url:
        return None
    return FileThreadLocks(settings.data_dir / "locks")


def deduper(redis: RedisConnection | None) -> Deduper:
    return LocalDeduper() if redis is None else RedisDeduper(redis)


def rate_limiter(settings: Settings, redis: RedisConnection | None) -> RateLimiter:
    per_minute = settings.rate_limit_per_minute
    return LocalRateLimiter(per_minute) if redis is None else RedisRateLimiter(redis, per_minute)


def turn_queues(settings: Settings, redis: RedisConnection | None) -> Callable[[str], TurnQueue]:
    """A platform's queue of accepted questions: durable in Redis, or run at once."""

    def queue_for(platform: str) -> TurnQueue:
        if redis is None:
            return LocalTurnQueue()
        return RedisTurnQueue(
            redis,
            platform,
            claim_s=settings.queue_claim_s,
            max_attempts=settings.queue_max_attempts,
        )

    return queue_for


def feedback_store(settings: Settings) -> SqliteFeedbackStore:
    return SqliteFeedbackStore(settings.data_dir / "feedback.sqlite")


def shared_feedback_store(
    settings: Settings, redis: RedisConnection | None
) -> SqliteFeedbackStore | RedisFeedbackStore:
    """Votes from every worker and both platforms; the SQLite file while Redis is down."""
    local = feedback_store(settings)
    return local if redis is None else RedisFeedbackStore(redis, local)


def usage_store(
    settings: Settings, redis: RedisConnection | None
) -> SqliteUsageStore | RedisUsageStore:
    local = SqliteUsageStore(settings.data_dir / "usage.sqlite", zone=settings.zone)
    return local if redis is None else RedisUsageStore(redis, local)
