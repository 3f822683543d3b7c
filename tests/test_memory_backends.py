"""Thread memory and the store on real SQLite files and, when it answers, real Postgres.

Postgres tests use ``TEAMRAG_TEST_DATABASE_URL`` (default: the local test database)
and skip when it is unreachable. Every thread id and namespace they write is unique
and deleted afterwards, so reruns start clean.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import socket
import sqlite3
import sys
import time
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, RemoveMessage
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import Command, interrupt

from agent.memory.backends import (
    CONNECT_TIMEOUT_S,
    MemoryBackendError,
    open_checkpointer,
    open_store,
    prune_thread,
)
from agent.memory.trimming import select_for_trim
from tests.support.postgres_support import postgres_or_skip

REPO = Path(__file__).resolve().parent.parent


def build_graph(checkpointer: BaseCheckpointSaver[Any]) -> CompiledStateGraph[Any]:
    """One node that answers every question; what a turn leaves in the thread."""

    def answer(state: MessagesState) -> dict[str, Any]:
        question = state["messages"][-1].text
        return {"messages": [AIMessage(f"answer {len(state['messages'])}: {question}")]}

    builder = StateGraph(MessagesState)
    builder.add_node("answer", answer)
    builder.add_edge(START, "answer")
    builder.add_edge("answer", END)
    return builder.compile(checkpointer=checkpointer)


def build_trimming_graph(checkpointer: BaseCheckpointSaver[Any]) -> CompiledStateGraph[Any]:
    """Like `build_graph`, but keeps the thread to its last 6 messages, as the agent will."""

    def answer(state: MessagesState) -> dict[str, Any]:
        reply = AIMessage(f"answer: {state['messages'][-1].text}", id=str(uuid.uuid4()))
        dropped = select_for_trim([*state["messages"], reply], keep_last=6)
        return {"messages": [reply, *(RemoveMessage(id=str(m.id)) for m in dropped)]}

    builder = StateGraph(MessagesState)
    builder.add_node("answer", answer)
    builder.add_edge(START, "answer")
    builder.add_edge("answer", END)
    return builder.compile(checkpointer=checkpointer)


def config(thread_id: str) -> RunnableConfig:
    return {"configurable": {"thread_id": thread_id}}


async def ask(graph: CompiledStateGraph[Any], thread_id: str, text: str) -> list[str]:
    result = await graph.ainvoke({"messages": [HumanMessage(text)]}, config(thread_id))
    return [m.text for m in result["messages"]]


async def thread_texts(graph: CompiledStateGraph[Any], thread_id: str) -> list[str]:
    state = await graph.aget_state(config(thread_id))
    return [m.text for m in state.values.get("messages", [])]


@pytest.fixture(scope="session")
def pg_url() -> str:
    return postgres_or_skip()


@pytest.fixture(params=["sqlite", "postgres"])
def database_url(request: pytest.FixtureRequest) -> str | None:
    """None (SQLite) or the Postgres URL, so one test covers both backends."""
    if request.param == "sqlite":
        return None
    return str(request.getfixturevalue("pg_url"))


@pytest.fixture
def thread_id() -> str:
    return f"test-{uuid.uuid4().hex}"


@pytest.fixture
async def cleanup_thread(
    database_url: str | None, tmp_path: Path, thread_id: str
) -> AsyncIterator[None]:
    yield
    if database_url is not None:
        async with open_checkpointer(database_url, tmp_path / "unused.sqlite") as saver:
            await saver.adelete_thread(thread_id)


# --- a thread survives a restart ------------------------------------------------------


@pytest.mark.usefixtures("cleanup_thread")
async def test_thread_survives_closing_and_reopening(
    database_url: str | None, tmp_path: Path, thread_id: str
) -> None:
    db = tmp_path / "memory" / "threads.sqlite"
    async with open_checkpointer(database_url, db) as saver:
        graph = build_graph(saver)
        await ask(graph, thread_id, "first")
        await ask(graph, thread_id, "두 번째")

    async with open_checkpointer(database_url, db) as saver:
        graph = build_graph(saver)
        assert await thread_texts(graph, thread_id) == [
            "first",
            "answer 1: first",
            "두 번째",
            "answer 3: 두 번째",
        ]
        texts = await ask(graph, thread_id, "third")
        assert texts[-1] == "answer 5: third"
    if database_url is None:
        assert db.exists()  # the parent folder was created


async def test_sqlite_file_is_in_wal_mode(tmp_path: Path) -> None:
    db = tmp_path / "threads.sqlite"
    async with open_checkpointer(None, db) as saver:
        await ask(build_graph(saver), "t", "hello")
        with sqlite3.connect(db) as other:
            assert other.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


SUBPROCESS_TURN = """
import asyncio, json, sys
from pathlib import Path
from langchain_core.messages import HumanMessage
from agent.memory.backends import open_checkpointer
from tests.test_memory_backends import build_graph

async def main():
    async with open_checkpointer(None, Path(sys.argv[1])) as saver:
        graph = build_graph(saver)
        config = {"configurable": {"thread_id": sys.argv[2]}}
        before = await graph.aget_state(config)
        await graph.ainvoke({"messages": [HumanMessage("from the other process")]}, config)
        print(json.dumps([m.text for m in before.values["messages"]]))

