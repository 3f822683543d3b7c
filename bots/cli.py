"""The ``teamrag`` command line: ingest, search, ask, chat, the bots, feedback, status and
benchmarks.

Each command imports what it needs when it runs: ``teamrag --help`` or a typo must not
wait for LangGraph, LangChain and Chroma to load (benchmarks/cli_start.py). Keep the
module level of this file and of the command modules it registers to the standard
library, Typer, Rich and the light ``bots`` helpers; types go under TYPE_CHECKING.
"""

from __future__ import annotations

import asyncio
import getpass
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console

from adapters.paths import shown_path
from bots.bench import bench_app
from bots.common import (
    err,
    export_tracing,
    fail,
    knowledge_base,
    run_async,
    search_mode_or_exit,
    settings_or_exit,
    stop_on_ctrl_c,
    warn_if_empty,
)
from bots.doctor import doctor
from bots.evaluation.command import evaluate
from bots.forget import forget
from bots.glossary_cli import glossary
from bots.processes import discord, serve, slack
from bots.records import feedback, usage
from bots.sources_cli import AllowPrivateOption, ingest_urls, sources_app
from bots.sync_cli import sync_command
from bots.users import users_app

if TYPE_CHECKING:
    from agent.events import Turn
    from agent.runner import Runner
    from bots.settings import Settings

app = typer.Typer(
    help="teamrag: answers a team's questions from its own documents, with citations.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)
app.add_typer(bench_app, name="bench")
app.add_typer(users_app, name="users")
app.add_typer(sources_app, name="sources")
app.command("sync")(sync_command)
app.command()(doctor)
app.command("eval")(evaluate)
app.command()(forget)
app.command()(glossary)
app.command()(feedback)
app.command()(usage)
out = Console()


def _scopes(scope: list[str] | None) -> frozenset[str] | None:
    from agent.retrieval.ingest import validate_scope

    if not scope:
        return None
    try:
        return frozenset(validate_scope(s) for s in scope)
    except ValueError as exc:
        err.print(f"[red]error:[/red] {exc}")
        raise typer.Exit(2) from None


@app.command()
def ingest(
    paths: Annotated[list[str], typer.Argument(help="Files, folders or http(s):// URLs.")],
    scope: Annotated[str, typer.Option(help="Scope of these documents (who may see them).")] = "",
    prune: Annotated[
        bool, typer.Option(help="Remove documents under these folders whose files are gone.")
    ] = False,
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="List ignored files.")] = False,
    allow_private: AllowPrivateOption = False,
) -> None:
    """Load md, txt, pdf, html and docx files (or a web page, once) into the knowledge base."""
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
    )

    from adapters import console as view
    from agent.retrieval.ingest import Ingestor, validate_scope

    settings = settings_or_exit()
    try:
        scope = validate_scope(scope or settings.default_scope)
    except ValueError as exc:
        err.print(f"[red]error:[/red] {exc}")
        raise typer.Exit(2) from None
    with knowledge_base(settings) as kb:
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

            urls = [p for p in paths if p.startswith(("http://", "https://"))]
            files = [Path(p) for p in paths if p not in urls]

            def announce() -> None:
                bar.update(task, description="stopping after the batch under way (Ctrl-C "
                           "again to stop now)")  # fmt: skip

            try:
                with stop_on_ctrl_c(announce) as stopping:
                    report = Ingestor(kb).run(
                        files, scope=scope, prune=prune, progress=progress, stop=stopping.is_set
                    )
                    if urls and not stopping.is_set():
                        report.results += ingest_urls(
                            settings, kb, urls, scope, progress, allow_private=allow_private
                        ).results
                if stopping.is_set():
                    raise KeyboardInterrupt
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
    scope: ScopeOption = None,
    mode: Annotated[str, typer.Option(help="hybrid, dense or keyword.")] = "hybrid",
    json_out: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Show the passages that best match QUERY."""
    from adapters import console as view
    from agent.retrieval.knowledge_base import SearchOptions

    search_mode = search_mode_or_exit(mode)
    with knowledge_base(settings_or_exit()) as kb:
        hits = kb.search(query, SearchOptions(k=k, scopes=_scopes(scope), mode=search_mode))
    if json_out:
        import json

        print(json.dumps([view.hit_dict(h) for h in hits], ensure_ascii=False))
    else:
        view.render_hits(out, hits)


def _turn(text: str, thread: str | None, user: str | None, scope: list[str] | None) -> Turn:
    from adapters.terminal import new_thread_id
    from agent.events import Turn

    return Turn(
        text=text,
        platform="cli",
        channel="terminal",
        thread_root=thread or new_thread_id(),
        user=user or getpass.getuser(),
        scopes=_scopes(scope),
    )


async def _with_runner(settings: Settings, use: Callable[[Runner], Awaitable[None]]) -> None:
    from agent.memory.backends import MemoryBackendError
    from bots.wiring import open_runner

    export_tracing(settings)
    with knowledge_base(settings) as kb:
        warn_if_empty(settings, kb)
        try:
            async with open_runner(settings, kb) as runner:
                await use(runner)
        except MemoryBackendError as exc:
            raise fail(str(exc)) from None


ThreadOption = Annotated[
    str | None, typer.Option("--thread", help="Continue this conversation (any id you choose).")
]
UserOption = Annotated[str | None, typer.Option("--user", help="Who is asking (default: you).")]
ScopeOption = Annotated[
    list[str] | None, typer.Option(help="Only these document scopes (default: every scope).")
]


@app.command()
def ask(
    text: Annotated[str, typer.Argument(help="Your question, in Korean or English.")],
    thread: ThreadOption = None,
    user: UserOption = None,
    scope: ScopeOption = None,
    json_out: Annotated[
        bool, typer.Option("--json", help="Print the Final event as one JSON object.")
    ] = False,
) -> None:
    """One turn through the whole agent: progress on stderr, the cited answer on stdout."""
    if not text.strip():  # a script that lost its variable: say so, and fail like bad usage
        raise fail('the question is empty: teamrag ask "your question"', 2)
    settings = settings_or_exit()
    turn = _turn(text, thread, user, scope)

    async def use(runner: Runner) -> None:
        from adapters.terminal import run_turn

        await run_turn(runner.run, turn, out, err, as_json=json_out)

    run_async(_with_runner(settings, use))


@app.command()
def trace(
    ident: Annotated[str, typer.Argument(help="A thread id, or an `ask --thread` id.")],
) -> None:
    """A finished turn's way through the graph: each node, its time and its decision."""
    from bots.trace import load_path, render, thread_of

    settings = settings_or_exit()
    thread_id = thread_of(ident)
    memory = settings.data_dir / "memory.sqlite"
    path = asyncio.run(load_path(settings.database_url, memory, thread_id))
    if not path:
        err.print(f"no finished turn for thread {thread_id}")
        raise typer.Exit(1)
    out.print(render(thread_id, path), markup=False, highlight=False)


