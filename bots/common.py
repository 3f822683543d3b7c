"""What every command shares: the error console, clean failures for settings and stores,
and the process set-up of the long-running bots.

A user should see one line that names the cause and the fix, never a traceback,
for the failures we can foresee: a bad setting, an unreachable server, a data
folder that cannot be written.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import gc
import os
import signal
import socket
import sqlite3
import threading
from collections.abc import Callable, Coroutine, Iterator
from contextlib import closing, contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast, get_args

import typer
from rich.console import Console

from bots.data_folder import DataFolderError, make_private

# The command line imports what a command needs when it runs (``teamrag --help`` must not
# load the agent, LangChain or Chroma): the heavy modules are imported in the functions.
if TYPE_CHECKING:
    from agent.retrieval.knowledge_base import KnowledgeBase, SearchMode
    from bots.settings import Settings

err = Console(stderr=True)


def _new_event_loop() -> asyncio.AbstractEventLoop:
    try:  # not on Windows
        import uvloop
    except ImportError:  # pragma: no cover - Windows
        return asyncio.new_event_loop()
    return uvloop.new_event_loop()


def run_async(work: Coroutine[Any, Any, None]) -> None:
    """Run a command's async work; Ctrl-C ends it with a word, not a traceback. The thread
    keeps every turn that finished (a turn is saved whole or not at all).

    On uvloop where it installs: a bot's turn is mostly small socket reads and writes
    (Slack, Redis, Postgres, the LLM), whose scheduling uvloop does in C; two workers
    under load spent about 5% less CPU per turn (benchmarks/CHANGELOG.md, sixth round)."""
    try:
        with asyncio.Runner(loop_factory=_new_event_loop) as runner:
            runner.run(work)
    except KeyboardInterrupt:
        err.print("[yellow]Interrupted.[/yellow]")
        raise typer.Exit(130) from None
    except asyncio.CancelledError:  # SIGTERM to a bot: it stopped as it was asked to
        err.print("Stopped.")


def warn_if_empty(settings: Settings, kb: KnowledgeBase) -> None:
    if kb.catalog.chunk_count() == 0:
        err.print(
            "[yellow]The knowledge base is empty[/yellow]: run `teamrag ingest PATH` first "
            f"(data folder: {settings.data_dir}).",
            highlight=False,
        )


def fail(message: str, code: int = 1) -> typer.Exit:
    # One line even in a log file or CI, where the console would wrap at 80 columns.
    err.print(f"[red]error:[/red] {message}", highlight=False, soft_wrap=True)
    return typer.Exit(code)


def listening_socket(host: str, port: int, setting: str) -> socket.socket:
    """A bound, listening socket, or the CLI's exit naming the address and the fix (uvicorn
    alone printed "[Errno 98] address already in use" and exited 3)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    try:
        return socket.create_server((host, port), family=family, backlog=2048)
    except OSError as exc:
        reason = "is in use" if exc.errno == errno.EADDRINUSE else f"cannot be opened: {exc}"
        raise fail(
            f"{host}:{port} {reason}; stop what listens there, or pick another port with "
            f"--port or {setting}"
        ) from None


@dataclass(frozen=True)
class BoundPorts:
    """What a bot listens on, bound before its knowledge base and services open: a taken
    port is said at once, with the setting that moves it, not as a traceback later."""

    ops: socket.socket | None = None  # /healthz, /readyz, /metrics (None: TEAMRAG_OPS_PORT=0)
    events: socket.socket | None = None  # Slack's HTTP Events API (None: Socket Mode)

    @classmethod
    def bind(cls, settings: Settings, *, events_port: int | None = None) -> BoundPorts:
        ops_port = settings.ops_port
        ops = listening_socket("0.0.0.0", ops_port, "TEAMRAG_OPS_PORT") if ops_port else None
        try:
            events = (
                None
                if events_port is None
                else listening_socket("0.0.0.0", events_port, "TEAMRAG_SLACK_PORT")
            )
        except typer.Exit:
            if ops is not None:
                ops.close()
            raise
        return cls(ops=ops, events=events)

    def close(self) -> None:
        for sock in (self.ops, self.events):
            if sock is not None:
                sock.close()


def search_mode_or_exit(mode: str) -> SearchMode:
    from agent.retrieval.knowledge_base import SearchMode

    if mode not in get_args(SearchMode):
        raise fail(f"--mode must be one of {', '.join(get_args(SearchMode))}, not {mode!r}", 2)
    return cast(SearchMode, mode)


def settings_or_exit() -> Settings:
    from bots.settings import SettingsError, load_settings

    try:
        settings = load_settings()
    except SettingsError as exc:
        raise fail(str(exc), 2) from None
    try:
        # Before any store opens: what they create is the owner's alone (bots/data_folder.py).
        make_private(settings.data_dir)
    except DataFolderError as exc:
        raise fail(str(exc)) from None
    return settings


