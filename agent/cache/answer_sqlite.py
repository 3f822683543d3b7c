"""The default ``AnswerCache`` backend: one SQLite file (WAL) shared by bot processes.

Apart from the contract (``answer``) so another backend can replace it unseen by callers.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from agent.cache.answer import (
    CachedAnswer,
    SameQuestion,
    VersionLookup,
    normalize_question,
    outdated,
)
from agent.cache.index import Matrix, unit_vector
from agent.plumbing.sqlite_tx import immediate

_SCHEMA_VERSION = 1

_SCHEMA = """
CREATE TABLE IF NOT EXISTS entries (
    -- AUTOINCREMENT: ids are never reused, so an id held in another process's
    -- in-memory matrix can only ever name the entry it was loaded for.
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    scope_key TEXT NOT NULL,
    norm TEXT NOT NULL,
    question TEXT NOT NULL,
    answer TEXT NOT NULL,
    sources TEXT NOT NULL,
    language TEXT NOT NULL,
    doc_versions TEXT NOT NULL,
    dim INTEGER NOT NULL,
    vector BLOB,
    created_at REAL NOT NULL,
    UNIQUE (scope_key, norm)
);
CREATE INDEX IF NOT EXISTS entries_by_scope ON entries (scope_key, dim, id);
CREATE INDEX IF NOT EXISTS entries_by_age ON entries (created_at, id);
CREATE TABLE IF NOT EXISTS entry_docs (
    entry_id INTEGER NOT NULL,
    doc_id TEXT NOT NULL,
    PRIMARY KEY (doc_id, entry_id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS entry_docs_by_entry ON entry_docs (entry_id);
-- Every way an entry goes (replace, expiry, eviction, invalidation) cleans its links.
CREATE TRIGGER IF NOT EXISTS entries_unlink AFTER DELETE ON entries BEGIN
    DELETE FROM entry_docs WHERE entry_id = old.id;
END;
"""

_ROW = "id, question, answer, sources, language, doc_versions, created_at"


class SqliteAnswerCache:
    """Answer cache in one SQLite file (WAL), shared by processes and threads.

    SQLite errors (e.g. a lock held beyond ``busy_timeout_s``) propagate; callers
    should treat a failing cache as a miss rather than fail the reply.
    """

    def __init__(
        self,
        path: Path,
        *,
        threshold: float = 0.9,
        ttl_s: float = 86400.0,
        max_entries: int = 5000,
        clock: Callable[[], float] = time.time,
        busy_timeout_s: float = 10.0,
    ) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.threshold = threshold
        self.ttl_s = ttl_s
        self.max_entries = max_entries
        self._clock = clock
        # One connection serialised by a lock: calls are short, and SQLite allows
        # one writer at a time anyway.
        self._lock = threading.RLock()
        self._db = sqlite3.connect(
            path, timeout=busy_timeout_s, check_same_thread=False, isolation_level=None
        )
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        with self._transaction():
            version = int(self._db.execute("PRAGMA user_version").fetchone()[0])
            if version != _SCHEMA_VERSION:
                # Only a cache: a file from another layout is cheaper to drop than migrate.
                for table in ("entries", "entry_docs"):
                    self._db.execute(f"DROP TABLE IF EXISTS {table}")
                self._db.execute(f"PRAGMA user_version = {_SCHEMA_VERSION}")
            for statement in _split_script(_SCHEMA):
                self._db.execute(statement)
        self._matrices: dict[tuple[str, int], Matrix] = {}

    def close(self) -> None:
        with self._lock:
            self._db.close()

    # -- AnswerCache ------------------------------------------------------------
    def lookup(
        self,
        question: str,
        vector: npt.NDArray[Any] | None,
        scope_key: str,
        current_versions: VersionLookup | None = None,
        agrees: SameQuestion | None = None,
    ) -> CachedAnswer | None:
        norm = normalize_question(question)
        if norm:
            with self._lock:
                row = self._db.execute(
                    f"SELECT {_ROW} FROM entries WHERE scope_key = ? AND norm = ?",
                    (scope_key, norm),
                ).fetchone()
            if row is not None:
                hit = self._validate(row, 1.0, scope_key, current_versions)
                if hit is not None:
                    return hit
        query = unit_vector(vector)
        if query is None:
            return None
        for entry_id, score in self._candidates(scope_key, query):
            with self._lock:
                row = self._db.execute(
                    f"SELECT {_ROW} FROM entries WHERE id = ?", (entry_id,)
                ).fetchone()
            if row is None:
                self._forget(scope_key, [entry_id])
                continue
            if agrees is not None and not agrees(question, str(row[1])):
                continue  # close in meaning, yet another question: try the next one
            hit = self._validate(row, min(score, 1.0), scope_key, current_versions)
            if hit is not None:
                return hit
        return None

    def store(
        self,
        question: str,
        vector: npt.NDArray[Any] | None,
        scope_key: str,
        answer: str,
        sources: list[dict[str, Any]],
        language: str,
        doc_versions: dict[str, str],
    ) -> None:
        norm = normalize_question(question)
        if not norm:
            return  # "?" alone would make every punctuation-only message one question
        # Serialise before the transaction: a non-JSON source is the caller's bug.
        sources_json = json.dumps(sources, ensure_ascii=False)
        versions_json = json.dumps(doc_versions, ensure_ascii=False)
        unit = unit_vector(vector)
        blob = None if unit is None else unit.tobytes()
        dim = 0 if unit is None else unit.shape[0]
        now = self._clock()
        with self._transaction():
            self._db.execute("DELETE FROM entries WHERE created_at < ?", (now - self.ttl_s,))
            self._db.execute(
                "DELETE FROM entries WHERE scope_key = ? AND norm = ?", (scope_key, norm)
            )
            cursor = self._db.execute(
                "INSERT INTO entries (scope_key, norm, question, answer, sources, language, "
                "doc_versions, dim, vector, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (scope_key, norm, question, answer, sources_json, language, versions_json,
                 dim, blob, now),
            )  # fmt: skip
            self._db.executemany(
                "INSERT OR IGNORE INTO entry_docs VALUES (?, ?)",
                [(cursor.lastrowid, doc_id) for doc_id in doc_versions],
            )
            (count,) = self._db.execute("SELECT COUNT(*) FROM entries").fetchone()
            if count > self.max_entries:
                self._db.execute(
                    "DELETE FROM entries WHERE id IN "
                    "(SELECT id FROM entries ORDER BY created_at, id LIMIT ?)",
                    (count - self.max_entries,),
                )

    def invalidate_documents(self, doc_ids: Iterable[str]) -> int:
        ids = list(dict.fromkeys(doc_ids))
        removed = 0
        with self._transaction():
            for start in range(0, len(ids), 500):
                batch = ids[start : start + 500]
                marks = ",".join("?" * len(batch))
                # rowcount excludes the trigger's entry_docs deletions: entries only.
                removed += self._db.execute(
                    "DELETE FROM entries WHERE id IN "
                    f"(SELECT entry_id FROM entry_docs WHERE doc_id IN ({marks}))",
                    batch,
                ).rowcount
        return removed

    def clear(self) -> None:
        with self._transaction():
            self._db.execute("DELETE FROM entry_docs")
            self._db.execute("DELETE FROM entries")
            self._matrices.clear()

    # -- internals --------------------------------------------------------------
    @contextmanager
    def _transaction(self) -> Iterator[None]:
        with self._lock, immediate(self._db):
            yield

    def _validate(
        self,
        row: tuple[Any, ...],
        similarity: float,
        scope_key: str,
        current_versions: VersionLookup | None,
    ) -> CachedAnswer | None:
        """The entry as an answer, or None after deleting it if expired or stale."""
        entry_id, question, answer, sources, language, versions_json, created_at = row
        versions: dict[str, str] = json.loads(versions_json)
        expired = self._clock() - float(created_at) > self.ttl_s
        # Outside the lock: the callback may query the catalog or the network.
        if expired or outdated(versions, current_versions):
            with self._transaction():
                # By id: a fresh entry stored meanwhile under the same question has a new id.
                self._db.execute("DELETE FROM entries WHERE id = ?", (entry_id,))
            self._forget(scope_key, [int(entry_id)])
            return None
        return CachedAnswer(
            question=str(question),
            answer=str(answer),
            sources=json.loads(sources),
            language=str(language),
            similarity=float(similarity),
            created_at=float(created_at),
            doc_versions=versions,
        )

    def _candidates(
        self, scope_key: str, query: npt.NDArray[np.float32]
    ) -> list[tuple[int, float]]:
        """Entry ids of the scope at or above the threshold, best first."""
        with self._lock:
            return self._refresh(scope_key, query.shape[0]).matches(query, self.threshold)

    def _refresh(self, scope_key: str, dim: int) -> Matrix:
        """The scope's matrix with every entry stored since the last call appended.

        The caller holds the lock. The range query runs on every lookup: on the
        (scope_key, dim, id) index it costs microseconds when nothing is new.
        """
        key = (scope_key, dim)
        matrix = self._matrices.get(key)
        fresh = matrix is None or matrix.size > 2 * matrix.loaded + 64
        if fresh or matrix is None:
            # New, or mostly rows of entries that may be long gone: load afresh.
            matrix = Matrix(dim)
            self._matrices[key] = matrix
        rows = self._db.execute(
            "SELECT id, vector FROM entries WHERE scope_key = ? AND dim = ? AND id > ? ORDER BY id",
            (scope_key, dim, matrix.max_id),
        ).fetchall()
        if rows:
            matrix.append(
                np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows)),
                np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32).reshape(-1, dim),
            )
        if fresh:
            matrix.loaded = matrix.size
        return matrix

    def _forget(self, scope_key: str, entry_ids: list[int]) -> None:
        with self._lock:
            for (scope, _), matrix in self._matrices.items():
                if scope == scope_key:
                    matrix.mark_dead(entry_ids)


def _split_script(script: str) -> list[str]:
    """The schema's statements one by one, so they run inside our transaction
    (``executescript`` would commit first)."""
    statements, current = [], ""
    for line in script.strip().splitlines(keepends=True):
        current += line
        # complete_statement knows a trigger body's inner ";" does not end it.
        if sqlite3.complete_statement(current):
            statements.append(current)
            current = ""
    return statements
