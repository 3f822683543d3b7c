"""The threads the bot takes part in, so a reply there is answered without a mention.

Slack does not say whether the bot is in a thread: a reply's ``parent_user_id`` is
whoever started the thread (the person who mentioned the bot, not the bot), and
``conversations.replies`` is limited to one call a minute for new apps. So the bot
keeps its own record: every thread it answers in is written down here, and kept
for ``keep_s`` after the last answer (90 days). One SQLite file serves every worker
on one machine; :class:`~adapters.slack.threads_redis.RedisThreadRecord` serves workers
on several machines.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Protocol

from agent.plumbing.sqlite_tx import immediate


class ThreadRecord(Protocol):
    async def add(self, key: str) -> None:
        """Remember that the bot answers in thread ``key`` (``team:channel:thread_root``)."""
        ...

    async def has(self, key: str) -> bool:
        """Whether the bot answered in thread ``key`` within the kept time."""
        ...


class SqliteThreadRecord:
    def __init__(
        self,
        path: Path,
        *,
        keep_s: float = 90 * 86400.0,
        clock: Callable[[], float] = time.time,
    ) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(
            path, isolation_level=None, check_same_thread=False, timeout=10.0
        )
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS threads (key TEXT PRIMARY KEY, last_answer REAL NOT NULL)"
        )
        self._lock = threading.Lock()
        self._keep_s = keep_s
        self._clock = clock
        self._writes = 0

    async def add(self, key: str) -> None:
        now = self._clock()
        with self._lock, immediate(self._db):
            self._db.execute("INSERT OR REPLACE INTO threads VALUES (?, ?)", (key, now))
            self._writes += 1
            if self._writes % 1000 == 1:  # now and then, not on every answer
                self._db.execute("DELETE FROM threads WHERE last_answer < ?", (now - self._keep_s,))

    async def has(self, key: str) -> bool:
        with self._lock:
            row = self._db.execute(
                "SELECT last_answer FROM threads WHERE key = ?", (key,)
            ).fetchone()
        return row is not None and self._clock() - float(row[0]) < self._keep_s

    def close(self) -> None:
        with self._lock:
            self._db.close()