@contextmanager
def knowledge_base(settings: Settings) -> Iterator[KnowledgeBase]:
    """Open the configured knowledge base; turn known failures into one clear line."""
    from agent.retrieval.catalog import CatalogError
    from agent.retrieval.embeddings import EmbeddingError
    from agent.retrieval.vectors import VectorStoreError
    from bots.parts import build_knowledge_base

    try:
        kb = build_knowledge_base(settings)
    except (VectorStoreError, EmbeddingError, CatalogError) as exc:
        raise fail(str(exc)) from None
    except (OSError, sqlite3.Error) as exc:
        raise fail(
            f"cannot open the data folder {settings.data_dir}: {exc}; "
            "set TEAMRAG_DATA_DIR to a folder you can write to"
        ) from None
    _warn_of_stranded_documents(settings, kb)
    _warn_of_stranded_sources(settings)
    try:
        yield kb
    except (VectorStoreError, EmbeddingError) as exc:
        raise fail(str(exc)) from None
    finally:
        kb.close()


def _warn_of_stranded_documents(settings: Settings, kb: KnowledgeBase) -> None:
    """With DATABASE_URL the catalog lives in Postgres. A data folder from before that still
    lists its documents in ``catalog.sqlite3``, which nothing reads any more: say so, and how
    to bring them over, instead of letting the bot answer "nothing found"."""
    local = settings.data_dir / "catalog.sqlite3"
    if not settings.database_url or not local.exists() or kb.catalog.chunk_count():
        return
    try:
        with closing(sqlite3.connect(f"file:{local}?mode=ro", uri=True)) as db:
            (count,) = db.execute("SELECT count(*) FROM documents").fetchone()
    except sqlite3.Error:
        return  # not a catalog we can read: nothing to point at
    if count:
        err.print(
            f"[yellow]warning:[/yellow] the shared catalog (DATABASE_URL, schema "
            f"{settings.catalog_schema}) is empty, but {local} lists {count} documents "
            "ingested before the catalog moved to Postgres; run `teamrag ingest` on their "
            "folders (and `teamrag sync`) once to bring them over.",
            highlight=False,
            soft_wrap=True,
        )


def _warn_of_stranded_sources(settings: Settings) -> None:
    """With DATABASE_URL the sources live in Postgres too. A data folder from before lists
    its sources in ``catalog.sqlite3``, which no scheduler reads any more: say so, and
    which command copies them over, instead of letting them silently stop syncing."""
    local = settings.data_dir / "catalog.sqlite3"
    if not settings.database_url or not local.exists():
        return  # (before the imports: without DATABASE_URL nothing loads psycopg)
    from agent.sources.store import local_sources
    from agent.sources.store_postgres import has_sources

    stranded = local_sources(local)
    if not stranded or has_sources(settings.database_url, settings.catalog_schema):
        return
    names = ", ".join(s.name for s in stranded[:5]) + (", ..." if len(stranded) > 5 else "")
    err.print(
        f"[yellow]warning:[/yellow] the shared sources (DATABASE_URL, schema "
        f"{settings.catalog_schema}) are empty, but {local} lists {len(stranded)} sources "
        f"({names}) added before the sources moved to Postgres; run `teamrag sources "
        "import-local` once to copy them (each is then loaded in full at its next sync).",
        highlight=False,
        soft_wrap=True,
    )


def export_tracing(settings: Settings) -> None:
    """LangChain reads LangSmith's switches from ``os.environ`` only: copy them there when
    they came from the ``.env`` file, so that tracing set up there is tracing done."""
    if settings.langsmith_tracing and settings.langsmith_api_key:
        os.environ.setdefault("LANGSMITH_TRACING", "true")
        os.environ.setdefault("LANGSMITH_API_KEY", settings.langsmith_api_key)
        os.environ.setdefault("LANGSMITH_PROJECT", settings.langsmith_project)


@contextlib.contextmanager
def startup_objects_frozen() -> Iterator[None]:
    """Keep what exists at start (the encoder, the graph, the stores: alive as long as
    the process) out of Python's full garbage collections. Each full collection stops
    every conversation while it walks all objects: up to 156 ms with 50 answers under
    way, 14 ms with these frozen (benchmarks/slack_load.py).

    Used by both bots around their whole run."""
    gc.collect()
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


@contextlib.contextmanager
def on_sigterm(handler: Callable[[], None]) -> Iterator[None]:
    """``docker stop`` and process managers send SIGTERM: stop as gently as on Ctrl-C."""
    loop = asyncio.get_running_loop()
    try:
        loop.add_signal_handler(signal.SIGTERM, handler)
    except (NotImplementedError, RuntimeError, ValueError):  # not the main thread, or Windows
        yield
        return
    try:
        yield
    finally:
        loop.remove_signal_handler(signal.SIGTERM)


@contextlib.contextmanager
def stop_on_ctrl_c(announce: Callable[[], None]) -> Iterator[threading.Event]:
    """The first Ctrl-C sets the event (the work stops at its next safe point) and
    ``announce`` says so; a second one interrupts at once (KeyboardInterrupt).

    Why not just KeyboardInterrupt: it is raised wherever the main thread happens to be,
    and native code that checks for signals (Chroma's, for one) may consume it, so under
    load a Ctrl-C during a long ingest was sometimes lost. A flag is only read. A shell
    that started us with Ctrl-C ignored (a background job) is respected.
    """
    stopping = threading.Event()
    previous = signal.getsignal(signal.SIGINT)
    if previous is signal.SIG_IGN:
        yield stopping
        return

    def on_ctrl_c(signum: int, frame: object) -> None:
        if stopping.is_set():
            raise KeyboardInterrupt
        stopping.set()
        announce()

    signal.signal(signal.SIGINT, on_ctrl_c)
    try:
        yield stopping
    finally:
        signal.signal(signal.SIGINT, previous)
