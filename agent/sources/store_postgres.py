"""Sources and their sync state in Postgres, beside the shared document catalog.

The same two tables as :class:`~agent.sources.store.SqliteSourceStore`, in the
catalog's schema (``TEAMRAG_CATALOG_SCHEMA``): a source added on one host is listed,
scheduled and synced by every host, whose data folders may be empty. The members the
tables record are keys of that same shared catalog, so the two always agree.

A long-running process keeps one connection; when Postgres restarts under it, the
call that finds the connection broken fails and the next one connects again (the
scheduler retries its pass), instead of the process failing until it restarts.
"""

from __future__ import annotations

import contextlib
import json
import logging
import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import psycopg
from psycopg import sql

from agent.sources.base import Checkpoint, SourceSpec
from agent.sources.store import (
    SELECT_SOURCES,
    SourceExistsError,
    SourceState,
    SourceStoreError,
    state_of,
)

log = logging.getLogger(__name__)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS sources (
    name TEXT PRIMARY KEY, kind TEXT NOT NULL, target TEXT NOT NULL, scope TEXT NOT NULL,
    every_s DOUBLE PRECISION NOT NULL, options TEXT NOT NULL,
    created_at DOUBLE PRECISION NOT NULL,
    last_sync DOUBLE PRECISION, last_ok DOUBLE PRECISION, last_error TEXT,
    failures INTEGER NOT NULL DEFAULT 0, next_run DOUBLE PRECISION NOT NULL,
    documents INTEGER NOT NULL DEFAULT 0, checkpoint TEXT NOT NULL DEFAULT '{}',
    basis TEXT NOT NULL DEFAULT '');
-- The address policy's opt-in (`sources add --allow-private`); rows from before it: off.
ALTER TABLE sources ADD COLUMN IF NOT EXISTS allow_private BOOLEAN NOT NULL DEFAULT FALSE;
CREATE TABLE IF NOT EXISTS source_documents (
    name TEXT NOT NULL, source TEXT NOT NULL, PRIMARY KEY (name, source));
