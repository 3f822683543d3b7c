"""A Korean question's words find the knowledge base's English words by meaning (보안 ->
"security"), stored beside the chunks at ingest (agent/glossary/neighbours.py)."""

from __future__ import annotations

from pathlib import Path

from agent.retrieval.embeddings import UniversalSentenceEncoder
from agent.retrieval.ingest import Ingestor
from agent.retrieval.knowledge_base import KnowledgeBase, SearchOptions, collection_name
from agent.retrieval.vectors import VectorStore
from tests.support.servers import chroma_server

SECURITY = "# Security\n\nSecurity questions go to the #sec-team channel, any time of day.\n"


def _docs(tmp_path: Path) -> Path:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "security.md").write_text(SECURITY, encoding="utf-8")
    for n, topic in enumerate(["lunch", "parking", "holidays", "laptops", "printers"]):
        (docs / f"{topic}.md").write_text(
            f"# {topic.title()}\n\nThe {topic} rules {n}: ask the office team.\n", "utf-8"
        )
    return docs


def _security_hit(kb: KnowledgeBase, question: str) -> float:
    hits = kb.search(question, SearchOptions(k=6, neighbours=0))
    return next((h.keyword_score for h in hits if h.chunk.source.endswith("security.md")), 0.0)


def test_ingest_stores_each_english_word_once_and_a_korean_word_finds_its_neighbour(
    kb: KnowledgeBase, tmp_path: Path
) -> None:
    docs = _docs(tmp_path)
    assert not Ingestor(kb).run([docs]).failed
    assert kb.sync_words() == 0  # every word of the vocabulary is stored already
    found = kb.word_neighbours(["보안", "점심시간", "알려줘야"])
    assert "security" in found["보안"], found
    # A verb form is never asked about.
    assert "알려줘야" not in found, found
    # The Korean question matches the English page's words through them.
    assert _security_hit(kb, "보안 문의는 어느 채널로 해요?") > 0


def test_a_word_no_document_uses_any_more_is_no_neighbour(
    kb: KnowledgeBase, tmp_path: Path
) -> None:
    docs = _docs(tmp_path)
    assert not Ingestor(kb).run([docs]).failed
    (docs / "security.md").unlink()
    Ingestor(kb).run([docs], prune=True)
    found = kb.word_neighbours(["보안"])
    assert "security" not in found.get("보안", ()), found


def test_an_older_knowledge_base_gets_its_words_on_the_next_ingest(
    kb: KnowledgeBase, tmp_path: Path
) -> None:
    docs = _docs(tmp_path)
    assert not Ingestor(kb).run([docs]).failed
    words = kb.vectors.sibling(f"{kb.vectors.name}-words")
    stored = words.ids()
    assert "security" in stored
    # As if ingested before words were stored: an unchanged run adds them back.
    words.delete(sorted(stored))
    assert words.count() == 0
    Ingestor(kb).run([docs])
    assert words.ids() == stored


def test_a_store_that_goes_away_leaves_the_search_working(
    tmp_path: Path, embedder: UniversalSentenceEncoder
) -> None:
    docs = _docs(tmp_path)
    with chroma_server(tmp_path / "chroma-server") as url:
        vectors = VectorStore.remote(url, collection_name(embedder.name))
        kb = KnowledgeBase(tmp_path / "data", embedder, vectors)
        Ingestor(kb).run([docs])
        assert kb.word_neighbours(["보안"])
    try:
        # The server is gone: no neighbours, and keyword search still answers.
        assert kb.word_neighbours(["보안"]) == {}
        options = SearchOptions(k=3, neighbours=0, mode="keyword")
        hits = kb.search("보안 security 채널", options)
        assert hits and hits[0].chunk.source.endswith("security.md")
    finally:
        kb.close()
