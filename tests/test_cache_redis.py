"""The answer cache on a real Redis: the SQLite cache's behaviour (exact and semantic hits,
scopes, expiry, document versions, eviction), shared by two workers, and the embedded
fallback while Redis is gone."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import redis

from agent.cache import CachedAnswer, SqliteAnswerCache
from agent.cache.answer_redis import RedisAnswerCache
from agent.shared.link import RedisLink
from tests.redis_support import RedisServer
from tests.test_cache import DOCS, SCOPE, FakeClock, other, store, vec, versions


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def fallback(tmp_path: Path, clock: FakeClock) -> Iterator[SqliteAnswerCache]:
    cache = SqliteAnswerCache(tmp_path / "fallback.sqlite3", clock=clock)
    yield cache
    cache.close()


@pytest.fixture
def cache(redis_link: RedisLink, fallback: SqliteAnswerCache, clock: FakeClock) -> RedisAnswerCache:
    return RedisAnswerCache(redis_link, fallback, threshold=0.9, ttl_s=86400, clock=clock)


@pytest.fixture
def second_link(redis_link: RedisLink) -> Iterator[RedisLink]:
    """Another worker: its own connections, the same server and prefix."""
    link = RedisLink(redis_link.url, prefix=redis_link.prefix, retry_s=0.2, timeout_s=0.5)
    yield link
    link.sync_client.close()


def entry_count(link: RedisLink) -> int:
    client = redis.Redis.from_url(link.url)
    try:
        return sum(1 for _ in client.scan_iter(match=link.prefix + "cache:e:*"))
    finally:
        client.close()


# -- the SQLite cache's behaviour ---------------------------------------------------
def test_exact_hit_round_trips_the_entry(cache: RedisAnswerCache, clock: FakeClock) -> None:
    sources: list[dict[str, Any]] = [
        {"title": "백업 정책", "link": "https://wiki/backup", "page": None, "score": 0.5}
    ]
    cache.store("How long are backups kept?", vec(1.0), SCOPE, "7일", sources, "ko", DOCS)
    clock.now += 10
    assert cache.lookup("how long are backups kept", None, SCOPE) == CachedAnswer(
        question="How long are backups kept?",
        answer="7일",
        sources=sources,
        language="ko",
        similarity=1.0,
        created_at=clock.now - 10,
        doc_versions=DOCS,
    )
    hit = cache.lookup("How long are backups kept?", other(), SCOPE)  # exact wins
    assert hit is not None and hit.similarity == 1.0
    store(cache, "백업은 며칠 보관하나요?")
    hit = cache.lookup("  백업은　며칠 보관하나요？？", None, SCOPE)
    assert hit is not None and hit.question == "백업은 며칠 보관하나요?"


def test_semantic_threshold_best_match_and_veto(
    redis_link: RedisLink, fallback: SqliteAnswerCache
) -> None:
    cache = RedisAnswerCache(redis_link, fallback, threshold=0.9)
    store(cache, "stored question", vec(1.0))
    hit = cache.lookup("reworded question", vec(0.95), SCOPE)
    assert hit is not None and hit.question == "stored question"
    assert hit.similarity == pytest.approx(0.95, abs=1e-6)
    assert cache.lookup("reworded question", vec(0.85), SCOPE) is None
    assert cache.lookup("reworded question", other(), SCOPE) is None
    assert cache.lookup("reworded question", None, SCOPE) is None
    assert cache.lookup("reworded question", 3.0 * vec(0.95)[None, :], SCOPE) is not None

    scope = "slack:T9|eng"
    store(cache, "closer", vec(0.99), scope=scope, answer="closer")
    store(cache, "how: further", vec(0.93), scope=scope, answer="further")
    store(cache, "far", vec(0.6), scope=scope, answer="far")
    hit = cache.lookup("query", vec(1.0), scope)
    assert hit is not None and hit.answer == "closer"
    hit = cache.lookup("how query", vec(1.0), scope, agrees=lambda q, c: c.startswith("how"))
    assert hit is not None and hit.answer == "further"  # the vetoed one was skipped
    assert cache.lookup("q", vec(1.0), scope, agrees=lambda q, c: False) is None
    assert cache.lookup("closer", None, scope) is not None  # a veto does not delete


def test_scopes_and_dimensions_are_kept_apart(cache: RedisAnswerCache) -> None:
    store(cache, "What is the payroll date?", vec(1.0), scope="slack:T1|hr", answer="25th")
    assert cache.lookup("What is the payroll date?", vec(1.0), "slack:T1|public") is None
    hit = cache.lookup("payroll?", vec(1.0), "slack:T1|hr")
    assert hit is not None and hit.answer == "25th"
    store(cache, "What is the payroll date?", vec(1.0), scope="slack:T1|public", answer="ask HR")
    assert cache.lookup("What is the payroll date?", None, "slack:T1|public").answer == "ask HR"  # type: ignore[union-attr]
    assert cache.lookup("What is the payroll date?", None, "slack:T1|hr").answer == "25th"  # type: ignore[union-attr]
    store(cache, "sixteen", vec(1.0, dim=16), scope="slack:T1|hr", answer="sixteen")
    hit = cache.lookup("query", vec(0.97, dim=16), "slack:T1|hr")
    assert hit is not None and hit.answer == "sixteen"


def test_ttl_expiry(redis_link: RedisLink, fallback: SqliteAnswerCache, clock: FakeClock) -> None:
    cache = RedisAnswerCache(redis_link, fallback, ttl_s=60.0, clock=clock)
    store(cache, "old question", vec(1.0))
    clock.now += 60
    assert cache.lookup("old question", None, SCOPE) is not None  # exactly ttl_s old: kept
    clock.now += 1
    assert cache.lookup("old question", vec(1.0), SCOPE) is None
    assert entry_count(redis_link) == 0  # deleted on the way
    store(cache, "first", vec(1.0))
    store(cache, "second", other())
    clock.now += 61
    assert cache.lookup("query", vec(0.99), SCOPE) is None
    store(cache, "third", None)  # the scope's expired entries are swept by the next store
    assert entry_count(redis_link) == 1
    # Redis expires the keys by itself too (an idle scope leaves nothing behind).
    client = redis.Redis.from_url(redis_link.url)
    ttl_ms = client.pttl(redis_link.prefix + "cache:exact:" + SCOPE)
    client.close()
    assert 0 < ttl_ms <= 60_000


def test_document_versions(cache: RedisAnswerCache, redis_link: RedisLink) -> None:
    store(cache, "How long are backups kept?", vec(1.0))
    store(cache, "uncited", other(), docs={})
    current = versions(dict(DOCS))
    assert cache.lookup("How long are backups kept?", None, SCOPE, current) is not None
    assert cache.lookup("uncited", None, SCOPE, current) is not None
    assert len(current.calls) == 1  # nothing cited, nothing to check
    changed = versions({**DOCS, "doc-b": "h3:p1"})
    assert cache.lookup("How long are backups kept?", vec(1.0), SCOPE, changed) is None
    assert sorted(changed.calls[0]) == ["doc-a", "doc-b"]
    assert cache.lookup("How long are backups kept?", vec(1.0), SCOPE) is None  # gone for good
    assert entry_count(redis_link) == 1
    store(cache, "deleted doc", vec(1.0))
    assert cache.lookup("reworded", vec(0.99), SCOPE, versions({"doc-a": "h1:p1"})) is None


def test_stale_exact_entry_falls_through_to_a_valid_semantic_one(
    cache: RedisAnswerCache,
) -> None:
    store(cache, "How long are backups kept?", vec(1.0), answer="stale", docs={"doc-a": "old"})
    store(cache, "Backup retention?", vec(0.96), answer="fresh", docs={"doc-b": "h2:p1"})
    store(cache, "Best but stale", vec(0.999), answer="stale too", docs={"doc-a": "old"})
    hit = cache.lookup("How long are backups kept?", vec(1.0), SCOPE, versions(DOCS))
    assert hit is not None and hit.answer == "fresh"
    assert hit.similarity == pytest.approx(0.96, abs=1e-6)


def test_invalidate_documents(cache: RedisAnswerCache, redis_link: RedisLink) -> None:
    store(cache, "cites a", vec(1.0), docs={"doc-a": "1"})
    store(cache, "cites a and b", other(), docs={"doc-a": "1", "doc-b": "1"})
    store(cache, "cites b", None, docs={"doc-b": "1"})
    store(cache, "cites c", None, scope="discord:G1|public", docs={"doc-c": "1"})
    assert cache.invalidate_documents(["doc-a", "doc-a", "unknown"]) == 2
    assert cache.lookup("cites a", vec(1.0), SCOPE) is None
    assert cache.lookup("cites a and b", other(), SCOPE) is None
    assert cache.lookup("cites b", None, SCOPE) is not None
    assert cache.invalidate_documents(iter(["doc-b", "doc-c"])) == 2
    assert cache.invalidate_documents([]) == 0
    assert entry_count(redis_link) == 0


def test_restore_replaces_the_entry(cache: RedisAnswerCache, redis_link: RedisLink) -> None:
    store(cache, "How long are backups kept?", vec(1.0), answer="five days")
    store(cache, "how long are backups kept", vec(0.97), answer="seven days", docs={"d": "2"})
    assert entry_count(redis_link) == 1
    hit = cache.lookup("HOW LONG ARE BACKUPS KEPT?", None, SCOPE)
    assert hit is not None and hit.answer == "seven days" and hit.doc_versions == {"d": "2"}
    hit = cache.lookup("query", vec(1.0), SCOPE)  # the old vector went with the old entry
    assert hit is not None and hit.answer == "seven days"
    assert hit.similarity == pytest.approx(0.97, abs=1e-6)
    assert cache.invalidate_documents(["doc-a"]) == 0  # and its document links


def test_eviction_drops_the_oldest_of_the_scope(
    redis_link: RedisLink, fallback: SqliteAnswerCache, clock: FakeClock
) -> None:
    cache = RedisAnswerCache(redis_link, fallback, max_entries_per_scope=3, clock=clock)
    store(cache, "elsewhere", None, scope="discord:G1|public")
    for i in range(5):
        store(cache, f"question {i}", vec(1.0 - i / 100))
        clock.now += 1
    assert entry_count(redis_link) == 4
    assert cache.lookup("question 0", None, SCOPE) is None
    assert cache.lookup("question 1", None, SCOPE) is None
    for i in (2, 3, 4):
        assert cache.lookup(f"question {i}", None, SCOPE) is not None
    hit = cache.lookup("query", vec(1.0), SCOPE)  # question 0 was the closest: gone
    assert hit is not None and hit.question == "question 2"
    assert cache.lookup("elsewhere", None, "discord:G1|public") is not None


def test_clear_leaves_other_deployments_alone(
    cache: RedisAnswerCache, redis_link: RedisLink, fallback: SqliteAnswerCache
) -> None:
    client = redis.Redis.from_url(redis_link.url)
    client.set("other-deployment:cache:e:1", "keep me")
    store(cache, "one", vec(1.0))
    fallback.store("kept by the fallback", None, SCOPE, "a", [], "en", {})
    assert cache.lookup("query", vec(1.0), SCOPE) is not None
    cache.clear()
    assert entry_count(redis_link) == 0
    assert cache.lookup("one", vec(1.0), SCOPE) is None
    assert fallback.lookup("kept by the fallback", None, SCOPE) is None  # cleared as well
    assert client.get("other-deployment:cache:e:1") == b"keep me"
    client.close()
    store(cache, "two", vec(1.0))
    hit = cache.lookup("query", vec(1.0), SCOPE)
    assert hit is not None and hit.question == "two"


def test_bad_input(redis_link: RedisLink, fallback: SqliteAnswerCache) -> None:
    with pytest.raises(ValueError, match="must be positive"):
        RedisAnswerCache(redis_link, fallback, ttl_s=0)
    cache = RedisAnswerCache(redis_link, fallback)
    with pytest.raises(TypeError):  # a source that is not JSON is the caller's bug
        cache.store("q", None, SCOPE, "a", [{"when": object()}], "en", {})
    cache.store("?!", vec(1.0), SCOPE, "a", [], "en", {})  # punctuation only: not stored
    assert entry_count(redis_link) == 0
    assert cache.lookup("", vec(1.0), SCOPE) is None


def test_vectors_stay_correct_through_churn(
    redis_link: RedisLink, fallback: SqliteAnswerCache, clock: FakeClock
) -> None:
    """Many stores, evictions and invalidations: the worker's matrix picks up new rows,
    is reloaded as it grows, and never serves a deleted entry."""
    cache = RedisAnswerCache(
        redis_link, fallback, max_entries_per_scope=50, threshold=0.999, clock=clock
    )
    rng = np.random.default_rng(7)
    rows = rng.normal(size=(300, 32)).astype(np.float32)
    rows /= np.linalg.norm(rows, axis=1, keepdims=True)
    for i, row in enumerate(rows):
        store(cache, f"q{i}", row, docs={f"doc-{i % 7}": "1"})
        clock.now += 1
        if i % 40 == 39:
            cache.invalidate_documents([f"doc-{(i + 1) % 7}"])
        hit = cache.lookup("query", row, SCOPE)
        assert hit is not None and hit.question == f"q{i}"
    for i in range(200):  # all evicted (invalidations leave room for a few more)
        assert cache.lookup("query", rows[i], SCOPE) is None
    assert entry_count(redis_link) <= 50


def test_threads_share_one_instance(cache: RedisAnswerCache, redis_link: RedisLink) -> None:
    errors: list[BaseException] = []

    def work(worker: int) -> None:
        try:
            for i in range(25):
                question = f"worker {worker} question {i}"
                store(cache, question, vec(1.0 - (worker * 25 + i) / 1000))
                assert cache.lookup(question, vec(1.0), SCOPE) is not None
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(w,)) for w in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    assert entry_count(redis_link) == 100


# -- shared by workers -------------------------------------------------------------
def test_two_workers_share_the_cache(
    cache: RedisAnswerCache,
    second_link: RedisLink,
    tmp_path: Path,
    clock: FakeClock,
) -> None:
    reader_fallback = SqliteAnswerCache(tmp_path / "reader.sqlite3", clock=clock)
    reader = RedisAnswerCache(second_link, reader_fallback, clock=clock)
    store(cache, "unrelated", other())
    assert reader.lookup("query", vec(1.0), SCOPE) is None  # the reader's matrix is loaded

    store(cache, "How long are backups kept?", vec(1.0))
    assert reader.lookup("How long are backups kept?", None, SCOPE) is not None
    hit = reader.lookup("reworded", vec(0.95), SCOPE)  # picked up without a reload
    assert hit is not None and hit.question == "How long are backups kept?"

    assert cache.invalidate_documents(["doc-a"]) == 2  # the reader still has the rows
    assert reader.lookup("reworded", vec(0.95), SCOPE) is None
    store(cache, "How long are backups kept?", vec(0.95), answer="replaced")
    hit = reader.lookup("reworded", vec(1.0), SCOPE)
    assert hit is not None and hit.answer == "replaced"

    cache.clear()  # by one worker, while the other has the rows loaded
    for n in range(3):  # ids start again at 1: the third one is "replaced"'s old id
        store(cache, f"after the clear {n}", other(), answer="new")
    assert reader.lookup("reworded", vec(1.0), SCOPE) is None  # no old row names them
    hit = reader.lookup("q", other(), SCOPE)
    assert hit is not None and hit.answer == "new"
    reader.clear()
    assert cache.lookup("after the clear 0", None, SCOPE) is None
    reader_fallback.close()


# -- Redis gone ----------------------------------------------------------------------
def test_redis_down_falls_back_and_back_uses_redis_again(
    redis_server: RedisServer,
    cache: RedisAnswerCache,
    redis_link: RedisLink,
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
    time.sleep(0.25)  # the link's retry_s
    store(cache, "after the outage", vec(1.0), answer="from redis again")
    assert entry_count(redis_link) == 1
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
