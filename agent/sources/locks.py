"""One sync of a source at a time, across the processes of a machine or, with Redis,
across every worker (:mod:`agent.sources.locks_redis`; with the sources in Postgres,
across every host: :mod:`agent.sources.locks_postgres`).

``hold`` yields False when another process has the source: the caller skips it (the
holder records the result, which moves the next run for everyone).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import Protocol


class SyncLock(Protocol):
    def hold(self, name: str) -> AbstractAsyncContextManager[bool]: ...


class FileSyncLock:
    """An advisory file lock per source: processes sharing one data folder."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    @contextlib.asynccontextmanager
    async def hold(self, name: str) -> AsyncIterator[bool]:
        self.folder.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.folder / f"source-{name}.lock", os.O_RDWR | os.O_CREAT, 0o600)
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                yield False
                return
            try:
                yield True
            finally:
                fcntl.flock(fd, fcntl.LOCK_UN)
        finally:
            os.close(fd)
