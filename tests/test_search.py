"""Search over the sample documents: hybrid, cross-language, scopes, neighbours, citations."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

import pytest

from agent.answers.extractive import extractive_answer
from agent.retrieval.embeddings import Vectors
from agent.retrieval.ingest import Ingestor
from agent.retrieval.knowledge_base import KnowledgeBase, SearchOptions
from agent.retrieval.types import SearchHit


def _top_sources(kb: KnowledgeBase, query: str, k: int = 3, **kw: object) -> list[str]:
    hits = kb.search(query, SearchOptions(k=k, **kw))  # type: ignore[arg-type]
    return [Path(h.chunk.source).name for h in hits]


@pytest.mark.parametrize(
    ("question", "source"),
    [
        ("When and where is the on-call handover?", "onboarding.html"),
        # Both guides answer it (samples/README.md): either is right.
        ("`teamrag ingest`의 `--prune` 옵션은 무엇을 하나요?", "user-guide"),
        ("Which team owns the billing service?", "faq.docx"),
        ("Postgres 백업은 며칠 동안 보관되나요?", "ops-handbook.pdf"),  # Korean -> English page
        ("How soon must customer support be told about an incident?", "ops-handbook.pdf"),
    ],
)
def test_sample_questions_find_their_source(
    sample_kb: KnowledgeBase, question: str, source: str
) -> None:
    assert any(name.startswith(source) for name in _top_sources(sample_kb, question))


def test_cross_language_only_dense_can_find(sample_kb: KnowledgeBase) -> None:
    """The PDF's backup page is English only: a Korean question shares no keyword with it."""
    question = "Postgres 백업은 며칠 동안 보관되나요?"
    hits = sample_kb.search(question, SearchOptions(k=5))
    pages = [(Path(h.chunk.source).name, h.chunk.page) for h in hits]
    assert ("ops-handbook.pdf", 4) in pages


def test_results_carry_citation_fields(sample_kb: KnowledgeBase) -> None:
    hits = sample_kb.search("VPN setup WireGuard", SearchOptions(k=5))
    html = next(h for h in hits if h.chunk.source.endswith("onboarding.html"))
    assert html.chunk.link == "https://wiki.example.com/onboarding"
    assert "VPN" in html.chunk.locator()
    assert html.chunk.title.startswith("Engineering onboarding")
    pdf = sample_kb.search("deploy window Tuesday to Thursday", SearchOptions(k=3))[0]
    assert pdf.chunk.source.endswith("ops-handbook.pdf") and pdf.chunk.locator() == "p. 1"


def test_neighbour_expansion_returns_adjacent_chunks(sample_kb: KnowledgeBase) -> None:
    hit = sample_kb.search("문서 등록하기", SearchOptions(k=1, neighbours=1))[0]
    seqs = sorted(n.seq for n in hit.neighbours)
    assert seqs and all(abs(s - hit.chunk.seq) == 1 for s in seqs)
    assert all(n.doc_id == hit.chunk.doc_id for n in hit.neighbours)
    assert hit.chunk.text in hit.context_text()
    plain = sample_kb.search("문서 등록하기", SearchOptions(k=1, neighbours=0))[0]
    assert plain.neighbours == []


def test_scope_filter_hides_other_scopes(tmp_path: Path, kb: KnowledgeBase) -> None:
    (tmp_path / "pub.md").write_text("# Lunch\n\nLunch is served at noon.", encoding="utf-8")
    (tmp_path / "hr.md").write_text("# Salary\n\nSalary review happens in March.", encoding="utf-8")
    ingestor = Ingestor(kb)
    ingestor.run([tmp_path / "pub.md"])
    ingestor.run([tmp_path / "hr.md"], scope="hr")
    public_only = frozenset({"public"})
    for mode in ("hybrid", "dense", "keyword"):
        hits = kb.search("salary review", SearchOptions(k=5, scopes=public_only, mode=mode))
        assert all(h.chunk.scope == "public" for h in hits), mode
    assert "hr.md" in _top_sources(kb, "salary review", scopes=frozenset({"hr"}))
    assert "hr.md" in _top_sources(kb, "salary review")


def test_modes_differ_where_they_should(sample_kb: KnowledgeBase) -> None:
    question = "Postgres 백업은 며칠 동안 보관되나요?"
    keyword = sample_kb.search(question, SearchOptions(k=5, mode="keyword"))
    assert all(h.dense_score == 0.0 for h in keyword)
    dense = sample_kb.search(question, SearchOptions(k=5, mode="dense"))
    assert all(h.keyword_score == 0.0 for h in dense) and dense


def test_empty_query_and_empty_store(kb: KnowledgeBase) -> None:
    assert kb.search("   ") == []
    assert kb.search("anything at all") == []


