"""The answer cache, run once over each backend (a real SQLite file, and a real Redis with
a SQLite fallback): exact and semantic hits, scopes, expiry, document versions,
eviction, several instances on one store. Then what only the SQLite file does (another
layout, other processes on the file); what only Redis does is in test_cache_redis.py."""

from __future__ import annotations

import hashlib
import math
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt
import pytest
import redis

from agent.cache import AnswerCache, CachedAnswer, SqliteAnswerCache, normalize_question
from agent.cache.answer_redis import RedisAnswerCache
from agent.coordination.redis_connection import RedisConnection
from agent.nodes.entry import same_subject
from agent.retrieval.embeddings import UniversalSentenceEncoder
from agent.retrieval.ingest import Ingestor, document_id
from agent.retrieval.knowledge_base import KnowledgeBase
from tests.conftest import REPO

SCOPE = "slack:T123|public"
DOCS = {"doc-a": "h1:p1", "doc-b": "h2:p1"}


class FakeClock:
    def __init__(self, now: float = 1_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def vec(cosine: float, dim: int = 8) -> npt.NDArray[np.float32]:
    """A unit vector whose cosine with ``vec(1.0)`` is ``cosine``."""
    row = np.zeros(dim, dtype=np.float32)
    row[0], row[1] = cosine, math.sqrt(max(0.0, 1.0 - cosine * cosine))
    return row


def other(dim: int = 8) -> npt.NDArray[np.float32]:
    """Orthogonal to every ``vec``."""
    row = np.zeros(dim, dtype=np.float32)
    row[2] = 1.0
    return row


def store(
    cache: AnswerCache,
    question: str,
    vector: npt.NDArray[np.float32] | None = None,
    *,
    scope: str = SCOPE,
    answer: str = "seven days",
    docs: dict[str, str] | None = None,
) -> None:
    sources: list[dict[str, Any]] = [{"title": "Backups", "link": None, "page": 3}]
    cache.store(question, vector, scope, answer, sources, "en", DOCS if docs is None else docs)


def versions(table: dict[str, str]) -> Any:
    calls: list[list[str]] = []

    def current(doc_ids: list[str]) -> dict[str, str]:
        calls.append(doc_ids)
        return {d: table[d] for d in doc_ids if d in table}

    current.calls = calls  # type: ignore[attr-defined]
    return current


def entry_count(path: Path) -> int:
    import sqlite3

    with sqlite3.connect(path) as db:
        return int(db.execute("SELECT COUNT(*) FROM entries").fetchone()[0])


def redis_entry_count(connection: RedisConnection) -> int:
    client = redis.Redis.from_url(connection.url)
    try:
        return sum(1 for _ in client.scan_iter(match=connection.prefix + "cache:e:*"))
    finally:
        client.close()


class OpenCache(Protocol):
    def __call__(
        self, *, threshold: float = 0.9, ttl_s: float = 86400.0, max_entries: int = 5000
    ) -> AnswerCache: ...


@dataclass
class CacheBackend:
    """One backend of the answer cache on the test's store. Each ``open`` is another
    instance on it: the same SQLite file, or the same Redis through another worker's
    own connection and fallback file; ``max_entries`` is the SQLite file's bound and
    Redis's bound per scope (the tests keep to one scope, where the two agree)."""

    name: str
    open: OpenCache
    entries: Callable[[], int]


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


# -- normalisation (no backend) -------------------------------------------------------
@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("How long are backups kept?", "how long are backups kept"),
        ("  How   long\tare backups\nkept ?!  ", "how long are backups kept"),
        # ideographic space, full-width ？
        ("백업은　며칠  보관하나요？", "백업은 며칠 보관하나요"),
        # full-width Latin, 。
        ("ＶＰＮ 접속 방법을 알려주세요。", "vpn 접속 방법을 알려주세요"),
        ("ﾊﾞｯｸｱｯﾌﾟ！", "バックアップ"),  # half-width katakana, full-width ！
        ("What is v2.0?", "what is v2.0"),  # only trailing punctuation goes
        ("?!.", ""),
    ],
)
def test_normalize_question(raw: str, expected: str) -> None:
    assert normalize_question(raw) == expected


