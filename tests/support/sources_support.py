"""Sources on the real knowledge base: the store, the sync engine and a clock tests move."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from agent.net.address_policy import Resolver, system_resolver
from agent.retrieval.ingest import Status
from agent.retrieval.knowledge_base import KnowledgeBase, SearchOptions
from agent.sources.base import SourceSpec
from agent.sources.registry import KindRegistry, default_registry
from agent.sources.store import SourceStore, SqliteSourceStore
from agent.sources.sync import Forget, SourceSync, SyncOutcome

OpenStore = Callable[[], SourceStore]
"""Opens a sources store; each call is another process or host on the same store."""


class Clock:
    """Wall-clock seconds that only move when a test says so."""

    def __init__(self, now: float = 1_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


@contextmanager
def source_sync(
    kb: KnowledgeBase,
    tmp: Path,
    *,
    env: Mapping[str, str] | None = None,
    registry: KindRegistry | None = None,
    forget: Forget | None = None,
    clock: Clock | None = None,
    store: SourceStore | None = None,
    resolver: Resolver = system_resolver,
) -> Iterator[SourceSync]:
    """The sync engine on ``store`` (default: the data folder's file, closed at the end)."""
    sources = store or SqliteSourceStore(kb.data_dir / "catalog.sqlite3")
    try:
        yield SourceSync(
            kb,
            sources,
            registry or default_registry(),
            env=env or {},
            work_dir=tmp / "work",
            forget=forget,
            clock=clock or Clock(),
            resolver=resolver,
        )
    finally:
        if store is None:
            sources.close()


def add(
    sync: SourceSync,
    name: str,
    kind: str,
    target: str,
    *,
    scope: str = "public",
    every_s: float = 1800.0,
    allow_private: bool = False,
    **options: Any,
) -> SourceSpec:
    """A source as `teamrag sources add` stores it; ``allow_private`` for the test servers
    on 127.0.0.1 (the address policy refuses loopback otherwise)."""
    spec = SourceSpec(
        name, kind, target, scope, every_s, sync.registry.check_options(kind, options),
        allow_private,
    )  # fmt: skip
    sync.store.add(spec, now=sync.clock())
    return spec


def counts(outcome: SyncOutcome) -> dict[str, int]:
    report = outcome.report
    return {s.value: report.count(s) for s in Status if report.count(s)}


def reasons(outcome: SyncOutcome) -> dict[str, str]:
    return {r.path: r.reason for r in outcome.report.results if r.reason}


def found(kb: KnowledgeBase, query: str, scopes: frozenset[str] | None = None) -> str:
    hits = kb.search(query, SearchOptions(k=10, scopes=scopes))
    return "\n".join(f"{h.chunk.link} {h.chunk.text}" for h in hits)
