"""Sources and their sync state: the interface, and its SQLite file beside the catalog.

Two tables: ``sources`` (the spec, the checkpoint, when it last ran and how it went)
and ``source_documents`` (which catalog keys each source owns, so a deletion upstream
or ``teamrag sources remove`` knows what to take out). :class:`SourceStore` is what the
sync engine, the scheduler and the commands use; :class:`SqliteSourceStore` keeps the
tables in the data folder's catalog file (a separate connection to the same WAL file:
the catalog's own transactions are untouched), and
:class:`~agent.sources.store_postgres.PostgresSourceStore` in the shared catalog's
Postgres schema, so every host sees the same sources.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from agent.plumbing.sqlite_tx import immediate
from agent.sources.base import Checkpoint, SourceSpec

_SCHEMA = """
CREATE TABLE IF NOT EXISTS sources (
    name TEXT PRIMARY KEY,
    kind TEXT NOT NULL,
    target TEXT NOT NULL,
    scope TEXT NOT NULL,
    every_s REAL NOT NULL,
    options TEXT NOT NULL,
    created_at REAL NOT NULL,
    last_sync REAL,            -- when the last sync ended, well or not
    last_ok REAL,              -- when the last successful sync ended
    last_error TEXT,           -- why the last sync failed; NULL after a success
    failures INTEGER NOT NULL DEFAULT 0,  -- failed syncs in a row (the back-off)
    next_run REAL NOT NULL,
    documents INTEGER NOT NULL DEFAULT 0,
    checkpoint TEXT NOT NULL DEFAULT '{}',
    -- the scope and pipeline the checkpoint was made with: another one means a full load
    basis TEXT NOT NULL DEFAULT '',
    -- 1: the source may reach private and local addresses (`sources add --allow-private`)
    allow_private INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS source_documents (
    name TEXT NOT NULL,
    source TEXT NOT NULL,
    PRIMARY KEY (name, source)
);
"""


@dataclass(frozen=True)
class SourceState:
    spec: SourceSpec
    created_at: float
    last_sync: float | None
    last_ok: float | None
    last_error: str | None
    failures: int
    next_run: float
    documents: int
    checkpoint: Checkpoint
    basis: str


class SourceExistsError(Exception):
    pass


class SourceStoreError(Exception):
    """The sources cannot be read or written; the message says how to fix it."""


class SourceStore(Protocol):
    """The configured sources, their schedule and state, and the documents each owns."""

    def close(self) -> None: ...

    def add(self, spec: SourceSpec, *, now: float | None = None) -> None:
        """Raises :class:`SourceExistsError` when the name is taken."""

    def delete(self, name: str) -> None: ...

    def get(self, name: str) -> SourceState | None: ...

    def all(self) -> list[SourceState]:
        """By name."""

    def due(self, now: float) -> list[SourceState]:
        """Scheduled sources whose next run has come, the longest-waiting first."""

    def next_wake(self) -> float | None:
        """The earliest next run of a scheduled source."""

    def members(self, name: str) -> set[str]: ...

    def owned_elsewhere(self, name: str, sources: Iterable[str]) -> set[str]:
        """Of ``sources``, the keys another source also owns (they stay in the catalog)."""

    def record_success(
        self,
        name: str,
        *,
        now: float,
        next_run: float,
        checkpoint: Checkpoint,
        basis: str,
        members: set[str],
    ) -> None:
        """The new checkpoint and the new member list in one transaction, so a crash
        never leaves a checkpoint past documents that were not recorded."""

    def record_failure(self, name: str, *, now: float, next_run: float, error: str) -> None: ...


class SqliteSourceStore:
    """:class:`SourceStore` in the data folder's catalog file."""

    def __init__(self, catalog_file: Path) -> None:
        catalog_file.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.RLock()
        self._db = sqlite3.connect(catalog_file, check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA busy_timeout=10000")
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.executescript(_SCHEMA)
        with self._lock, immediate(self._db):
            columns = {str(r[1]) for r in self._db.execute("PRAGMA table_info(sources)")}
            if "allow_private" not in columns:
                # A file from before the address policy: its sources keep the rule (off).
                self._db.execute(
                    "ALTER TABLE sources ADD COLUMN allow_private INTEGER NOT NULL DEFAULT 0"
                )

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def add(self, spec: SourceSpec, *, now: float | None = None) -> None:
        now = time.time() if now is None else now
        with self._lock, immediate(self._db):
            if self._db.execute("SELECT 1 FROM sources WHERE name = ?", (spec.name,)).fetchone():
                raise SourceExistsError(
                    f"a source named {spec.name!r} exists; remove it first "
                    f"(`teamrag sources remove {spec.name}`) or pick another --name"
                )
            self._db.execute(
                "INSERT INTO sources (name, kind, target, scope, every_s, options, created_at, "
                "next_run, allow_private) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (spec.name, spec.kind, spec.target, spec.scope, spec.every_s,
                 json.dumps(dict(spec.options), sort_keys=True), now, now,
                 int(spec.allow_private)),
            )  # fmt: skip

    def delete(self, name: str) -> None:
        with self._lock, immediate(self._db):
            self._db.execute("DELETE FROM sources WHERE name = ?", (name,))
            self._db.execute("DELETE FROM source_documents WHERE name = ?", (name,))

    def get(self, name: str) -> SourceState | None:
        with self._lock:
            row = self._db.execute(f"{SELECT_SOURCES} WHERE name = ?", (name,)).fetchone()
        return None if row is None else state_of(row)

    def all(self) -> list[SourceState]:
        with self._lock:
            rows = self._db.execute(f"{SELECT_SOURCES} ORDER BY name").fetchall()
        return [state_of(r) for r in rows]

    def due(self, now: float) -> list[SourceState]:
        with self._lock:
            rows = self._db.execute(
                f"{SELECT_SOURCES} WHERE every_s > 0 AND next_run <= ? ORDER BY next_run", (now,)
            ).fetchall()
        return [state_of(r) for r in rows]

    def next_wake(self) -> float | None:
        with self._lock:
            row = self._db.execute("SELECT MIN(next_run) FROM sources WHERE every_s > 0").fetchone()
        return None if row[0] is None else float(row[0])

    def members(self, name: str) -> set[str]:
        with self._lock:
            rows = self._db.execute("SELECT source FROM source_documents WHERE name = ?", (name,))
            return {str(r[0]) for r in rows}

    def owned_elsewhere(self, name: str, sources: Iterable[str]) -> set[str]:
        wanted = list(sources)
        found: set[str] = set()
        with self._lock:
            for start in range(0, len(wanted), 500):
                batch = wanted[start : start + 500]
                rows = self._db.execute(
                    "SELECT source FROM source_documents WHERE name != ? AND source IN "
                    f"({','.join('?' * len(batch))})",
                    [name, *batch],
                )
                found.update(str(r[0]) for r in rows)
        return found

    def record_success(
        self,
        name: str,
        *,
        now: float,
        next_run: float,
        checkpoint: Checkpoint,
        basis: str,
        members: set[str],
    ) -> None:
        with self._lock, immediate(self._db):
            old = {
                str(r[0])
                for r in self._db.execute(
                    "SELECT source FROM source_documents WHERE name = ?", (name,)
                )
            }
            self._db.executemany(
                "DELETE FROM source_documents WHERE name = ? AND source = ?",
                [(name, s) for s in old - members],
            )
            self._db.executemany(
                "INSERT INTO source_documents VALUES (?, ?)", [(name, s) for s in members - old]
            )
            self._db.execute(
                "UPDATE sources SET last_sync = ?, last_ok = ?, last_error = NULL, failures = 0, "
                "next_run = ?, documents = ?, checkpoint = ?, basis = ? WHERE name = ?",
                (now, now, next_run, len(members), json.dumps(checkpoint), basis, name),
            )

    def record_failure(self, name: str, *, now: float, next_run: float, error: str) -> None:
        with self._lock:
            self._db.execute(
                "UPDATE sources SET last_sync = ?, last_error = ?, failures = failures + 1, "
                "next_run = ? WHERE name = ?",
                (now, error, next_run, name),
            )


def has_sources(catalog_file: Path) -> bool:
    """Whether any source was added to the file, creating and writing nothing: a process
    without sources never opens the sources tables (nor waits on their lock)."""
    if not catalog_file.exists():
        return False
    try:
        with contextlib.closing(sqlite3.connect(catalog_file, timeout=1.0)) as db:
            return db.execute("SELECT 1 FROM sources LIMIT 1").fetchone() is not None
    except sqlite3.OperationalError as exc:
        # No table yet: no source. Anything else (locked, say): let the store tell.
        return "no such table" not in str(exc)


def local_sources(catalog_file: Path) -> list[SourceSpec]:
    """The sources a data folder's catalog file lists, read only (for moving them to the
    shared store); none when there is no such file or table."""
    if not catalog_file.exists():
        return []
    try:
        with contextlib.closing(sqlite3.connect(f"file:{catalog_file}?mode=ro", uri=True)) as db:
            columns = {str(r[1]) for r in db.execute("PRAGMA table_info(sources)")}
            query = SELECT_SOURCES
            if "allow_private" not in columns:  # a file from before the column: rule on
                query = query.replace("basis, allow_private", "basis, 0")
            rows = db.execute(f"{query} ORDER BY name").fetchall()
    except sqlite3.Error:
        return []  # not a sources table we can read: nothing to move
    return [state_of(row).spec for row in rows]


SELECT_SOURCES = (
    "SELECT name, kind, target, scope, every_s, options, created_at, last_sync, last_ok, "
    "last_error, failures, next_run, documents, checkpoint, basis, allow_private FROM sources"
)


def state_of(row: Any) -> SourceState:
    """A row of :data:`SELECT_SOURCES` (either database) as a :class:`SourceState`."""
    (name, kind, target, scope, every_s, options, created_at, last_sync, last_ok, last_error,
     failures, next_run, documents, checkpoint, basis, allow_private) = row  # fmt: skip
    spec = SourceSpec(
        name, kind, target, scope, float(every_s), json.loads(options), bool(allow_private)
    )
    return SourceState(
        spec, float(created_at), last_sync, last_ok, last_error, int(failures), float(next_run),
        int(documents), json.loads(checkpoint), str(basis),
    )  # fmt: skip