# -- every backend: exact and semantic ------------------------------------------------
def test_korean_full_width_variant_is_an_exact_hit(cache: AnswerCache) -> None:
    store(cache, "백업은 며칠 보관하나요?")
    hit = cache.lookup("  백업은　며칠 보관하나요？？", None, SCOPE)
    assert hit is not None and hit.similarity == 1.0
    assert hit.question == "백업은 며칠 보관하나요?"  # as first asked


def test_exact_hit_round_trips_the_entry(cache: AnswerCache, clock: FakeClock) -> None:
    sources: list[dict[str, Any]] = [
        {"title": "백업 정책", "link": "https://wiki/backup", "page": None, "score": 0.5}
    ]
    cache.store("How long are backups kept?", vec(1.0), SCOPE, "7일", sources, "ko", DOCS)
    clock.now += 10
    hit = cache.lookup("how long are backups kept", None, SCOPE)
    assert hit == CachedAnswer(
        question="How long are backups kept?",
        answer="7일",
        sources=sources,
        language="ko",
        similarity=1.0,
        created_at=clock.now - 10,
        doc_versions=DOCS,
    )
    # The exact match wins even when the vector points elsewhere.
    hit = cache.lookup("How long are backups kept?", other(), SCOPE)
    assert hit is not None and hit.similarity == 1.0


def test_semantic_hit_at_threshold_and_miss_below(cache: AnswerCache) -> None:
    store(cache, "stored question", vec(1.0))
    hit = cache.lookup("reworded question", vec(0.95), SCOPE)
    assert hit is not None and hit.question == "stored question"
    assert hit.similarity == pytest.approx(0.95, abs=1e-6)
    assert cache.lookup("reworded question", vec(0.85), SCOPE) is None
    assert cache.lookup("reworded question", other(), SCOPE) is None
    assert cache.lookup("reworded question", None, SCOPE) is None
    # (1, dim) rows and unnormalised vectors are accepted.
    assert cache.lookup("reworded question", 3.0 * vec(0.95)[None, :], SCOPE) is not None


def test_semantic_returns_the_best_match(backend: CacheBackend) -> None:
    cache = backend.open(threshold=0.5)
    store(cache, "far", vec(0.6), answer="far")
    store(cache, "near", vec(0.99), answer="near")
    store(cache, "middle", vec(0.8), answer="middle")
    hit = cache.lookup("query", vec(1.0), SCOPE)
    assert hit is not None and hit.answer == "near"
    # Above the default threshold too, in a scope of its own.
    cache = backend.open()
    scope = "slack:T9|eng"
    store(cache, "closer", vec(0.99), scope=scope, answer="closer")
    store(cache, "further", vec(0.93), scope=scope, answer="further")
    store(cache, "far", vec(0.6), scope=scope, answer="far")
    hit = cache.lookup("query", vec(1.0), scope)
    assert hit is not None and hit.answer == "closer"


def test_real_encoder_paraphrases(cache: AnswerCache, embedder: UniversalSentenceEncoder) -> None:
    """The default embedder (multilingual USE) at the default 0.9 threshold: only
    near-verbatim rewordings hit; real paraphrases score 0.67-0.88 and miss."""
    for question in ("백업은 며칠 보관하나요?", "How do I connect to the VPN?"):
        store(cache, question, embedder.embed_query(question))

    def sim(a: str, b: str) -> float:
        return float(embedder.embed_query(a) @ embedder.embed_query(b))

    # Same words, one more: well above 0.9 (measured 0.984 and 0.978).
    for question in ("백업은 며칠 동안 보관하나요?", "How can I connect to VPN?"):
        hit = cache.lookup(question, embedder.embed_query(question), SCOPE)
        assert hit is not None and hit.similarity >= 0.95, question
    # A real paraphrase falls short of 0.9 (measured 0.879): a miss, never a wrong answer.
    paraphrase = "백업 보관 기간은 며칠인가요?"
    assert sim("백업은 며칠 보관하나요?", paraphrase) < 0.9
    assert cache.lookup(paraphrase, embedder.embed_query(paraphrase), SCOPE) is None
    # Same shape, different subject (measured 0.544): must miss.
    logs = "로그는 며칠 보관하나요?"
    assert sim("백업은 며칠 보관하나요?", logs) < 0.7
    assert cache.lookup(logs, embedder.embed_query(logs), SCOPE) is None


