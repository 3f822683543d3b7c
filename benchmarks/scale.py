"""Scale benchmark: 100,000 chunks in the embedded store.

Builds a corpus of synthetic documents from the sentences of KorQuAD dev and
XQuAD English (shuffled across paragraphs, so the text is real Korean and
English but the documents are new), ingests it through the real ``Ingestor``
with the default embedder, then measures hybrid query latency with the
KorQuAD and XQuAD questions, the cost of re-ingesting one file into the full
store, and the process's peak memory.

    python benchmarks/scale.py [--chunks 100000] [--data ../shared/data] [--out DIR]

Prints one JSON object and writes it to benchmarks/results/scale.json.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import resource
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from agent.retrieval.ingest import Ingestor  # noqa: E402
from agent.retrieval.knowledge_base import SearchOptions  # noqa: E402
from bots.bench import percentile  # noqa: E402
from bots.settings import Settings  # noqa: E402
from bots.wiring import build_knowledge_base  # noqa: E402

SENTENCE = re.compile(r"(?<=[.!?])\s+|(?<=다\.)\s*")


def sentences(path: Path) -> tuple[list[str], list[str]]:
    data = json.loads(path.read_text("utf-8"))
    out: list[str] = []
    questions: list[str] = []
    for article in data["data"]:
        for para in article["paragraphs"]:
            out.extend(s.strip() for s in SENTENCE.split(para["context"]) if len(s.strip()) > 20)
            questions.extend(qa["question"] for qa in para["qas"])
    return out, questions


def make_corpus(folder: Path, pool: list[str], target_chunks: int, chunk_size: int) -> int:
    """Write documents of ~10 chunks each until about ``target_chunks`` chunks exist."""
    rng = random.Random(7)
    folder.mkdir(parents=True, exist_ok=True)
    per_doc_chars = chunk_size * 10
    n_docs = target_chunks // 15  # a document of ten chunk sizes splits into ~15 chunks
    for i in range(n_docs):
        paragraphs: list[str] = []
        length = 0
        while length < per_doc_chars:
            para = " ".join(rng.choice(pool) for _ in range(3))
            paragraphs.append(para)
            length += len(para) + 2
        (folder / f"doc{i:06d}.md").write_text(
            f"# Document {i}\n\n" + "\n\n".join(paragraphs), encoding="utf-8"
        )
    return n_docs


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--chunks", type=int, default=100_000)
    parser.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data")
    parser.add_argument("--out", type=Path, default=Path("/tmp/teamrag-scale"))
    parser.add_argument("--queries", type=int, default=1000)
    args = parser.parse_args()

    ko, ko_q = sentences(args.data / "KorQuAD_v1.0_dev.json")
    en, en_q = sentences(args.data / "xquad.en.json")
    settings = Settings().model_copy(update={"data_dir": args.out / "index"})
    docs = args.out / "docs"
    if not docs.exists():
        make_corpus(docs, ko + en, args.chunks, settings.chunk_size)

    kb = build_knowledge_base(settings)
    ingestor = Ingestor(kb)
    started = time.perf_counter()
    last = [started]

    def progress(_current: str, done: int, total: int) -> None:
        if done % 500 == 0 and time.perf_counter() - last[0] > 30:
            last[0] = time.perf_counter()
            rate = kb.catalog.chunk_count() / (last[0] - started)
            print(f"  {done}/{total} files, {rate:.0f} chunks/s", file=sys.stderr)

    report = ingestor.run([docs], progress=progress)
    ingest_s = time.perf_counter() - started
    embedded = report.chunks
    total_chunks = kb.catalog.chunk_count()

    rng = random.Random(11)
    questions = rng.sample(ko_q, args.queries // 2) + rng.sample(en_q, args.queries // 2)
    options = SearchOptions(k=5)
    kb.search("warm up", options)
    latencies: dict[str, list[float]] = {"hybrid": [], "keyword": [], "dense": []}
    for mode in latencies:
        opts = SearchOptions(k=5, mode=mode)  # type: ignore[arg-type]
        for q in questions:
            t0 = time.perf_counter()
            kb.search(q, opts)
            latencies[mode].append((time.perf_counter() - t0) * 1000)

    one = docs / "doc000000.md"
    one.write_text(one.read_text("utf-8") + "\n\nAn edited paragraph.", encoding="utf-8")
    t0 = time.perf_counter()
    ingestor.run([one])
    reingest_one_s = time.perf_counter() - t0

    kb.close()  # stops the embedding workers, so their peak memory is counted below
    result = {
        "chunks": total_chunks,
        "ingested_chunks": embedded,
        "ingest_s": round(ingest_s, 1),
        "ingest_chunks_per_s": round(embedded / ingest_s, 1) if embedded else None,
        "queries": len(questions),
        **{f"{m}_p50_ms": round(statistics.median(v), 2) for m, v in latencies.items()},
        **{f"{m}_p95_ms": round(percentile(v, 0.95), 2) for m, v in latencies.items()},
        "reingest_one_file_s": round(reingest_one_s, 2),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "embed_processes": settings.embed_processes,
        "worker_peak_rss_mb": round(
            resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024, 1
        ),
        "chunk_size": settings.chunk_size,
    }
    print(json.dumps(result))
    (REPO / "benchmarks" / "results").mkdir(exist_ok=True)
    (REPO / "benchmarks" / "results" / "scale.json").write_text(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
