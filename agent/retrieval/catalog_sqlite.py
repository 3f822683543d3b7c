"""The catalog in a SQLite file: which documents are ingested, at which version, and
their chunks' text (the interface: :mod:`agent.retrieval.catalog`).

It is the source of truth for "what is searchable". A document version is switched
in one transaction, so a crash mid-ingest leaves the previous version in place;
vectors the vector store holds for a version the catalog does not list are ignored by
search and deleted by the next ingest.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from agent.plumbing.sqlite_tx import immediate
from agent.retrieval.catalog import CatalogError, DocumentCatalog, DocumentRecord
from agent.retrieval.keyword import KeywordRow
from agent.retrieval.types import Chunk, TermPair

_SCHEMA = """
CREATE TABLE IF NOT EXISTS documents (
    doc_id TEXT PRIMARY KEY,
    source TEXT NOT NULL UNIQUE,
    scope TEXT NOT NULL,
    title TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    n_chunks INTEGER NOT NULL,
    pipeline TEXT NOT NULL,
    ingested_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS chunks (
    chunk_id TEXT PRIMARY KEY,
    doc_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    text TEXT NOT NULL,
    -- keyword terms: token count, distinct term ids (int32) and their counts (float32)
    length INTEGER NOT NULL,
    term_ids BLOB NOT NULL,
    term_counts BLOB NOT NULL,
    page INTEGER,
    heading TEXT NOT NULL,
    link TEXT,
    -- 'ko' or 'en' (agent/wording/language.py on the chunk text), for cross-language fusion
    lang TEXT NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS chunks_by_doc ON chunks (doc_id, seq);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
-- Keyword vocabulary: ids never change, so stored term ids stay valid.
CREATE TABLE IF NOT EXISTS terms (id INTEGER PRIMARY KEY, term TEXT NOT NULL UNIQUE);
-- Vectors written for a version that is not switched in yet. A crash leaves them
-- here, so the next run deletes exactly those instead of scanning the vector store.
CREATE TABLE IF NOT EXISTS pending_vectors (chunk_id TEXT PRIMARY KEY);
-- Bilingual term pairs mined from a document (agent/glossary): they leave with it.
CREATE TABLE IF NOT EXISTS term_pairs (doc_id TEXT NOT NULL, ko TEXT NOT NULL, en TEXT NOT NULL,
    origin TEXT NOT NULL, confidence REAL NOT NULL);
CREATE INDEX IF NOT EXISTS term_pairs_by_doc ON term_pairs (doc_id);
"""


class SqliteCatalog:
    """The catalog in one SQLite file in the data folder (the embedded default)."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.RLock()
        self._db = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        columns = {row[1] for row in self._db.execute("PRAGMA table_info(chunks)")}
        if columns and not {"term_ids", "lang"} <= columns:
            self._db.close()
            raise CatalogError(
                f"{path} was written by an older teamrag; delete the folder "
                f"{path.parent} and run `teamrag ingest` again (documents are re-read "
                "from their files)"
            )
        self._db.executescript(_SCHEMA)
        self._term_cache: dict[str, int] = {}

    def close(self) -> None:
        with self._lock:
            self._db.close()

    # -- meta ---------------------------------------------------------------
    def get_meta(self, key: str) -> str | None:
        with self._lock:
            row = self._db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def set_meta(self, key: str, value: str) -> None:
        with self._lock:
            self._db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, value))

    @property
    def generation(self) -> int:
        """Bumped by every change, so derived indexes know when they are stale."""
        return int(self.get_meta("generation") or 0)

    # -- documents ----------------------------------------------------------
    def document_by_source(self, source: str) -> DocumentRecord | None:
        with self._lock:
            row = self._db.execute("SELECT * FROM documents WHERE source = ?", (source,)).fetchone()
        return None if row is None else DocumentRecord(*row)

    def documents(self) -> list[DocumentRecord]:
        with self._lock:
            rows = self._db.execute("SELECT * FROM documents ORDER BY source").fetchall()
        return [DocumentRecord(*row) for row in rows]

    def document_versions(self, doc_ids: Iterable[str]) -> dict[str, str]:
        """``doc_id -> "content_hash:pipeline:scope"`` for the given documents that exist.

        The token changes whenever the searchable text could (new content or a new
        chunking/embedding pipeline) or who may see it (a new scope: an answer cached for
        "public" must not outlive the document's move to "hr"). An id absent from the
        result was deleted.
        """
        sql = (
            "SELECT doc_id, content_hash, pipeline, scope FROM documents WHERE doc_id IN ({marks})"
        )
        with self._lock:
            return {
                str(doc_id): f"{content_hash}:{pipeline}:{scope}"
                for doc_id, content_hash, pipeline, scope in self._select_in(
                    sql, list(dict.fromkeys(doc_ids))
                )
            }

    def replace_document(
        self,
        record: DocumentRecord,
        chunks: Sequence[Chunk],
        tokens: Sequence[Sequence[str]],
        languages: Sequence[str] | None = None,
        pairs: Sequence[TermPair] = (),
    ) -> list[str]:
        """Make ``chunks`` the searchable version of the document; return the old chunk ids.

        ``tokens`` are each chunk's keyword tokens; ``languages`` each chunk's
        language code (empty if unknown); ``pairs`` the term pairs mined from it.
        """
        langs = list(languages) if languages is not None else [""] * len(chunks)
        counted = [Counter(t) for t in tokens]
        with self._transaction():
            term_id = self._add_terms({term for c in counted for term in c})
            rows = [
                (c.chunk_id, c.doc_id, c.seq, c.text, len(t),
                 np.fromiter((term_id[term] for term in counts), np.int32).tobytes(),
                 np.fromiter(counts.values(), np.float32).tobytes(),
                 c.page, c.heading, c.link, lang)
                for c, t, counts, lang in zip(chunks, tokens, counted, langs, strict=True)
            ]  # fmt: skip
            old = self._chunk_ids(record.doc_id)
            self._db.execute("DELETE FROM chunks WHERE doc_id = ?", (record.doc_id,))
            self._db.executemany(
                "INSERT INTO chunks VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", rows
            )
            self._db.executemany(
                "DELETE FROM pending_vectors WHERE chunk_id = ?", [(c.chunk_id,) for c in chunks]
            )
            self._db.execute(
                "INSERT OR REPLACE INTO documents VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (record.doc_id, record.source, record.scope, record.title, record.content_hash,
                 len(chunks), record.pipeline, time.time()),
            )  # fmt: skip
            self._db.execute("DELETE FROM term_pairs WHERE doc_id = ?", (record.doc_id,))
            self._db.executemany(
                "INSERT INTO term_pairs VALUES (?, ?, ?, ?, ?)",
                [(record.doc_id, p.ko, p.en, p.origin, p.confidence) for p in pairs],
            )
            stale = [cid for cid in old if cid not in {c.chunk_id for c in chunks}]
            self._mark_stale(stale)
        return stale

    def remove_document(self, doc_id: str) -> list[str]:
        with self._transaction():
            old = self._chunk_ids(doc_id)
            self._db.execute("DELETE FROM chunks WHERE doc_id = ?", (doc_id,))
            self._db.execute("DELETE FROM documents WHERE doc_id = ?", (doc_id,))
            self._db.execute("DELETE FROM term_pairs WHERE doc_id = ?", (doc_id,))
            self._mark_stale(old)
        return old

    def _mark_stale(self, chunk_ids: list[str]) -> None:
        """Vectors of a version just switched out are pending deletion, in the same
        transaction: if the process dies before deleting them, the next run does."""
        self._db.executemany(
            "INSERT OR IGNORE INTO pending_vectors VALUES (?)", [(c,) for c in chunk_ids]
        )

    @contextmanager
    def _transaction(self) -> Iterator[None]:
        """One atomic change to the catalog; it bumps the generation when it commits."""
        with self._lock:
            try:
                with immediate(self._db):
                    yield
                    self._bump()
            except BaseException:
                self._term_cache.clear()  # ids of terms added by this transaction are void
                raise

    def _select_in(self, sql: str, values: Sequence[str]) -> Iterator[Any]:
        """Rows of ``sql`` (with one ``{marks}`` for an IN list) over ``values``, in batches
        small enough for SQLite's parameter limit. The caller holds the lock."""
        for start in range(0, len(values), 500):
            batch = values[start : start + 500]
            yield from self._db.execute(sql.format(marks=",".join("?" * len(batch))), batch)

    def _add_terms(self, terms: set[str]) -> dict[str, int]:
        """Ids of ``terms``, adding the new ones (inside the caller's transaction).

        Ids never change once given, so known ones are cached: ingestion then asks
        SQLite only about words it has not seen yet.
        """
        new = [t for t in terms if t not in self._term_cache]
        if new:
            self._db.executemany(
                "INSERT OR IGNORE INTO terms (term) VALUES (?)", [(t,) for t in new]
            )
            self._lookup_terms(new)
        return {t: self._term_cache[t] for t in terms}

    def _lookup_terms(self, terms: list[str]) -> list[int | None]:
        sql = "SELECT term, id FROM terms WHERE term IN ({marks})"
        for term, term_id in self._select_in(sql, terms):
            self._term_cache[term] = int(term_id)
        return [self._term_cache.get(t) for t in terms]

    def term_ids(self, tokens: Sequence[str]) -> list[int | None]:
        """The id of each query token, None for a word no document has ever used."""
        with self._lock:
            return self._lookup_terms(list(tokens))

    def term_pairs(self) -> list[tuple[str, TermPair]]:
        """Every mined term pair with the source of the document it came from."""
        with self._lock:
            rows = self._db.execute(
                "SELECT d.source, p.ko, p.en, p.origin, p.confidence FROM term_pairs p "
                "JOIN documents d USING (doc_id) ORDER BY p.rowid"
            ).fetchall()
        return [(str(r[0]), TermPair(r[1], r[2], r[3], float(r[4]))) for r in rows]

    def vocabulary(self) -> list[str]:
        with self._lock:
            return [str(r[0]) for r in self._db.execute("SELECT term FROM terms")]

    def term_count(self) -> int:
        with self._lock:
            return int(self._db.execute("SELECT COALESCE(MAX(id), 0) + 1 FROM terms").fetchone()[0])

    def mark_pending(self, chunk_ids: Sequence[str]) -> None:
        """Record vectors about to be written, before they are written."""
        with self._lock:
            self._mark_stale(list(chunk_ids))

    def orphaned_vectors(self) -> list[str]:
        """Pending vectors no current chunk owns: new versions that never became current
        and old versions whose deletion did not happen (an interrupted run)."""
        with self._lock:
            rows = self._db.execute(
                "SELECT p.chunk_id FROM pending_vectors p "
                "LEFT JOIN chunks c USING (chunk_id) WHERE c.chunk_id IS NULL"
            ).fetchall()
        return [str(r[0]) for r in rows]

    def clear_pending(self, chunk_ids: Sequence[str]) -> None:
        with self._lock:
            self._db.executemany(
                "DELETE FROM pending_vectors WHERE chunk_id = ?", [(c,) for c in chunk_ids]
            )

    def _chunk_ids(self, doc_id: str) -> list[str]:
        rows = self._db.execute("SELECT chunk_id FROM chunks WHERE doc_id = ?", (doc_id,))
        return [str(r[0]) for r in rows]

    def _bump(self) -> None:
        self._db.execute(
            "INSERT INTO meta VALUES ('generation', '1') ON CONFLICT(key) DO UPDATE "
            "SET value = CAST(value AS INTEGER) + 1"
        )

    # -- chunks -------------------------------------------------------------
    _CHUNK_SELECT = (
        "SELECT c.chunk_id, c.doc_id, c.seq, c.text, d.source, d.title, d.scope, c.page, "
        "c.heading, c.link, d.content_hash FROM chunks c JOIN documents d USING (doc_id)"
    )

    def chunks(self, chunk_ids: Iterable[str]) -> dict[str, Chunk]:
        sql = f"{self._CHUNK_SELECT} WHERE c.chunk_id IN ({{marks}})"
        with self._lock:
            return {
                row[0]: Chunk(*row) for row in self._select_in(sql, list(dict.fromkeys(chunk_ids)))
            }

    def chunk_languages(self, chunk_ids: Iterable[str]) -> dict[str, str]:
        """{chunk_id: language code} for the given chunks that have one recorded."""
        sql = "SELECT chunk_id, lang FROM chunks WHERE chunk_id IN ({marks}) AND lang != ''"
        with self._lock:
            return {
                str(cid): str(lang)
                for cid, lang in self._select_in(sql, list(dict.fromkeys(chunk_ids)))
            }

    def neighbours(self, chunk: Chunk, radius: int = 1) -> list[Chunk]:
        with self._lock:
            rows = self._db.execute(
                f"{self._CHUNK_SELECT} WHERE c.doc_id = ? AND c.seq BETWEEN ? AND ? "
                "AND c.seq != ? ORDER BY c.seq",
                (chunk.doc_id, chunk.seq - radius, chunk.seq + radius, chunk.seq),
            ).fetchall()
        return [Chunk(*row) for row in rows]

    def neighbours_of(self, chunks: Sequence[Chunk], radius: int = 1) -> dict[str, list[Chunk]]:
        """:meth:`neighbours` of every chunk (the Postgres catalog does it in one query;
        here a query each costs no round trip)."""
        return {c.chunk_id: self.neighbours(c, radius) for c in chunks}

    def document_chunks(self, doc_id: str) -> list[Chunk]:
        """All chunks of one document, in order."""
        with self._lock:
            rows = self._db.execute(
                f"{self._CHUNK_SELECT} WHERE c.doc_id = ? ORDER BY c.seq", (doc_id,)
            ).fetchall()
        return [Chunk(*row) for row in rows]

    def keyword_rows(self) -> Iterator[KeywordRow]:
        """Every current chunk's scope and terms, for rebuilding the keyword index."""
        with self._lock:
            rows = self._db.execute(
                "SELECT c.chunk_id, d.scope, c.length, c.term_ids, c.term_counts FROM chunks c "
                "JOIN documents d USING (doc_id) ORDER BY c.rowid"
            ).fetchall()
        for chunk_id, scope, length, term_ids, counts in rows:
            yield KeywordRow(
                chunk_id,
                scope,
                int(length),
                np.frombuffer(term_ids, dtype=np.int32),
                np.frombuffer(counts, dtype=np.float32),
            )

    def chunk_count(self) -> int:
        with self._lock:
            return int(self._db.execute("SELECT COUNT(*) FROM chunks").fetchone()[0])


# Checked by mypy, not at run time: the SQLite catalog is a DocumentCatalog.
_CHECKED: type[DocumentCatalog] = SqliteCatalog