def test_extractive_answer_quotes_and_cites(sample_kb: KnowledgeBase) -> None:
    question = "How long are Postgres backups kept?"
    hits = sample_kb.search(question, SearchOptions(k=3))
    answer = extractive_answer(question, hits, sample_kb.embedder)
    assert "35 days" in answer.text and "[1]" in answer.text
    assert answer.citations[0].source.endswith("ops-handbook.pdf")
    numbers = {c.number for c in answer.citations}
    assert numbers == set(range(1, len(answer.citations) + 1))
    korean = extractive_answer("백업 보관 기간은?", hits, sample_kb.embedder)
    assert korean.language == "ko" and korean.text.startswith("문서에서")
    none = extractive_answer("백업 보관 기간은?", [], sample_kb.embedder)
    assert "찾지 못했습니다" in none.text and none.citations == []


async def test_asearch_does_not_block_the_event_loop(
    sample_kb: KnowledgeBase, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The search waits for the event loop to run a callback: it can only get it from a
    worker thread (on the loop's own thread it would wait for itself)."""
    loop_ran = threading.Event()
    real = sample_kb.search

    def search(query: str, options: SearchOptions | None = None) -> list[SearchHit]:
        assert loop_ran.wait(timeout=30), "the event loop was blocked while the search ran"
        return real(query, options)

    monkeypatch.setattr(sample_kb, "search", search)
    searching = asyncio.create_task(sample_kb.asearch("backup retention"))
    await asyncio.sleep(0)  # the search starts
    loop_ran.set()  # reached only if the loop is free
    hits = await searching
    assert hits and hits[0].chunk.source.endswith("ops-handbook.pdf")


@pytest.mark.parametrize("mode", ["hybrid", "keyword", "dense"])
def test_searching_several_queries_at_once_finds_what_each_finds_alone(
    sample_kb: KnowledgeBase, mode: str
) -> None:
    """A turn searches its variations together (one read of each store); the hits, their
    scores and their neighbours must be those of one search per query."""
    queries = [
        "When and where is the on-call handover?",
        "",  # an empty variation finds nothing and takes no one else's place
        "Postgres 백업은 며칠 동안 보관되나요?",
        "Which team owns the billing service?",
    ]
    options = SearchOptions(k=4, neighbours=1, mode=mode)  # type: ignore[arg-type]
    together = sample_kb.search_many(queries, options)
    alone = [sample_kb.search(q, options) for q in queries]

    def shape(hits: list[SearchHit]) -> list[tuple[str, float, list[str]]]:
        return [
            (h.chunk.chunk_id, round(h.score, 6), [n.chunk_id for n in h.neighbours]) for h in hits
        ]

    assert [shape(h) for h in together] == [shape(h) for h in alone]
    assert together[1] == [] and all(together[i] for i in (0, 2, 3))
    assert together[0][0].chunk.chunk_id != together[3][0].chunk.chunk_id


def test_variations_of_one_question_share_its_meaning_and_keep_their_own_words(
    sample_kb: KnowledgeBase, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A question's paraphrase and translation are searched with the question's vector (no
    embedding of their own); each still matches its own words on the keyword side."""
    question = "Postgres 백업은 며칠 동안 보관되나요?"
    variations = ["Postgres backup retention days", "백업 보관 기간"]
    embedded: list[str] = []
    embed = sample_kb.embedder.embed_queries

    def counting(texts: list[str]) -> Vectors:
        embedded.extend(texts)
        return embed(texts)

    monkeypatch.setattr(sample_kb.embedder, "embed_queries", counting)
    shared = sample_kb.search_many(variations, SearchOptions(k=4, meaning=question))
    monkeypatch.undo()
    assert embedded == [question]
    meaning = sample_kb.search(question, SearchOptions(k=200, mode="dense", neighbours=0))
    cosines = {h.chunk.chunk_id: h.dense_score for h in meaning}
    for variation, hits in zip(variations, shared, strict=True):
        assert hits, variation
        own = sample_kb.search(variation, SearchOptions(k=4, mode="keyword"))
        if own:  # its best keyword match stays among its hits
            assert own[0].chunk.chunk_id in [h.chunk.chunk_id for h in hits], variation
        for hit in hits:  # the dense side is the question's, whatever the variation says
            assert hit.dense_score == pytest.approx(cosines.get(hit.chunk.chunk_id, 0.0), abs=1e-6)
    assert sample_kb.search(variations[0], SearchOptions(k=1, mode="keyword"))
    # The English variation finds the English page the Korean question asks about.
    assert ("ops-handbook.pdf", 4) in [(Path(h.chunk.source).name, h.chunk.page) for h in shared[0]]