def test_scope_isolation(cache: AnswerCache) -> None:
    store(cache, "What is the payroll date?", vec(1.0), scope="slack:T1|hr", answer="25th")
    assert cache.lookup("What is the payroll date?", vec(1.0), "slack:T1|public") is None
    assert cache.lookup("payroll?", vec(1.0), "slack:T2|hr") is None
    hit = cache.lookup("payroll?", vec(1.0), "slack:T1|hr")
    assert hit is not None and hit.answer == "25th"
    # Same question in two scopes: two entries, each answered in its own scope.
    store(cache, "What is the payroll date?", vec(1.0), scope="slack:T1|public", answer="ask HR")
    hit = cache.lookup("What is the payroll date?", None, "slack:T1|public")
    assert hit is not None and hit.answer == "ask HR"
    hit = cache.lookup("What is the payroll date?", None, "slack:T1|hr")
    assert hit is not None and hit.answer == "25th"
    # Vectors of another dimension in that scope are compared with their own kind only.
    store(cache, "sixteen", vec(1.0, dim=16), scope="slack:T1|hr", answer="sixteen")
    hit = cache.lookup("query", vec(0.97, dim=16), "slack:T1|hr")
    assert hit is not None and hit.answer == "sixteen"


def test_vectors_of_another_dimension_are_not_compared(cache: AnswerCache) -> None:
    store(cache, "eight", vec(1.0, dim=8))
    store(cache, "sixteen", vec(1.0, dim=16), answer="sixteen")
    hit = cache.lookup("query", vec(0.97, dim=16), SCOPE)
    assert hit is not None and hit.answer == "sixteen"


def test_a_vetoed_semantic_match_falls_through_to_the_next(cache: AnswerCache) -> None:
    store(cache, "connect to the VPN", vec(0.99), answer="wrong question")
    store(cache, "how to connect to the VPN", vec(0.95), answer="right question")

    def agrees(question: str, cached: str) -> bool:
        return cached.startswith("how")

    hit = cache.lookup("how do I connect to the VPN", vec(1.0), SCOPE, agrees=agrees)
    assert hit is not None and hit.answer == "right question"
    assert cache.lookup("anything", vec(1.0), SCOPE, agrees=lambda q, c: False) is None
    # A veto only skips: the vetoed entry is still there for other questions.
    assert cache.lookup("connect to the VPN", vec(1.0), SCOPE).answer == "wrong question"  # type: ignore[union-attr]


def test_questions_that_normalise_to_nothing_are_not_stored(
    cache: AnswerCache, backend: CacheBackend
) -> None:
    with pytest.raises(TypeError):  # a source that is not JSON is the caller's bug
        cache.store("q", None, SCOPE, "a", [{"when": object()}], "en", {})
    cache.store("?!", vec(1.0), SCOPE, "a", [], "en", {})  # punctuation only: not stored
    assert backend.entries() == 0
    assert cache.lookup("", vec(1.0), SCOPE) is None


# -- every backend: expiry and invalidation -------------------------------------------
def test_ttl_expiry(backend: CacheBackend, clock: FakeClock) -> None:
    cache = backend.open(ttl_s=60.0)
    store(cache, "old question", vec(1.0))
    clock.now += 60
    assert cache.lookup("old question", None, SCOPE) is not None  # exactly ttl_s old: kept
    clock.now += 1
    assert cache.lookup("old question", vec(1.0), SCOPE) is None
    assert backend.entries() == 0  # deleted on the way

    # Semantic path, and expired entries swept by the next store.
    store(cache, "first", vec(1.0))
    store(cache, "second", other())
    clock.now += 61
    assert cache.lookup("query", vec(0.99), SCOPE) is None
    store(cache, "third", None)
    assert backend.entries() == 1


