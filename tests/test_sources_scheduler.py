"""The scheduler: intervals on an injected clock, back-off, restart survival, one runner
per source across workers and hosts (Redis lock, Postgres lock and file lock), and a
clean stop."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent.coordination.redis_connection import RedisConnection
from agent.retrieval.knowledge_base import KnowledgeBase
from agent.sources.locks import FileSyncLock
from agent.sources.locks_postgres import PostgresSyncLock
from agent.sources.locks_redis import RedisSyncLock
from agent.sources.scheduler import SourceScheduler
from agent.sources.store_postgres import PostgresSourceStore
from agent.sources.sync import SyncOutcome
from tests.fakes.web_site import FakeSite, html_page
from tests.support.sources_support import Clock, OpenStore, add, source_sync


@pytest.fixture
def sites() -> Iterator[tuple[FakeSite, FakeSite]]:
    good, bad = FakeSite(), FakeSite()
    good.set_page("/", html_page("Deploys", "Deploys run through the KESTREL pipeline."))
    bad.set_page("/", html_page("Broken", "This site is down."))
    bad.status["/"] = 500
    good.start()
    bad.start()
    yield good, bad
    good.stop()
    bad.stop()


async def test_due_sources_run_and_a_failing_one_backs_off_while_the_other_keeps_time(
    kb: KnowledgeBase, tmp_path: Path, sites: tuple[FakeSite, FakeSite]
) -> None:
    good, bad = sites
    clock = Clock()
    with source_sync(kb, tmp_path, clock=clock) as sync:
        add(sync, "good", "web", good.url + "/", every_s=600, allow_private=True)
        add(sync, "bad", "web", bad.url + "/", every_s=600, allow_private=True)
        scheduler = SourceScheduler(sync, lock=FileSyncLock(tmp_path / "locks"), clock=clock)
        first = {o.name: o for o in await scheduler.run_due()}
        assert first["good"].ok and "HTTP 500" in (first["bad"].error or "")
        assert await scheduler.run_due() == []  # nothing is due yet

        clock.advance(60)  # the failing source's first back-off
        retried = await scheduler.run_due()
        assert [o.name for o in retried] == ["bad"] and bad.requests["/"] == 2
        assert good.requests["/"] == 1

        clock.advance(100)  # back-off doubled to 120 s: not yet
        assert await scheduler.run_due() == []
        bad.status.clear()
        clock.advance(440)  # 600 s after the start: both are due
        names = sorted(o.name for o in await scheduler.run_due() if o.ok)
    assert names == ["bad", "good"]


async def test_the_schedule_survives_a_restart(
    kb: KnowledgeBase,
    tmp_path: Path,
    sites: tuple[FakeSite, FakeSite],
    open_source_store: OpenStore,
) -> None:
    good, _ = sites
    clock = Clock()
    with source_sync(kb, tmp_path, clock=clock, store=open_source_store()) as sync:
        add(sync, "good", "web", good.url + "/", every_s=3600, allow_private=True)
        await SourceScheduler(sync, lock=FileSyncLock(tmp_path / "l"), clock=clock).run_due()
    clock.advance(1800)
    # A new process (or another host, with the sources in Postgres), the same store.
    with source_sync(kb, tmp_path, clock=clock, store=open_source_store()) as restarted:
        scheduler = SourceScheduler(restarted, lock=FileSyncLock(tmp_path / "l"), clock=clock)
        assert await scheduler.run_due() == []
        clock.advance(1800)
        again = await scheduler.run_due()
    assert [o.name for o in again] == ["good"] and good.requests["/"] == 2


async def test_a_source_another_worker_holds_is_skipped_redis(
    kb: KnowledgeBase,
    tmp_path: Path,
    sites: tuple[FakeSite, FakeSite],
    redis_connection: RedisConnection,
) -> None:
    good, _ = sites
    clock = Clock()
    lock = RedisSyncLock(redis_connection, FileSyncLock(tmp_path / "locks"), ttl_s=30)
    other_worker = RedisSyncLock(redis_connection, FileSyncLock(tmp_path / "other"), ttl_s=30)
    with source_sync(kb, tmp_path, clock=clock) as sync:
        add(sync, "good", "web", good.url + "/", every_s=600, allow_private=True)
        scheduler = SourceScheduler(sync, lock=lock, clock=clock)
        async with other_worker.hold("good") as held:
            assert held
            assert await scheduler.run_due() == []
            assert good.requests["/"] == 0
        done = await scheduler.run_due()
        assert [o.name for o in done] == ["good"]
        assert await redis_connection.client.exists(lock.key("good")) == 0  # released


async def test_a_source_another_host_holds_is_skipped_postgres(
    kb: KnowledgeBase,
    tmp_path: Path,
    sites: tuple[FakeSite, FakeSite],
    postgres_schema: tuple[str, str],
) -> None:
    good, _ = sites
    url, schema = postgres_schema
    clock = Clock()
    store = PostgresSourceStore(url, schema)
    try:
        with source_sync(kb, tmp_path, clock=clock, store=store) as sync:
            add(sync, "good", "web", good.url + "/", every_s=600, allow_private=True)
            scheduler = SourceScheduler(sync, lock=PostgresSyncLock(url, schema), clock=clock)
            async with PostgresSyncLock(url, schema).hold("good") as held:  # host B's
                assert held
                assert await scheduler.run_due() == []
                assert good.requests["/"] == 0
            done = await scheduler.run_due()
            assert [o.name for o in done] == ["good"]
    finally:
        store.close()


async def test_the_postgres_lock_keeps_two_hosts_apart(postgres_schema: tuple[str, str]) -> None:
    url, schema = postgres_schema
    host_a, host_b = PostgresSyncLock(url, schema), PostgresSyncLock(url, schema)
    other_team = PostgresSyncLock(url, f"{schema}_other")  # another schema, same database
    async with (
        host_a.hold("docs") as mine,
        host_b.hold("docs") as theirs,
        host_b.hold("wiki") as another_source,
        other_team.hold("docs") as their_own_docs,
    ):
        assert mine and not theirs
        assert another_source and their_own_docs
    async with host_b.hold("docs") as now_mine:
        assert now_mine


_HOLD_AND_WAIT = """
import asyncio, sys
from agent.sources.locks_postgres import PostgresSyncLock

