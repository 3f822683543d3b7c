"""Pruning a thread's checkpoints to the latest: a long SQLite thread stays bounded, a
cancelled prune leaves no transaction open, an interrupted run stays resumable, and on
Postgres ours deletes what LangGraph's own prune deletes.

Postgres tests use ``TEAMRAG_TEST_DATABASE_URL`` (default: the local test database)
and skip when it is unreachable; their thread ids are unique and deleted afterwards.
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.types import Command, interrupt

from agent.memory.backends import open_checkpointer, prune_thread
from tests.support.memory_support import (
    ask,
    build_graph,
    build_trimming_graph,
    config,
    thread_texts,
)

pytest_plugins = ("tests.support.memory_fixtures",)


async def scalar(saver: BaseCheckpointSaver[Any], sql: str) -> int:
    conn = saver.conn  # type: ignore[attr-defined]
    async with conn.execute(sql) as cursor:
        row = await cursor.fetchone()
    return int(row[0])


async def sqlite_bytes(saver: BaseCheckpointSaver[Any]) -> int:
    """Pages in use, WAL included: the file's size once checkpointed."""
    return await scalar(saver, "PRAGMA page_count") * await scalar(saver, "PRAGMA page_size")


async def test_pruning_keeps_a_long_sqlite_thread_bounded(tmp_path: Path) -> None:
    async with open_checkpointer(None, tmp_path / "threads.sqlite") as saver:
        graph = build_trimming_graph(saver)
        sizes = []
        for turn in range(60):
            await ask(graph, "long", f"question {turn} " + "x" * 400)
            assert await prune_thread(saver, "long")
            sizes.append(await sqlite_bytes(saver))
        assert await scalar(saver, "SELECT count(*) FROM checkpoints") == 1
        # Freed pages are reused: no growth at all once the trimmed history is full.
        assert sizes[-1] == sizes[30], sizes
        texts = await thread_texts(graph, "long")
        assert len(texts) == 6 and texts[-1].startswith("answer: question 59")
        await ask(graph, "long", "after pruning")
        assert (await thread_texts(graph, "long"))[-1] == "answer: after pruning"


async def test_a_cancelled_prune_leaves_no_transaction_open(tmp_path: Path) -> None:
    """aiosqlite finishes a statement whose await was cancelled; the prune must not leave
    its transaction open on the shared connection (the next prune would then fail)."""
    async with open_checkpointer(None, tmp_path / "threads.sqlite") as saver:
        graph = build_trimming_graph(saver)
        for round_ in range(20):
            await ask(graph, "t", f"question {round_}")
            await ask(graph, "t", f"again {round_}")
            pruning = asyncio.create_task(prune_thread(saver, "t"))
            await asyncio.sleep(0)  # into the transaction, then cut it off
            pruning.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await pruning
            async with saver.lock:  # type: ignore[attr-defined]
                assert not saver.conn.in_transaction  # type: ignore[attr-defined]
        await ask(graph, "t", "last")
        assert await prune_thread(saver, "t")
        assert await scalar(saver, "SELECT count(*) FROM checkpoints") == 1


async def test_without_pruning_every_turn_adds_checkpoints(tmp_path: Path) -> None:
    """The contrast that makes pruning necessary: three checkpoints a turn, each
    holding the whole (even trimmed) history."""
    async with open_checkpointer(None, tmp_path / "threads.sqlite") as saver:
        graph = build_trimming_graph(saver)
        for turn in range(20):
            await ask(graph, "long", f"question {turn}")
        assert await scalar(saver, "SELECT count(*) FROM checkpoints") == 60


