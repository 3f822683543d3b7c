"""What the API kinds (Confluence, Notion, Drive) share: list every document with a
version (cheap, no bodies), fetch only those whose version moved since the checkpoint.

A document whose fetch fails keeps its old version in the catalog and in the
checkpoint, so the next sync tries it again; one that is too large or of a type we
cannot read is skipped with the reason (and leaves the knowledge base if it was in it).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from agent.retrieval.ingest import FileResult, Status
from agent.retrieval.loaders import is_supported
from agent.sources import http
from agent.sources.base import (
    Checkpoint,
    Item,
    KindContext,
    SourceError,
    SourceSpec,
    failed,
    item,
    skipped,
    unchanged,
)


@dataclass(frozen=True)
class Entry:
    id: str
    version: str
    key: str  # catalog key, also the citation link
    title: str
    extra: Any = None  # whatever the kind needs to fetch it


class ListedSource(ABC):
    service = "the service"

    def __init__(self, spec: SourceSpec, ctx: KindContext, headers: dict[str, str]) -> None:
        self.spec = spec
        self.limit = http.max_bytes(spec)
        self.http = http.client(ctx.timeout_s, ctx.policy(spec), headers, follow_redirects=True)
        self._existing: set[str] = set()
        self._versions: dict[str, str] = {}

    @abstractmethod
    def entries(self) -> Iterator[Entry]:
        """Every document, with a version that changes when its content does."""

    @abstractmethod
    def fetch(self, entry: Entry) -> Item:
        """The document's content as an item (or why it is skipped or failed)."""

    # -- the interface -----------------------------------------------------
    def load_all(self) -> Iterator[Item]:
        return self._scan({})

    def changed_since(self, checkpoint: Checkpoint) -> Iterator[Item]:
        return self._scan(dict(checkpoint.get("versions", {})))

    def existing(self) -> set[str]:
        return self._existing

    def checkpoint(self) -> Checkpoint:
        return {"versions": self._versions}

    def close(self) -> None:
        self.http.close()

    def _scan(self, known: dict[str, str]) -> Iterator[Item]:
        self._existing, self._versions = set(), {}
        for entry in self.entries():
            self._existing.add(entry.key)
            if known.get(entry.id) == entry.version:
                self._versions[entry.id] = entry.version
                yield unchanged(entry.key)
                continue
            try:
                result = self.fetch(entry)
            except SourceError as exc:  # this document only: the others still sync
                result = failed(entry.key, f"{exc}; the old version stays")
            if isinstance(result, FileResult) and result.status is Status.FAILED:
                if entry.id in known:
                    self._versions[entry.id] = known[entry.id]
            elif isinstance(result, FileResult) and result.status is Status.IGNORED:
                self._existing.discard(entry.key)
            else:
                self._versions[entry.id] = entry.version
            yield result

    # -- helpers --------------------------------------------------------------
    def api(self, method: str, url: str, **kwargs: Any) -> Any:
        return http.json_api(self.http, method, url, service=self.service, **kwargs)

    def download(self, entry: Entry, url: str, name: str, **kwargs: Any) -> Item:
        """A document's bytes at ``url``, loaded by the loader for ``name``'s extension."""
        if not is_supported(Path(name)):
            return skipped(entry.key, f"{name}: not a type teamrag reads")
        got = self.fetched(entry, url, **kwargs)
        if isinstance(got, FileResult):
            return got
        return item(entry.key, name, got.body, link=entry.key, title=entry.title)

    def fetched(self, entry: Entry, url: str, **kwargs: Any) -> http.Fetched | FileResult:
        """``url``'s response, or why there is none (too large, an HTTP or network error)
        as the entry's result."""
        try:
            got = http.get(self.http, url, limit=self.limit, **kwargs)
        except httpx.HTTPError as exc:
            return failed(entry.key, http.describe(exc, url) + "; the old version stays")
        if got.too_large:
            return skipped(entry.key, f"larger than {self.limit} bytes; raise --max-bytes")
        if got.status >= 400:
            return failed(entry.key, f"HTTP {got.status} from {url}; the old version stays")
        return got
