"""A direct-message conversation that goes on across messages until the user starts over.

In a DM every top-level message gets its answer in its own thread, but people write
the next question as a new message, not as a thread reply: "and for staging?" right
after an answer about production. So a top-level DM message written within
``continue_s`` (``TEAMRAG_DM_CONTINUE_S``, 30 minutes) of the bot's last answer in that
DM, or while that answer is still being written, continues its conversation: the agent's
thread id stays the same (its history and memory), while the answer still goes in the
new message's thread. A reply in that thread continues the conversation too.

A message that starts with "new question", "start over", "새 질문" or "새 대화" starts a
new conversation, as does a message after the idle time. A thread reply in a thread of
the assistant pane is never joined to a DM conversation: the pane answers with another
channel's rule (scopes), and one must not see the other's history.

One SQLite file serves every worker on one machine (the answering worker writes it,
the taking worker reads it). Connections are opened per call: a DM conversation is
looked up once per DM message. Workers on several machines share the record in Redis
(:mod:`adapters.slack.dm_redis`), with this file as each machine's fallback.
"""

from __future__ import annotations

import re
import sqlite3
import time
from collections.abc import Callable, Iterator
from contextlib import closing, contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Protocol

from adapters.slack.turns import Incoming
from agent.plumbing.sqlite_tx import immediate

_START_OVER = re.compile(
    r"^\s*(?:new question|new conversation|start over|새\s*질문|새\s*대화)(?:\s*[:.!,\-–—]+)?\s*",
    re.IGNORECASE,
)
KEEP_S = 90 * 86400.0  # how long a thread of a DM conversation is remembered


def start_over(text: str) -> tuple[bool, str]:
    """(whether ``text`` starts a new conversation, the text without those words)."""
    found = _START_OVER.match(text)
    return (True, text[found.end() :]) if found else (False, text)


def is_dm(message: Incoming) -> bool:
    return message.channel_type == "im" or message.channel.startswith("D")


class Conversations(Protocol):
    """Which conversation a DM message belongs to."""

    async def place(self, message: Incoming) -> Incoming:
        """``message`` with the conversation it continues (None: its own thread's)."""
        ...

    async def active(self, message: Incoming) -> None:
        """The bot took or answered ``message`` (placed by :meth:`place`): the DM's next
        message within the continuation time of now continues its conversation."""
        ...

    async def forget(self, message: Incoming) -> None:
        """The user starts over: the DM's next message begins a new conversation."""
        ...


class SqliteDmConversations:
    """Which conversation a DM message belongs to (SQLite)."""

    def __init__(
        self, path: Path, *, continue_s: float, clock: Callable[[], float] = time.time
    ) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self._path = path
        self._continue_s = continue_s
        self._clock = clock
        with self._db() as db:
            db.execute("PRAGMA journal_mode=WAL")
            # The DM's current conversation and when the bot last answered in it.
            db.execute(
                "CREATE TABLE IF NOT EXISTS current (dm TEXT PRIMARY KEY, root TEXT NOT NULL, "
                "answered REAL NOT NULL)"
            )
            # The threads of a conversation (each continued message's): their replies join it.
            db.execute(
                "CREATE TABLE IF NOT EXISTS threads (thread TEXT PRIMARY KEY, root TEXT NOT NULL, "
                "answered REAL NOT NULL)"
            )

    @contextmanager
    def _db(self) -> Iterator[sqlite3.Connection]:
        with closing(sqlite3.connect(self._path, isolation_level=None, timeout=10.0)) as db:
            yield db

    async def place(self, message: Incoming) -> Incoming:
        """``message`` with the conversation it continues (None: its own thread's)."""
        if not is_dm(message):
            return message
        with self._db() as db:
            if message.thread_ts is not None:  # a reply: its thread's conversation, if any
                row = db.execute(
                    "SELECT root FROM threads WHERE thread = ?",
                    (dm_key(message, message.thread_ts),),
                ).fetchone()
                return replace(message, conversation=str(row[0])) if row else message
            row = db.execute(
                "SELECT root, answered FROM current WHERE dm = ?", (dm_key(message),)
            ).fetchone()
        if row is not None and self._clock() - float(row[1]) < self._continue_s:
            return replace(message, conversation=str(row[0]))
        return replace(message, conversation=message.thread_root)  # a new one starts here

    async def active(self, message: Incoming) -> None:
        """The bot took or answered ``message`` (placed by :meth:`place`)."""
        root = message.conversation
        if root is None:
            return
        now = self._clock()
        with self._db() as db, immediate(db):
            db.execute(
                "INSERT OR REPLACE INTO current VALUES (?, ?, ?)", (dm_key(message), root, now)
            )
            db.execute(
                "INSERT OR REPLACE INTO threads VALUES (?, ?, ?)",
                (dm_key(message, message.thread_root), root, now),
            )
            db.execute("DELETE FROM threads WHERE answered < ?", (now - KEEP_S,))

    async def forget(self, message: Incoming) -> None:
        """The user starts over: the DM's next message begins a new conversation."""
        with self._db() as db:
            db.execute("DELETE FROM current WHERE dm = ?", (dm_key(message),))


def dm_key(message: Incoming, thread: str = "") -> str:
    return f"{message.team}:{message.channel}:{thread}"
