"""What only the Redis answer cache does: keys Redis expires by itself, a bound per scope,
a clear that spares other deployments and empties the fallback, and the embedded
fallback while Redis is gone. The behaviour both backends promise is in
test_cache_lookup.py, test_cache_invalidation.py and test_cache_storage.py, run over each."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from agent.cache import SqliteAnswerCache
from agent.cache.answer_redis import RedisAnswerCache
from agent.coordination.redis_connection import RedisConnection
from tests.support.cache_support import SCOPE, FakeClock, other, store, vec
from tests.support.cache_support import redis_entry_count as entry_count
from tests.support.redis_support import RedisServer

pytest_plugins = ("tests.support.cache_fixtures",)


@pytest.fixture
def fallback(tmp_path: Path, clock: FakeClock) -> Iterator[SqliteAnswerCache]:
    cache = SqliteAnswerCache(tmp_path / "fallback.sqlite3", clock=clock)
    yield cache
    cache.close()


@pytest.fixture
def cache(
    redis_connection: RedisConnection, fallback: SqliteAnswerCache, clock: FakeClock
) -> RedisAnswerCache:
    return RedisAnswerCache(redis_connection, fallback, threshold=0.9, ttl_s=86400, clock=clock)


def test_redis_expires_the_keys_of_an_idle_scope(
    redis_connection: RedisConnection, fallback: SqliteAnswerCache, clock: FakeClock
) -> None:
    """Besides the sweep both backends do (test_cache_invalidation.py's test_ttl_expiry),
    Redis expires the keys by itself: an idle scope leaves nothing behind."""
    cache = RedisAnswerCache(redis_connection, fallback, ttl_s=60.0, clock=clock)
    store(cache, "old question", vec(1.0))
    client = redis.Redis.from_url(redis_connection.url)
    ttl_ms = client.pttl(redis_connection.prefix + "cache:exact:" + SCOPE)
    client.close()
    assert 0 < ttl_ms <= 60_000


def test_eviction_bounds_each_scope_alone(
    redis_connection: RedisConnection, fallback: SqliteAnswerCache, clock: FakeClock
) -> None:
    """Redis bounds each scope (``max_entries_per_scope``), the SQLite file the whole file
    (``max_entries``): a full scope does not evict another scope's entries here."""
    cache = RedisAnswerCache(redis_connection, fallback, max_entries_per_scope=3, clock=clock)
    store(cache, "elsewhere", None, scope="discord:G1|public")
    for i in range(5):
        store(cache, f"question {i}", vec(1.0 - i / 100))
        clock.now += 1
    assert entry_count(redis_connection) == 4
    assert cache.lookup("question 0", None, SCOPE) is None
    assert cache.lookup("question 1", None, SCOPE) is None
    for i in (2, 3, 4):
        assert cache.lookup(f"question {i}", None, SCOPE) is not None
    assert cache.lookup("elsewhere", None, "discord:G1|public") is not None


def test_clear_leaves_other_deployments_alone_and_empties_the_fallback(
    cache: RedisAnswerCache, redis_connection: RedisConnection, fallback: SqliteAnswerCache
) -> None:
    client = redis.Redis.from_url(redis_connection.url)
    client.set("other-deployment:cache:e:1", "keep me")
    store(cache, "one", vec(1.0))
    fallback.store("kept by the fallback", None, SCOPE, "a", [], "en", {})
    cache.clear()
    assert entry_count(redis_connection) == 0
    assert fallback.lookup("kept by the fallback", None, SCOPE) is None  # cleared as well
    assert client.get("other-deployment:cache:e:1") == b"keep me"
    client.close()


def test_bad_settings_are_refused(
    redis_connection: RedisConnection, fallback: SqliteAnswerCache
) -> None:
    """Checked by the Redis cache, which turns them into key expiries and bounds (the SQLite
    cache, configured from the same checked settings, takes them as given)."""
    with pytest.raises(ValueError, match="must be positive"):
        RedisAnswerCache(redis_connection, fallback, ttl_s=0)
    with pytest.raises(ValueError, match="must be positive"):
        RedisAnswerCache(redis_connection, fallback, max_entries_per_scope=0)


# -- Redis gone ----------------------------------------------------------------------
def test_redis_down_falls_back_and_back_uses_redis_again(
    redis_server: RedisServer,
    cache: RedisAnswerCache,
    redis_connection: RedisConnection,
    fallback: SqliteAnswerCache,
) -> None:
    store(cache, "shared", vec(1.0), answer="from redis")
    redis_server.stop()
    assert cache.lookup("shared", None, SCOPE) is None  # the fallback does not have it
    store(cache, "during the outage", other(), answer="from the fallback")
    hit = cache.lookup("reworded", other(), SCOPE)
    assert hit is not None and hit.answer == "from the fallback"
    assert fallback.lookup("during the outage", None, SCOPE) is not None
    assert cache.invalidate_documents(["doc-a"]) == 1  # the fallback's entry
    redis_server.start()
    time.sleep(0.25)  # the connection's retry_s
    store(cache, "after the outage", vec(1.0), answer="from redis again")
    assert entry_count(redis_connection) == 1
    hit = cache.lookup("reworded", vec(0.99), SCOPE)
    assert hit is not None and hit.answer == "from redis again"
    assert fallback.lookup("after the outage", None, SCOPE) is None


def test_redis_restarted_empty_does_not_confuse_loaded_rows(
    redis_server: RedisServer, cache: RedisAnswerCache
) -> None:
    store(cache, "before the restart", vec(1.0))
    assert cache.lookup("query", vec(1.0), SCOPE) is not None  # its row is loaded here
    redis_server.stop()
    redis_server.start()
    time.sleep(0.25)
    store(cache, "after the restart", other(), answer="another entry")  # the same id again
    assert cache.lookup("query", vec(1.0), SCOPE) is None


def test_redis_gone_mid_lookup_answers_from_the_fallback(
    redis_server: RedisServer, cache: RedisAnswerCache, fallback: SqliteAnswerCache
) -> None:
    store(cache, "How long are backups kept?", vec(1.0), answer="redis")
    fallback.store("How long are backups kept?", None, SCOPE, "fallback", [], "en", {})

    def stop_redis_then_answer(doc_ids: list[str]) -> dict[str, str]:
        redis_server.stop()  # between reading the entry and dropping it as stale
        return {"doc-a": "changed"}

    hit = cache.lookup("How long are backups kept?", None, SCOPE, stop_redis_then_answer)
    assert hit is not None and hit.answer == "fallback"  # the whole lookup, redone there
