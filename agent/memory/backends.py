"""Where thread memory (checkpoints) and per-user memory (the store) live.

SQLite is the default: one file that every process of a single machine can share
(WAL mode). Postgres is for teams: ``database_url`` set to a ``postgresql://`` URL.
Both open eagerly and fail within a few seconds with a `MemoryBackendError` that
says what went wrong and how to fix it, instead of hanging on the first turn.

``prune_thread`` lives in `agent.memory.pruning` and is re-exported here, where
the runner and the tests have always imported it from.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sqlite3
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, Protocol, TypeVar

import aiosqlite
import psycopg
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
from langgraph.store.base import BaseStore
from langgraph.store.postgres.aio import AsyncPostgresStore
from langgraph.store.sqlite.aio import AsyncSqliteStore
from psycopg.rows import DictRow, dict_row
from psycopg_pool import AsyncConnectionPool, PoolTimeout

from agent.memory.pruning import prune_thread
from agent.plumbing.urls import redact_url

__all__ = [
    "CONNECT_TIMEOUT_S",
    "MemoryBackendError",
    "open_checkpointer",
    "open_store",
    "prune_thread",
]

log = logging.getLogger(__name__)

CONNECT_TIMEOUT_S = 3.0
# How long a turn waits for a pooled connection once running; a dead server should
# fail the turn with a message, not hold it for psycopg's default 30 s.
POOL_TIMEOUT_S = 10.0
# libpq's connect_timeout is whole seconds, and values under 2 are raised to 2.
_LIBPQ_CONNECT_TIMEOUT = max(2, round(CONNECT_TIMEOUT_S))
# Another process holding the SQLite write lock is waited for this long.
SQLITE_BUSY_TIMEOUT_S = 5.0
_POSTGRES_SCHEMES = ("postgresql", "postgres")
# Serialises LangGraph's migrations across workers that start together: they are
# plain CREATE/INSERT statements that race into unique-violation errors otherwise.
_SETUP_LOCK_KEY = 0x7465616D72616701  # "teamrag" + 1
# How long a starting worker waits for another one's migrations before saying so.
SETUP_WAIT_S = 120.0
_SETUP_POLL_S = 0.1

_Pool = AsyncConnectionPool[psycopg.AsyncConnection[DictRow]]


class MemoryBackendError(Exception):
    """Memory could not be opened; the message names the cause and the fix."""


class _NeedsSetup(Protocol):
    async def setup(self) -> None: ...


_B = TypeVar("_B", bound=_NeedsSetup)


@asynccontextmanager
async def open_checkpointer(
    database_url: str | None, sqlite_path: Path, *, max_connections: int = 10
) -> AsyncIterator[BaseCheckpointSaver[Any]]:
    """The thread-memory saver: Postgres when ``database_url`` is set, else SQLite."""
    url = _postgres_url(database_url, sqlite_path)
    if url is not None:
        async with _postgres(
            url, sqlite_path, AsyncPostgresSaver, "teamrag-checkpoints", max_connections
        ) as saver:
            yield saver
        return
    conn = await _open_sqlite(sqlite_path, autocommit=False)
    try:
        sqlite_saver = AsyncSqliteSaver(conn)
        await _sqlite_setup(sqlite_saver.setup(), sqlite_path)
        yield sqlite_saver
    finally:
        await conn.close()


@asynccontextmanager
async def open_store(
    database_url: str | None, sqlite_path: Path, *, max_connections: int = 5
) -> AsyncIterator[BaseStore]:
    """The per-user memory store: Postgres when ``database_url`` is set, else SQLite.

    The SQLite store may share its file with the checkpointer: the tables differ.
    """
    url = _postgres_url(database_url, sqlite_path)
    if url is not None:
        async with _postgres(
            url, sqlite_path, AsyncPostgresStore, "teamrag-store", max_connections
        ) as store:
            try:
                yield store
            finally:
                await _stop_batching(store)
        return
    # AsyncSqliteStore issues its own BEGIN/COMMIT, so its connection must be in
    # autocommit mode (isolation_level=None), unlike the checkpointer's.
    conn = await _open_sqlite(sqlite_path, autocommit=True)
    try:
        sqlite_store = AsyncSqliteStore(conn)
        try:
            await _sqlite_setup(sqlite_store.setup(), sqlite_path)
            yield sqlite_store
        finally:
            await _stop_batching(sqlite_store)
    finally:
        await conn.close()


async def _stop_batching(store: BaseStore) -> None:
    """Stop the task that async stores start to batch operations.

    Nothing else stops it before garbage collection, and a task left pending on
    a closed connection is what asyncio warns about at exit. ``_task`` is private
    to AsyncBatchedBaseStore, hence the care taken.
    """
    task = getattr(store, "_task", None)
    if isinstance(task, asyncio.Task) and not task.done():
        task.cancel()
        # wait() rather than await: a cancellation of our own still propagates.
        await asyncio.wait({task})


# --- Postgres -----------------------------------------------------------------


def _postgres_url(database_url: str | None, sqlite_path: Path) -> str | None:
    """The URL to use, or None for SQLite; an empty setting means unset."""
    if database_url is None or not database_url.strip():
        return None
    url = database_url.strip()
    scheme = url.split("://", 1)[0].lower() if "://" in url else ""
    # A libpq "host=... dbname=..." string has no scheme and is fine as it is.
    if scheme and scheme not in _POSTGRES_SCHEMES:
        raise MemoryBackendError(
            f"DATABASE_URL must be a postgresql:// URL, not {scheme}://; "
            f"unset it to use the embedded SQLite file at {sqlite_path}"
        )
    return url


def _unreachable(url: str, sqlite_path: Path, cause: object) -> MemoryBackendError:
    # libpq's messages run over several indented lines; a log line reads better.
    cause_text = " ".join(str(cause).split()) or type(cause).__name__
    return MemoryBackendError(
        f"DATABASE_URL unreachable ({redact_url(url)}): {cause_text}; start Postgres or fix "
        f"the URL, or unset DATABASE_URL to use the embedded SQLite file at {sqlite_path}"
    )


async def _connect(url: str, sqlite_path: Path) -> psycopg.AsyncConnection[Any]:
    try:
        # libpq applies connect_timeout per address (localhost can be two), so
        # the whole attempt gets its own deadline too.
        async with asyncio.timeout(CONNECT_TIMEOUT_S + 1):
            return await psycopg.AsyncConnection.connect(
                url, autocommit=True, connect_timeout=_LIBPQ_CONNECT_TIMEOUT
            )
    except TimeoutError as exc:
        raise _unreachable(url, sqlite_path, f"no answer in {CONNECT_TIMEOUT_S:g} s") from exc
    except psycopg.Error as exc:
        raise _unreachable(url, sqlite_path, exc) from exc


@asynccontextmanager
async def _postgres(
    url: str,
    sqlite_path: Path,
    make: Callable[[_Pool], _B],
    name: str,
    max_connections: int,
) -> AsyncIterator[_B]:
    # One direct connection first: a pool only reports "couldn't get a connection
    # in time", while this shows libpq's reason (refused, no such database, ...).
    probe = await _connect(url, sqlite_path)
    try:
        pool: _Pool = AsyncConnectionPool(
            url,
            connection_class=psycopg.AsyncConnection[DictRow],
            # LangGraph's savers need autocommit and dict rows; prepare_threshold=0
            # keeps them working behind PgBouncer in transaction mode.
            kwargs={
                "autocommit": True,
                "prepare_threshold": 0,
                "row_factory": dict_row,
                "connect_timeout": _LIBPQ_CONNECT_TIMEOUT,
            },
            min_size=1,
            max_size=max(1, max_connections),
            open=False,
            # Survives a Postgres restart: a dead pooled connection is replaced.
            check=AsyncConnectionPool.check_connection,
            timeout=POOL_TIMEOUT_S,
            name=name,
        )
        try:
            await pool.open(wait=True, timeout=CONNECT_TIMEOUT_S)
            backend = make(pool)
            await _take_setup_lock(probe, url)
            try:
                await backend.setup()
            finally:
                await probe.execute("SELECT pg_advisory_unlock(%s)", (_SETUP_LOCK_KEY,))
        except PoolTimeout as exc:
            await pool.close()
            raise _unreachable(url, sqlite_path, exc) from exc
        except psycopg.Error as exc:
            await pool.close()
            raise MemoryBackendError(
                f"Postgres at {redact_url(url)} refused LangGraph's tables: {exc}; let the "
                "user create tables in the database's schema, or unset DATABASE_URL to "
                f"use the embedded SQLite file at {sqlite_path}"
            ) from exc
        except BaseException:
            await pool.close()
            raise
    finally:
        await probe.close()
    try:
        yield backend
    finally:
        await pool.close()


async def _take_setup_lock(probe: psycopg.AsyncConnection[Any], url: str) -> None:
    """Take the migrations lock by trying, never by waiting inside a statement.

    A statement waiting for ``pg_advisory_lock`` holds a snapshot, and LangGraph's
    migrations build indexes ``CONCURRENTLY``, which waits for every snapshot to end:
    the worker holding the lock waited for the worker waiting for it. Two workers started
    together on a database without LangGraph's tables hung that way, for good.
    """
    deadline = time.monotonic() + SETUP_WAIT_S
    while True:
        cursor = await probe.execute("SELECT pg_try_advisory_lock(%s)", (_SETUP_LOCK_KEY,))
        row = await cursor.fetchone()
        if row is not None and row[0]:
            return
        if time.monotonic() > deadline:
            raise MemoryBackendError(
                f"another process has been creating LangGraph's tables in Postgres at "
                f"{redact_url(url)} for over {SETUP_WAIT_S:g} s; look for a hung teamrag "
                "process (pg_stat_activity), end it, and start this one again"
            )
        await asyncio.sleep(_SETUP_POLL_S)


# --- SQLite -------------------------------------------------------------------


def _unwritable(path: Path, cause: object) -> MemoryBackendError:
    return MemoryBackendError(
        f"cannot write the SQLite memory file {path}: {cause}; point the data folder "
        "(TEAMRAG_DATA_DIR) at a folder you can write to, or set DATABASE_URL to use Postgres"
    )


async def _open_sqlite(sqlite_path: Path, *, autocommit: bool) -> aiosqlite.Connection:
    path = sqlite_path.expanduser()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise _unwritable(path, exc) from exc
    # WAL needs the -wal and -shm files beside the database, so the folder itself
    # must be writable, not only the file.
    for target in (path.parent, path):
        if target.exists() and not os.access(target, os.W_OK):
            raise _unwritable(path, f"{target} is read-only")
    try:
        conn = await aiosqlite.connect(
            path, timeout=SQLITE_BUSY_TIMEOUT_S, isolation_level=None if autocommit else ""
        )
    except (sqlite3.Error, OSError) as exc:
        raise _unwritable(path, exc) from exc
    try:
        async with conn.execute("PRAGMA journal_mode=WAL") as cur:
            row = await cur.fetchone()
        if row is None or str(row[0]).lower() != "wal":
            # Some network filesystems refuse WAL; SQLite then keeps its rollback
            # journal, which still works for a single process.
            log.warning("SQLite file %s is not in WAL mode (%s)", path, row)
    except (sqlite3.Error, OSError) as exc:
        await conn.close()
        raise _unwritable(path, exc) from exc
    return conn


async def _sqlite_setup(setup: Awaitable[None], path: Path) -> None:
    try:
        await setup
    except (sqlite3.Error, OSError) as exc:
        raise _unwritable(path, exc) from exc
