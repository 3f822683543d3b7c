"""``teamrag sync``: every source (or the ones named) synced now, with a progress bar,
under the same lock the bots' scheduler takes."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Annotated

import typer

from bots.common import err, fail, settings_or_exit
from bots.sources_cli import out, sync_engine

if TYPE_CHECKING:  # imported when the command runs (bots/cli.py)
    from agent.retrieval.ingest import ProgressCallback
    from agent.sources.locks import SyncLock
    from agent.sources.sync import SourceSync, SyncOutcome
    from bots.settings import Settings

BUSY_EXIT = 75  # EX_TEMPFAIL: nothing failed, but a source was being synced elsewhere


def sync_command(
    names: Annotated[
        list[str] | None, typer.Argument(help="Sources to sync (default: all).")
    ] = None,
) -> None:
    """Sync sources now, with progress.

    Exits 1 if a source failed (the reason is shown), 75 if none failed but one was being
    synced by another process (a bot) and was left to it."""
    settings = settings_or_exit()
    with sync_engine(settings) as sync:
        known = {s.spec.name for s in sync.store.all()}
        wanted = names or sorted(known)
        unknown = [n for n in wanted if n not in known]
        if unknown:
            raise fail(
                f"no source named {', '.join(unknown)}; `teamrag sources list` shows them", 2
            )
        if not wanted:
            out.print("No sources yet: add one with `teamrag sources add KIND TARGET`.")
            return
        try:
            results = asyncio.run(_sync_all(settings, sync, wanted))
        except KeyboardInterrupt:
            err.print(
                "Interrupted. Documents finished so far are searchable; run `teamrag sync` "
                "again to finish."
            )
            raise typer.Exit(130) from None
    outcomes = [o for o in results if o is not None]
    busy = [name for name, o in zip(wanted, results, strict=True) if o is None]
    if outcomes:
        _summary(outcomes)
    for name in busy:
        err.print(
            f"[yellow]skipped:[/yellow] source {name} is being synced by another process (a "
            "bot's scheduler or another `teamrag sync`); its result shows in `teamrag sources "
            "list` when it ends",
            highlight=False,
            soft_wrap=True,
        )
    failed = [o for o in outcomes if o.error]
    for o in failed:
        err.print(f"[red]error:[/red] source {o.name}: {o.error}", highlight=False, soft_wrap=True)
    if failed:
        raise typer.Exit(1)
    if busy:
        raise typer.Exit(BUSY_EXIT)


async def _sync_all(
    settings: Settings, sync: SourceSync, names: list[str]
) -> list[SyncOutcome | None]:
    """Each source under the lock the bots' scheduler takes (``None``: another process
    holds it), so a manual sync never overlaps a bot's."""
    from agent.coordination.redis_connection import RedisConnection
    from bots.sources_wiring import sync_lock

    redis = (
        RedisConnection(settings.redis_url, retry_s=settings.redis_retry_s)
        if settings.redis_url
        else None
    )
    lock = sync_lock(settings, redis)
    try:
        return [await _sync_one(sync, lock, name) for name in names]
    finally:
        if redis is not None:
            await redis.aclose()


async def _sync_one(sync: SourceSync, lock: SyncLock, name: str) -> SyncOutcome | None:
    stop = threading.Event()
    async with lock.hold(name) as mine:
        if not mine:
            return None
        with _bar(f"Syncing {name}") as progress:
            try:
                return await asyncio.to_thread(sync.sync, name, progress=progress, stop=stop.is_set)
            except asyncio.CancelledError:  # Ctrl-C: the sync ends after its batch
                stop.set()
                raise


@contextmanager
def _bar(title: str) -> Iterator[ProgressCallback]:
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
    )

    with Progress(
        TextColumn(f"[bold]{title}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("{task.description}"),
        console=err,
    ) as bar:
        task = bar.add_task("", total=None)

        def progress(current: str, done: int, total: int) -> None:
            shown = current.rsplit("/", 1)[-1] or current if current else "done"
            bar.update(task, completed=done, total=total or None, description=shown[:60])

        yield progress


def _summary(outcomes: list[SyncOutcome]) -> None:
    from rich.table import Table

    from agent.retrieval.ingest import Status

    table = Table(title="Sync summary")
    columns = ("source", "added", "updated", "unchanged", "removed", "failed", "skipped", "result")
    for column in columns:
        table.add_column(column, justify="left" if column in ("source", "result") else "right")
    for o in outcomes:
        r = o.report
        result = "[green]ok[/green]" if o.ok else f"[red]{'failed' if o.error else 'stopped'}[/red]"
        counts = [r.count(s) for s in (Status.ADDED, Status.UPDATED, Status.UNCHANGED,
                                       Status.REMOVED, Status.FAILED, Status.IGNORED)]  # fmt: skip
        table.add_row(o.name, *map(str, counts), result)
    out.print(table)
    problems = [(o.name, x) for o in outcomes for x in o.report.results
                if x.status in (Status.FAILED, Status.IGNORED)]  # fmt: skip
    if problems:
        detail = Table(title="Not loaded")
        for column in ("source", "document", "reason"):
            detail.add_column(column, overflow="fold")
        for source, x in problems[:50]:
            detail.add_row(source, x.path, x.reason)
        out.print(detail)