def test_changed_document_drops_the_entry(cache: AnswerCache, backend: CacheBackend) -> None:
    store(cache, "How long are backups kept?", vec(1.0))
    store(cache, "uncited", other(), docs={})
    current = versions({**DOCS, "doc-b": "h3:p1"})
    assert cache.lookup("How long are backups kept?", vec(1.0), SCOPE, current) is None
    assert sorted(current.calls[0]) == ["doc-a", "doc-b"]
    # Gone for good, not just hidden from this caller; the uncited entry stays.
    assert cache.lookup("How long are backups kept?", vec(1.0), SCOPE) is None
    assert backend.entries() == 1


def test_deleted_document_drops_the_entry(cache: AnswerCache) -> None:
    store(cache, "How long are backups kept?", vec(1.0))
    current = versions({"doc-a": DOCS["doc-a"]})  # doc-b no longer exists
    assert cache.lookup("reworded", vec(0.99), SCOPE, current) is None
    assert cache.lookup("How long are backups kept?", None, SCOPE) is None


def test_current_versions_serve_the_entry(cache: AnswerCache) -> None:
    store(cache, "How long are backups kept?", vec(1.0))
    store(cache, "uncited", other(), docs={})
    current = versions(dict(DOCS))
    assert cache.lookup("How long are backups kept?", None, SCOPE, current) is not None
    assert cache.lookup("uncited", None, SCOPE, current) is not None
    assert len(current.calls) == 1  # nothing cited, nothing to check


def test_stale_exact_entry_falls_through_to_a_valid_semantic_one(cache: AnswerCache) -> None:
    store(cache, "How long are backups kept?", vec(1.0), answer="stale", docs={"doc-a": "old"})
    store(cache, "Backup retention?", vec(0.96), answer="fresh", docs={"doc-b": "h2:p1"})
    store(cache, "Best but stale", vec(0.999), answer="stale too", docs={"doc-a": "old"})
    hit = cache.lookup("How long are backups kept?", vec(1.0), SCOPE, versions(DOCS))
    assert hit is not None and hit.answer == "fresh"
    assert hit.similarity == pytest.approx(0.96, abs=1e-6)


def test_invalidate_documents(cache: AnswerCache, backend: CacheBackend) -> None:
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
    assert backend.entries() == 0


# -- every backend: store, replace and evict ------------------------------------------
def test_restore_replaces_the_entry(cache: AnswerCache, backend: CacheBackend) -> None:
    store(cache, "How long are backups kept?", vec(1.0), answer="five days")
    store(cache, "how long are backups kept", vec(0.97), answer="seven days", docs={"d": "2"})
    assert backend.entries() == 1
    hit = cache.lookup("HOW LONG ARE BACKUPS KEPT?", None, SCOPE)
    assert hit is not None and hit.answer == "seven days" and hit.doc_versions == {"d": "2"}
    assert hit.question == "how long are backups kept"
    # The replaced entry's old vector and document links went with it.
    hit = cache.lookup("query", vec(1.0), SCOPE)
    assert hit is not None and hit.answer == "seven days"
    assert hit.similarity == pytest.approx(0.97, abs=1e-6)
    assert cache.invalidate_documents(["doc-a"]) == 0


def test_eviction_drops_the_oldest(backend: CacheBackend, clock: FakeClock) -> None:
    cache = backend.open(max_entries=3)
    for i in range(5):
        store(cache, f"question {i}", vec(1.0 - i / 100))
        clock.now += 1
    assert backend.entries() == 3
    assert cache.lookup("question 0", None, SCOPE) is None
    assert cache.lookup("question 1", None, SCOPE) is None
    for i in (2, 3, 4):
        assert cache.lookup(f"question {i}", None, SCOPE) is not None
    hit = cache.lookup("query", vec(1.0), SCOPE)  # question 0 was the closest: gone
    assert hit is not None and hit.question == "question 2"