async def main() -> None:
    async with PostgresSyncLock(sys.argv[1], sys.argv[2]).hold("docs") as mine:
        print("held" if mine else "busy", flush=True)
        await asyncio.sleep(600)

asyncio.run(main())
"""


async def test_a_host_that_dies_mid_sync_frees_its_source_at_once(
    postgres_schema: tuple[str, str],
) -> None:
    """Another process holds the lock, then is killed (a crashed host): the lock is free
    as soon as Postgres sees the session end, with no lease to wait out."""
    url, schema = postgres_schema
    holder = subprocess.Popen(
        [sys.executable, "-c", _HOLD_AND_WAIT, url, schema],
        stdout=subprocess.PIPE,
        text=True,
        cwd=Path(__file__).resolve().parent.parent,
    )
    try:
        assert holder.stdout is not None
        assert (await asyncio.to_thread(holder.stdout.readline)).strip() == "held"
        lock = PostgresSyncLock(url, schema)
        async with lock.hold("docs") as mine:
            assert not mine
        holder.kill()
        await asyncio.to_thread(holder.wait)
        taken = []
        for _ in range(100):  # the server notices the closed socket at once; allow 5 s
            async with lock.hold("docs") as mine:
                taken.append(mine)
            if mine:
                break
            await asyncio.sleep(0.05)
        assert taken[-1], f"still held after {len(taken)} tries"
    finally:
        holder.kill()
        holder.wait()


async def test_the_file_lock_keeps_two_processes_apart(tmp_path: Path) -> None:
    first, second = FileSyncLock(tmp_path), FileSyncLock(tmp_path)
    async with first.hold("docs") as mine, second.hold("docs") as theirs:
        assert mine and not theirs
    async with second.hold("docs") as now_mine:
        assert now_mine


async def test_run_syncs_then_stops_when_asked(
    kb: KnowledgeBase, tmp_path: Path, sites: tuple[FakeSite, FakeSite]
) -> None:
    good, _ = sites
    synced = asyncio.Event()
    outcomes: list[SyncOutcome] = []

    def seen(outcome: SyncOutcome) -> None:
        outcomes.append(outcome)
        synced.set()

    with source_sync(kb, tmp_path) as sync:
        add(sync, "good", "web", good.url + "/", every_s=600, allow_private=True)
        scheduler = SourceScheduler(sync, lock=FileSyncLock(tmp_path / "l"), on_outcome=seen)
        stop = asyncio.Event()
        task = asyncio.create_task(scheduler.run(stop))
        await asyncio.wait_for(synced.wait(), 30)
        stop.set()
        await asyncio.wait_for(task, 10)
    assert [o.name for o in outcomes] == ["good"] and outcomes[0].ok
