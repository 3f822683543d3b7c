"""``teamrag sources add/list/remove`` and ``teamrag sync``: the sources a knowledge base
keeps in sync with, from the terminal."""

from __future__ import annotations

import contextlib
import re
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Annotated, Any
from urllib.parse import urlsplit

import typer
from rich.console import Console

from bots.common import err, fail, knowledge_base, settings_or_exit

if TYPE_CHECKING:  # imported when a command runs (bots/cli.py)
    from agent.retrieval.ingest import IngestReport, ProgressCallback
    from agent.retrieval.knowledge_base import KnowledgeBase
    from agent.sources.base import SourceSpec
    from agent.sources.store import SourceState
    from agent.sources.sync import SourceSync
    from bots.settings import Settings

sources_app = typer.Typer(
    help="The places your documents live (websites, Git, wikis, drives), kept in sync.",
    no_args_is_help=True,
)
out = Console()
# The address policy's opt-in (agent/net/address_policy.py), for `sources add` and `ingest`.
AllowPrivateOption = Annotated[
    bool, typer.Option("--allow-private", help="May reach private and local addresses (intranet).")
]


@contextmanager
def sync_engine(settings: Settings) -> Iterator[SourceSync]:
    from agent.coordination.redis_connection import RedisConnection
    from agent.sources.store import SourceStoreError
    from bots.sources_wiring import open_source_sync

    redis = (
        RedisConnection(settings.redis_url, retry_s=settings.redis_retry_s)
        if settings.redis_url
        else None
    )
    try:
        with knowledge_base(settings) as kb, open_source_sync(settings, kb, redis) as sync:
            yield sync
    except SourceStoreError as exc:
        raise fail(str(exc)) from None
    finally:
        if redis is not None:
            redis.sync_client.close()  # the asyncio client never connected in a command


def default_name(kind: str, target: str) -> str:
    """A readable name from the target: ``docs.example.com``, ``handbook``, a space key."""
    from bots.chat_sources import CHAT_KINDS

    parts = urlsplit(target)
    if kind == "web" and parts.netloc:
        base = parts.netloc + (
            "-" + parts.path.strip("/").split("/")[0] if parts.path.strip("/") else ""
        )
    elif kind in CHAT_KINDS:
        base = f"{kind}-{target}"
    else:
        base = target.rstrip("/").rsplit("/", 1)[-1].removesuffix(".git") or kind
    slug = re.sub(r"[^a-z0-9_.-]+", "-", base.lower()).strip("-.")[:64]
    return slug or kind


