"""The same knowledge base on a real Chroma server (``chroma run``) through ``HttpClient``."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent.retrieval.embeddings import UniversalSentenceEncoder
from agent.retrieval.ingest import Ingestor, Status
from agent.retrieval.knowledge_base import KnowledgeBase, SearchOptions, collection_name
from agent.retrieval.vectors import VectorStore, VectorStoreError
from tests.conftest import SAMPLES
from tests.support.servers import chroma_server, free_port


def test_ingest_and_search_on_a_chroma_server(
    tmp_path: Path, embedder: UniversalSentenceEncoder
) -> None:
    with chroma_server(tmp_path / "chroma-server") as url:
        vectors = VectorStore.remote(url, collection_name(embedder.name))
        kb = KnowledgeBase(tmp_path / "data", embedder, vectors)
        report = Ingestor(kb).run([SAMPLES], prune=True)
        assert not report.failed and report.count(Status.ADDED) >= 5
        assert vectors.count() == kb.catalog.chunk_count()
        hits = kb.search("Postgres 백업은 며칠 동안 보관되나요?", SearchOptions(k=5))
        assert any(h.chunk.source.endswith("ops-handbook.pdf") and h.chunk.page == 4 for h in hits)
        scoped = kb.search("backups", SearchOptions(k=5, scopes=frozenset({"secret"})))
        assert scoped == []
        kb.close()


def test_unreachable_chroma_server_names_the_fix(tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{free_port()}"
    with pytest.raises(VectorStoreError) as info:
        VectorStore.remote(url, "teamrag-test")
    message = str(info.value)
    assert url in message and "unset CHROMA_URL" in message


def test_chroma_server_going_away_fails_the_file_and_keeps_the_catalog(
    tmp_path: Path, embedder: UniversalSentenceEncoder
) -> None:
    doc = tmp_path / "a.md"
    doc.write_text("# Lunch\n\nLunch is served at noon.", encoding="utf-8")
    with chroma_server(tmp_path / "chroma-server") as url:
        vectors = VectorStore.remote(url, collection_name(embedder.name))
        kb = KnowledgeBase(tmp_path / "data", embedder, vectors)
        Ingestor(kb).run([doc])
    # The server is stopped now.
    doc.write_text("# Lunch\n\nLunch moved to one o'clock.", encoding="utf-8")
    report = Ingestor(kb).run([doc])
    assert report.count(Status.FAILED) == 1
    assert f"Chroma server at {url}" in report.failed[0].reason
    hits = kb.search("lunch", SearchOptions(mode="keyword"))
    assert "noon" in hits[0].chunk.text  # the previous version is still the catalog's
    with pytest.raises(VectorStoreError, match="search failed"):
        kb.search("lunch")
    kb.close()
