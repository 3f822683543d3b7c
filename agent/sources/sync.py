"""Sync one source: scan it, ingest what changed, remove what is gone, record the state.

Everything goes through :meth:`Ingestor.ingest`, so a remote document is compared by
content hash, chunked and switched in exactly like a file. Deleted documents leave the
catalog, the vectors and (through ``forget``) the answer caches; the keyword index is
rebuilt once at the end.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from agent.net.address_policy import Resolver, system_resolver
from agent.retrieval.ingest import (
    Ingestor,
    IngestReport,
    ProgressCallback,
    Status,
    document_id,
)
from agent.retrieval.knowledge_base import KnowledgeBase
from agent.sources.base import Item, KindContext, SourceError, SourceKind, SourceSpec
from agent.sources.registry import KindRegistry
from agent.sources.store import SourceState, SourceStore

log = logging.getLogger(__name__)

BACKOFF_BASE_S = 60.0
BACKOFF_MAX_S = 6 * 3600.0
_PRESENT = (Status.ADDED, Status.UPDATED, Status.UNCHANGED)

Forget = Callable[[list[str]], None]
"""Told the doc ids of documents that changed or left (the answer caches drop them)."""


def backoff_s(failures: int) -> float:
    """Wait after the ``failures``-th failure in a row: 1, 2, 4 ... minutes, at most 6 h."""
    return float(min(BACKOFF_MAX_S, BACKOFF_BASE_S * 2.0 ** max(0, failures - 1)))


@dataclass
class SyncOutcome:
    name: str
    report: IngestReport = field(default_factory=IngestReport)
    error: str | None = None
    interrupted: bool = False
    full: bool = False

    @property
    def ok(self) -> bool:
        return self.error is None and not self.interrupted


class _Scan:
    """The kind's items, noting whether the scan ran to its end: only a complete scan
    may decide what is gone."""

    def __init__(self, items: Iterable[Item]) -> None:
        self._items = items
        self.complete = False
        self.present: set[str] = set()

    def __iter__(self) -> Iterator[Item]:
        yield from self._items
        self.complete = True


class SourceSync:
    def __init__(
        self,
        kb: KnowledgeBase,
        store: SourceStore,
        registry: KindRegistry,
        *,
        env: Mapping[str, str],
        work_dir: Path,
        forget: Forget | None = None,
        clock: Callable[[], float] = time.time,
        resolver: Resolver = system_resolver,
    ) -> None:
        self.kb = kb
        self.store = store
        self.registry = registry
        self.env = env
        self.work_dir = work_dir
        self.forget = forget
        self.clock = clock
        self.resolver = resolver

    def context(self, spec: SourceSpec, *, one_off: bool = False) -> KindContext:
        timeout = float(spec.option("timeout_s", 30.0))
        return KindContext(
            self.env, self.work_dir / spec.name, timeout, self.resolver, one_off=one_off
        )

    def sync(
        self,
        name: str,
        *,
        progress: ProgressCallback | None = None,
        stop: Callable[[], bool] | None = None,
    ) -> SyncOutcome:
        state = self.store.get(name)
        if state is None:
            raise KeyError(name)
        outcome = SyncOutcome(name)
        basis = f"{state.spec.scope}|{self.kb.pipeline}"
        outcome.full = not state.checkpoint or state.basis != basis
        kind: SourceKind | None = None
        try:
            kind = self.registry.get(state.spec.kind).build(state.spec, self.context(state.spec))
            items = kind.load_all() if outcome.full else kind.changed_since(state.checkpoint)
            scan = _Scan(items)
            members = self.store.members(name)
            removed: list[str] = []

            def gone() -> Iterator[str]:
                if kind is None or not scan.complete:
                    return
                vanished = members - kind.existing()
                removed.extend(vanished - self.store.owned_elsewhere(name, vanished))
                yield from removed

            outcome.report = Ingestor(self.kb).ingest(
                scan, scope=state.spec.scope, progress=progress, remove=gone(), stop=stop
            )
            if not scan.complete:
                outcome.interrupted = True  # the next run starts again from the old checkpoint
                return outcome
            present = {r.path for r in outcome.report.results if r.status in _PRESENT}
            keep = kind.existing() & (members | present)
            self.store.record_success(
                name,
                now=self.clock(),
                next_run=self.clock() + state.spec.every_s,
                checkpoint=kind.checkpoint(),
                basis=basis,
                members=keep,
            )
        except Exception as exc:
            outcome.error = _reason(exc)
            self._failed(state, outcome.error)
            return outcome
        finally:
            if kind is not None:
                kind.close()
        self._forget(outcome.report)
        return outcome

    def _failed(self, state: SourceState, error: str) -> None:
        now = self.clock()
        wait = backoff_s(state.failures + 1)
        log.warning("source %s failed (%s); next try in %.0f s", state.spec.name, error, wait)
        self.store.record_failure(state.spec.name, now=now, next_run=now + wait, error=error)

    def remove(self, name: str) -> IngestReport:
        """Delete a source and every document only it owned."""
        members = self.store.members(name)
        mine = members - self.store.owned_elsewhere(name, members)
        report = self.remove_documents(sorted(mine))
        self.store.delete(name)
        return report

    def remove_documents(self, sources: list[str]) -> IngestReport:
        """Take documents (by catalog key) out of every store: the catalog and the vectors,
        the keyword index, and the answer caches' entries that cite them. The one way a
        document leaves: ``sources remove``, and ``teamrag forget``."""
        report = IngestReport(Ingestor(self.kb).remove(sources))
        self.kb.refresh_keyword_index()
        self._forget(report)
        return report

    def one_off(self, spec: SourceSpec, progress: ProgressCallback | None = None) -> IngestReport:
        """Load a source once without storing it (``teamrag ingest URL``)."""
        kind = self.registry.get(spec.kind).build(spec, self.context(spec, one_off=True))
        try:
            return Ingestor(self.kb).ingest(kind.load_all(), scope=spec.scope, progress=progress)
        finally:
            kind.close()

    def _forget(self, report: IngestReport) -> None:
        changed = [
            document_id(r.path)
            for r in report.results
            if r.status in (Status.UPDATED, Status.REMOVED)
        ]
        if changed and self.forget is not None:
            try:
                self.forget(changed)
            except Exception as exc:
                log.warning("could not drop cached answers of changed documents: %s", exc)


def _reason(exc: BaseException) -> str:
    if isinstance(exc, SourceError):
        return str(exc)
    return f"{type(exc).__name__}: {exc}"
