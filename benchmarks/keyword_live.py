"""The incremental keyword index over the shared Postgres catalog, at 100,000 chunks.

A synthetic corpus (Zipf-distributed terms, 5-60 draws per chunk, a 50,000-word
vocabulary) is written through ``PostgresCatalog`` into a Postgres schema of its own,
as ``teamrag ingest`` writes it; a host (a ``KnowledgeBase`` on that catalog, as a bot
runs it) loads its keyword index from there. Then, ``--rounds`` times: a writer adds
one 10-chunk document and removes one chunk (a one-chunk document), and the host
follows, as its next search does: the catalog's changes since the generation its
index reflects (one query), applied to its ``LiveKeywordIndex``. Measured: the
writer's commits, the changes query, ``apply``, and keyword searches, on the index
alone and as the host's whole keyword search (changes poll, term ids, BM25, chunk
rows and neighbours from Postgres). The schema is dropped at the end.

    .venv/bin/python benchmarks/keyword_live.py [--chunks 100000] [--rounds 50]
        [--database-url URL] [--no-analyze] [--json-out benchmarks/results/keyword_live.json]
"""

from __future__ import annotations

import argparse
import resource
import shutil
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

import numpy as np  # noqa: E402
import psycopg  # noqa: E402

from agent.retrieval.catalog import DocumentRecord  # noqa: E402
from agent.retrieval.catalog_postgres import PostgresCatalog  # noqa: E402
from agent.retrieval.embeddings import UniversalSentenceEncoder  # noqa: E402
from agent.retrieval.keyword_live import LiveKeywordIndex  # noqa: E402
from agent.retrieval.knowledge_base import (  # noqa: E402
    KnowledgeBase,
    SearchOptions,
    collection_name,
)
from agent.retrieval.types import Chunk  # noqa: E402
from agent.retrieval.vectors import VectorStore  # noqa: E402
from benchmarks.agent_latency import run_header  # noqa: E402
from benchmarks.chat_load import report  # noqa: E402
from bots.bench import percentile  # noqa: E402

PG_URL = "postgresql://postgres@127.0.0.1:5432/test"
VOCABULARY = 50_000
BASE_DOC_CHUNKS = 100  # the corpus is written 100 chunks per document (fewer commits)
QUERIES_PER_ROUND = 5

T = TypeVar("T")


def timed(call: Callable[[], T]) -> tuple[T, float]:
    start = time.perf_counter()
    value = call()
    return value, (time.perf_counter() - start) * 1000


def spread(values: list[float]) -> dict[str, float]:
    return {
        "p50": round(percentile(values, 0.5), 2),
        "p95": round(percentile(values, 0.95), 2),
        "max": round(max(values), 2),
        "n": len(values),
    }


def chunk_tokens(rng: np.random.Generator) -> list[str]:
    draws = rng.zipf(1.3, size=int(rng.integers(5, 61))).clip(1, VOCABULARY)
    return [f"w{t}" for t in draws]


def document(rng: np.random.Generator, doc: str, n: int) -> tuple[DocumentRecord, list[Chunk],
                                                                    list[list[str]]]:  # fmt: skip
    tokens = [chunk_tokens(rng) for _ in range(n)]
    source = f"/bench/{doc}.md"
    chunks = [
        Chunk(f"{doc}-{i}", doc, i, " ".join(t), source, doc, "public", None, "", None, "h")
        for i, t in enumerate(tokens)
    ]
    return DocumentRecord(doc, source, "public", doc, "h", n, "bench", 0.0), chunks, tokens


def write_corpus(catalog: PostgresCatalog, rng: np.random.Generator, chunks: int,
                 singles: int) -> float:  # fmt: skip
    """``chunks`` chunks: ``singles`` one-chunk documents (the ones removed later), the
    rest in documents of ``BASE_DOC_CHUNKS``. Returns the seconds it took."""
    start = time.perf_counter()
    for i in range(singles):
        catalog.replace_document(*document(rng, f"single{i}", 1))
    rest = chunks - singles
    for d in range(0, rest, BASE_DOC_CHUNKS):
        catalog.replace_document(*document(rng, f"base{d}", min(BASE_DOC_CHUNKS, rest - d)))
        if d and d % 20_000 == 0:
            print(f"  {d + singles:,} chunks written", file=sys.stderr)
    return time.perf_counter() - start


