"""The record of the Slack threads the bot answers in, run once over each backend (a
SQLite file, and a real Redis with the machine's file as fallback): known to every
worker, kept for ``keep_s`` after the last answer, then forgotten. What only Redis does
is in test_slack_threads_redis.py."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from adapters.slack.threads import SqliteThreadRecord, ThreadRecord
from adapters.slack.threads_redis import RedisThreadRecord
from agent.coordination.redis_connection import RedisConnection

THREAD = "T1:C1:1700000000.000100"


@dataclass
class ThreadBackend:
    """One backend of the record. ``open`` is another worker on the same store (the same
    file, or the same Redis through its own connection and fallback file);
    ``pass_time`` moves the SQLite record's clock, or waits as long for Redis's expiry."""

    name: str
    open: Callable[[float], ThreadRecord]
    pass_time: Callable[[float], Awaitable[None]]


@pytest.fixture(params=["sqlite", "redis"])
async def backend(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[ThreadBackend]:
    files: list[SqliteThreadRecord] = []
    connections: list[RedisConnection] = []
    if request.param == "redis":
        url: str = request.getfixturevalue("redis_url")
        prefix = f"t{uuid.uuid4().hex[:6]}:"

        def open_redis(keep_s: float) -> ThreadRecord:
            connections.append(RedisConnection(url, prefix=prefix, retry_s=0.2, timeout_s=0.5))
            files.append(SqliteThreadRecord(tmp_path / f"worker-{len(files)}.sqlite"))
            return RedisThreadRecord(connections[-1], files[-1], keep_s=keep_s)

        yield ThreadBackend("redis", open_redis, asyncio.sleep)
    else:
        now = [1000.0]

        def open_sqlite(keep_s: float) -> ThreadRecord:
            files.append(
                SqliteThreadRecord(tmp_path / "threads.sqlite", keep_s=keep_s, clock=lambda: now[0])
            )
            return files[-1]

        async def pass_time(seconds: float) -> None:
            now[0] += seconds

        yield ThreadBackend("sqlite", open_sqlite, pass_time)
    for file in files:
        file.close()
    for redis in connections:
        await redis.aclose()


async def test_a_thread_answered_by_one_worker_is_known_to_the_other(
    backend: ThreadBackend,
) -> None:
    """Another worker, or the same one after a restart."""
    one, two = backend.open(90 * 86400.0), backend.open(90 * 86400.0)
    assert not await two.has(THREAD)
    await one.add(THREAD)
    assert await one.has(THREAD) and await two.has(THREAD)
    assert not await one.has("T1:C1:9.9") and not await two.has("T1:C1:other")


async def test_the_record_is_kept_for_keep_s_after_the_last_answer(
    backend: ThreadBackend,
) -> None:
    record = backend.open(0.3)
    await record.add(THREAD)
    await backend.pass_time(0.2)
    await record.add(THREAD)  # answered again: kept from now
    await backend.pass_time(0.2)
    assert await record.has(THREAD)
    assert await backend.open(0.3).has(THREAD)  # and by another worker
    await backend.pass_time(0.2)
    assert not await record.has(THREAD)  # idle longer than kept
    await record.add(THREAD)  # answered again: kept again
    assert await record.has(THREAD)


# -- the SQLite file only ---------------------------------------------------------------
async def test_the_file_outlives_the_process(tmp_path: Path) -> None:
    record = SqliteThreadRecord(tmp_path / "threads.sqlite")
    await record.add(THREAD)
    record.close()
    reopened = SqliteThreadRecord(tmp_path / "threads.sqlite")
    assert await reopened.has(THREAD)  # after a restart
    reopened.close()