def test_clear(cache: AnswerCache, backend: CacheBackend) -> None:
    store(cache, "one", vec(1.0))
    assert cache.lookup("query", vec(1.0), SCOPE) is not None
    cache.clear()
    assert backend.entries() == 0
    assert cache.lookup("one", vec(1.0), SCOPE) is None
    store(cache, "two", vec(1.0))
    hit = cache.lookup("query", vec(1.0), SCOPE)
    assert hit is not None and hit.question == "two"


def test_matrix_stays_correct_through_churn(backend: CacheBackend, clock: FakeClock) -> None:
    """Many stores, evictions and invalidations: the in-memory matrix picks up new rows,
    is reloaded as it grows, and rows of deleted entries are never served."""
    cache = backend.open(max_entries=50, threshold=0.999)
    rng = np.random.default_rng(7)
    rows = rng.normal(size=(400, 32)).astype(np.float32)
    rows /= np.linalg.norm(rows, axis=1, keepdims=True)
    for i, row in enumerate(rows):
        store(cache, f"q{i}", row, docs={f"doc-{i % 7}": "1"})
        clock.now += 1
        if i % 40 == 39:
            cache.invalidate_documents([f"doc-{(i + 1) % 7}"])
        hit = cache.lookup("query", row, SCOPE)
        assert hit is not None and hit.question == f"q{i}"
    for i in range(300):  # all evicted (invalidations leave room for a few more)
        assert cache.lookup("query", rows[i], SCOPE) is None
    assert backend.entries() <= 50


# -- every backend: several instances on one store ------------------------------------
def test_two_instances_share_the_cache(backend: CacheBackend) -> None:
    """Two workers (or two instances on one file): what one writes, deletes or clears,
    the other sees, though it has the rows of the old entries loaded."""
    writer, reader = backend.open(), backend.open()
    store(writer, "unrelated", other())
    assert reader.lookup("query", vec(1.0), SCOPE) is None  # reader's matrix is now loaded

    store(writer, "How long are backups kept?", vec(1.0))
    assert reader.lookup("How long are backups kept?", None, SCOPE) is not None
    hit = reader.lookup("reworded", vec(0.95), SCOPE)  # picked up without a reload
    assert hit is not None and hit.question == "How long are backups kept?"

    # Deleted by the other instance: the reader's matrix still has the row, the store not.
    assert writer.invalidate_documents(["doc-a"]) == 2
    assert reader.lookup("reworded", vec(0.95), SCOPE) is None
    store(writer, "How long are backups kept?", vec(0.95), answer="replaced")
    hit = reader.lookup("reworded", vec(1.0), SCOPE)
    assert hit is not None and hit.answer == "replaced"

    writer.clear()  # by one instance, while the other has the rows loaded
    for n in range(3):  # ids may start again at 1: the third one is "replaced"'s old id
        store(writer, f"after the clear {n}", other(), answer="new")
    assert reader.lookup("reworded", vec(1.0), SCOPE) is None  # no old row names them
    hit = reader.lookup("q", other(), SCOPE)
    assert hit is not None and hit.answer == "new"
    reader.clear()
    assert writer.lookup("after the clear 0", None, SCOPE) is None
    assert writer.lookup("reworded", vec(1.0), SCOPE) is None


def test_threads_share_one_instance(cache: AnswerCache, backend: CacheBackend) -> None:
    errors: list[BaseException] = []

    def work(worker: int) -> None:
        try:
            for i in range(25):
                question = f"worker {worker} question {i}"
                store(cache, question, vec(1.0 - (worker * 25 + i) / 1000))
                hit = cache.lookup(question, vec(1.0), SCOPE)
                assert hit is not None
                if i % 5 == 0:
                    cache.invalidate_documents([f"doc-{worker}"])
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(w,)) for w in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    assert backend.entries() == 100


