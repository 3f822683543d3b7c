"""``teamrag eval FILE``: measure the bot on a question set, the way users get answers."""

from __future__ import annotations

import asyncio
import json
import tempfile
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console

from bots.common import err, export_tracing, fail, knowledge_base, settings_or_exit
from bots.evaluation.categories import by_category, markdown_table
from bots.evaluation.report import write_report
from bots.evaluation.scoring import Row, row_dict, summarise
from bots.evaluation.sets import (
    Question,
    QuestionSet,
    QuestionSetError,
    load_question_set,
    sample,
)
from bots.evaluation.split import Part, select_part

if TYPE_CHECKING:  # imported when the command runs (bots/cli.py)
    from rich.progress import Progress

    from bots.settings import Settings

out = Console()


def _bar() -> Progress:
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
    )

    return Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=err,
        transient=True,
    )


def _print_row(n: int, row: Row) -> None:
    marks = {None: "-", True: "✓", False: "✗"}
    out.print(
        f"{n:>4} {row.route:<10} contains {marks[row.contains]} cited {marks[row.cited]} "
        f"rank {row.retrieved_rank or '-':>2} {row.latency_ms:>7.0f} ms  "
        f"{' '.join(row.question.split())[:70]}",
        highlight=False,
        soft_wrap=True,
    )


def evaluate(
    file: Annotated[Path, typer.Argument(help="JSONL questions, or a SQuAD-format JSON file.")],
    limit: Annotated[
        int | None,
        typer.Option(
            min=1, help="Ask N questions drawn at random (see --seed); a thread counts as one."
        ),
    ] = None,
    seed: Annotated[int, typer.Option(help="Which random sample --limit draws.")] = 1,
    k: Annotated[int, typer.Option("--k", min=1, max=50, help="Retrieval hit@k.")] = 5,
    report: Annotated[
        Path | None, typer.Option(help="Also write a report: .html, or Markdown otherwise.")
    ] = None,
    data_dir: Annotated[
        Path | None,
        typer.Option(
            help="A set with its own documents (SQuAD, --docs, docs/ beside the JSONL): keep "
            "their index here (a re-run skips unchanged documents). Default: a fresh one."
        ),
    ] = None,
    docs: Annotated[
        Path | None,
        typer.Option(
            help="JSONL sets: ingest this folder into a fresh index and ask against it "
            "(default: the docs/ folder beside the file, else the configured knowledge base)."
        ),
    ] = None,
    part: Annotated[
        Part,
        typer.Option(
            help="Ask only the dev part, or only the held-out third a team keeps aside "
            "while tuning (a fixed split per category, by the hash of each id).",
        ),
    ] = "all",
    faithfulness: Annotated[
        bool, typer.Option(help="With an LLM: judge whether each claim is in the cited sources.")
    ] = False,
    json_out: Annotated[
        bool, typer.Option("--json", help="Print the summary and rows as one JSON object.")
    ] = False,
) -> None:
    """Ask every question through the real agent and score retrieval, answers and routes.

    A JSONL file is asked against the configured knowledge base, or, with --docs or a
    docs/ folder beside it, against those documents ingested first into a separate index (a
    temporary folder, or --data-dir). A SQuAD file's paragraphs are ingested the same way,
    one document per paragraph. The current settings apply otherwise.
    """
    try:
        question_set = _with_docs(load_question_set(file), docs)
    except QuestionSetError as exc:
        raise fail(str(exc), 2) from None
    questions = sample(select_part(question_set.questions, part), limit, seed)
    # Every answer comes from the code as it is now: the answer cache would replay answers
    # kept by an earlier run (or by the bots, on the team's knowledge base).
    settings = settings_or_exit().model_copy(update={"cache": False})
    with tempfile.TemporaryDirectory(prefix="teamrag-eval-") as tmp:
        if question_set.documents or question_set.docs:
            root = data_dir or Path(tmp)
            settings = settings.model_copy(update={"data_dir": root / "index"})
        rows, mode = _evaluate(
            settings, question_set, questions, k, faithfulness, show_rows=not json_out
        )
    summary = {"file": file.name, "mode": mode, "part": part}
    summary |= summarise(rows, k)
    categories = by_category(rows)
    if json_out:
        rows_out = [row_dict(r) for r in rows]
        result = {"summary": summary, "categories": categories, "rows": rows_out}
        print(json.dumps(result, ensure_ascii=False))
    else:
        out.print()
        for key, value in summary.items():
            out.print(f"{key:>24}: {value}", highlight=False)
        if categories:
            out.print()
            out.print(markdown_table(categories), highlight=False, soft_wrap=True)
    if report is not None:
        write_report(report, f"teamrag eval: {file.name}", summary, rows, categories)
        err.print(f"report written to {report}")


def _with_docs(question_set: QuestionSet, docs: Path | None) -> QuestionSet:
    """The set with the documents it is asked against: --docs over the docs/ beside it."""
    if docs is None:
        return question_set
    if question_set.documents:
        raise QuestionSetError(
            "--docs is for JSONL sets: a SQuAD file's paragraphs are its documents"
        )
    if not docs.is_dir():
        raise QuestionSetError(f"--docs {docs}: not a folder; give the folder of documents")
    return replace(question_set, docs=docs)


def _evaluate(
    settings: Settings,
    question_set: QuestionSet,
    questions: list[Question],
    k: int,
    faithfulness: bool,
    *,
    show_rows: bool,
) -> tuple[list[Row], str]:
    """The scored rows, and the mode the runner answered in (llm or extractive)."""
    from bots.evaluation.faithfulness import FaithfulnessJudge
    from bots.evaluation.run import ask_all, ingest_documents, ingest_folder
    from bots.wiring import open_runner

    export_tracing(settings)
    documents, docs = question_set.documents, question_set.docs
    with knowledge_base(settings) as kb:
        if documents or docs:
            with _bar() as bar:
                task = bar.add_task("ingesting", total=len(documents) or None)

                def progress(done: int, total: int) -> None:
                    bar.update(task, completed=done, total=total)

                if docs:
                    ingested = ingest_folder(kb, docs, progress)
                else:
                    folder = settings.data_dir.parent / "docs"
                    ingested = ingest_documents(kb, folder, documents, progress)
            for failed in ingested.failed:
                err.print(f"[yellow]not ingested[/]: {failed.path}: {failed.reason}")
            if docs and kb.catalog.chunk_count() == 0:
                raise fail(f"{docs} holds no document teamrag can read; nothing to ask against")
        elif kb.catalog.chunk_count() == 0:
            raise fail(
                f"the knowledge base in {settings.data_dir} is empty: run `teamrag ingest PATH` "
                "first, or give a SQuAD file whose paragraphs eval ingests itself"
            )

        async def run() -> tuple[list[Row], str]:
            async with open_runner(settings, kb) as runner:
                await runner.warm_up()
                llms = runner.deps.llms
                judge = None
                if faithfulness:
                    if llms is None:
                        err.print("--faithfulness needs an LLM (OPENAI_API_KEY); skipped")
                    else:
                        judge = FaithfulnessJudge(llms.fast, kb)
                with _bar() as bar:
                    task = bar.add_task("asking", total=len(questions))

                    def progress(row: Row) -> None:
                        bar.advance(task)
                        if show_rows:
                            _print_row(int(bar.tasks[0].completed), row)

                    rows = await ask_all(runner, kb, questions, k=k, judge=judge, progress=progress)
                return rows, "llm" if llms is not None else "extractive"

        return asyncio.run(run())
