"""Ingestion on the real embedded Chroma and catalog: skip, replace, prune, bad input, crashes."""

from __future__ import annotations

import hashlib
import shutil
import sqlite3
from pathlib import Path

import pytest

from agent.glossary.mine import MINER_VERSION
from agent.retrieval.catalog import CatalogError, DocumentRecord
from agent.retrieval.catalog_sqlite import SqliteCatalog
from agent.retrieval.chunking import chunk_document
from agent.retrieval.embeddings import UniversalSentenceEncoder
from agent.retrieval.ingest import Ingestor, Status, document_id
from agent.retrieval.knowledge_base import KnowledgeBase, SearchOptions
from agent.retrieval.loaders import LOADERS_VERSION, load_document
from agent.retrieval.tokenizer import tokenize
from tests.conftest import SAMPLES, open_kb


def _half_ingest(kb: KnowledgeBase, doc: Path, body: bytes, *, switch: bool) -> None:
    """The steps ``Ingestor`` takes for a changed file, up to the catalog switch when
    ``switch``: a test then "dies" where a crashed run would, and checks the aftermath."""
    source = str(doc.resolve())
    content_hash = hashlib.sha256(body).hexdigest()
    chunks = chunk_document(
        load_document(doc, body), doc_id=document_id(source), source=source,
        content_hash=content_hash,
    )  # fmt: skip
    kb.catalog.mark_pending([c.chunk_id for c in chunks])
    kb.vectors.add(chunks, kb.embedder.embed_documents([c.text for c in chunks]))
    if switch:
        record = DocumentRecord(
            document_id(source), source, "public", doc.stem, content_hash, len(chunks),
            kb.pipeline, 0.0,
        )  # fmt: skip
        kb.catalog.replace_document(record, chunks, [tokenize(c.text) for c in chunks])


def _texts(kb: KnowledgeBase, query: str) -> str:
    return "\n".join(h.chunk.text for h in kb.search(query, SearchOptions(k=10)))


def test_samples_ingest_with_citation_metadata(kb: KnowledgeBase, ingestor: Ingestor) -> None:
    report = ingestor.run([SAMPLES])
    assert not report.failed
    kinds = {Path(r.path).suffix for r in report.results if r.status is Status.ADDED}
    assert {".md", ".pdf", ".html", ".docx", ".txt"} <= kinds
    assert report.chunks == kb.catalog.chunk_count() > 0
    assert kb.vectors.count() == kb.catalog.chunk_count()
    pdf_hits = [
        h
        for h in kb.search("Postgres backups retention days", SearchOptions(k=10))
        if h.chunk.source.endswith(".pdf")
    ]
    assert pdf_hits and all(h.chunk.page is not None for h in pdf_hits)


def test_reingest_skips_unchanged_and_replaces_changed(
    tmp_path: Path, kb: KnowledgeBase, ingestor: Ingestor
) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    note = docs / "note.md"
    note.write_text("# Deploys\n\nDeploys use the blue pipeline named AZURITE.", encoding="utf-8")
    (docs / "other.md").write_text("# Other\n\nLunch is at noon.", encoding="utf-8")
    first = ingestor.run([docs])
    assert first.count(Status.ADDED) == 2

    again = ingestor.run([docs])
    assert again.count(Status.UNCHANGED) == 2 and again.chunks == 0

    note.write_text(
        "# Deploys\n\nDeploys use the green pipeline named MALACHITE.", encoding="utf-8"
    )
    third = ingestor.run([docs])
    assert third.count(Status.UPDATED) == 1 and third.count(Status.UNCHANGED) == 1
    text = _texts(kb, "which pipeline do deploys use")
    assert "MALACHITE" in text and "AZURITE" not in text
    assert kb.vectors.count() == kb.catalog.chunk_count()


def test_scope_change_reingests(tmp_path: Path, kb: KnowledgeBase, ingestor: Ingestor) -> None:
    doc = tmp_path / "a.md"
    doc.write_text("# A\n\nThe payroll system closes on the 25th.", encoding="utf-8")
    ingestor.run([doc])
    report = ingestor.run([doc], scope="hr")
    assert report.count(Status.UPDATED) == 1
    assert kb.search("payroll closes", SearchOptions(scopes=frozenset({"public"}))) == []
    assert kb.search("payroll closes", SearchOptions(scopes=frozenset({"hr"})))


def test_prune_removes_documents_whose_files_are_gone(
    tmp_path: Path, kb: KnowledgeBase, ingestor: Ingestor
) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "keep.md").write_text("# Keep\n\nThe office opens at nine.", encoding="utf-8")
    gone = docs / "gone.md"
    gone.write_text("# Gone\n\nThe secret codename is PERIWINKLE.", encoding="utf-8")
    ingestor.run([docs])
    gone.unlink()

    without_prune = ingestor.run([docs])
    assert without_prune.count(Status.REMOVED) == 0
    assert "PERIWINKLE" in _texts(kb, "secret codename")

    pruned = ingestor.run([docs], prune=True)
    assert [Path(r.path).name for r in pruned.results if r.status is Status.REMOVED] == ["gone.md"]
    assert "PERIWINKLE" not in _texts(kb, "secret codename")
    assert kb.vectors.count() == kb.catalog.chunk_count() == len(kb.keyword_index())
    assert kb.search("PERIWINKLE", SearchOptions(mode="keyword")) == []


