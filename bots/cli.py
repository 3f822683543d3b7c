"""The ``teamrag`` command line: ingest, search, ask, status and benchmarks."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from adapters import console as view
from agent.extractive import extractive_answer
from agent.retrieval.ingest import Ingestor, validate_scope
from agent.retrieval.knowledge_base import SearchOptions
from bots.bench import bench_app
from bots.common import err, knowledge_base, search_mode_or_exit, settings_or_exit

app = typer.Typer(
    help="teamrag: answers a team's questions from its own documents, with citations.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)
app.add_typer(bench_app, name="bench")
out = Console()


def _scopes(scope: list[str] | None) -> frozenset[str] | None:
    if not scope:
        return None
    try:
        return frozenset(validate_scope(s) for s in scope)
    except ValueError as exc:
        err.print(f"[red]error:[/red] {exc}")
        raise typer.Exit(2) from None


@app.command()
def ingest(
    paths: Annotated[list[Path], typer.Argument(help="Files or folders to ingest.")],
    scope: Annotated[str, typer.Option(help="Scope of these documents (who may see them).")] = "",
    prune: Annotated[
        bool, typer.Option(help="Remove documents under these folders whose files are gone.")
    ] = False,
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="List ignored files.")] = False,
) -> None:
    """Load md, txt, pdf, html and docx files into the knowledge base."""
    settings = settings_or_exit()
    try:
        scope = validate_scope(scope or settings.default_scope)
    except ValueError as exc:
        err.print(f"[red]error:[/red] {exc}")
        raise typer.Exit(2) from None
    with knowledge_base(settings_or_exit()) as kb:
        with Progress(
            TextColumn("[bold]Ingesting"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            TextColumn("{task.description}"),
            console=err,
            transient=False,
        ) as bar:
            task = bar.add_task("", total=None)

            def progress(current: str, done: int, total: int) -> None:
                name = Path(current).name if current else "done"
                bar.update(task, completed=done, total=total, description=name)

            try:
                report = Ingestor(kb).run(paths, scope=scope, prune=prune, progress=progress)
            except KeyboardInterrupt:
                # Each document switches versions atomically: what finished is searchable,
                # the rest keeps its previous version, and the next run picks up from there.
                bar.stop()
                err.print(
                    "Interrupted. Documents finished so far are searchable; the others keep "
                    "their previous version. Run the same command again to finish."
                )
                raise typer.Exit(130) from None
        view.render_ingest_report(err, report, verbose=verbose)
    if report.failed:
        raise typer.Exit(1)


@app.command()
def search(
    query: Annotated[str, typer.Argument(help="What to look for, in any language.")],
    k: Annotated[int, typer.Option("--k", "-k", min=1, max=50)] = 5,
    scope: Annotated[list[str] | None, typer.Option(help="Only these scopes.")] = None,
    mode: Annotated[str, typer.Option(help="hybrid, dense or keyword.")] = "hybrid",
    json_out: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Show the passages that best match QUERY."""
    search_mode = search_mode_or_exit(mode)
    with knowledge_base(settings_or_exit()) as kb:
        hits = kb.search(query, SearchOptions(k=k, scopes=_scopes(scope), mode=search_mode))
    if json_out:
        import json

        print(json.dumps([view.hit_dict(h) for h in hits], ensure_ascii=False))
    else:
        view.render_hits(out, hits)


@app.command()
def ask(
    text: Annotated[str, typer.Argument(help="Your question, in Korean or English.")],
    scope: Annotated[list[str] | None, typer.Option(help="Only these scopes.")] = None,
    json_out: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Answer a question from the documents, quoting the passages it comes from."""
    settings = settings_or_exit()
    with knowledge_base(settings_or_exit()) as kb:
        if kb.catalog.chunk_count() == 0:
            err.print(
                "The knowledge base is empty: run `teamrag ingest PATH` first "
                f"(data folder: {settings.data_dir})."
            )
            raise typer.Exit(1)
        hits = kb.search(text, SearchOptions(k=settings.top_k, scopes=_scopes(scope)))
        answer = extractive_answer(text, hits, kb.embedder)
    if json_out:
        print(view.answer_json(answer, hits))
    else:
        view.render_answer(out, answer)


@app.command()
def status() -> None:
    """List the ingested documents and the parts in use."""
    settings = settings_or_exit()
    with knowledge_base(settings_or_exit()) as kb:
        docs = kb.catalog.documents()
        table = Table(title=f"{len(docs)} documents, {kb.catalog.chunk_count()} chunks")
        for name in ("source", "title", "scope", "chunks"):
            table.add_column(name)
        for d in docs:
            table.add_row(view.short_path(d.source), d.title, d.scope, str(d.n_chunks))
        out.print(table)
        stale = sum(1 for d in docs if d.pipeline != kb.pipeline)
        if stale:
            out.print(
                f"[yellow]{stale} documents were ingested with other settings "
                f"(embedder or chunking); run `teamrag ingest` on them again.[/yellow]"
            )
        vectors = f"Chroma server {settings.chroma_url}" if settings.chroma_url else "embedded"
        out.print(
            f"data folder: {settings.data_dir}  embedder: {kb.embedder.name}  vectors: {vectors}",
            highlight=False,
        )


def main() -> None:  # pragma: no cover - console script entry
    sys.exit(app())
