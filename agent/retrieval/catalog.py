"""What every document catalog offers: the one interface the knowledge base, ingestion
and the commands use, whichever catalog a process runs on, and :func:`open_catalog`,
which picks it.

Two implementations: :class:`~agent.retrieval.catalog_sqlite.SqliteCatalog` (a SQLite
file in the data folder) and :class:`~agent.retrieval.catalog_postgres.PostgresCatalog`
(a schema shared by every host, ``DATABASE_URL``). Each is imported only when it is
opened, so a process on the data folder never loads psycopg. Each module checks its
class against :class:`DocumentCatalog` for mypy, so a method added to one and
forgotten in the other fails the type check instead of a deployment.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, runtime_checkable

from agent.retrieval.keyword import KeywordRow
from agent.retrieval.types import Chunk, TermPair


@dataclass(frozen=True)
class DocumentRecord:
    doc_id: str
    source: str
    scope: str
    title: str
    content_hash: str
    n_chunks: int
    pipeline: str
    ingested_at: float


class CatalogError(Exception):
    """The catalog cannot be used (its file, or Postgres); the message says how to fix it."""


class DocumentCatalog(Protocol):
    """Documents, their chunks with keyword terms, the term vocabulary and the vectors
    pending deletion. Every change bumps :attr:`generation`."""

    def close(self) -> None: ...

    def get_meta(self, key: str) -> str | None: ...

    def set_meta(self, key: str, value: str) -> None: ...

    @property
    def generation(self) -> int: ...

    # -- documents
    def document_by_source(self, source: str) -> DocumentRecord | None: ...

    def documents(self) -> list[DocumentRecord]: ...

    def document_versions(self, doc_ids: Iterable[str]) -> dict[str, str]: ...

    def replace_document(
        self,
        record: DocumentRecord,
        chunks: Sequence[Chunk],
        tokens: Sequence[Sequence[str]],
        languages: Sequence[str] | None = None,
        pairs: Sequence[TermPair] = (),
    ) -> list[str]: ...

    def remove_document(self, doc_id: str) -> list[str]: ...

    # -- keyword terms
    def term_ids(self, tokens: Sequence[str]) -> list[int | None]: ...

    def term_count(self) -> int: ...

    # -- bilingual term pairs (agent/glossary), each with its document's source
    def term_pairs(self) -> list[tuple[str, TermPair]]: ...

    # Every keyword term the documents have used (agent/glossary/loanwords.py).
    def vocabulary(self) -> list[str]: ...

    def keyword_rows(self) -> Iterator[KeywordRow]: ...

    # -- vectors written or switched out, not deleted yet
    def mark_pending(self, chunk_ids: Sequence[str]) -> None: ...

    def orphaned_vectors(self) -> list[str]: ...

    def clear_pending(self, chunk_ids: Sequence[str]) -> None: ...

    # -- chunks
    def chunks(self, chunk_ids: Iterable[str]) -> dict[str, Chunk]: ...

    def chunk_languages(self, chunk_ids: Iterable[str]) -> dict[str, str]: ...

    def neighbours(self, chunk: Chunk, radius: int = 1) -> list[Chunk]: ...

    def neighbours_of(self, chunks: Sequence[Chunk], radius: int = 1) -> dict[str, list[Chunk]]: ...

    def document_chunks(self, doc_id: str) -> list[Chunk]: ...

    def chunk_count(self) -> int: ...


@runtime_checkable
class SharedKeywords(Protocol):
    """A catalog other hosts change at any time (Postgres): a host follows their changes
    to the keyword index instead of rebuilding it from :meth:`keyword_rows`."""

    def keyword_snapshot(self) -> tuple[int, list[KeywordRow]]: ...

    def keyword_changes(self, since: int) -> tuple[int, list[str], list[KeywordRow]] | None: ...


def open_catalog(
    data_dir: Path, database_url: str | None = None, schema: str = "teamrag"
) -> DocumentCatalog:
    """The catalog a process runs on: the Postgres ``schema`` every host shares when
    ``database_url`` is set, else the SQLite file in ``data_dir``."""
    if database_url:
        from agent.retrieval.catalog_postgres import PostgresCatalog

        return PostgresCatalog(database_url, schema)
    from agent.retrieval.catalog_sqlite import SqliteCatalog

    return SqliteCatalog(data_dir / "catalog.sqlite3")
