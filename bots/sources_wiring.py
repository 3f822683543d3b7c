"""Sources in a process: the kind registry (with the chat platforms' history kinds), the
sync engine wired to the answer caches, and the scheduler for long-running processes.

``running_sources`` is what a long-running process (the bots, ``teamrag serve``) enters
to keep the knowledge base in sync while it runs. The Postgres twins are imported only
with ``DATABASE_URL``, so a process on the data folder never loads psycopg.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections.abc import AsyncIterator, Iterator

from agent.coordination.redis_connection import RedisConnection
from agent.retrieval.knowledge_base import KnowledgeBase
from agent.sources import store
from agent.sources.locks import FileSyncLock, SyncLock
from agent.sources.locks_redis import RedisSyncLock
from agent.sources.registry import KindRegistry, default_registry
from agent.sources.scheduler import SourceScheduler
from agent.sources.store import SourceStore, SqliteSourceStore
from agent.sources.sync import SourceSync
from bots.settings import Settings
from bots.shared_state import answer_cache
from bots.wiring import agent_config

log = logging.getLogger(__name__)

STOP_WAIT_S = 60.0  # a sync under way ends after its current batch; this is the ceiling
IDLE_POLL_S = 60.0  # a process without sources looks for a new one this often


def build_registry(settings: Settings) -> KindRegistry:
    registry = default_registry()
    from bots.chat_sources import register_chat_kinds

    register_chat_kinds(registry, settings)
    return registry


def open_source_store(settings: Settings) -> SourceStore:
    """Where the sources live: with DATABASE_URL beside the shared catalog in Postgres,
    so every host schedules the same ones; else in the data folder's catalog file."""
    if settings.database_url:
        from agent.sources.store_postgres import PostgresSourceStore

        return PostgresSourceStore(settings.database_url, settings.catalog_schema)
    return SqliteSourceStore(settings.data_dir / "catalog.sqlite3")


def has_sources(settings: Settings) -> bool:
    """Whether any source was added, creating nothing (see :func:`open_source_store`)."""
    if settings.database_url:
        from agent.sources import store_postgres

        return store_postgres.has_sources(settings.database_url, settings.catalog_schema)
    return store.has_sources(settings.data_dir / "catalog.sqlite3")


@contextlib.contextmanager
def open_source_sync(
    settings: Settings, kb: KnowledgeBase, redis: RedisConnection | None = None
) -> Iterator[SourceSync]:
    """The sync engine; changed and deleted documents leave the answer caches (the
    process's SQLite cache file, and Redis's when ``redis`` is given)."""
    sources = open_source_store(settings)
    cache, cache_file = answer_cache(settings, agent_config(settings), redis)

    def forget(doc_ids: list[str]) -> None:
        cache.invalidate_documents(doc_ids)
        if cache is not cache_file:
            cache_file.invalidate_documents(doc_ids)  # this machine's fallback copy too

    try:
        yield SourceSync(
            kb,
            sources,
            build_registry(settings),
            env=os.environ,
            work_dir=settings.data_dir / "sources",
            forget=forget,
        )
    finally:
        cache_file.close()
        sources.close()


def sync_lock(settings: Settings, redis: RedisConnection | None) -> SyncLock:
    """One sync of a source at a time among the processes that share its store: every
    host (a Postgres advisory lock) when the sources are in Postgres; with Redis, every
    worker that shares it; else the processes sharing this data folder (a file lock)."""
    if settings.database_url:
        from agent.sources.locks_postgres import PostgresSyncLock

        return PostgresSyncLock(settings.database_url, settings.catalog_schema)
    local = FileSyncLock(settings.data_dir / "locks")
    return local if redis is None else RedisSyncLock(redis, local)


async def _schedule(
    settings: Settings,
    kb: KnowledgeBase,
    redis: RedisConnection | None,
    stop: asyncio.Event,
    idle_poll_s: float,
) -> None:
    """Wait (cheaply) until a source exists, then run the scheduler until ``stop``. Every
    blocking step runs on a thread: the bot's event loop never waits on the catalog."""
    try:
        while not await asyncio.to_thread(has_sources, settings):
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), idle_poll_s)
            if stop.is_set():
                return
        with contextlib.ExitStack() as stack:
            opened = open_source_sync(settings, kb, redis)
            sync = await asyncio.to_thread(stack.enter_context, opened)
            try:
                await SourceScheduler(sync, lock=sync_lock(settings, redis)).run(stop)
            finally:
                await asyncio.to_thread(stack.close)
    except Exception:  # the bot keeps answering; `teamrag sync` still works
        log.exception("the source scheduler stopped; restart the bot to start it again")


@contextlib.asynccontextmanager
async def running_sources(
    settings: Settings,
    kb: KnowledgeBase,
    redis: RedisConnection | None = None,
    *,
    idle_poll_s: float = IDLE_POLL_S,
) -> AsyncIterator[asyncio.Task[None] | None]:
    """Run the scheduler beside whatever the caller does; stop it on the way out.

    Entering returns at once: the scheduler starts on its own task, and opens the
    sources only once one exists (checked every ``idle_poll_s``), so a bot's start never
    waits on a lock or a sync, and a process without sources stops at once."""
    if not settings.sources_scheduler:
        yield None
        return
    stop = asyncio.Event()
    task = asyncio.create_task(
        _schedule(settings, kb, redis, stop, idle_poll_s), name="teamrag-sources"
    )
    try:
        yield task
    finally:
        stop.set()
        try:
            await asyncio.wait_for(task, STOP_WAIT_S)
        except TimeoutError:
            log.warning("a source sync did not stop within %.0f s; left unfinished", STOP_WAIT_S)
