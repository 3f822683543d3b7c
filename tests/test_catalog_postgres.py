"""The document catalog and keyword index shared through Postgres: hosts with their own
(empty) data folders ingest and search the same knowledge, changes reach a running host
at its next search, and the incremental keyword index ranks as the embedded one does."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import psycopg
import pytest

from agent.retrieval import knowledge_base
from agent.retrieval.catalog import DocumentRecord
from agent.retrieval.catalog_postgres import PostgresCatalog
from agent.retrieval.embeddings import UniversalSentenceEncoder
from agent.retrieval.keyword import KeywordIndex, KeywordRow
from agent.retrieval.keyword_live import LiveKeywordIndex
from agent.retrieval.knowledge_base import KnowledgeBase, SearchOptions, collection_name
from agent.retrieval.types import Chunk
from agent.retrieval.vectors import VectorStore
from tests.support.postgres_support import PG_URL, postgres_problem, postgres_reachable

needs_postgres = pytest.mark.skipif(
    not postgres_reachable(), reason=postgres_problem() or "Postgres answers"
)


@pytest.fixture
def schema() -> Iterator[str]:
    """A schema of its own per test, dropped afterwards."""
    name = f"t_{uuid.uuid4().hex[:12]}"
    yield name
    with psycopg.connect(PG_URL, autocommit=True) as db:
        db.execute(f"DROP SCHEMA IF EXISTS {name} CASCADE")


def teamrag(data: Path, schema: str, *args: str) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TEAMRAG_", "DATABASE_"))}
    env.update(TEAMRAG_DATA_DIR=str(data), DATABASE_URL=PG_URL, TEAMRAG_CATALOG_SCHEMA=schema)
    done = subprocess.run(
        [sys.executable, "-m", "bots", *args], env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def keyword_sources(kb: KnowledgeBase, query: str) -> list[str]:
    hits = kb.search(query, SearchOptions(k=5, mode="keyword", neighbours=0))
    return [Path(h.chunk.source).name for h in hits]


@needs_postgres
def test_a_host_searches_what_another_host_ingested_without_a_restart(
    tmp_path: Path, schema: str, embedder: UniversalSentenceEncoder
) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "backups.md").write_text("# Backups\n\nPostgres backups are kept for 35 days.\n")
    teamrag(tmp_path / "host-a", schema, "ingest", str(docs))

    # Host B: another process, its own empty data folder, the same schema.
    found = json.loads(
        teamrag(
            tmp_path / "host-b", schema, "search", "backups kept", "--mode", "keyword", "--json"
        )
    )
    assert [Path(h["source"]).name for h in found][:1] == ["backups.md"]

    # Host C runs on (this test's process) while host A ingests and deletes.
    vectors = VectorStore.embedded(tmp_path / "host-c" / "chroma", collection_name(embedder.name))
    catalog = PostgresCatalog(PG_URL, schema)
    kb = KnowledgeBase(tmp_path / "host-c", embedder, vectors, catalog=catalog)
    try:
        assert keyword_sources(kb, "backups kept") == ["backups.md"]
        (docs / "oncall.md").write_text("# On-call\n\nThe on-call handover is on Mondays.\n")
        teamrag(tmp_path / "host-a", schema, "ingest", str(docs))
        assert keyword_sources(kb, "on-call handover") == ["oncall.md"]
        (docs / "backups.md").unlink()
        teamrag(tmp_path / "host-a", schema, "ingest", "--prune", str(docs))
        assert "backups.md" not in keyword_sources(kb, "backups kept")
    finally:
        kb.close()
    assert not (tmp_path / "host-c" / "catalog.sqlite3").exists()  # nothing local


def _chunk(doc: str, seq: int, text: str) -> Chunk:
    return Chunk(f"{doc}-{seq}", doc, seq, text, f"/docs/{doc}.md", doc, "public", None, "", None,
                 "h")  # fmt: skip


def _record(doc: str, n: int) -> DocumentRecord:
    return DocumentRecord(doc, f"/docs/{doc}.md", "public", doc, "h", n, "p", 0.0)


def follow(index: LiveKeywordIndex, catalog: PostgresCatalog) -> None:
    changes = catalog.keyword_changes(index.generation)
    assert changes is not None, "the follower fell behind the kept removals"
    index.apply(changes[1], changes[2], changes[0])


@needs_postgres
def test_two_hosts_ingesting_at_once_lose_nothing(schema: str) -> None:
    hosts = [PostgresCatalog(PG_URL, schema) for _ in range(3)]
    generation, rows = hosts[2].keyword_snapshot()
    follower = LiveKeywordIndex(rows, generation)

    def ingest(host: PostgresCatalog, name: str) -> None:
        for i in range(40):
            words = [f"{name}{i}", "shared", f"word{i % 7}"]
            doc = f"{name}{i}"
            host.replace_document(_record(doc, 1), [_chunk(doc, 0, " ".join(words))], [words])

    writers = [threading.Thread(target=ingest, args=(hosts[0], "a")),
               threading.Thread(target=ingest, args=(hosts[1], "b"))]  # fmt: skip
    for w in writers:
        w.start()
    while any(w.is_alive() for w in writers):  # follow the changes while they are written
        follow(follower, hosts[2])
    for w in writers:
        w.join()
    follow(follower, hosts[2])
    assert len(follower) == 80 and hosts[2].chunk_count() == 80
    terms = hosts[2].term_ids(["a17", "b39"])
    assert {cid for cid, _ in follower.search(terms, 5)} == {"a17-0", "b39-0"}
    for host in hosts:
        host.close()


@needs_postgres
def test_the_neighbours_of_many_hits_come_in_one_query_as_one_by_one(schema: str) -> None:
    catalog = PostgresCatalog(PG_URL, schema)
    try:
        for doc, n in (("a", 5), ("b", 2)):
            chunks = [_chunk(doc, i, f"{doc} part {i}") for i in range(n)]
            catalog.replace_document(_record(doc, n), chunks, [[doc] for _ in chunks])
        hits = list(catalog.chunks(["a-0", "a-2", "a-4", "b-1"]).values())
        for radius in (1, 2):
            together = catalog.neighbours_of(hits, radius)
            assert together == {h.chunk_id: catalog.neighbours(h, radius) for h in hits}
        assert [c.chunk_id for c in together["a-2"]] == ["a-0", "a-1", "a-3", "a-4"]
        assert catalog.neighbours_of([], 1) == {}
    finally:
        catalog.close()


def _rows(rng: np.random.Generator, n: int, start: int = 0) -> list[KeywordRow]:
    rows = []
    for i in range(start, start + n):
        terms = np.unique(rng.zipf(1.3, size=rng.integers(5, 60)).clip(1, 5000)).astype(np.int32)
        counts = rng.integers(1, 4, size=len(terms)).astype(np.float32)
        scope = "hr" if i % 5 == 0 else "public"
        rows.append(KeywordRow(f"c{i}", scope, int(counts.sum()), terms, counts))
    return rows


def test_the_live_index_ranks_as_a_full_rebuild_after_changes() -> None:
    """Additions, removals and merges: every query ranks as an index built from scratch."""
    rng = np.random.default_rng(7)
    rows = _rows(rng, 3000)
    live = LiveKeywordIndex(rows, 1)
    current = {r.chunk_id: r for r in rows}
    for step in range(6):  # past the merge threshold, so both segments and a merge count
        added = _rows(rng, 700, start=3000 + step * 700)
        removed = [f"c{i}" for i in rng.choice(3000, 300, replace=False)]
        live.apply(removed, added, step + 2)
        for cid in removed:
            current.pop(cid, None)
        current.update({r.chunk_id: r for r in added})
    built = KeywordIndex.build(current.values(), 5001, 8)
    assert len(live) == len(current)
    for _ in range(50):
        query: list[int | None] = [int(t) for t in rng.zipf(1.3, size=4).clip(1, 5000)]
        for scopes in (None, frozenset({"hr"})):
            want = built.search(query, 10, scopes)
            got = live.search(query, 10, scopes)
            assert [c for c, _ in got] == [c for c, _ in want] or np.allclose(
                sorted(s for _, s in got), sorted(s for _, s in want), rtol=1e-4
            )
            assert live.coverage(query, scopes) == pytest.approx(built.coverage(query, scopes))
        assert live.query_idf_sum(query) == pytest.approx(built.query_idf_sum(query))


@needs_postgres
def test_a_data_folder_from_before_the_shared_catalog_is_pointed_out(
    tmp_path: Path, schema: str
) -> None:
    """An upgrade with DATABASE_URL set finds the shared catalog empty: the documents the
    data folder's SQLite catalog lists are named, with the fix, until they are ingested."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "backups.md").write_text("# Backups\n\nBackups are kept for 35 days.\n", "utf-8")
    data = tmp_path / "data"
    base = {k: v for k, v in os.environ.items() if not k.startswith(("TEAMRAG_", "DATABASE_"))}
    local = base | {"TEAMRAG_DATA_DIR": str(data)}
    shared = local | {"DATABASE_URL": PG_URL, "TEAMRAG_CATALOG_SCHEMA": schema}

    def run(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(
            [sys.executable, "-m", "bots", *args],
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert done.returncode == 0, done.stderr
        return done

    run(local, "ingest", str(docs))  # before the upgrade: the SQLite catalog
    before = run(shared, "status").stderr
    assert "lists 1 documents ingested before the catalog moved to Postgres" in before
    assert "run `teamrag ingest` on their folders" in before
    run(shared, "ingest", str(docs))
    assert "ingested before the catalog moved" not in run(shared, "status").stderr


def _removed_records(schema: str) -> int:
    with psycopg.connect(PG_URL) as db:
        row = db.execute(f"SELECT count(*) FROM {schema}.removed_chunks").fetchone()
    assert row is not None
    return int(row[0])


@needs_postgres
def test_a_host_behind_the_pruned_removals_reloads_its_keyword_index(
    tmp_path: Path, schema: str, embedder: UniversalSentenceEncoder
) -> None:
    """Within the kept window a removal is followed incrementally; a host whose index is
    older than the pruned point reloads the whole index instead of keeping a chunk that
    is gone (its removal can no longer be read)."""
    writer = PostgresCatalog(PG_URL, schema)
    for doc in ("alpha", "beta", "gamma"):
        writer.replace_document(_record(doc, 1), [_chunk(doc, 0, doc)], [[doc, "shared"]])
    vectors = VectorStore.embedded(tmp_path / "chroma", collection_name(embedder.name))
    host = PostgresCatalog(PG_URL, schema)
    kb = KnowledgeBase(tmp_path / "host", embedder, vectors, catalog=host)
    try:
        first = kb.keyword_index()
        writer.remove_document("alpha")
        assert writer.prune_removed() == 0  # younger than a day: kept
        assert kb.keyword_index(fresh=True) is first and len(first) == 2  # followed

        behind = first.generation
        writer.remove_document("beta")
        writer.replace_document(_record("delta", 1), [_chunk("delta", 0, "d")], [["shared"]])
        assert writer.prune_removed(older_than_s=0) == 2  # alpha's and beta's records
        assert host.keyword_changes(behind) is None

        reloaded = kb.keyword_index(fresh=True)
        assert reloaded is not first
        terms = host.term_ids(["beta", "shared"])
        assert {cid for cid, _ in reloaded.search(terms, 10)} == {"gamma-0", "delta-0"}
        assert len(reloaded) == host.chunk_count() == 2
        changes = host.keyword_changes(reloaded.generation)  # caught up: incremental again
        assert changes == (reloaded.generation, [], [])
    finally:
        kb.close()
        writer.close()


@needs_postgres
def test_writers_prune_removed_chunk_records_older_than_the_window(schema: str) -> None:
    writer = PostgresCatalog(PG_URL, schema, keep_removed_s=0, prune_every_s=0)
    reader = PostgresCatalog(PG_URL, schema)
    try:
        writer.replace_document(_record("a", 1), [_chunk("a", 0, "one")], [["one"]])
        start = reader.generation
        writer.replace_document(_record("a", 1), [_chunk("a", 1, "two")], [["two"]])
        # The replaced chunk's record went with the next prune, right after its commit.
        assert _removed_records(schema) == 0
        assert reader.keyword_changes(start) is None
        now = reader.generation
        writer.replace_document(_record("b", 1), [_chunk("b", 0, "three")], [["three"]])
        changes = reader.keyword_changes(now)
        assert changes is not None and [r.chunk_id for r in changes[2]] == ["b-0"]
    finally:
        writer.close()
        reader.close()


@needs_postgres
def test_a_catalog_from_before_pruning_keeps_its_removed_records_a_day(schema: str) -> None:
    with psycopg.connect(PG_URL, autocommit=True) as db:
        db.execute(f"CREATE SCHEMA {schema}")
        db.execute(f"CREATE TABLE {schema}.removed_chunks (gen BIGINT NOT NULL, chunk_id TEXT)")
        db.execute(f"INSERT INTO {schema}.removed_chunks VALUES (1, 'old-0')")
    catalog = PostgresCatalog(PG_URL, schema)
    try:
        assert catalog.prune_removed() == 0  # dated from the upgrade
        assert catalog.prune_removed(older_than_s=0) == 1
    finally:
        catalog.close()


@needs_postgres
def test_searches_close_together_share_one_check_for_other_hosts_changes(
    tmp_path: Path, schema: str, embedder: UniversalSentenceEncoder, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A turn's searches ask Postgres for changes once; an ingest elsewhere shows up at the
    first search after the check interval (or at once when asked for fresh)."""
    writer = PostgresCatalog(PG_URL, schema)
    writer.replace_document(_record("alpha", 1), [_chunk("alpha", 0, "alpha")], [["alpha"]])
    vectors = VectorStore.embedded(tmp_path / "chroma", collection_name(embedder.name))
    host = PostgresCatalog(PG_URL, schema)
    kb = KnowledgeBase(tmp_path / "host", embedder, vectors, catalog=host)
    try:
        monkeypatch.setattr(knowledge_base, "SHARED_KEYWORD_CHECK_S", 3600.0)
        assert len(kb.keyword_index()) == 1
        writer.replace_document(_record("beta", 1), [_chunk("beta", 0, "beta")], [["beta"]])
        assert len(kb.keyword_index()) == 1  # checked moments ago: not asked again
        assert len(kb.keyword_index(fresh=True)) == 2
        writer.replace_document(_record("gamma", 1), [_chunk("gamma", 0, "g")], [["gamma"]])
        monkeypatch.setattr(knowledge_base, "SHARED_KEYWORD_CHECK_S", 0.0)
        assert len(kb.keyword_index()) == 3  # the interval has passed: asked
    finally:
        kb.close()
        writer.close()


@needs_postgres
def test_a_catalog_whose_connection_the_server_closed_reconnects(schema: str) -> None:
    """What a Postgres restart does to a host: its connection is closed under it. A read
    reconnects and answers; a write says what failed and the next one goes through."""
    catalog = PostgresCatalog(PG_URL, schema)

    def server_closes_the_connection() -> None:
        with psycopg.connect(PG_URL, autocommit=True) as admin:
            admin.execute("SELECT pg_terminate_backend(%s)", (catalog._db.info.backend_pid,))

    try:
        catalog.replace_document(_record("alpha", 1), [_chunk("alpha", 0, "alpha")], [["alpha"]])
        server_closes_the_connection()
        assert set(catalog.chunks(["alpha-0"])) == {"alpha-0"}  # read: answered
        server_closes_the_connection()
        with pytest.raises(psycopg.OperationalError):
            catalog.replace_document(_record("beta", 1), [_chunk("beta", 0, "b")], [["beta"]])
        catalog.replace_document(_record("beta", 1), [_chunk("beta", 0, "b")], [["beta"]])
        assert set(catalog.chunks(["alpha-0", "beta-0"])) == {"alpha-0", "beta-0"}
    finally:
        catalog.close()