# -- the SQLite file only ---------------------------------------------------------------
def test_another_process_sees_writes(path: Path) -> None:
    """Processes on one machine share the file (Redis workers share through Redis, in
    test_two_instances_share_the_cache)."""
    cache = SqliteAnswerCache(path)
    store(cache, "warm", other())
    assert cache.lookup("query", vec(1.0), SCOPE) is None
    script = (
        "import sys, numpy as np\n"
        "from pathlib import Path\n"
        "from agent.cache import SqliteAnswerCache\n"
        "c = SqliteAnswerCache(Path(sys.argv[1]))\n"
        "v = np.zeros(8, np.float32); v[0] = 1.0\n"
        "c.store('from the child', v, sys.argv[2], 'child answer', [], 'en', {'doc-a': '1'})\n"
        "hit = c.lookup('warm', None, sys.argv[2])\n"
        "assert hit is not None and hit.answer == 'seven days'\n"
    )
    subprocess.run([sys.executable, "-c", script, str(path), SCOPE], cwd=REPO, check=True)
    hit = cache.lookup("query", vec(0.99), SCOPE)
    assert hit is not None and hit.answer == "child answer"
    cache.close()


def test_a_file_of_another_layout_is_replaced(path: Path) -> None:
    import sqlite3

    path.parent.mkdir(parents=True)
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE entries (id INTEGER PRIMARY KEY, junk TEXT)")
        db.execute("PRAGMA user_version = 99")
    cache = SqliteAnswerCache(path)
    store(cache, "works", vec(1.0))
    assert cache.lookup("works", None, SCOPE) is not None
    cache.close()


# -- catalog versions -----------------------------------------------------------------
def test_catalog_document_versions(tmp_path: Path, kb: KnowledgeBase, ingestor: Ingestor) -> None:
    note = tmp_path / "docs" / "backups.md"
    note.parent.mkdir()
    body = "# Backups\n\nPostgres backups are kept for seven days."
    note.write_text(body, encoding="utf-8")
    ingestor.run([note.parent])
    doc = document_id(str(note.resolve()))
    first = kb.catalog.document_versions([doc, "no-such-doc"])
    digest = hashlib.sha256(body.encode()).hexdigest()
    assert first == {doc: f"{digest}:{kb.pipeline}:public"}
    assert kb.catalog.document_versions([]) == {}

    note.write_text(body.replace("seven", "thirty"), encoding="utf-8")
    ingestor.run([note.parent])
    second = kb.catalog.document_versions(iter([doc]))
    assert second.keys() == {doc} and second != first

    # Wired to the cache: the answer from the first version is dropped.
    cache = SqliteAnswerCache(tmp_path / "answers.sqlite3")
    store(cache, "How long are backups kept?", None, docs=first)
    assert cache.lookup("How long are backups kept?", None, SCOPE) is not None
    current = kb.catalog.document_versions
    assert cache.lookup("How long are backups kept?", None, SCOPE, current) is None

    # Moving the document to another scope changes its version too.
    ingestor.run([note.parent], scope="hr")
    assert kb.catalog.document_versions([doc])[doc].endswith(":hr")

    note.unlink()
    ingestor.run([note.parent], prune=True)
    assert kb.catalog.document_versions([doc]) == {}


@pytest.mark.parametrize(
    ("question", "cached", "same"),
    [
        ("How do I connect to the VPN?", "How do I disconnect from the VPN?", False),
        ("프로덕션 DB 백업은 며칠 보관하나요?", "스테이징 DB 백업은 며칠 보관하나요?", False),
        ("How long are Postgres backups retained?", "How long are MySQL backups retained?", False),
        ("백업은 며칠 보관하나요?", "백업은 며칠 동안 보관하나요?", True),
        ("휴가 신청은 어떻게 하나요?", "휴가 신청 어떻게 해요?", True),
    ],
)
def test_the_agent_vetoes_semantic_hits_with_a_swapped_term(
    question: str, cached: str, same: bool
) -> None:
    assert same_subject(question, cached) is same
