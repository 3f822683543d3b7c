"""The document catalog in Postgres, shared by every host of a team deployment.

The same interface as the SQLite :class:`~agent.retrieval.catalog_sqlite.SqliteCatalog` (documents,
chunks, their keyword terms, term ids, pending vectors), in one schema of the team's
database, so hosts with empty data folders search the same knowledge.

Hosts follow each other's changes through a generation number: every change bumps
the ``generation`` row of ``meta`` inside its own transaction, which holds that row's
lock until it commits, so changes commit in generation order and a reader's
snapshot always sees a prefix of them. Each chunk carries the generation that
wrote it and each chunk switched out leaves a tombstone (``removed_chunks``) with
the generation that removed it: :meth:`keyword_changes` gives a host exactly what
changed since the generation its keyword index reflects (milliseconds per
document), and two hosts ingesting at once lose nothing.

Tombstones are kept ``keep_removed_s`` (a day by default), then pruned by the writers
(at most every ``prune_every_s``); ``meta.removed_floor`` records up to which
generation they are gone. A host whose index is older than that (it did not search for
a day) gets ``None`` from :meth:`keyword_changes` and reloads the whole index, as at
its start: the changes it missed can no longer be told apart.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import numpy as np
import psycopg
from psycopg import sql

from agent.retrieval.catalog import CatalogError, DocumentCatalog, DocumentRecord, SharedKeywords
from agent.retrieval.catalog_postgres_sql import CHUNK_SELECT, KEYWORD_SELECT, NOW, SCHEMA
from agent.retrieval.keyword import KeywordRow
from agent.retrieval.types import Chunk, TermPair

log = logging.getLogger(__name__)

KEEP_REMOVED_S = 86_400.0  # tombstones older than this are pruned
PRUNE_EVERY_S = 300.0  # a writer prunes at most this often


def _keyword_row(row: Any) -> KeywordRow:
    chunk_id, scope, length, term_ids, counts = row
    return KeywordRow(chunk_id, scope, int(length), np.frombuffer(term_ids, dtype=np.int32),
                      np.frombuffer(counts, dtype=np.float32))  # fmt: skip


class PostgresCatalog:
    """:class:`~agent.retrieval.catalog_sqlite.SqliteCatalog` in a Postgres schema."""

    def __init__(
        self,
        url: str,
        schema: str = "teamrag",
        *,
        keep_removed_s: float = KEEP_REMOVED_S,
        prune_every_s: float = PRUNE_EVERY_S,
    ) -> None:
        self.keep_removed_s = keep_removed_s
        self.prune_every_s = prune_every_s
        self._pruned_at: float | None = None
        self.url = url
        self.schema = schema
        self._lock = threading.RLock()
        self._db = self._connect(with_path=False)
        with self._lock, self._db.transaction():
            self._db.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (schema,))
            self._db.execute(
                sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(sql.Identifier(schema))
            )
            self._db.execute(sql.SQL("SET search_path TO {}").format(sql.Identifier(schema)))
            self._db.execute(SCHEMA)
        self._term_cache: dict[str, int] = {}

    def _connect(self, *, with_path: bool = True) -> psycopg.Connection[Any]:
        try:
            db = psycopg.connect(self.url, autocommit=True, connect_timeout=10)
        except psycopg.OperationalError as exc:
            raise CatalogError(
                f"cannot open the document catalog in Postgres ({' '.join(str(exc).split())}); "
                "start Postgres or fix DATABASE_URL, or unset DATABASE_URL to keep the catalog in "
                "the data folder"
            ) from exc
        if with_path:
            db.execute(sql.SQL("SET search_path TO {}").format(sql.Identifier(self.schema)))
        return db

    @contextmanager
    def _conn(self) -> Iterator[None]:
        """Hold the connection (``self._db``), a new one if the last call found it broken:
        a Postgres restart fails the searches under way, not every one after it."""
        with self._lock:
            if self._db.closed or self._db.broken:
                self._db = self._connect()
            yield

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def _rows(self, query: str, params: Sequence[Any] = ()) -> list[Any]:
        """One statement's rows. A read is tried again once on a new connection if the
        server had closed this one (a restart); a write is not (it may belong to a
        transaction the server rolled back), the next call reconnects."""
        with self._conn():
            try:
                return self._db.execute(query, params).fetchall()
            except psycopg.OperationalError:
                if not self._db.broken or not query.lstrip().upper().startswith("SELECT"):
                    raise
            log.warning("the catalog's Postgres connection was closed; reconnecting")
            self._db = self._connect()
            return self._db.execute(query, params).fetchall()

    # -- meta ---------------------------------------------------------------
    def get_meta(self, key: str) -> str | None:
        rows = self._rows("SELECT value FROM meta WHERE key = %s", (key,))
        return str(rows[0][0]) if rows else None

    def set_meta(self, key: str, value: str) -> None:
        self._rows("INSERT INTO meta VALUES (%s, %s) ON CONFLICT (key) DO UPDATE SET value = "
                   "EXCLUDED.value RETURNING key", (key, value))  # fmt: skip

    @property
    def generation(self) -> int:
        return int(self.get_meta("generation") or 0)

    # -- documents ----------------------------------------------------------
    def document_by_source(self, source: str) -> DocumentRecord | None:
        rows = self._rows("SELECT * FROM documents WHERE source = %s", (source,))
        return DocumentRecord(*rows[0]) if rows else None

    def documents(self) -> list[DocumentRecord]:
        return [DocumentRecord(*r) for r in self._rows("SELECT * FROM documents ORDER BY source")]

    def document_versions(self, doc_ids: Iterable[str]) -> dict[str, str]:
        rows = self._rows("SELECT doc_id, content_hash, pipeline, scope FROM documents "
                          "WHERE doc_id = ANY(%s)", (list(set(doc_ids)),))  # fmt: skip
        return {str(d): f"{h}:{p}:{s}" for d, h, p, s in rows}

    @contextmanager
    def _transaction(self) -> Iterator[int]:
        """One change: takes the generation row's lock first, so changes commit in
        generation order (see the module's note); yields the new generation."""
        with self._conn():
            with self._db.transaction():
                row = self._db.execute(
                    "UPDATE meta SET value = (value::bigint + 1)::text WHERE key = 'generation' "
                    "RETURNING value"
                ).fetchone()
                assert row is not None
                yield int(row[0])
            self._prune_now_and_then()

    def _prune_now_and_then(self) -> None:
        """After a change, at most every ``prune_every_s``: writers add the tombstones, so
        writers prune them; a host that only searches never writes."""
        now = time.monotonic()
        if self._pruned_at is not None and now - self._pruned_at < self.prune_every_s:
            return
        self._pruned_at = now
        try:
            self.prune_removed()
        except psycopg.Error as exc:  # the change itself committed; prune next time
            log.warning("could not prune the catalog's removed-chunk records: %s", exc)

    def prune_removed(self, older_than_s: float | None = None) -> int:
        """Delete the tombstones older than ``older_than_s`` (default ``keep_removed_s``)
        and raise ``removed_floor`` past them, in one transaction: a reader's snapshot sees
        both or neither. Returns how many were deleted."""
        keep = self.keep_removed_s if older_than_s is None else older_than_s
        with self._conn(), self._db.transaction():
            row = self._db.execute(
                f"SELECT max(gen) FROM removed_chunks WHERE removed_at < {NOW} - %s", (keep,)
            ).fetchone()
            if row is None or row[0] is None:
                return 0
            floor = int(row[0])
            deleted = self._db.execute("DELETE FROM removed_chunks WHERE gen <= %s", (floor,))
            self._db.execute(
                "UPDATE meta SET value = %s WHERE key = 'removed_floor' AND value::bigint < %s",
                (str(floor), floor),
            )
            return deleted.rowcount

    def replace_document(
        self,
        record: DocumentRecord,
        chunks: Sequence[Chunk],
        tokens: Sequence[Sequence[str]],
        languages: Sequence[str] | None = None,
        pairs: Sequence[TermPair] = (),
    ) -> list[str]:
        langs = list(languages) if languages is not None else [""] * len(chunks)
        counted = [Counter(t) for t in tokens]
        # Terms in their own commits, before the document's transaction: ids never
        # change, and a term added for a document that then fails costs nothing.
        term_id = self._add_terms({term for c in counted for term in c})
        with self._transaction() as gen:
            rows = [
                (c.chunk_id, c.doc_id, c.seq, c.text, len(t),
                 np.fromiter((term_id[term] for term in counts), np.int32).tobytes(),
                 np.fromiter(counts.values(), np.float32).tobytes(),
                 c.page, c.heading, c.link, lang, gen)
                for c, t, counts, lang in zip(chunks, tokens, counted, langs, strict=True)
            ]  # fmt: skip
            old = self._remove_chunks(record.doc_id, gen)
            with self._db.cursor() as cur:
                cur.executemany(
                    "INSERT INTO chunks VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)",
                    rows,
                )
            self._db.execute("DELETE FROM pending_vectors WHERE chunk_id = ANY(%s)",
                             ([c.chunk_id for c in chunks],))  # fmt: skip
            self._db.execute(
                "INSERT INTO documents VALUES (%s, %s, %s, %s, %s, %s, %s, %s) ON CONFLICT "
                "(doc_id) DO UPDATE SET source = EXCLUDED.source, scope = EXCLUDED.scope, "
                "title = EXCLUDED.title, content_hash = EXCLUDED.content_hash, "
                "n_chunks = EXCLUDED.n_chunks, pipeline = EXCLUDED.pipeline, "
                "ingested_at = EXCLUDED.ingested_at",
                (record.doc_id, record.source, record.scope, record.title, record.content_hash,
                 len(chunks), record.pipeline, time.time()),
            )  # fmt: skip
            self._db.execute("DELETE FROM term_pairs WHERE doc_id = %s", (record.doc_id,))
            with self._db.cursor() as cur:
                cur.executemany(
                    "INSERT INTO term_pairs (doc_id, ko, en, origin, confidence) "
                    "VALUES (%s, %s, %s, %s, %s)",
                    [(record.doc_id, p.ko, p.en, p.origin, p.confidence) for p in pairs],
                )
            new = {c.chunk_id for c in chunks}
            stale = [cid for cid in old if cid not in new]
            self._mark_stale(stale)
        return stale

    def remove_document(self, doc_id: str) -> list[str]:
        with self._transaction() as gen:
            old = self._remove_chunks(doc_id, gen)
            self._db.execute("DELETE FROM documents WHERE doc_id = %s", (doc_id,))
            self._db.execute("DELETE FROM term_pairs WHERE doc_id = %s", (doc_id,))
            self._mark_stale(old)
        return old

    def _remove_chunks(self, doc_id: str, gen: int) -> list[str]:
        """Delete a document's chunks, leaving tombstones for the hosts' keyword indexes."""
        rows = self._db.execute(
            "DELETE FROM chunks WHERE doc_id = %s RETURNING chunk_id", (doc_id,)
        ).fetchall()
        old = [str(r[0]) for r in rows]
        self._db.execute("INSERT INTO removed_chunks SELECT %s, unnest(%s::text[])", (gen, old))
        return old

    def _mark_stale(self, chunk_ids: list[str]) -> None:
        self._db.execute("INSERT INTO pending_vectors SELECT unnest(%s::text[]) "
                         "ON CONFLICT DO NOTHING", (chunk_ids,))  # fmt: skip

    # -- terms ----------------------------------------------------------------
    def _add_terms(self, terms: set[str]) -> dict[str, int]:
        new = sorted(t for t in terms if t not in self._term_cache)  # sorted: no deadlocks
        if new:
            self._rows("INSERT INTO terms (term) SELECT unnest(%s::text[]) "
                       "ON CONFLICT DO NOTHING RETURNING id", (new,))  # fmt: skip
            self._lookup_terms(new)
        return {t: self._term_cache[t] for t in terms}

    def _lookup_terms(self, terms: list[str]) -> list[int | None]:
        missing = [t for t in terms if t not in self._term_cache]
        if missing:
            for term, term_id in self._rows(
                "SELECT term, id FROM terms WHERE term = ANY(%s)", (missing,)
            ):
                self._term_cache[term] = int(term_id)
        return [self._term_cache.get(t) for t in terms]

    def term_ids(self, tokens: Sequence[str]) -> list[int | None]:
        return self._lookup_terms(list(tokens))

    def term_pairs(self) -> list[tuple[str, TermPair]]:
        rows = self._rows("SELECT d.source, p.ko, p.en, p.origin, p.confidence FROM term_pairs p "
                          "JOIN documents d USING (doc_id) ORDER BY p.id")  # fmt: skip
        return [(str(r[0]), TermPair(r[1], r[2], r[3], float(r[4]))) for r in rows]

    def vocabulary(self) -> list[str]:
        return [str(r[0]) for r in self._rows("SELECT term FROM terms")]

    def term_count(self) -> int:
        return int(self._rows("SELECT COALESCE(MAX(id), 0) + 1 FROM terms")[0][0])

    # -- pending vectors --------------------------------------------------------
    def mark_pending(self, chunk_ids: Sequence[str]) -> None:
        with self._conn():
            self._mark_stale(list(chunk_ids))

    def orphaned_vectors(self) -> list[str]:
        rows = self._rows(
            "SELECT p.chunk_id FROM pending_vectors p "
            "LEFT JOIN chunks c USING (chunk_id) WHERE c.chunk_id IS NULL"
        )
        return [str(r[0]) for r in rows]

    def clear_pending(self, chunk_ids: Sequence[str]) -> None:
        self._rows("DELETE FROM pending_vectors WHERE chunk_id = ANY(%s) RETURNING 1",
                   (list(chunk_ids),))  # fmt: skip

    # -- chunks -------------------------------------------------------------
    def chunks(self, chunk_ids: Iterable[str]) -> dict[str, Chunk]:
        rows = self._rows(f"{CHUNK_SELECT} WHERE c.chunk_id = ANY(%s)", (list(set(chunk_ids)),))
        return {row[0]: Chunk(*row) for row in rows}

    def chunk_languages(self, chunk_ids: Iterable[str]) -> dict[str, str]:
        rows = self._rows("SELECT chunk_id, lang FROM chunks WHERE chunk_id = ANY(%s) "
                          "AND lang != ''", (list(set(chunk_ids)),))  # fmt: skip
        return {str(c): str(lang) for c, lang in rows}

    def neighbours(self, chunk: Chunk, radius: int = 1) -> list[Chunk]:
        rows = self._rows(
            f"{CHUNK_SELECT} WHERE c.doc_id = %s AND c.seq BETWEEN %s AND %s "
            "AND c.seq != %s ORDER BY c.seq",
            (chunk.doc_id, chunk.seq - radius, chunk.seq + radius, chunk.seq),
        )
        return [Chunk(*row) for row in rows]

    def neighbours_of(self, chunks: Sequence[Chunk], radius: int = 1) -> dict[str, list[Chunk]]:
        """:meth:`neighbours` of every chunk in one query (a search's hits: one round trip
        to the server instead of one per hit)."""
        wanted = {(c.doc_id, c.seq + d) for c in chunks for d in range(-radius, radius + 1) if d}
        found: dict[tuple[str, int], Chunk] = {}
        if wanted:
            docs, seqs = zip(*wanted, strict=True)
            rows = self._rows(
                f"{CHUNK_SELECT} JOIN unnest(%s::text[], %s::int[]) AS w(doc_id, seq) "
                "ON c.doc_id = w.doc_id AND c.seq = w.seq",
                (list(docs), list(seqs)),
            )
            found = {(chunk.doc_id, chunk.seq): chunk for chunk in (Chunk(*r) for r in rows)}
        return {c.chunk_id: _around(c, radius, found) for c in chunks}

    def document_chunks(self, doc_id: str) -> list[Chunk]:
        rows = self._rows(f"{CHUNK_SELECT} WHERE c.doc_id = %s ORDER BY c.seq", (doc_id,))
        return [Chunk(*row) for row in rows]

    def chunk_count(self) -> int:
        return int(self._rows("SELECT COUNT(*) FROM chunks")[0][0])

    # -- the keyword index's feed ----------------------------------------------
    def keyword_rows(self) -> Iterator[KeywordRow]:
        return iter(self.keyword_snapshot()[1])

    def keyword_snapshot(self) -> tuple[int, list[KeywordRow]]:
        """Every current chunk's terms and the generation they are, from one snapshot."""
        with self._conn(), self._db.transaction():
            self._db.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
            gen = self.generation
            rows = self._db.execute(f"{KEYWORD_SELECT} ORDER BY c.gen, c.doc_id, c.seq")
            return gen, [_keyword_row(r) for r in rows.fetchall()]

    def keyword_changes(self, since: int) -> tuple[int, list[str], list[KeywordRow]] | None:
        """``(generation, removed chunk ids, added rows)`` after generation ``since``, from
        one snapshot; apply the removals first. ``None`` when the changes since then cannot
        be told any more (the tombstones were pruned, or the catalog is younger than
        ``since``: made again): reload with :meth:`keyword_snapshot`."""
        with self._conn(), self._db.transaction():
            self._db.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
            rows = self._db.execute(
                "SELECT key, value FROM meta WHERE key IN ('generation', 'removed_floor')"
            ).fetchall()
            meta = {str(key): int(value) for key, value in rows}
            gen, floor = meta["generation"], meta.get("removed_floor", 0)
            if since < floor or since > gen:
                return None
            if gen == since:
                return gen, [], []
            removed = self._db.execute(
                "SELECT chunk_id FROM removed_chunks WHERE gen > %s", (since,)
            ).fetchall()
            added = self._db.execute(
                f"{KEYWORD_SELECT} WHERE c.gen > %s ORDER BY c.gen, c.doc_id, c.seq", (since,)
            ).fetchall()
        return gen, [str(r[0]) for r in removed], [_keyword_row(r) for r in added]


def _around(chunk: Chunk, radius: int, found: dict[tuple[str, int], Chunk]) -> list[Chunk]:
    seqs = range(chunk.seq - radius, chunk.seq + radius + 1)
    return [found[(chunk.doc_id, s)] for s in seqs if s != chunk.seq and (chunk.doc_id, s) in found]


# Checked by mypy, not at run time: a DocumentCatalog whose keyword changes hosts follow.
_CHECKED: type[DocumentCatalog] = PostgresCatalog
_FOLLOWED: type[SharedKeywords] = PostgresCatalog