def test_bad_files_are_reported_and_the_rest_ingested(
    tmp_path: Path, kb: KnowledgeBase, ingestor: Ingestor
) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "good.md").write_text("# Good\n\nParking is on level B2.", encoding="utf-8")
    (docs / "empty.txt").write_bytes(b"")
    (docs / "korean.txt").write_bytes("방문객 주차장은 지하 3층입니다".encode("cp949"))
    (docs / "legacy.txt").write_bytes("crème brûlée à la carte".encode("latin-1"))
    (docs / "bad.pdf").write_bytes(b"%PDF-1.4 garbage")
    (docs / "photo.jpg").write_bytes(b"\xff\xd8\xff")
    report = ingestor.run([docs, tmp_path / "missing-folder"])
    failed = {Path(r.path).name: r.reason for r in report.failed}
    assert set(failed) == {"empty.txt", "legacy.txt", "bad.pdf", "missing-folder"}
    assert "its encoding is unclear" in failed["legacy.txt"]
    assert "no such file" in failed["missing-folder"]
    assert [Path(r.path).name for r in report.results if r.status is Status.IGNORED] == [
        "photo.jpg"
    ]
    assert report.count(Status.ADDED) == 2  # good.md, and korean.txt in CP949
    assert "B2" in _texts(kb, "where is parking")
    assert "지하 3층" in _texts(kb, "방문객 주차장")


def test_a_file_that_turns_bad_keeps_its_previous_version(
    tmp_path: Path, kb: KnowledgeBase, ingestor: Ingestor
) -> None:
    doc = tmp_path / "guide.md"
    doc.write_text("# Guide\n\nThe VPN gateway is vpn.example.com.", encoding="utf-8")
    ingestor.run([doc])
    doc.write_bytes(b"\x00\x00corrupted")
    report = ingestor.run([doc])
    assert report.count(Status.FAILED) == 1
    assert "vpn.example.com" in _texts(kb, "VPN gateway")


def test_crash_between_vectors_and_catalog_keeps_the_old_version(
    tmp_path: Path, kb: KnowledgeBase, ingestor: Ingestor
) -> None:
    """A run that dies after writing new vectors but before switching the catalog."""
    doc = tmp_path / "policy.md"
    doc.write_text("# Policy\n\nExpenses are approved by the team lead.", encoding="utf-8")
    ingestor.run([doc])
    before = kb.catalog.chunk_count()

    # The first half of a re-ingest, then the process "dies": new vectors, no catalog switch.
    new = b"# Policy\n\nExpenses are approved by the finance director."
    _half_ingest(kb, doc, new, switch=False)
    assert kb.vectors.count() > before

    text = _texts(kb, "who approves expenses")
    assert "team lead" in text and "finance director" not in text

    # The next run deletes the orphans and keeps the catalog's version.
    ingestor.run([])
    assert kb.vectors.count() == kb.catalog.chunk_count() == before


def test_state_survives_reopening(tmp_path: Path, embedder: UniversalSentenceEncoder) -> None:
    data = tmp_path / "data"
    docs = tmp_path / "docs"
    shutil.copytree(SAMPLES, docs)
    first = open_kb(data, embedder)
    Ingestor(first).run([docs])
    count = first.catalog.chunk_count()
    first.close()
    second = open_kb(data, embedder)
    assert second.catalog.chunk_count() == count
    assert len(second.keyword_index()) == count
    assert Ingestor(second).run([docs]).count(Status.UNCHANGED) == len(list(docs.iterdir()))
    second.close()


def test_keyword_tokens_are_stored_for_every_chunk(kb: KnowledgeBase, ingestor: Ingestor) -> None:
    ingestor.run([SAMPLES / "user-guide.ko.md"])
    rows = list(kb.catalog.keyword_rows())
    assert rows and all(len(row.term_ids) == len(row.counts) > 0 for row in rows)
    assert all(row.length == row.counts.sum() for row in rows)
    assert len(kb.keyword_index()) == len(rows)
    assert kb.keyword_index().search(kb.catalog.term_ids(tokenize("인용")), 5)


def test_catalog_from_an_older_teamrag_names_the_fix(tmp_path: Path) -> None:
    path = tmp_path / "catalog.sqlite3"
    with sqlite3.connect(path) as db:
        db.execute(
            "CREATE TABLE chunks (chunk_id TEXT PRIMARY KEY, doc_id TEXT NOT NULL, seq INTEGER "
            "NOT NULL, text TEXT NOT NULL, tokens TEXT NOT NULL, page INTEGER, heading TEXT "
            "NOT NULL, link TEXT)"
        )
    with pytest.raises(CatalogError, match="older teamrag; delete the folder"):
        SqliteCatalog(path)


