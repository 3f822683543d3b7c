"""One run at a time per thread.

LangGraph does not lock a thread id: two overlapping runs on one thread both
read the same checkpoint and the later write loses the other's turn. The
runner therefore holds a lock per thread for the whole turn. In one process an
asyncio lock is enough; processes sharing the embedded SQLite memory (two
``teamrag ask --thread`` at once) also take a file lock. Workers on several
machines need a Redis lock (the deployment issue).
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import hashlib
import os
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Protocol


class ThreadLocks(Protocol):
    def hold(self, thread_id: str) -> contextlib.AbstractAsyncContextManager[None]: ...


class LockLostError(RuntimeError):
    """The thread's lease lapsed and another worker took the thread: a lock that can expire
    (Redis's) raises it from ``hold`` so the turn ends instead of overwriting that turn."""


class LocalThreadLocks:
    """asyncio locks per thread id (first come, first served), dropped when unused."""

    def __init__(self) -> None:
        self._locks: dict[str, tuple[asyncio.Lock, int]] = {}

    @contextlib.asynccontextmanager
    async def hold(self, thread_id: str) -> AsyncIterator[None]:
        lock, users = self._locks.get(thread_id, (asyncio.Lock(), 0))
        self._locks[thread_id] = (lock, users + 1)
        try:
            async with lock:
                yield
        finally:
            lock, users = self._locks[thread_id]
            if users <= 1:
                del self._locks[thread_id]
            else:
                self._locks[thread_id] = (lock, users - 1)


class FileThreadLocks:
    """The in-process lock, then an exclusive ``flock`` on a file per thread.

    The kernel releases a flock when its process dies, so a crashed process
    never holds a thread forever.
    """

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._local = LocalThreadLocks()

    def _path(self, thread_id: str) -> Path:
        digest = hashlib.sha1(thread_id.encode("utf-8")).hexdigest()[:20]
        return self.folder / f"{digest}.lock"

    @contextlib.asynccontextmanager
    async def hold(self, thread_id: str) -> AsyncIterator[None]:
        async with self._local.hold(thread_id):
            self.folder.mkdir(parents=True, exist_ok=True)
            fd = os.open(self._path(thread_id), os.O_RDWR | os.O_CREAT, 0o600)
            try:
                await _acquire(fd)
                try:
                    yield
                finally:
                    fcntl.flock(fd, fcntl.LOCK_UN)
            finally:
                os.close(fd)


async def _acquire(fd: int) -> None:
    """Poll a non-blocking flock: unlike a blocking one in a thread, waiting can be cancelled
    (a turn that times out must not leave a thread behind, blocked on the lock)."""
    delay = 0.01
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            await asyncio.sleep(delay)
            delay = min(delay * 2, 0.2)
