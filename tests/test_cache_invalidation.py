"""The answer cache forgets: entries expire, and an entry whose cited documents changed,
went away or were invalidated is dropped; on each backend, and wired to the catalog's
document versions."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from agent.cache import AnswerCache, SqliteAnswerCache
from agent.retrieval.ingest import Ingestor, document_id
from agent.retrieval.knowledge_base import KnowledgeBase
from tests.support.cache_support import (
    DOCS,
    SCOPE,
    CacheBackend,
    FakeClock,
    other,
    store,
    vec,
    versions,
)

pytest_plugins = ("tests.support.cache_fixtures",)


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
