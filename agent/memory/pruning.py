"""Keeping a thread's stored checkpoints bounded, once it is open.

LangGraph saves the full message list in every checkpoint, so an unpruned thread
grows quadratically. This is apart from `agent.memory.backends` because it is a
different job: that module opens the checkpointer and store, this one trims what
a checkpointer already holds. The SQLite saver has no pruning of its own, so most
of this module is the SQL that does it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import sqlite3
from typing import Any

import psycopg
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
from psycopg.rows import dict_row

# LangGraph's own keep_latest statements for Postgres; without them (another version of
# langgraph-checkpoint-postgres) pruning falls back to its aprune, statement by statement.
try:
    from langgraph.checkpoint.postgres import base as _postgres_rules

    _KEEP_LATEST = _postgres_rules._keep_latest
    _REFUSE_DELTA = _postgres_rules._refuse_delta_threads
    _BLOBS_SQL = _postgres_rules.PRUNE_BLOBS_SQL
except (ImportError, AttributeError):  # pragma: no cover - another LangGraph version
    _postgres_rules = None  # type: ignore[assignment]

__all__ = ["prune_thread"]

log = logging.getLogger(__name__)

# Checkpoints older than this format read their pending sends from their parent.
_CHECKPOINT_V_SENDS_IN_SELF = 4
# Metadata keys that mark a thread using a DeltaChannel: its latest value is
# rebuilt from older checkpoints, which keep-latest pruning would delete.
_DELTA_MARKERS = ("counters_since_delta_snapshot", "delta_writes_versioned")


async def prune_thread(checkpointer: BaseCheckpointSaver[Any], thread_id: str) -> bool:
    """Keep only the latest checkpoint of ``thread_id``; False when the saver can't.

    Run it between turns (the runner's per-thread lock held): the state the next
    turn loads is kept whole, history (time travel, forks) of the thread is lost.
    A thread whose graph uses a DeltaChannel is never pruned: its latest value is
    rebuilt from the older checkpoints.
    """
    if isinstance(checkpointer, AsyncSqliteSaver):
        return await _prune_sqlite(checkpointer, thread_id)
    if isinstance(checkpointer, AsyncPostgresSaver) and _postgres_rules is not None:
        return await _prune_postgres(checkpointer, thread_id)
    try:
        # AsyncPostgresSaver implements keep_latest; the base class raises.
        await checkpointer.aprune([thread_id], strategy="keep_latest")
    except NotImplementedError as exc:
        log.debug("not pruning thread %s with %s: %s", thread_id, type(checkpointer), exc)
        return False
    return True


# --- Postgres -----------------------------------------------------------------

# Every garbage blob of one namespace in one statement: LangGraph's aprune sends one
# DELETE per channel, about 60 round trips a turn here (12.6 ms, 6.9 ms of CPU).
_BATCHED_BLOBS_SQL = """
DELETE FROM checkpoint_blobs b
USING unnest(%s::text[], %s::text[]) AS garbage(channel, version)
WHERE b.thread_id = %s AND b.checkpoint_ns = %s
AND b.channel = garbage.channel AND b.version = garbage.version
"""


async def _prune_postgres(saver: AsyncPostgresSaver, thread_id: str) -> bool:
    """AsyncPostgresSaver.aprune(keep_latest) for one thread: LangGraph's statements,
    in its transaction, but the per-channel blob deletes gathered into one."""
    pool = saver.conn
    assert not isinstance(pool, psycopg.AsyncConnection), "teamrag opens the saver on a pool"
    async with pool.connection() as conn, conn.cursor(row_factory=dict_row) as cur:
        try:
            await _run(cur, _REFUSE_DELTA([thread_id]))
        except NotImplementedError as exc:
            log.debug("not pruning thread %s: %s", thread_id, exc)
            return False
        async with conn.transaction():
            await _run(cur, _KEEP_LATEST(thread_id))
    return True


async def _run(cur: psycopg.AsyncCursor[Any], statements: Any) -> None:
    """Run LangGraph's prune statements (each yields sql, params, fetch and is sent the
    rows back), holding its blob deletes until the next other statement, or the end."""
    garbage: dict[tuple[str, str], tuple[list[str], list[str]]] = {}

    async def flush() -> None:
        for (thread, ns), (channels, versions) in garbage.items():
            await cur.execute(_BATCHED_BLOBS_SQL, (channels, versions, thread, ns))
        garbage.clear()

    rows: list[Any] | None = None  # None: the first statement is still to come
    try:
        while True:
            sql, params, fetch = next(statements) if rows is None else statements.send(rows)
            if sql == _BLOBS_SQL:
                thread, ns, channel, channel_versions = params
                channels, versions = garbage.setdefault((thread, ns), ([], []))
                channels += [channel] * len(channel_versions)
                versions += list(channel_versions)
                rows = []
                continue
            await flush()
            await cur.execute(sql, params, prepare=False)
            rows = await cur.fetchall() if fetch else []
    except StopIteration:
        await flush()


# --- SQLite -------------------------------------------------------------------


async def _prune_sqlite(saver: AsyncSqliteSaver, thread_id: str) -> bool:
    """keep_latest for the SQLite saver, which implements neither aprune nor
    adelete_for_runs (only adelete_thread): AsyncPostgresSaver.aprune's rules, in
    one transaction that holds SQLite's write lock, so no other process's run can
    commit a checkpoint in between."""
    await saver.setup()
    # aiosqlite runs each statement on its own thread: a cancelled await does not stop
    # the statement, so a cancel in the middle would leave a transaction open on the
    # shared connection. The transaction therefore runs whole, in a task of its own.
    return await asyncio.shield(asyncio.ensure_future(_prune_sqlite_locked(saver, thread_id)))


async def _prune_sqlite_locked(saver: AsyncSqliteSaver, thread_id: str) -> bool:
    conn = saver.conn
    async with saver.lock:
        if conn.in_transaction:
            # Another write on this connection was cut off before its commit; the saver's
            # next write commits it. Pruning can wait for the thread's next turn.
            log.debug("not pruning thread %s now: a transaction is open", thread_id)
            return False
        await conn.execute("BEGIN IMMEDIATE")
        try:
            pruned = await _prune_sqlite_rows(saver, thread_id)
            if pruned:
                await conn.commit()
            else:
                await conn.rollback()
        except BaseException:
            with contextlib.suppress(sqlite3.Error):
                await conn.rollback()
            raise
    return pruned


async def _prune_sqlite_rows(saver: AsyncSqliteSaver, thread_id: str) -> bool:
    conn = saver.conn
    rows = await conn.execute_fetchall(
        "SELECT checkpoint_ns, checkpoint_id, metadata FROM checkpoints WHERE thread_id = ?",
        (thread_id,),
    )
    heads: dict[str, str] = {}
    metadata: dict[tuple[str, str], dict[str, Any]] = {}
    for ns, checkpoint_id, raw in rows:
        meta = json.loads(raw) if raw else {}
        if any(marker in meta for marker in _DELTA_MARKERS):
            log.debug("not pruning thread %s: it uses a DeltaChannel", thread_id)
            return False
        metadata[(ns, checkpoint_id)] = meta
        if checkpoint_id > heads.get(ns, ""):
            heads[ns] = checkpoint_id
    root_head = heads.get("")
    for ns, head in heads.items():
        # A subgraph call's namespace ends in its task id, so each call leaves a
        # namespace of its own: once the root has moved past the checkpoint the
        # call started from, the call is over and none of it is needed.
        started_from = (metadata[(ns, head)].get("parents") or {}).get("")
        if ":" in ns and root_head and started_from and started_from < root_head:
            await conn.execute(
                "DELETE FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = ?",
                (thread_id, ns),
            )
            await conn.execute(
                "DELETE FROM writes WHERE thread_id = ? AND checkpoint_ns = ?", (thread_id, ns)
            )
            continue
        keep_from = await _oldest_needed(saver, thread_id, ns, head)
        # Checkpoint ids grow with time, so "older than what we keep" is a range;
        # writes newer than the head belong to a checkpoint still being saved.
        await conn.execute(
            "DELETE FROM checkpoints WHERE thread_id = ? AND checkpoint_ns = ? "
            "AND checkpoint_id < ?",
            (thread_id, ns, keep_from),
        )
        await conn.execute(
            "DELETE FROM writes WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id < ?",
            (thread_id, ns, keep_from),
        )
        await conn.execute(
            "UPDATE checkpoints SET parent_checkpoint_id = NULL WHERE thread_id = ? "
            "AND checkpoint_ns = ? AND checkpoint_id = ? AND parent_checkpoint_id < ?",
            (thread_id, ns, keep_from, keep_from),
        )
    return True


async def _oldest_needed(saver: AsyncSqliteSaver, thread_id: str, ns: str, head: str) -> str:
    """The head, or its parent when the head predates checkpoint format 4 and so
    reads its pending sends from the parent's writes."""
    rows = list(
        await saver.conn.execute_fetchall(
            "SELECT type, checkpoint, parent_checkpoint_id FROM checkpoints "
            "WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id = ?",
            (thread_id, ns, head),
        )
    )
    type_, blob, parent = rows[0]
    if parent and saver.serde.loads_typed((type_, blob)).get("v", 0) < (
        _CHECKPOINT_V_SENDS_IN_SELF
    ):
        return str(parent)
    return head