-- owned_elsewhere asks by document key across every source.
CREATE INDEX IF NOT EXISTS source_documents_by_source ON source_documents (source);
"""


def _unreachable(exc: psycopg.Error) -> SourceStoreError:
    return SourceStoreError(
        f"cannot open the sources in Postgres ({' '.join(str(exc).split())}); start Postgres "
        "or fix DATABASE_URL, or unset DATABASE_URL to keep the sources in the data folder"
    )


class PostgresSourceStore:
    """:class:`~agent.sources.store.SourceStore` in a Postgres schema."""

    def __init__(self, url: str, schema: str = "teamrag") -> None:
        self.url = url
        self.schema = schema
        self._lock = threading.RLock()
        self._db = self._connect()
        with self._lock, self._db.transaction():
            # The catalog takes the same lock to create the schema: hosts starting at once
            # do not race on CREATE SCHEMA.
            self._db.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (schema,))
            self._db.execute(
                sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(sql.Identifier(schema))
            )
            self._db.execute(_SCHEMA)

    def _connect(self) -> psycopg.Connection[Any]:
        try:
            db = psycopg.connect(self.url, autocommit=True, connect_timeout=10)
        except psycopg.OperationalError as exc:
            raise _unreachable(exc) from exc
        db.execute(sql.SQL("SET search_path TO {}").format(sql.Identifier(self.schema)))
        return db

    @contextmanager
    def _conn(self) -> Iterator[psycopg.Connection[Any]]:
        """The connection, a new one if the last call found it broken (Postgres restarted)."""
        with self._lock:
            if self._db.closed or self._db.broken:
                self._db = self._connect()
            yield self._db

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def _rows(self, query: str, params: Sequence[Any] = ()) -> list[Any]:
        with self._conn() as db:
            cursor = db.execute(query, params)
            return cursor.fetchall() if cursor.description else []

    def add(self, spec: SourceSpec, *, now: float | None = None) -> None:
        now = time.time() if now is None else now
        # ON CONFLICT: two hosts adding one name at once, one of them is told.
        added = self._rows(
            "INSERT INTO sources (name, kind, target, scope, every_s, options, created_at, "
            "next_run, allow_private) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s) "
            "ON CONFLICT (name) DO NOTHING RETURNING name",
            (spec.name, spec.kind, spec.target, spec.scope, spec.every_s,
             json.dumps(dict(spec.options), sort_keys=True), now, now, spec.allow_private),
        )  # fmt: skip
        if not added:
            raise SourceExistsError(
                f"a source named {spec.name!r} exists; remove it first "
                f"(`teamrag sources remove {spec.name}`) or pick another --name"
            )

    def delete(self, name: str) -> None:
        with self._conn() as db, db.transaction():
            db.execute("DELETE FROM sources WHERE name = %s", (name,))
            db.execute("DELETE FROM source_documents WHERE name = %s", (name,))

    def get(self, name: str) -> SourceState | None:
        rows = self._rows(f"{SELECT_SOURCES} WHERE name = %s", (name,))
        return state_of(rows[0]) if rows else None

    def all(self) -> list[SourceState]:
        return [state_of(r) for r in self._rows(f"{SELECT_SOURCES} ORDER BY name")]

    def due(self, now: float) -> list[SourceState]:
        rows = self._rows(
            f"{SELECT_SOURCES} WHERE every_s > 0 AND next_run <= %s ORDER BY next_run", (now,)
        )
        return [state_of(r) for r in rows]

    def next_wake(self) -> float | None:
        rows = self._rows("SELECT MIN(next_run) FROM sources WHERE every_s > 0")
        return None if rows[0][0] is None else float(rows[0][0])

    def members(self, name: str) -> set[str]:
        rows = self._rows("SELECT source FROM source_documents WHERE name = %s", (name,))
        return {str(r[0]) for r in rows}

    def owned_elsewhere(self, name: str, sources: Iterable[str]) -> set[str]:
        rows = self._rows(
            "SELECT DISTINCT source FROM source_documents WHERE name <> %s AND source = ANY(%s)",
            (name, list(sources)),
        )
        return {str(r[0]) for r in rows}

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
        keep = sorted(members)
        with self._conn() as db, db.transaction():
            db.execute(
                "DELETE FROM source_documents WHERE name = %s AND NOT (source = ANY(%s))",
                (name, keep),
            )
            db.execute(
                "INSERT INTO source_documents SELECT %s, unnest(%s::text[]) ON CONFLICT DO NOTHING",
                (name, keep),
            )
            db.execute(
                "UPDATE sources SET last_sync = %s, last_ok = %s, last_error = NULL, "
                "failures = 0, next_run = %s, documents = %s, checkpoint = %s, basis = %s "
                "WHERE name = %s",
                (now, now, next_run, len(members), json.dumps(checkpoint), basis, name),
            )

    def record_failure(self, name: str, *, now: float, next_run: float, error: str) -> None:
        self._rows(
            "UPDATE sources SET last_sync = %s, last_error = %s, failures = failures + 1, "
            "next_run = %s WHERE name = %s",
            (now, error, next_run, name),
        )


def has_sources(url: str, schema: str) -> bool:
    """Whether any source was added to the schema, creating nothing. An unreachable
    Postgres counts as none yet (logged): the caller asks again later."""
    try:
        with contextlib.closing(psycopg.connect(url, connect_timeout=10)) as db:
            table = db.execute("SELECT to_regclass(%s)", (f'"{schema}".sources',)).fetchone()
            if table is None or table[0] is None:
                return False
            query = sql.SQL("SELECT 1 FROM {}.sources LIMIT 1").format(sql.Identifier(schema))
            return db.execute(query).fetchone() is not None
    except psycopg.OperationalError as exc:
        log.warning("cannot look for sources in Postgres (%s); trying again later",
                    " ".join(str(exc).split()))  # fmt: skip
        return False