def test_a_searching_process_sees_another_process_ingest(
    tmp_path: Path, embedder: UniversalSentenceEncoder
) -> None:
    """A bot's knowledge base picks up what the ingest command wrote, keyword side included."""
    data = tmp_path / "data"
    bot = open_kb(data, embedder)
    assert bot.search("ZIRCONIUM rota") == []
    doc = tmp_path / "rota.md"
    doc.write_text("# Rota\n\nThe ZIRCONIUM rota starts on Monday.", encoding="utf-8")
    cli = open_kb(data, embedder)
    Ingestor(cli).run([doc])
    cli.close()
    hits = bot.search("ZIRCONIUM rota", SearchOptions(mode="keyword"))
    assert hits and "ZIRCONIUM" in hits[0].chunk.text
    bot.close()


def test_searches_during_another_process_ingest_do_not_rebuild_each_time(
    tmp_path: Path, embedder: UniversalSentenceEncoder
) -> None:
    data = tmp_path / "data"
    doc = tmp_path / "a.md"
    doc.write_text("# A\n\nThe first fact.", encoding="utf-8")
    writer = open_kb(data, embedder)
    Ingestor(writer).run([doc])
    bot = open_kb(data, embedder)
    before = bot.keyword_index()
    # The other process has switched a document but not yet saved a new index (mid-run).
    _half_ingest(writer, tmp_path / "b.md", b"# B\n\nThe second fact.", switch=True)
    assert bot.keyword_index() is before  # served as is for a few seconds
    assert bot.keyword_index(fresh=True).generation == writer.catalog.generation
    writer.close()
    bot.close()


def test_old_vectors_left_by_a_crash_after_the_switch_are_collected(
    tmp_path: Path, kb: KnowledgeBase, ingestor: Ingestor
) -> None:
    """A run that dies after switching the catalog, before deleting the old version's vectors."""
    doc = tmp_path / "policy.md"
    doc.write_text("# Policy\n\nExpenses are approved by the team lead.", encoding="utf-8")
    ingestor.run([doc])
    _half_ingest(
        kb, doc, b"# Policy\n\nExpenses are approved by the finance director.", switch=True
    )
    # ...and the process dies here: the old version's vectors are still in Chroma.
    assert kb.vectors.count() > kb.catalog.chunk_count()

    ingestor.run([])
    assert kb.vectors.count() == kb.catalog.chunk_count()


def test_a_file_read_by_an_older_loader_is_read_again(
    kb: KnowledgeBase, ingestor: Ingestor, tmp_path: Path
) -> None:
    """An .rst file ingested when reStructuredText was read as plain text keeps that text
    until the loaders' version in the pipeline id says it is stale."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "guide.rst").write_text("Guide\n=====\n\n배포는 화요일에 합니다.\n", encoding="utf-8")
    assert ingestor.run([docs]).results[0].status is Status.ADDED
    assert f"|loaders{LOADERS_VERSION}" in kb.pipeline
    assert ingestor.run([docs]).results[0].status is Status.UNCHANGED
    stale = kb.pipeline.replace(f"|loaders{LOADERS_VERSION}", "|loaders1")
    with sqlite3.connect(kb.data_dir / "catalog.sqlite3") as db:  # as an older release left it
        db.execute("UPDATE documents SET pipeline = ?", (stale,))
    assert ingestor.run([docs]).results[0].status is Status.UPDATED


def test_pairs_mined_by_an_older_miner_are_mined_again(
    kb: KnowledgeBase, ingestor: Ingestor, tmp_path: Path
) -> None:
    """An upgrade whose miner finds other pairs replaces those an older release mined,
    although the file did not change: the miner's version is in the pipeline id."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "glossary.md").write_text("- SLO (서비스 수준 목표): 가용성 목표.\n", encoding="utf-8")
    assert ingestor.run([docs]).results[0].status is Status.ADDED
    assert f"|pairs{MINER_VERSION}" in kb.pipeline
    stale = kb.pipeline.replace(f"|pairs{MINER_VERSION}", "|pairs1")
    with sqlite3.connect(kb.data_dir / "catalog.sqlite3") as db:  # as an older release left it
        db.execute("UPDATE documents SET pipeline = ?", (stale,))
        db.execute("UPDATE term_pairs SET en = 'FAQ', ko = '한국어'")
    assert ("한국어", "FAQ") in {(p.ko, p.en) for _, p in kb.catalog.term_pairs()}
    assert ingestor.run([docs]).results[0].status is Status.UPDATED
    pairs = {(p.ko, p.en) for _, p in kb.catalog.term_pairs()}
    assert ("서비스 수준 목표", "SLO") in pairs and ("한국어", "FAQ") not in pairs
