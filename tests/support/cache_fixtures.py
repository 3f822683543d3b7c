"""The answer cache's fixtures: ``backend`` runs a test once over each backend (a real
SQLite file, and a real Redis with a SQLite fallback), ``cache`` is one instance on it.
A test module uses them with ``pytest_plugins = ("tests.support.cache_fixtures",)``."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent.cache import AnswerCache, SqliteAnswerCache
from agent.cache.answer_redis import RedisAnswerCache
from agent.coordination.redis_connection import RedisConnection
from tests.support.cache_support import CacheBackend, FakeClock, redis_entry_count


def entry_count(path: Path) -> int:
    with sqlite3.connect(path) as db:
        return int(db.execute("SELECT COUNT(*) FROM entries").fetchone()[0])


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def path(tmp_path: Path) -> Path:
    return tmp_path / "data" / "answers.sqlite3"


@pytest.fixture(params=["sqlite", "redis"])
def backend(
    request: pytest.FixtureRequest, path: Path, tmp_path: Path, clock: FakeClock
) -> Iterator[CacheBackend]:
    files: list[SqliteAnswerCache] = []
    connections: list[RedisConnection] = []
    if request.param == "redis":
        shared: RedisConnection = request.getfixturevalue("redis_connection")

        def open_cache(
            *, threshold: float = 0.9, ttl_s: float = 86400.0, max_entries: int = 5000
        ) -> AnswerCache:
            connections.append(
                RedisConnection(shared.url, prefix=shared.prefix, retry_s=0.2, timeout_s=0.5)
            )
            files.append(
                SqliteAnswerCache(tmp_path / f"fallback-{len(files)}.sqlite3", clock=clock)
            )
            return RedisAnswerCache(
                connections[-1],
                files[-1],
                threshold=threshold,
                ttl_s=ttl_s,
                max_entries_per_scope=max_entries,
                clock=clock,
            )

        yield CacheBackend("redis", open_cache, lambda: redis_entry_count(shared))
    else:

        def open_cache(
            *, threshold: float = 0.9, ttl_s: float = 86400.0, max_entries: int = 5000
        ) -> AnswerCache:
            files.append(
                SqliteAnswerCache(
                    path, threshold=threshold, ttl_s=ttl_s, max_entries=max_entries, clock=clock
                )
            )
            return files[-1]

        yield CacheBackend("sqlite", open_cache, lambda: entry_count(path))
    for file in files:
        file.close()
    for connection in connections:
        connection.sync_client.close()


@pytest.fixture
def cache(backend: CacheBackend) -> AnswerCache:
    return backend.open()
