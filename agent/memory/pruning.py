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

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

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
    try:
        # AsyncPostgresSaver implements keep_latest; the base class raises.
        await checkpointer.aprune([thread_id], strategy="keep_latest")
    except NotImplementedError as exc:
        log.debug("not pruning thread %s with %s: %s", thread_id, type(checkpointer), exc)
        return False
    return True


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
