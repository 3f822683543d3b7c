"""Password checks on a small thread pool of their own.

One argon2 check (argon2-cffi's defaults: 64 MiB, 3 passes) holds a core for about a
tenth of a second. Run on the database's threads, 24 clients posting wrong passwords
kept all of them busy and an authenticated ``GET /api/conversations`` waited 8-9 s
behind the hashes. Here at most ``threads`` checks run at once, and at most
``waiting`` more wait for a thread; past that a sign-in is refused at once
(:class:`PasswordChecksBusy`) instead of queueing without end.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

WAITING_PER_THREAD = 8


class PasswordChecksBusy(Exception):
    """Every password thread is busy and the queue is full; retry in a moment."""


class PasswordChecks:
    def __init__(self, threads: int = 1, *, waiting: int | None = None) -> None:
        if threads < 1:
            raise ValueError(f"password check threads: {threads}; use 1 or more")
        self.threads = threads
        self._pool = ThreadPoolExecutor(threads, thread_name_prefix="teamrag-password")
        self._room = threads + (WAITING_PER_THREAD * threads if waiting is None else waiting)
        self._under_way = 0

    async def run(
        self, check: Callable[[str | None, str], bool], stored: str | None, given: str
    ) -> bool:
        """``check(stored, given)`` in a password thread."""
        if self._under_way >= self._room:
            raise PasswordChecksBusy(
                f"{self._under_way} password checks are under way or waiting already"
            )
        self._under_way += 1  # the event loop's thread only: no lock needed
        try:
            loop = asyncio.get_running_loop()
            return await loop.run_in_executor(self._pool, check, stored, given)
        finally:
            self._under_way -= 1

    def close(self) -> None:
        self._pool.shutdown(wait=True)