@app.command()
def chat(
    thread: ThreadOption = None,
    user: UserOption = None,
    scope: ScopeOption = None,
) -> None:
    """An interactive conversation: progress while it works, then cited answers."""
    settings = settings_or_exit()
    turn = _turn("", thread, user, scope)

    async def use(runner: Runner) -> None:
        from adapters.terminal import chat as terminal_chat

        warm = asyncio.create_task(runner.warm_up())  # while the user types the first line
        await terminal_chat(runner.run, turn, out, err)
        warm.cancel()

    run_async(_with_runner(settings, use))


@app.command()
def status() -> None:
    """List the ingested documents and the parts in use."""
    from rich.table import Table

    from bots.parts import parts_in_use

    settings = settings_or_exit()
    with knowledge_base(settings_or_exit()) as kb:
        docs = kb.catalog.documents()
        table = Table(title=f"{len(docs)} documents, {kb.catalog.chunk_count()} chunks")
        for name in ("source", "title", "scope", "chunks"):
            table.add_column(name)
        for d in docs:
            table.add_row(shown_path(d.source), d.title, d.scope, str(d.n_chunks))
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
        for line in parts_in_use(settings):
            out.print(line, highlight=False)


# The long-running commands (bots/processes.py), listed last in --help as before.
for long_running in (slack, discord, serve):
    app.command()(long_running)
