"""``teamrag bench retrieval``: retrieval quality and speed on SQuAD-format files.

Each paragraph is ingested as one document through the real ingestion path,
every question is searched, and a hit means a retrieved chunk came from the
question's paragraph. Questions without an answer span count for the hit
metrics only. Several ``--squad`` files build one mixed index; ``--questions``
replaces their questions with a set that points at paragraphs by index (the
cross-language set in ``benchmarks/data`` works this way).
"""

from __future__ import annotations

import json
import statistics
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from bots.common import err, knowledge_base, search_mode_or_exit, settings_or_exit
from bots.evaluation.sets import load_question_set, paragraph_name

if TYPE_CHECKING:  # the command imports them when it runs (bots/cli.py)
    from agent.retrieval.knowledge_base import KnowledgeBase, SearchMode

bench_app = typer.Typer(help="Measure retrieval quality and speed.", no_args_is_help=True)


@dataclass(frozen=True)
class Question:
    text: str
    paragraph: str  # the document name of the gold paragraph
    answers: list[str]


def load_squad(path: Path) -> tuple[dict[str, str], list[Question]]:
    """Paragraphs (by document name) and questions of a SQuAD v1/v2 file."""
    squad = load_question_set(path)
    return squad.documents, [Question(q.text, q.source, q.answers) for q in squad.questions]


def load_questions(path: Path, squad_files: list[Path]) -> list[Question]:
    """Questions that name their paragraph as (file name, paragraph index)."""
    by_name = {f.name: f for f in squad_files}
    questions: list[Question] = []
    for item in json.loads(path.read_text(encoding="utf-8"))["questions"]:
        if item["file"] not in by_name:
            raise typer.BadParameter(f"{path.name} needs --squad {item['file']}")
        name = paragraph_name(by_name[item["file"]], int(item["paragraph"]))
        answer = item.get("answer")
        questions.append(Question(item["question"], name, [answer] if answer else []))
    return questions


def percentile(values: list[float], q: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


@bench_app.command("retrieval")
def retrieval(
    squad: Annotated[
        list[Path],
        typer.Option(exists=True, dir_okay=False, help="SQuAD-format JSON (repeatable)."),
    ],
    questions_file: Annotated[
        Path | None,
        typer.Option("--questions", exists=True, dir_okay=False, help="Ask these instead."),
    ] = None,
    limit: Annotated[
        int | None, typer.Option(min=1, help="Ask only the first N questions.")
    ] = None,
    mode: Annotated[str, typer.Option(help="hybrid, dense or keyword.")] = "hybrid",
    data_dir: Annotated[
        Path | None, typer.Option(help="Keep the index here (re-runs skip ingestion).")
    ] = None,
    json_out: Annotated[bool, typer.Option("--json", help="Print the result as JSON.")] = False,
) -> None:
    """Ingest every paragraph as a document and score every question."""
    search_mode = search_mode_or_exit(mode)
    paragraphs: dict[str, str] = {}
    questions: list[Question] = []
    for file in squad:
        file_paragraphs, file_questions = load_squad(file)
        paragraphs.update(file_paragraphs)
        questions.extend(file_questions)
    if questions_file is not None:
        questions = load_questions(questions_file, squad)
    questions = questions[:limit] if limit else questions
    with tempfile.TemporaryDirectory(prefix="teamrag-bench-") as tmp:
        root = data_dir or Path(tmp)
        docs = root / "docs"
        docs.mkdir(parents=True, exist_ok=True)
        for name, text in paragraphs.items():
            target = docs / f"{name}.txt"
            if not target.exists():
                target.write_text(text, encoding="utf-8")
        settings = settings_or_exit().model_copy(update={"data_dir": root / "index"})
        with knowledge_base(settings) as kb:
            result = _run(kb, docs, questions, search_mode)
    files = [f.name for f in squad] + ([questions_file.name] if questions_file else [])
    result = {"files": files, "mode": mode, "paragraphs": len(paragraphs), **result}
    if json_out:
        print(json.dumps(result, ensure_ascii=False))
    else:
        for key, value in result.items():
            err.print(f"{key:>20}: {value}")


def _run(
    kb: KnowledgeBase, docs: Path, questions: list[Question], mode: SearchMode
) -> dict[str, Any]:
    from rich.progress import Progress

    from agent.retrieval.ingest import Ingestor
    from agent.retrieval.knowledge_base import SearchOptions

    with Progress(console=err, transient=True) as bar:
        task = bar.add_task("ingesting", total=None)
        started = time.perf_counter()
        report = Ingestor(kb).run(
            [docs], progress=lambda _c, done, total: bar.update(task, completed=done, total=total)
        )
        ingest_s = time.perf_counter() - started
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
            ranks = [i for i, h in enumerate(hits) if Path(h.chunk.source).stem == q.paragraph]
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
        "ingest_chunks_per_s": round(report.chunks / ingest_s, 1) if report.chunks else None,
    }