asyncio.run(main())
"""


async def test_another_process_shares_the_sqlite_thread(tmp_path: Path) -> None:
    """A second process (another worker, the CLI) reads and extends the thread while
    this one keeps the file open."""
    db = tmp_path / "threads.sqlite"
    async with open_checkpointer(None, db) as saver:
        graph = build_graph(saver)
        await ask(graph, "shared", "from this process")
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-c",
            SUBPROCESS_TURN,
            str(db),
            "shared",
            cwd=REPO,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
        out, err = await asyncio.wait_for(proc.communicate(), timeout=120)
        assert proc.returncode == 0, err.decode()
        assert json.loads(out.decode().strip().splitlines()[-1]) == [
            "from this process",
            "answer 1: from this process",
        ]
        assert (await thread_texts(graph, "shared"))[-2:] == [
            "from the other process",
            "answer 3: from the other process",
        ]


# --- the store --------------------------------------------------------------------------


async def test_store_put_and_search(database_url: str | None, tmp_path: Path) -> None:
    workspace = f"test-{uuid.uuid4().hex}"
    written = [
        (("users", workspace, "U1"), "team", {"kind": "team", "text": "결제팀 소속"}),
        (("users", workspace, "U1"), "role", {"kind": "role", "text": "backend engineer"}),
        (("users", workspace, "U12"), "team", {"kind": "team", "text": "someone else"}),
    ]
    db = tmp_path / "store.sqlite"
    try:
        async with open_store(database_url, db) as store:
            for namespace, key, value in written:
                await store.aput(namespace, key, value)
        async with open_store(database_url, db) as store:
            items = await store.asearch(("users", workspace, "U1"))
            assert sorted(item.key for item in items) == ["role", "team"]
            item = await store.aget(("users", workspace, "U1"), "team")
            assert item is not None and item.value["text"] == "결제팀 소속"
    finally:
        async with open_store(database_url, db) as store:
            for namespace, key, _ in written:
                await store.adelete(namespace, key)


async def test_store_and_checkpointer_share_one_sqlite_file(tmp_path: Path) -> None:
    db = tmp_path / "memory.sqlite"
    async with open_checkpointer(None, db) as saver, open_store(None, db) as store:
        graph = build_graph(saver)
        await ask(graph, "t", "hello")
        await store.aput(("users", "W", "U"), "team", {"kind": "team", "text": "payments"})
        await ask(graph, "t", "again")
    async with open_checkpointer(None, db) as saver, open_store(None, db) as store:
        assert len(await thread_texts(build_graph(saver), "t")) == 4
        assert await store.aget(("users", "W", "U"), "team") is not None


# --- failing fast, with the fix in the message ------------------------------------------


async def test_unreachable_postgres_fails_fast_with_the_fix(tmp_path: Path) -> None:
    db = tmp_path / "fallback.sqlite"
    started = time.monotonic()
    with pytest.raises(MemoryBackendError) as caught:
        async with open_checkpointer("postgresql://postgres@127.0.0.1:1/test", db):
            pass
    assert time.monotonic() - started < CONNECT_TIMEOUT_S + 2
    message = str(caught.value)
    assert message.startswith("DATABASE_URL unreachable")
    assert "refused" in message
    assert f"unset DATABASE_URL to use the embedded SQLite file at {db}" in message


async def test_silent_postgres_times_out(tmp_path: Path) -> None:
    """A server that accepts the connection and never answers (a firewall, a hung
    host) costs about CONNECT_TIMEOUT_S, not psycopg's or the OS's minutes."""
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(5)
        port = silent.getsockname()[1]
        started = time.monotonic()
        with pytest.raises(MemoryBackendError, match="unset DATABASE_URL"):
            async with open_store(
                f"postgresql://postgres:secret@127.0.0.1:{port}/test", tmp_path / "x.sqlite"
            ):
                pass
        assert time.monotonic() - started < CONNECT_TIMEOUT_S + 2


async def test_password_is_not_in_the_error(tmp_path: Path) -> None:
    with pytest.raises(MemoryBackendError) as caught:
        async with open_checkpointer(
            "postgresql://postgres:hunter2@127.0.0.1:1/test", tmp_path / "x.sqlite"
        ):
            pass
    assert "hunter2" not in str(caught.value)
    assert "postgres:***@127.0.0.1:1" in str(caught.value)


async def test_non_postgres_url_is_refused(tmp_path: Path) -> None:
    with pytest.raises(MemoryBackendError, match=r"postgresql:// URL, not mysql://"):
        async with open_checkpointer("mysql://localhost/x", tmp_path / "x.sqlite"):
            pass


async def test_empty_database_url_means_sqlite(tmp_path: Path) -> None:
    async with open_checkpointer("  ", tmp_path / "x.sqlite") as saver:
        await ask(build_graph(saver), "t", "hello")
    assert (tmp_path / "x.sqlite").exists()


async def test_sqlite_folder_that_cannot_be_created(tmp_path: Path) -> None:
    blocker = tmp_path / "data"
    blocker.write_text("a file where the data folder should be")
    db = blocker / "memory" / "threads.sqlite"
    for opener in (open_checkpointer, open_store):
        with pytest.raises(MemoryBackendError) as caught:
            async with opener(None, db):
                pass
        message = str(caught.value)
        assert message.startswith(f"cannot write the SQLite memory file {db}")
        assert "TEAMRAG_DATA_DIR" in message and "DATABASE_URL" in message


@pytest.mark.skipif(
    hasattr(os, "geteuid") and os.geteuid() == 0,
    reason="root writes to read-only folders, so the case cannot happen",
)
async def test_read_only_sqlite_folder(tmp_path: Path) -> None:
    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(0o500)
    try:
        with pytest.raises(MemoryBackendError, match="is read-only"):
            async with open_checkpointer(None, folder / "threads.sqlite"):
                pass
    finally:
        folder.chmod(0o700)


# --- pruning ----------------------------------------------------------------------------


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
