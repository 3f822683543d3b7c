"""The agent through the real ``teamrag`` command, each call in its own process.

A tiny markdown folder is ingested once; every test gets its own copy of that data
folder, so thread memory, user memory and the answer cache start empty. Each
process loads the encoder (a few seconds), so the number of processes is kept low.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest

from agent.memory.backends import open_checkpointer
from agent.wording import replies
from agent.wording.progress import MESSAGES
from tests.fakes.openai_server import FakeOpenAI
from tests.support.agent_support import analysis, request_text
from tests.support.postgres_support import PG_URL, postgres_problem, postgres_reachable

LUNCH = "When is the team lunch?"
DESIGN_FIELDS = {"answer", "sources", "route", "cached", "blocked", "llm_calls", "usage", "timings"}
# Whatever the developer's shell has set must not reach the processes under test.
_FOREIGN = ("OPENAI_", "TEAMRAG_", "DATABASE_URL", "CHROMA_URL", "TAVILY_", "COLUMNS", "LINES")


@pytest.fixture(scope="module")
def ingested(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A data folder holding one small markdown document, ingested by `teamrag ingest`."""
    root = tmp_path_factory.mktemp("cli-agent")
    docs = root / "docs"
    docs.mkdir()
    (docs / "lunch.md").write_text(
        "# Team lunch\n\nThe team lunch is every Friday at 12:30 in the rooftop garden.\n\n"
        "## Parking\n\nVisitors park on level B2; reception hands out the tickets.\n",
        "utf-8",
    )
    data = root / "data"
    done = teamrag(["ingest", str(docs)], data, root)
    assert done.returncode == 0, done.stderr
    return data


@pytest.fixture
def data_dir(ingested: Path, tmp_path: Path) -> Iterator[Path]:
    data = tmp_path / "data"
    shutil.copytree(ingested, data)
    yield data


def teamrag(
    args: list[str],
    data: Path,
    cwd: Path,
    *,
    env: dict[str, str] | None = None,
    stdin: str | None = None,
) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith(_FOREIGN)}
    base |= {"TEAMRAG_DATA_DIR": str(data), "PYTHONUNBUFFERED": "1"} | (env or {})
    return subprocess.run(
        [sys.executable, "-m", "bots", *args],
        env=base,
        cwd=cwd,  # no stray .env from the repository or the developer's folder
        input=stdin,
        capture_output=True,
        text=True,
        timeout=180,
    )