async def test_pruning_keeps_an_interrupted_run_resumable(tmp_path: Path) -> None:
    """The pending writes of the latest checkpoint (here an interrupt inside a
    subgraph) survive; finished subgraph calls do not."""

    def inner(state: MessagesState) -> dict[str, Any]:
        return {"messages": [AIMessage("looked it up")]}

    def confirm(state: MessagesState) -> dict[str, Any]:
        return {"messages": [AIMessage(f"confirmed: {interrupt('go ahead?')}")]}

    sub = StateGraph(MessagesState)
    sub.add_node("inner", inner)
    sub.add_node("confirm", confirm)
    sub.add_edge(START, "inner")
    sub.add_edge("inner", "confirm")
    sub.add_edge("confirm", END)
    builder = StateGraph(MessagesState)
    builder.add_node("sub", sub.compile())
    builder.add_edge(START, "sub")
    builder.add_edge("sub", END)

    async with open_checkpointer(None, tmp_path / "threads.sqlite") as saver:
        graph = builder.compile(checkpointer=saver)
        for turn in range(3):
            await graph.ainvoke({"messages": [HumanMessage(f"q{turn}")]}, config("t"))
            assert await prune_thread(saver, "t")
            result = await graph.ainvoke(Command(resume=f"yes {turn}"), config("t"))
        assert await prune_thread(saver, "t")
        assert [m.text for m in result["messages"]][-3:] == [
            "q2",
            "looked it up",
            "confirmed: yes 2",
        ]
        conn = saver.conn  # type: ignore[attr-defined]
        namespaces = list(
            await conn.execute_fetchall("SELECT DISTINCT checkpoint_ns FROM checkpoints")
        )
        assert namespaces == [("",)]


async def test_pruning_postgres_keeps_the_latest_checkpoint(
    pg_url: str, tmp_path: Path, thread_id: str
) -> None:
    async with open_checkpointer(pg_url, tmp_path / "unused.sqlite") as saver:
        try:
            graph = build_graph(saver)
            for turn in range(10):
                await ask(graph, thread_id, f"question {turn}")
            assert len([c async for c in saver.alist(config(thread_id))]) == 30
            assert await prune_thread(saver, thread_id)
            assert len([c async for c in saver.alist(config(thread_id))]) == 1
            assert len(await thread_texts(graph, thread_id)) == 20
            await ask(graph, thread_id, "after pruning")
            assert len(await thread_texts(graph, thread_id)) == 22
        finally:
            await saver.adelete_thread(thread_id)


async def test_pruning_a_saver_that_cannot_says_so() -> None:
    saver = InMemorySaver()
    await ask(build_graph(saver), "t", "hello")
    assert await prune_thread(saver, "t") is False
    assert len(await thread_texts(build_graph(saver), "t")) == 2


async def test_pruning_postgres_deletes_what_langgraphs_own_prune_deletes(
    pg_url: str, tmp_path: Path
) -> None:
    """Ours gathers LangGraph's per-channel blob deletes into one statement: two threads
    with the same turns, one pruned by each, must keep exactly the same rows."""
    ours, theirs = f"test-{uuid.uuid4().hex}", f"test-{uuid.uuid4().hex}"

    async def rows(saver: BaseCheckpointSaver[Any], thread: str) -> dict[str, list[Any]]:
        found: dict[str, list[Any]] = {}
        async with saver.conn.connection() as conn:  # type: ignore[attr-defined]
            for table, columns in (
                ("checkpoints", "checkpoint_ns, parent_checkpoint_id IS NULL"),
                # A version is a counter and a random part: the counters must agree.
                ("checkpoint_blobs", "checkpoint_ns, channel, split_part(version, '.', 1)"),
                ("checkpoint_writes", "checkpoint_ns, channel"),
            ):
                cursor = await conn.execute(
                    f"SELECT {columns} FROM {table} WHERE thread_id = %s ORDER BY 1, 2",
                    (thread,),
                )
                found[table] = [tuple(r.values()) for r in await cursor.fetchall()]
        return found

    async with open_checkpointer(pg_url, tmp_path / "unused.sqlite") as saver:
        try:
            graph = build_trimming_graph(saver)
            for turn in range(8):
                for thread in (ours, theirs):
                    await ask(graph, thread, f"question {turn}")
            before = await rows(saver, ours)
            assert await prune_thread(saver, ours)
            await saver.aprune([theirs], strategy="keep_latest")
            kept = await rows(saver, ours)
            assert kept == await rows(saver, theirs)
            assert len(kept["checkpoints"]) == 1
            assert len(kept["checkpoint_blobs"]) < len(before["checkpoint_blobs"])
            await ask(graph, ours, "after pruning")
            assert (await thread_texts(graph, ours))[-1] == "answer: after pruning"
        finally:
            await saver.adelete_thread(ours)
            await saver.adelete_thread(theirs)