@sources_app.command("add")
def add(
    kind: Annotated[
        str, typer.Argument(help="web, git, confluence, notion, gdrive, slack or discord.")
    ],
    target: Annotated[str, typer.Argument(help="URL, repository, space key, id or channel.")],
    name: Annotated[
        str | None, typer.Option(help="Name for the source (default: from TARGET).")
    ] = None,
    scope: Annotated[list[str] | None, typer.Option(help="Scope of its documents.")] = None,
    every: Annotated[str, typer.Option(help="Sync interval: 30m, 6h, 1d, or off.")] = "1h",
    max_pages: Annotated[int | None, typer.Option(help="web: pages at most.")] = None,
    depth: Annotated[int | None, typer.Option(help="web: link depth from the start page.")] = None,
    branch: Annotated[str | None, typer.Option(help="git: branch.")] = None,
    include: Annotated[list[str] | None, typer.Option(help="git: file glob, repeatable.")] = None,
    code_comments: Annotated[bool, typer.Option(help="git: also comments in code.")] = False,
    web_url: Annotated[str | None, typer.Option(help="git: repository web page for links.")] = None,
    token_env: Annotated[str | None, typer.Option(help="Variable holding the API token.")] = None,
    user_env: Annotated[
        str | None, typer.Option(help="confluence: variable with the e-mail.")
    ] = None,
    api_url: Annotated[str | None, typer.Option(help="API base URL of the service.")] = None,
    attachments: Annotated[
        bool, typer.Option(help="confluence, slack: load attachments (files) too.")
    ] = False,
    max_bytes: Annotated[int | None, typer.Option(help="Skip documents larger than this.")] = None,
    timeout_s: Annotated[float | None, typer.Option(help="Seconds per request.")] = None,
    allow_private: AllowPrivateOption = False,
) -> None:
    """Add a source; the bots sync it at its interval, `teamrag sync NAME` right now."""
    from adapters.chat.history import own_scope
    from agent.retrieval.ingest import validate_scope
    from agent.sources.base import SourceSpec, format_interval, parse_interval, validate_name
    from agent.sources.reach import AddressRefused
    from agent.sources.store import SourceExistsError
    from bots.chat_sources import CHAT_KINDS

    settings = settings_or_exit()
    options: dict[str, Any] = {
        "max_pages": max_pages, "depth": depth, "branch": branch, "include": include,
        "code_comments": code_comments, "web_url": web_url, "token_env": token_env,
        "user_env": user_env, "api_url": api_url, "attachments": attachments,
        "max_bytes": max_bytes, "timeout_s": timeout_s,
    }  # fmt: skip
    scopes = scope or [settings.default_scope]
    if len(scopes) > 1:
        raise fail(f"a source's documents have one scope; pass --scope once (got {scopes})", 2)
    if kind in CHAT_KINDS:
        # A channel's history follows the channel rules (worked out at each sync) unless
        # --scope says otherwise; the catalog shows the private fallback until then.
        options["scope"] = scope[0] if scope else None
        scopes = scope or [own_scope(kind, target)]
    with sync_engine(settings) as sync:
        try:
            checked = sync.registry.check_options(kind, options)
            spec = SourceSpec(
                validate_name(name or default_name(kind, target)),
                kind,
                target,
                validate_scope(scopes[0]),
                parse_interval(every),
                checked,
                allow_private,
            )
            _try_build(sync, spec)
            sync.store.add(spec)
        except (ValueError, SourceExistsError, AddressRefused) as exc:
            raise fail(str(exc), 2) from None
    when = f"every {format_interval(spec.every_s)}" if spec.every_s else "only by `teamrag sync`"
    where = f"scope {spec.scope}"
    if kind in CHAT_KINDS and not scope:
        where = f"scope from the channel rules; {spec.scope} if the channel is private"
    out.print(
        f"Added source [bold]{spec.name}[/bold] ({kind} {target}, {where}), synced "
        f"{when}. Run `teamrag sync {spec.name}` to load it now.",
        highlight=False,
    )


def _try_build(sync: SourceSync, spec: SourceSpec) -> None:
    """Catch a wrong target now, and an address the policy refuses; a missing secret or a
    name that does not resolve here only warns (the bot's host may have them)."""
    from agent.sources.base import SourceError
    from agent.sources.reach import unreachable_reason

    context = sync.context(spec)
    try:
        sync.registry.get(spec.kind).build(spec, context).close()
        warning = unreachable_reason(spec, context.policy(spec))
    except SourceError as exc:
        warning = str(exc)
    if warning:
        err.print(f"[yellow]warning:[/yellow] {warning}", highlight=False, soft_wrap=True)


def _ago(then: float | None, now: float) -> str:
    if then is None:
        return "never"
    return _span(now - then) + " ago"


def _span(seconds: float) -> str:
    seconds = max(0.0, seconds)
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{seconds / size:.0f}{unit}"
    return f"{seconds:.0f}s"


def _next(state: SourceState, now: float) -> str:
    if state.spec.every_s <= 0:
        return "manual"
    return "due" if state.next_run <= now else "in " + _span(state.next_run - now)


