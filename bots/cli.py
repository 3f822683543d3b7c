"""The ``teamrag`` command line: ingest, search, ask, chat, the bots, feedback, status and
benchmarks."""

from __future__ import annotations

import asyncio
import getpass
from collections.abc import Awaitable, Callable, Coroutine
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from adapters import console as view
from adapters.chat.channels import ChannelRules, ChannelRulesError, load_channel_rules
from adapters.chat.services import ChatServices
from adapters.terminal import chat as terminal_chat
from adapters.terminal import new_thread_id, run_turn
from agent.events import Turn
from agent.memory.backends import MemoryBackendError
from agent.retrieval.ingest import Ingestor, validate_scope
from agent.retrieval.knowledge_base import KnowledgeBase, SearchOptions
from agent.runner import Runner
from agent.shared.link import RedisUnavailableError
from bots.bench import bench_app
from bots.common import (
    err,
    export_tracing,
    fail,
    knowledge_base,
    listening_socket,
    on_sigterm,
    search_mode_or_exit,
    settings_or_exit,
    startup_objects_frozen,
    stop_on_ctrl_c,
)
from bots.doctor import doctor
from bots.evaluation.command import evaluate
from bots.logs import logging_configured
from bots.records import feedback, usage
from bots.settings import BotConfigError, Settings
from bots.sources_cli import ingest_urls, sources_app, sync_command
from bots.sources_wiring import running_sources
from bots.users import users_app
from bots.wiring import open_chat_services, open_runner, parts_in_use

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
app.command()(feedback)
app.command()(usage)
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
    paths: Annotated[list[str], typer.Argument(help="Files, folders or http(s):// URLs.")],
    scope: Annotated[str, typer.Option(help="Scope of these documents (who may see them).")] = "",
    prune: Annotated[
        bool, typer.Option(help="Remove documents under these folders whose files are gone.")
    ] = False,
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="List ignored files.")] = False,
) -> None:
    """Load md, txt, pdf, html and docx files (or a web page, once) into the knowledge base."""
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
                        report.results += ingest_urls(settings, kb, urls, scope, progress).results
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
    search_mode = search_mode_or_exit(mode)
    with knowledge_base(settings_or_exit()) as kb:
        hits = kb.search(query, SearchOptions(k=k, scopes=_scopes(scope), mode=search_mode))
    if json_out:
        import json

        print(json.dumps([view.hit_dict(h) for h in hits], ensure_ascii=False))
    else:
        view.render_hits(out, hits)


def _turn(text: str, thread: str | None, user: str | None, scope: list[str] | None) -> Turn:
    return Turn(
        text=text,
        platform="cli",
        channel="terminal",
        thread_root=thread or new_thread_id(),
        user=user or getpass.getuser(),
        scopes=_scopes(scope),
    )


def _warn_if_empty(settings: Settings, kb: KnowledgeBase) -> None:
    if kb.catalog.chunk_count() == 0:
        err.print(
            "[yellow]The knowledge base is empty[/yellow]: run `teamrag ingest PATH` first "
            f"(data folder: {settings.data_dir}).",
            highlight=False,
        )


async def _with_runner(settings: Settings, use: Callable[[Runner], Awaitable[None]]) -> None:
    export_tracing(settings)
    with knowledge_base(settings) as kb:
        _warn_if_empty(settings, kb)
        try:
            async with open_runner(settings, kb) as runner:
                await use(runner)
        except MemoryBackendError as exc:
            raise fail(str(exc)) from None


async def _with_chat_services(
    settings: Settings,
    rules: ChannelRules,
    use: Callable[[ChatServices, KnowledgeBase], Awaitable[None]],
) -> None:
    # A bot runs for days: what it did (connected, refused, retried) belongs in its log.
    with logging_configured(settings):
        await _serve_chat(settings, rules, use)


