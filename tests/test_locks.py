"""Per-thread locks: in-process order, across processes, and released by a dead process."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time
from pathlib import Path

import pytest

from agent.coordination.locks import FileThreadLocks, LocalThreadLocks


async def test_local_locks_serialise_one_thread_and_not_others() -> None:
    locks = LocalThreadLocks()
    order: list[str] = []

    async def turn(thread: str, name: str, hold: float) -> None:
        async with locks.hold(thread):
            order.append(f"{name}+")
            await asyncio.sleep(hold)
            order.append(f"{name}-")

    await asyncio.gather(turn("t", "a", 0.05), turn("t", "b", 0.0), turn("u", "c", 0.0))
    assert order.index("a-") < order.index("b+")  # b waited for a on the same thread
    assert order.index("c+") < order.index("a-")  # another thread did not wait
    assert not locks._locks  # nothing left behind


async def test_file_locks_are_shared_by_two_owners_of_the_folder(tmp_path: Path) -> None:
    one, two = FileThreadLocks(tmp_path), FileThreadLocks(tmp_path)  # like two processes
    events: list[str] = []

    async def hold(locks: FileThreadLocks, name: str) -> None:
        async with locks.hold("slack:T:C:1"):
            events.append(f"{name}+")
            await asyncio.sleep(0.1)
            events.append(f"{name}-")

    first = asyncio.create_task(hold(one, "one"))
    await asyncio.sleep(0.02)
    await asyncio.gather(first, hold(two, "two"))
    assert events == ["one+", "one-", "two+", "two-"]


async def test_a_killed_process_does_not_keep_the_thread_locked(tmp_path: Path) -> None:
    locks = FileThreadLocks(tmp_path)
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import asyncio, sys\n"
            "from pathlib import Path\n"
            "from agent.coordination.locks import FileThreadLocks\n"
            "async def main():\n"
            f"    async with FileThreadLocks(Path({str(tmp_path)!r})).hold('t'):\n"
            "        print('held', flush=True)\n"
            "        await asyncio.sleep(60)\n"
            "asyncio.run(main())\n",
        ],
        stdout=subprocess.PIPE,
        text=True,
        cwd=Path(__file__).resolve().parent.parent,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        with pytest.raises(TimeoutError):  # held by the other process: we wait
            async with asyncio.timeout(0.3), locks.hold("t"):
                pass
        holder.kill()
        holder.wait(10)
        start = time.monotonic()
        async with asyncio.timeout(5):
            async with locks.hold("t"):
                pass
        assert time.monotonic() - start < 5
    finally:
        holder.kill()
