"""Sources in a process: the kind registry (with the chat platforms' history kinds), the
sync engine wired to the answer caches, and the scheduler for long-running processes.

``running_sources`` is what a long-running process (the bots, ``teamrag serve``) enters
to keep the knowledge base in sync while it runs.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections.abc import AsyncIterator, Iterator

from agent.retrieval.knowledge_base import KnowledgeBase
from agent.shared.link import RedisLink
from agent.sources.locks import FileSyncLock, RedisSyncLock, SyncLock
from agent.sources.registry import KindRegistry, default_registry
from agent.sources.scheduler import SourceScheduler
from agent.sources.store import SourceStore
from agent.sources.sync import SourceSync
from bots.settings import Settings
from bots.shared_state import answer_cache
from bots.wiring import agent_config

log = logging.getLogger(__name__)

STOP_WAIT_S = 60.0  # a sync under way ends after its current batch; this is the ceiling


def build_registry(settings: Settings) -> KindRegistry:
    registry = default_registry()
    from bots.chat_sources import register_chat_kinds

    register_chat_kinds(registry, settings)
    return registry


@contextlib.contextmanager
def open_source_sync(
    settings: Settings, kb: KnowledgeBase, link: RedisLink | None = None
) -> Iterator[SourceSync]:
    """The sync engine; changed and deleted documents leave the answer caches (the
    process's SQLite cache file, and Redis's when ``link`` is given)."""
    store = SourceStore(kb.data_dir / "catalog.sqlite3")
    cache, cache_file = answer_cache(settings, agent_config(settings), link)

    def forget(doc_ids: list[str]) -> None:
        cache.invalidate_documents(doc_ids)
        if cache is not cache_file:
            cache_file.invalidate_documents(doc_ids)  # this machine's fallback copy too

    try:
        yield SourceSync(
            kb,
            store,
            build_registry(settings),
            env=os.environ,
            work_dir=settings.data_dir / "sources",
            forget=forget,
        )
    finally:
        cache_file.close()
        store.close()


def sync_lock(settings: Settings, link: RedisLink | None) -> SyncLock:
    local = FileSyncLock(settings.data_dir / "locks")
    return local if link is None else RedisSyncLock(link, local)


@contextlib.asynccontextmanager
async def running_sources(
    settings: Settings, kb: KnowledgeBase, link: RedisLink | None = None
) -> AsyncIterator[SourceScheduler | None]:
    """Run the scheduler beside whatever the caller does; stop it on the way out."""
    if not settings.sources_scheduler:
        yield None
        return
    with open_source_sync(settings, kb, link) as sync:
        scheduler = SourceScheduler(sync, lock=sync_lock(settings, link))
        stop = asyncio.Event()
        task = asyncio.create_task(scheduler.run(stop), name="teamrag-sources")
        try:
            yield scheduler
        finally:
            stop.set()
            try:
                await asyncio.wait_for(task, STOP_WAIT_S)
            except TimeoutError:
                log.warning(
                    "a source sync did not stop within %.0f s; left unfinished", STOP_WAIT_S
                )