@sources_app.command("list")
def list_sources() -> None:
    """The sources, with their last sync, documents, next run and last error."""
    from rich.table import Table

    from agent.sources.base import format_interval

    settings = settings_or_exit()
    with sync_engine(settings) as sync:
        states = sync.store.all()
    if not states:
        out.print("No sources yet: add one with `teamrag sources add KIND TARGET`.")
        return
    now = time.time()
    table = Table(title=f"{len(states)} sources")
    for column in ("name", "kind", "target", "scope", "every", "private", "last sync",
                   "documents", "next run", "last error"):  # fmt: skip
        table.add_column(column, overflow="fold")
    for s in states:
        table.add_row(
            s.spec.name, s.spec.kind, s.spec.target, s.spec.scope, format_interval(s.spec.every_s),
            "allowed" if s.spec.allow_private else "", _ago(s.last_sync, now),
            str(s.documents), _next(s, now),
            f"[red]{s.last_error}[/red]" if s.last_error else "",
        )  # fmt: skip
    out.print(table)


@sources_app.command("remove")
def remove(name: Annotated[str, typer.Argument(help="The source to remove.")]) -> None:
    """Remove a source; its documents leave the knowledge base and the answer caches."""
    settings = settings_or_exit()
    with sync_engine(settings) as sync:
        if sync.store.get(name) is None:
            raise fail(f"no source named {name!r}; `teamrag sources list` shows them", 2)
        report = sync.remove(name)
    out.print(f"Removed source {name} and its {len(report.results)} documents.", highlight=False)


@sources_app.command("import-local")
def import_local() -> None:
    """Copy this host's sources into the shared store (DATABASE_URL).

    The sources this host's data folder lists; each is loaded in full at its next sync."""
    from agent.sources.store import SourceExistsError, SourceStoreError, local_sources
    from bots.sources_wiring import open_source_store

    settings = settings_or_exit()
    if not settings.database_url:
        raise fail(
            "the sources already live in this data folder; set DATABASE_URL to copy them to "
            "the shared Postgres",
            2,
        )
    local = settings.data_dir / "catalog.sqlite3"
    specs = local_sources(local)
    if not specs:
        out.print(f"No sources in {local}: nothing to copy.", highlight=False)
        return
    copied: list[str] = []
    try:
        shared = open_source_store(settings)
    except SourceStoreError as exc:
        raise fail(str(exc)) from None
    try:
        for spec in specs:
            # A fresh state, not the local checkpoint: the shared catalog does not hold
            # these documents yet, so the first sync must load them all.
            with contextlib.suppress(SourceExistsError):
                shared.add(spec)
                copied.append(spec.name)
    finally:
        shared.close()
    out.print(
        f"Copied {len(copied)} sources to Postgres (schema {settings.catalog_schema})"
        + (f": {', '.join(copied)}" if copied else "")
        + ". Each is loaded in full at its next sync (`teamrag sync` to do it now); "
        f"{local} is left as it was.",
        highlight=False,
    )
    for name in sorted({s.name for s in specs} - set(copied)):
        err.print(f"[yellow]skipped:[/yellow] the shared store has a source named {name}")


def ingest_urls(
    settings: Settings,
    kb: KnowledgeBase,
    urls: list[str],
    scope: str,
    progress: ProgressCallback | None = None,
    *,
    allow_private: bool = False,
) -> IngestReport:
    """`teamrag ingest URL`: the page (or a sitemap's pages) once, as a web source that is
    not kept; `teamrag sources add web URL` keeps it in sync. Public addresses only unless
    ``allow_private`` (`teamrag ingest --allow-private`)."""
    from agent.retrieval.ingest import FileResult, IngestReport, Status
    from agent.sources.base import SourceError, SourceSpec
    from bots.sources_wiring import open_source_sync

    report = IngestReport()
    with open_source_sync(settings, kb) as sync:
        for url in urls:
            spec = SourceSpec("one-off", "web", url, scope, 0, {"depth": 0}, allow_private)
            try:
                report.results.extend(sync.one_off(spec, progress).results)
            except (SourceError, ValueError) as exc:
                report.results.append(FileResult(url, Status.FAILED, reason=str(exc)))
    return report
