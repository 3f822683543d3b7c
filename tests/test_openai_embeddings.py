"""The OpenAI-compatible embeddings option, against a local fake server over real HTTP."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from agent.retrieval.embeddings import EmbeddingError, OpenAICompatibleEmbedder
from agent.retrieval.ingest import Ingestor, Status
from agent.retrieval.knowledge_base import KnowledgeBase, SearchOptions
from bots.settings import Settings
from bots.wiring import build_knowledge_base
from tests.fakes.openai_server import FakeOpenAI


@pytest.fixture
def fake_openai() -> Iterator[FakeOpenAI]:
    server = FakeOpenAI().start()
    yield server
    server.stop()


def _kb(tmp_path: Path, server: FakeOpenAI) -> KnowledgeBase:
    settings = Settings(
        data_dir=tmp_path / "data",
        embeddings="openai",
        embeddings_model="fake-embed",
        OPENAI_BASE_URL=server.base_url,
        OPENAI_API_KEY="test-key",
    )
    return build_knowledge_base(settings)


def test_ingest_and_search_through_the_endpoint(tmp_path: Path, fake_openai: FakeOpenAI) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("# Coffee\n\nThe coffee machine is on floor three.", "utf-8")
    (docs / "b.md").write_text("# Parking\n\nVisitor parking is behind building B.", "utf-8")
    kb = _kb(tmp_path, fake_openai)
    assert isinstance(kb.embedder, OpenAICompatibleEmbedder)
    report = Ingestor(kb).run([docs])
    assert report.count(Status.ADDED) == 2
    assert fake_openai.requests and fake_openai.requests[0]["model"] == "fake-embed"
    hits = kb.search("coffee machine floor", SearchOptions(k=1, mode="dense"))
    assert hits[0].chunk.source.endswith("a.md")
    kb.close()


def test_failing_endpoint_reports_and_keeps_the_previous_version(
    tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    doc = tmp_path / "a.md"
    doc.write_text("# Coffee\n\nThe coffee machine is on floor three.", "utf-8")
    kb = _kb(tmp_path, fake_openai)
    Ingestor(kb).run([doc])
    doc.write_text("# Coffee\n\nThe coffee machine moved to floor five.", "utf-8")
    fake_openai.fail_with = 500
    report = Ingestor(kb).run([doc])
    assert report.count(Status.FAILED) == 1
    reason = report.failed[0].reason
    assert fake_openai.base_url in reason and "OPENAI_BASE_URL" in reason
    hits = kb.search("coffee machine", SearchOptions(k=1, mode="keyword"))
    assert "floor three" in hits[0].chunk.text
    with pytest.raises(EmbeddingError):
        kb.embedder.embed_query("coffee")
    kb.close()