def full_load(catalog: PostgresCatalog) -> tuple[float, float]:
    """What a host pays at start, or when it fell behind the pruned removals: the
    snapshot query, then building the index from its rows (also about what a merge of
    the delta into the main segment costs). Milliseconds each."""
    (generation, rows), snapshot_ms = timed(catalog.keyword_snapshot)
    _, build_ms = timed(lambda: LiveKeywordIndex(rows, generation))
    return snapshot_ms, build_ms


def run(args: argparse.Namespace) -> dict[str, Any]:
    rng = np.random.default_rng(7)
    schema = f"bench_keyword_live_{uuid.uuid4().hex[:8]}"
    header = run_header("keyword_live.py")
    folder = Path(tempfile.mkdtemp(prefix="teamrag-keyword-live-"))
    writer = PostgresCatalog(args.database_url, schema)
    kb: KnowledgeBase | None = None
    try:
        print(f"writing {args.chunks:,} chunks to schema {schema}", file=sys.stderr)
        write_s = write_corpus(writer, rng, args.chunks, singles=args.rounds)
        if args.analyze:
            # What autovacuum does within a minute of a bulk load. Before it, the planner
            # has no statistics and reads all of `chunks` for each change query (about
            # 30 ms at 100,000 chunks here) instead of its `gen` index (--no-analyze).
            with psycopg.connect(args.database_url, autocommit=True) as db:
                db.execute(f"ANALYZE {schema}.chunks, {schema}.documents, {schema}.removed_chunks")

        host = PostgresCatalog(args.database_url, schema)
        embedder = UniversalSentenceEncoder()  # loaded lazily: keyword searches never embed
        vectors = VectorStore.embedded(folder / "chroma", collection_name(embedder.name))
        kb = KnowledgeBase(folder, embedder, vectors, catalog=host)
        snapshot_ms, build_ms = full_load(host)
        live, first_search_ms = timed(kb.keyword_index)  # the host's own load, as at start
        assert isinstance(live, LiveKeywordIndex)
        options = SearchOptions(k=5, mode="keyword", neighbours=1)

        commit: list[float] = []
        changes_ms: list[float] = []
        apply_ms: list[float] = []
        index_search: list[float] = []
        host_search: list[float] = []
        for r in range(args.rounds):
            _, added = timed(lambda r=r: writer.replace_document(*document(rng, f"new{r}", 10)))
            _, removed = timed(lambda r=r: writer.remove_document(f"single{r}"))
            commit += [added, removed]
            # What the host's next search does first (knowledge_base._shared_keyword_index).
            changes, took = timed(lambda: host.keyword_changes(live.generation))
            assert changes is not None
            changes_ms.append(took)
            _, took = timed(lambda c=changes: live.apply(c[1], c[2], c[0]))
            apply_ms.append(took)
            assert len(live) == args.chunks + 9 * (r + 1)
            for _ in range(QUERIES_PER_ROUND):
                words = [f"w{t}" for t in rng.zipf(1.3, size=3).clip(1, VOCABULARY)]
                terms = host.term_ids(words)
                index_search.append(timed(lambda t=terms: live.search(t, 50))[1])
                host_search.append(timed(lambda w=words: kb.search(" ".join(w), options))[1])
        return {
            **header,
            "chunks": args.chunks,
            "rounds": args.rounds,
            "postgres": "same host" if "127.0.0.1" in args.database_url else "remote",
            "analyzed_after_load": args.analyze,
            "write_corpus_s": round(write_s, 1),
            "write_chunks_per_s": round(args.chunks / write_s),
            "full_load_ms": {
                "snapshot_query": round(snapshot_ms),
                "index_build": round(build_ms),
                "host_first_keyword_index": round(first_search_ms),
            },
            "writer_commit_ms": spread(commit),
            "changes_query_ms": spread(changes_ms),
            "apply_ms": spread(apply_ms),
            "follow_ms": spread([c + a for c, a in zip(changes_ms, apply_ms, strict=True)]),
            "index_search_ms": spread(index_search),
            "host_keyword_search_ms": spread(host_search),
            "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
        }
    finally:
        if kb is not None:
            kb.close()
        writer.close()
        shutil.rmtree(folder, ignore_errors=True)
        with psycopg.connect(args.database_url, autocommit=True) as db:
            db.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chunks", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=50)
    parser.add_argument("--database-url", default=PG_URL)
    parser.add_argument(
        "--analyze",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="ANALYZE the tables after the bulk load, as autovacuum soon does",
    )
    parser.add_argument(
        "--json-out", type=Path, default=REPO / "benchmarks" / "results" / "keyword_live.json"
    )
    args = parser.parse_args()
    report(run(args), args.json_out)


if __name__ == "__main__":
    main()