async def _serve_chat(
    settings: Settings,
    rules: ChannelRules,
    use: Callable[[ChatServices, KnowledgeBase], Awaitable[None]],
) -> None:
    export_tracing(settings)
    # asyncio's default pool has cpu+4 threads: with a Chroma server or Redis each search
    # and cache lookup waits on the network inside one, and fifty answers queue behind six.
    asyncio.get_running_loop().set_default_executor(
        ThreadPoolExecutor(settings.worker_threads, thread_name_prefix="teamrag")
    )
    with knowledge_base(settings) as kb:
        _warn_if_empty(settings, kb)
        try:
            async with open_chat_services(settings, kb, rules) as services:
                main = asyncio.current_task()
                assert main is not None

                def stop() -> None:
                    main.cancel()

                # SIGTERM (docker stop) ends a bot like Ctrl-C; the Slack bot replaces this
                # with its own gentler stop that finishes the answers under way.
                with startup_objects_frozen(), on_sigterm(stop):
                    # Sources sync on their schedule in every long-running process:
                    # the bots and the HTTP service alike.
                    async with running_sources(settings, kb, services.link):
                        await use(services, kb)
        except (MemoryBackendError, BotConfigError, RedisUnavailableError) as exc:
            raise fail(str(exc)) from None


def _run(work: Coroutine[Any, Any, None]) -> None:
    """Run a command's async work; Ctrl-C ends it with a word, not a traceback. The thread
    keeps every turn that finished (a turn is saved whole or not at all)."""
    try:
        asyncio.run(work)
    except KeyboardInterrupt:
        err.print("[yellow]Interrupted.[/yellow]")
        raise typer.Exit(130) from None
    except asyncio.CancelledError:  # SIGTERM to a bot: it stopped as it was asked to
        err.print("Stopped.")


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
        await run_turn(runner.run, turn, out, err, as_json=json_out)

    _run(_with_runner(settings, use))


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
        warm = asyncio.create_task(runner.warm_up())  # while the user types the first line
        await terminal_chat(runner.run, turn, out, err)
        warm.cancel()

    _run(_with_runner(settings, use))


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
        for line in parts_in_use(settings):
            out.print(line, highlight=False)


def _serve_bot(
    check: Callable[[Settings], None],
    serve: Callable[[Settings, ChatServices], Awaitable[None]],
) -> None:
    """Check the bot's settings before opening anything, then run it until stopped."""
    settings = settings_or_exit()
    try:
        check(settings)
        rules = load_channel_rules(
            settings.channels_file, settings.channels, default_scope=settings.default_scope
        )
    except (BotConfigError, ChannelRulesError) as exc:
        raise fail(str(exc), 2) from None
    _run(_with_chat_services(settings, rules, lambda services, _kb: serve(settings, services)))


@app.command()
def slack(
    port: Annotated[
        int | None, typer.Option(help="HTTP Events API port (default TEAMRAG_SLACK_PORT).")
    ] = None,
) -> None:
    """The Slack bot: Socket Mode when SLACK_APP_TOKEN is set, else the HTTP Events API."""
    from bots.slack_bot import check_slack_settings, serve_slack

    def serve(settings: Settings, services: ChatServices) -> Awaitable[None]:
        return serve_slack(settings, services, port=port or settings.slack_port)

    _serve_bot(check_slack_settings, serve)


@app.command()
def discord() -> None:
    """The Discord bot: /ask, mentions and thread follow-ups (DISCORD_TOKEN)."""
    from bots.discord_bot import check_discord_settings, serve_discord

    _serve_bot(check_discord_settings, serve_discord)


@app.command()
def serve(
    host: Annotated[str, typer.Option(help="Address to listen on.")] = "127.0.0.1",
    port: Annotated[int | None, typer.Option(help="Port (default TEAMRAG_HTTP_PORT).")] = None,
) -> None:
    """The HTTP service: chat API, accounts, /v1 (OpenAI-compatible) and the web chat.

    /api/chat, accounts and conversations, /v1 for OpenAI clients, the web chat at / and
    /admin, OpenAPI docs at /docs."""
    from bots.serve import serve_http

    settings = settings_or_exit()
    # Bound before the knowledge base loads: a taken port is said at once, with the fix.
    listening = listening_socket(host, port or settings.http_port, "TEAMRAG_HTTP_PORT")

    def run(services: ChatServices, kb: KnowledgeBase) -> Awaitable[None]:
        return serve_http(settings, services, kb, listening)

    _run(_with_chat_services(settings, ChannelRules(), run))
