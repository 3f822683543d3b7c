"""Thread memory and the store on real SQLite files and, when it answers, real Postgres:
a thread survives closing and reopening, another process shares the SQLite file, and
the store keeps what it was given.

Postgres tests use ``TEAMRAG_TEST_DATABASE_URL`` (default: the local test database)
and skip when it is unreachable. Every thread id and namespace they write is unique
and deleted afterwards, so reruns start clean. Errors are in
test_memory_backend_errors.py, pruning in test_memory_pruning.py.
"""

from __future__ import annotations

import asyncio
import json
import sqlite3
import sys
import uuid
from pathlib import Path

import pytest

from agent.memory.backends import open_checkpointer, open_store
from tests.conftest import REPO
from tests.support.memory_support import ask, build_graph, thread_texts

pytest_plugins = ("tests.support.memory_fixtures",)


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
from tests.support.memory_support import build_graph

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
