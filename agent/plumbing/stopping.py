"""Stopping work that may sit in a Redis call: cancel, then cancel again until it ends.

A single ``task.cancel()`` is not a reliable stop around redis-py: a library call
that catches the ``CancelledError`` (a retry wrapper, a socket-timeout context
racing the cancellation, a ``suppress(Exception)`` on Python's TimeoutError path)
lets the task run on as if nothing happened. Every stop here therefore re-checks:
it repeats the cancellation every ``again_every_s`` until the work has really
ended, and a deadline whose body swallowed the cancellation still ends in
``TimeoutError`` instead of passing as success.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Collection

log = logging.getLogger(__name__)

AGAIN_EVERY_S = 1.0


@contextlib.asynccontextmanager
async def deadline(seconds: float, *, again_every_s: float = AGAIN_EVERY_S) -> AsyncIterator[None]:
    """Like ``asyncio.timeout(seconds)``, but a cancellation the body swallows is sent
    again, and the block raises ``TimeoutError`` however the body ended once expired."""
    task = asyncio.current_task()
    assert task is not None, "deadline() runs inside a task"
    expired = asyncio.Event()
    sent = 0

    async def watch() -> None:
        nonlocal sent
        await asyncio.sleep(seconds)
        expired.set()
        while True:
            if task.cancel():
                sent += 1
            await asyncio.sleep(again_every_s)

    watcher = asyncio.create_task(watch())

    def withdraw() -> bool:
        """Take back our cancellations; True if nobody else asked for one."""
        watcher.cancel()  # its own task, in asyncio.sleep only: this cancel lands
        for _ in range(sent):
            task.uncancel()
        return task.cancelling() == 0

    try:
        yield
    except asyncio.CancelledError:
        if expired.is_set() and withdraw():
            raise TimeoutError(f"stopped after {seconds:g} s") from None
        raise
    finally:
        watcher.cancel()
    if expired.is_set():  # the body swallowed the cancellation and ended anyway
        withdraw()
        raise TimeoutError(f"stopped after {seconds:g} s")


async def cancel_until_done(
    tasks: Collection[asyncio.Task[None]],
    *,
    again_every_s: float = AGAIN_EVERY_S,
    give_up_s: float = 30.0,
) -> set[asyncio.Task[None]]:
    """Cancel ``tasks`` and wait for them, cancelling the ones still running again every
    ``again_every_s``; after ``give_up_s`` return those that never stopped (logged)."""
    pending = {t for t in tasks if not t.done()}
    loop = asyncio.get_running_loop()
    give_up = loop.time() + give_up_s
    while pending:
        for task in pending:
            task.cancel()
        left = give_up - loop.time()
        if left <= 0:
            log.error("%d task(s) did not stop when cancelled; leaving them", len(pending))
            break
        _, pending = await asyncio.wait(pending, timeout=min(again_every_s, left))
    return pending