def ask_json(
    text: str, data: Path, cwd: Path, thread: str, env: dict[str, str] | None = None
) -> dict[str, Any]:
    done = teamrag(
        ["ask", text, "--thread", thread, "--user", "alice", "--json"], data, cwd, env=env
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.strip().splitlines()
    assert len(lines) == 1, done.stdout  # one JSON object, nothing else on stdout
    final: dict[str, Any] = json.loads(lines[0])
    return final | {"_stderr": done.stderr}


def thread_id(thread: str) -> str:
    """Turn.thread_id for the terminal: platform cli, workspace local, channel terminal."""
    return f"cli:local:terminal:{thread}"


async def stored_messages(database_url: str | None, data: Path, thread: str) -> list[Any]:
    """The thread's messages as the checkpointer saved them, read in this process."""
    async with open_checkpointer(database_url, data / "memory.sqlite") as saver:
        config = {"configurable": {"thread_id": thread_id(thread), "checkpoint_ns": ""}}
        saved = await saver.aget_tuple(config)  # type: ignore[arg-type]
    assert saved is not None, f"thread {thread_id(thread)} was not saved"
    messages: list[Any] = saved.checkpoint["channel_values"]["messages"]
    return messages


async def test_ask_json_and_a_conversation_across_processes(data_dir: Path, tmp_path: Path) -> None:
    first = ask_json(LUNCH, data_dir, tmp_path, "T")
    assert set(first) >= DESIGN_FIELDS
    assert first["route"] == "knowledge" and first["mode"] == "extractive"
    assert first["llm_calls"] == 0 and not first["cached"] and not first["blocked"]
    assert "Friday at 12:30" in first["answer"] and "[1]" in first["answer"]
    assert first["sources"][0]["source"].endswith("lunch.md")
    assert first["sources"][0]["title"] == "Team lunch"
    assert first["usage"] == {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0}
    assert first["timings"]["total"] > 0
    assert first["thread_id"] == thread_id("T")

    second = ask_json("그럼 그건 어디서 해요?", data_dir, tmp_path, "T")
    assert second["thread_id"] == thread_id("T") and not second["cached"]
    assert "rooftop garden" in second["answer"]
    messages = await stored_messages(None, data_dir, "T")
    assert [(m.type, m.content) for m in messages] == [
        ("human", LUNCH),
        ("ai", first["answer"]),
        ("human", "그럼 그건 어디서 해요?"),
        ("ai", second["answer"]),
    ]
    # Progress goes to stderr, so a script reading stdout still sees how the turn went.
    assert MESSAGES["analyze"]["en"] in first["_stderr"], first["_stderr"]
    # The last turn's way through the graph, read back from the checkpoint as a tree.
    assert [s["node"] for s in second["path"]][:3] == ["input_guard", "cache_lookup", "router"]
    traced = teamrag(["trace", "T"], data_dir, tmp_path)
    assert traced.returncode == 0, traced.stderr
    tree = traced.stdout.splitlines()
    assert tree[0] == f"turn {thread_id('T')}" and tree[1].startswith("├─ input_guard")
    assert any("router" in line and "route=knowledge" in line for line in tree)
    assert any(line.startswith("│  ├─ retrieve") or "└─ retrieve" in line for line in tree)
    assert teamrag(["trace", "nothing-here"], data_dir, tmp_path).returncode == 1


async def test_thread_memory_survives_a_process_restart_with_an_llm(
    data_dir: Path, tmp_path: Path, fake_llm: FakeOpenAI
) -> None:
    fake_llm.reply("Analysis", analysis("smalltalk", reply="안녕하세요! 무엇이든 물어보세요."))
    env = {
        "OPENAI_BASE_URL": fake_llm.base_url,
        "OPENAI_API_KEY": "x",
        "TEAMRAG_LLM_MAX_RETRIES": "0",
        "TEAMRAG_LLM_TIMEOUT_S": "20",
    }
    first = ask_json("안녕하세요, 반가워요", data_dir, tmp_path, "R", env)
    second = ask_json("오늘도 잘 부탁해요", data_dir, tmp_path, "R", env)
    for final in (first, second):
        assert final["mode"] == "llm" and final["route"] == "smalltalk", final
        assert final["llm_calls"] == 1 and final["usage"]["prompt_tokens"] > 0
        assert final["answer"] == "안녕하세요! 무엇이든 물어보세요."
    requests = [call.body for call in fake_llm.calls if call.task == "Analysis"]
    assert len(requests) == 2
    history, _, new = request_text(requests[1]).partition("New message:")
    assert "안녕하세요, 반가워요" in history and "오늘도 잘 부탁해요" in new
    assert "안녕하세요, 반가워요" not in request_text(requests[0]).partition("New message:")[0]


def test_chat_greets_and_quits(data_dir: Path, tmp_path: Path) -> None:
    done = teamrag(["chat", "--user", "alice"], data_dir, tmp_path, stdin="안녕\n/quit\n")
    assert done.returncode == 0, done.stderr
    shown = " ".join(done.stdout.split())  # the console wraps long lines
    assert " ".join(replies.text("greeting", "ko").split()) in shown
    assert "Traceback" not in done.stderr


def test_unreachable_database_url_fails_with_one_line(data_dir: Path, tmp_path: Path) -> None:
    env = {"DATABASE_URL": "postgresql://postgres@127.0.0.1:1/test"}
    done = teamrag(["ask", LUNCH, "--json"], data_dir, tmp_path, env=env)
    assert done.returncode != 0
    assert done.stdout.strip() == ""
    assert "Traceback" not in done.stderr
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, done.stderr  # one line, as a log or a CI job shows it
    assert lines[0].startswith("error:") and "DATABASE_URL" in lines[0]
    assert "unset DATABASE_URL" in lines[0]  # ...and the fix


@pytest.mark.skipif(not postgres_reachable(), reason=postgres_problem() or "Postgres answers")
async def test_postgres_memory_shares_a_thread_between_processes(
    data_dir: Path, tmp_path: Path
) -> None:
    thread = f"pg-{uuid.uuid4().hex[:10]}"  # the database outlives this test run
    # DATABASE_URL moves the catalog and the sources to Postgres too: a schema of this
    # test's own (the default one would be shared with every other run, and left behind).
    schema = f"t_{uuid.uuid4().hex[:12]}"
    env = {"DATABASE_URL": PG_URL, "TEAMRAG_CATALOG_SCHEMA": schema}
    try:
        first = ask_json(LUNCH, data_dir, tmp_path, thread, env)
        second = ask_json("그럼 그건 어디서 해요?", data_dir, tmp_path, thread, env)
        messages = await stored_messages(PG_URL, data_dir, thread)
        assert [(m.type, m.content) for m in messages] == [
            ("human", LUNCH),
            ("ai", first["answer"]),
            ("human", "그럼 그건 어디서 해요?"),
            ("ai", second["answer"]),
        ]
        assert not (data_dir / "memory.sqlite").exists()  # Postgres, not the SQLite file
    finally:
        async with open_checkpointer(PG_URL, data_dir / "memory.sqlite") as saver:
            await saver.adelete_thread(thread_id(thread))
        with psycopg.connect(PG_URL, autocommit=True) as db:
            db.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
