"""``teamrag bench retrieval``: retrieval quality and speed on a SQuAD-format file.

Each paragraph is ingested as one document through the real ingestion path,
every question is searched, and a hit means a retrieved chunk came from the
question's paragraph. Questions without an answer span count for the hit
metrics only.
"""

from __future__ import annotations

import json
import statistics
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.progress import Progress

from agent.retrieval.ingest import Ingestor, Status
from agent.retrieval.knowledge_base import SearchMode, SearchOptions
from bots.settings import Settings
from bots.wiring import build_knowledge_base

bench_app = typer.Typer(help="Measure retrieval quality and speed.", no_args_is_help=True)
err = Console(stderr=True)


@dataclass(frozen=True)
class Question:
    text: str
    paragraph: int
    answers: list[str]


def load_squad(path: Path, limit: int | None) -> tuple[list[str], list[Question]]:
    """Paragraphs and questions of a SQuAD v1/v2 file; ``limit`` keeps the first N questions."""
    data = json.loads(path.read_text(encoding="utf-8"))
    paragraphs: list[str] = []
    questions: list[Question] = []
    for article in data["data"]:
        for para in article["paragraphs"]:
            index = len(paragraphs)
            paragraphs.append(para["context"])
            for qa in para["qas"]:
                answers = [a["text"] for a in qa.get("answers", []) if a.get("text")]
                questions.append(Question(qa["question"], index, answers))
    if limit is not None:
        questions = questions[:limit]
    return paragraphs, questions


def percentile(values: list[float], q: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


@bench_app.command("retrieval")
def retrieval(
    squad: Annotated[Path, typer.Option(exists=True, dir_okay=False, help="SQuAD-format JSON.")],
    limit: Annotated[
        int | None, typer.Option(min=1, help="Ask only the first N questions.")
    ] = None,
    mode: Annotated[str, typer.Option(help="hybrid, dense or keyword.")] = "hybrid",
    data_dir: Annotated[
        Path | None, typer.Option(help="Keep the index here (re-runs skip ingestion).")
    ] = None,
    json_out: Annotated[bool, typer.Option("--json", help="Print the result as JSON.")] = False,
) -> None:
    """Ingest every paragraph of SQUAD as a document and score every question."""
    if mode not in ("hybrid", "dense", "keyword"):
        err.print("[red]error:[/red] --mode must be hybrid, dense or keyword")
        raise typer.Exit(2)
    search_mode: SearchMode = mode  # type: ignore[assignment]
    paragraphs, questions = load_squad(squad, limit)
    with tempfile.TemporaryDirectory(prefix="teamrag-bench-") as tmp:
        root = data_dir or Path(tmp)
        docs = root / "docs"
        docs.mkdir(parents=True, exist_ok=True)
        for i, text in enumerate(paragraphs):
            target = docs / f"p{i:05d}.txt"
            if not target.exists():
                target.write_text(text, encoding="utf-8")
        settings = Settings().model_copy(update={"data_dir": root / "index"})
        kb = build_knowledge_base(settings)
        try:
            result = _run(kb, docs, questions, search_mode)
        finally:
            kb.close()
    result.update({"file": squad.name, "mode": mode, "paragraphs": len(paragraphs)})
    if json_out:
        print(json.dumps(result))
    else:
        for key, value in result.items():
            err.print(f"{key:>20}: {value}")


def _run(kb: Any, docs: Path, questions: list[Question], mode: SearchMode) -> dict[str, Any]:
    with Progress(console=err, transient=True) as bar:
        task = bar.add_task("ingesting", total=None)
        started = time.perf_counter()
        report = Ingestor(kb).run(
            [docs], progress=lambda _c, done, total: bar.update(task, completed=done, total=total)
        )
        ingest_s = time.perf_counter() - started
    embedded = sum(r.chunks for r in report.results if r.status in (Status.ADDED, Status.UPDATED))
    hits_at = {1: 0, 5: 0, 10: 0}
    reciprocal = 0.0
    answer_hits = answerable = 0
    latencies: list[float] = []
    options = SearchOptions(k=10, mode=mode, neighbours=0)
    kb.search("warm up", options)
    with Progress(console=err, transient=True) as bar:
        task = bar.add_task(f"searching ({mode})", total=len(questions))
        for q in questions:
            t0 = time.perf_counter()
            hits = kb.search(q.text, options)
            latencies.append((time.perf_counter() - t0) * 1000)
            ranks = [
                i for i, h in enumerate(hits) if Path(h.chunk.source).stem == f"p{q.paragraph:05d}"
            ]
            first = ranks[0] if ranks else None
            for k in hits_at:
                hits_at[k] += first is not None and first < k
            reciprocal += 1.0 / (first + 1) if first is not None else 0.0
            if q.answers:
                answerable += 1
                top5 = " ".join(h.chunk.text for h in hits[:5])
                answer_hits += any(a in top5 for a in q.answers)
            bar.advance(task)
    n = max(len(questions), 1)
    return {
        "questions": len(questions),
        "chunks": kb.catalog.chunk_count(),
        "hit@1": round(hits_at[1] / n, 4),
        "hit@5": round(hits_at[5] / n, 4),
        "hit@10": round(hits_at[10] / n, 4),
        "mrr@10": round(reciprocal / n, 4),
        "answer_in_top5": round(answer_hits / answerable, 4) if answerable else None,
        "query_p50_ms": round(statistics.median(latencies), 2) if latencies else 0.0,
        "query_p95_ms": round(percentile(latencies, 0.95), 2),
        "ingest_chunks_per_s": round(embedded / ingest_s, 1) if embedded else None,
    }
