"""The answer goes out when ``finalize`` has run, before the thread's checkpoint is written.

The real SQLite memory file is held by another connection (a write transaction, as a
second process writing the same file would), so the turn's checkpoint write has to wait
for it: the Final must arrive anyway, the thread must stay locked until the write is
done, and a write that fails for good must not turn an answer into an error.
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from agent.events import Final, Turn
from agent.memory import backends
from agent.retrieval.knowledge_base import KnowledgeBase
from agent.runner import Runner
from tests.support.agent_support import agent

QUESTION = "How long are Postgres backups kept?"


@contextmanager
def writing(database: Path) -> Iterator[None]:
    """Another connection in a write transaction on ``database`` until the block ends."""
    holder = sqlite3.connect(database, isolation_level=None)
    try:
        holder.execute("BEGIN IMMEDIATE")
        yield
        holder.execute("ROLLBACK")
    finally:
        holder.close()


async def answer_of(runner: Runner, turn: Turn) -> tuple[Final, asyncio.Task[None]]:
    """The turn's Final as soon as it is out, and the task that reads the turn to its end."""
    events = runner.run(turn)
    final: asyncio.Future[Final] = asyncio.get_running_loop().create_future()

    async def read() -> None:
        async for event in events:
            if isinstance(event, Final):
                final.set_result(event)

    task = asyncio.create_task(read())
    return await asyncio.wait_for(asyncio.shield(final), timeout=30), task


async def test_the_answer_is_out_while_the_thread_is_still_being_saved(
    sample_kb: KnowledgeBase, tmp_path: Path
) -> None:
    async with agent(sample_kb, tmp_path) as runner:
        with writing(tmp_path / "memory.sqlite"):
            final, reading = await answer_of(runner, Turn(QUESTION, thread_root="t"))
            assert "35 days" in final.answer and final.sources
            # The checkpoint write waits for the other writer, and the thread with it:
            # a follow-up in the same thread must not start on a half-saved thread.
            follow_up = asyncio.create_task(runner.ask(Turn("And where?", thread_root="t")))
            await asyncio.sleep(0)  # let the follow-up ask for the thread
            assert not reading.done() and not follow_up.done()
        await asyncio.wait_for(reading, timeout=30)
        second = await asyncio.wait_for(follow_up, timeout=30)
        await runner.wait_idle()
    # The follow-up ran on the saved thread: it read the first exchange as its history
    # (without one, "And where?" is not rewritten with the thread).
    assert "context_enhancement" in second.timings


async def test_an_answer_whose_thread_cannot_be_saved_still_stands(
    sample_kb: KnowledgeBase,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    monkeypatch.setattr(backends, "SQLITE_BUSY_TIMEOUT_S", 0.2)
    async with agent(sample_kb, tmp_path) as runner:
        with writing(tmp_path / "memory.sqlite"), caplog.at_level(logging.ERROR):
            final, reading = await answer_of(runner, Turn(QUESTION, thread_root="t"))
            await asyncio.wait_for(reading, timeout=30)
        assert "35 days" in final.answer and final.route == "knowledge"
        assert not final.degraded
        assert "turn answered, but not saved, on thread" in caplog.text
        assert "database is locked" in caplog.text
        # Nothing of that turn is in the thread: the next one starts it afresh.
        saver = runner.graph.checkpointer
        assert saver is not None and not isinstance(saver, bool)
        config = {"configurable": {"thread_id": Turn("", thread_root="t").thread_id}}
        assert await saver.aget_tuple(config) is None  # type: ignore[arg-type]
