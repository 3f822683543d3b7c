"""Ask every question of a set through the real runner and score the answers."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from pathlib import Path

from agent.events import Final, Turn
from agent.retrieval.ingest import Ingestor, IngestReport
from agent.retrieval.knowledge_base import KnowledgeBase, SearchOptions
from agent.runner import Runner
from bots.evaluation.faithfulness import FaithfulnessJudge
from bots.evaluation.scoring import Row, score
from bots.evaluation.sets import Question

Progress = Callable[[int, int], None]


def ingest_documents(
    kb: KnowledgeBase, folder: Path, documents: dict[str, str], progress: Progress
) -> IngestReport:
    """Write each paragraph as a text file and ingest the folder (unchanged ones are skipped,
    so a second run on the same ``--data-dir`` starts at once)."""
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in documents.items():
        target = folder / f"{name}.txt"
        if not target.exists() or target.read_text(encoding="utf-8") != text:
            target.write_text(text, encoding="utf-8")
    return ingest_folder(kb, folder, progress)


def ingest_folder(kb: KnowledgeBase, folder: Path, progress: Progress) -> IngestReport:
    """Ingest a set's documents; pruned, so a reused ``--data-dir`` holds this folder only
    as it is now (a removed document must not answer)."""
    return Ingestor(kb).run(
        [folder], prune=True, progress=lambda _c, done, total: progress(done, total)
    )


def _retrieved(kb: KnowledgeBase, question: str, k: int) -> list[tuple[str, str, str | None]]:
    hits = kb.search(question, SearchOptions(k=k, neighbours=0))
    return [(h.chunk.source, h.chunk.title, h.chunk.link) for h in hits]


async def ask_all(
    runner: Runner,
    kb: KnowledgeBase,
    questions: list[Question],
    *,
    k: int,
    judge: FaithfulnessJudge | None,
    progress: Callable[[Row], None],
) -> list[Row]:
    """One thread per question, except that the turns of a follow-up thread share one (in
    the order given, turn 1 first); one question at a time (so latencies are not queueing).
    The run's own stamp keeps a re-run on the same data folder out of the last run's threads."""
    rows: list[Row] = []
    run = time.time_ns()
    for number, question in enumerate(questions, start=1):
        root = f"thread-{question.thread}" if question.thread else f"q{number}"
        turn = Turn(
            text=question.text,
            platform="eval",
            workspace="eval",
            channel="eval",
            thread_root=f"{root}-{run}",
            user="eval",
        )
        started = time.perf_counter()
        final: Final = await runner.ask(turn)
        elapsed = (time.perf_counter() - started) * 1000
        retrieved = await asyncio.to_thread(_retrieved, kb, question.text, k)
        row = score(question, final, retrieved, elapsed)
        if judge is not None and final.sources and final.route not in ("smalltalk", "tools"):
            row = await judge.rate(row, final)
        rows.append(row)
        progress(row)
    return rows
