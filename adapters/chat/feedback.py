"""Thumbs up and down on answers, kept with the question, the answer and its sources.

A button can carry only a short id (Discord's ``custom_id`` is at most 100
characters), so every answer posted with feedback buttons is remembered here
first (:meth:`FeedbackStore.remember`) and the click names it by id. One vote per
user and answer: a changed mind replaces the earlier vote.
"""

from __future__ import annotations

import json
import logging
import sqlite3
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Literal, Protocol

from agent.events import Citation, Final, Turn
from agent.plumbing.sqlite_tx import immediate

log = logging.getLogger(__name__)

Rating = Literal["up", "down"]


@dataclass(frozen=True)
class AnswerRecord:
    """An answer as the user saw it."""

    platform: str
    workspace: str
    channel: str
    thread_id: str
    user: str
    question: str
    answer: str
    route: str
    sources: list[dict[str, object]] = field(default_factory=list)
    answer_id: str = field(default_factory=lambda: uuid.uuid4().hex[:16])
    created_at: float = field(default_factory=time.time)

    @classmethod
    def of(cls, turn: Turn, final: Final) -> AnswerRecord:
        return cls(
            platform=turn.platform,
            workspace=turn.workspace,
            channel=turn.channel,
            thread_id=turn.thread_id,
            user=turn.user,
            question=turn.text,
            answer=final.answer,
            route=final.route,
            sources=[asdict(s) for s in final.sources],
        )


@dataclass(frozen=True)
class FeedbackEntry:
    """One vote with the answer it is about."""

    rating: Rating
    voter: str
    voted_at: float
    answer: AnswerRecord
    comment: str = ""  # what the voter wrote with the vote (the web chat asks for it)

    def source_list(self) -> list[Citation]:
        return [Citation(**s) for s in self.answer.sources]  # type: ignore[arg-type]


class FeedbackStore(Protocol):
    async def remember(self, record: AnswerRecord) -> str:
        """Keep an answer so a later vote can name it; returns its id."""
        ...

    async def rate(self, answer_id: str, user: str, rating: Rating, comment: str = "") -> bool:
        """Record a vote (and its comment); False when the answer is unknown (expired or
        never stored)."""
        ...

    def entries(self, rating: Rating | None = "down", limit: int = 50) -> list[FeedbackEntry]:
        """The latest votes, newest first (only ``rating`` ones unless it is None)."""
        ...


async def remember_for_buttons(store: FeedbackStore, turn: Turn, final: Final) -> str | None:
    """The id the feedback buttons of ``final`` carry, or None for no buttons: a blocked
    reply gets none, and a store that fails costs the buttons, not the answer."""
    if final.blocked:
        return None
    try:
        return await store.remember(AnswerRecord.of(turn, final))
    except Exception:
        log.exception("could not keep the answer for feedback; it goes out without buttons")
        return None


_SCHEMA = """
CREATE TABLE IF NOT EXISTS answers (
    answer_id TEXT PRIMARY KEY,
    record TEXT NOT NULL,
    created_at REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS answers_by_age ON answers (created_at);
CREATE TABLE IF NOT EXISTS votes (
    answer_id TEXT NOT NULL REFERENCES answers (answer_id) ON DELETE CASCADE,
    voter TEXT NOT NULL,
    rating TEXT NOT NULL CHECK (rating IN ('up', 'down')),
    voted_at REAL NOT NULL,
    comment TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (answer_id, voter)
);
CREATE INDEX IF NOT EXISTS votes_by_time ON votes (voted_at);
"""


class SqliteFeedbackStore:
    """Answers and votes in one SQLite file; answers nobody voted on expire after
    ``keep_s`` (90 days), voted ones stay."""

    def __init__(self, path: Path, *, keep_s: float = 90 * 86400.0) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(
            path, isolation_level=None, check_same_thread=False, timeout=10.0
        )
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA foreign_keys=ON")
        self._db.executescript(_SCHEMA)
        columns = {row[1] for row in self._db.execute("PRAGMA table_info(votes)")}
        if "comment" not in columns:  # a file written before votes had comments
            self._db.execute("ALTER TABLE votes ADD COLUMN comment TEXT NOT NULL DEFAULT ''")
        self._lock = threading.Lock()
        self._keep_s = keep_s

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        with self._lock, immediate(self._db):
            yield self._db

    async def remember(self, record: AnswerRecord) -> str:
        with self._write() as db:
            db.execute(
                "INSERT OR REPLACE INTO answers VALUES (?, ?, ?)",
                (
                    record.answer_id,
                    json.dumps(asdict(record), ensure_ascii=False),
                    record.created_at,
                ),
            )
            db.execute(
                "DELETE FROM answers WHERE created_at < ? AND answer_id NOT IN "
                "(SELECT answer_id FROM votes)",
                (record.created_at - self._keep_s,),
            )
        return record.answer_id

    async def rate(self, answer_id: str, user: str, rating: Rating, comment: str = "") -> bool:
        with self._write() as db:
            if db.execute("SELECT 1 FROM answers WHERE answer_id = ?", (answer_id,)).fetchone():
                db.execute(
                    "INSERT OR REPLACE INTO votes (answer_id, voter, rating, voted_at, comment) "
                    "VALUES (?, ?, ?, ?, ?)",
                    (answer_id, user, rating, time.time(), comment),
                )
                return True
        return False

    def entries(self, rating: Rating | None = "down", limit: int = 50) -> list[FeedbackEntry]:
        query = (
            "SELECT v.rating, v.voter, v.voted_at, a.record, v.comment FROM votes v "
            "JOIN answers a USING (answer_id)"
        )
        args: tuple[object, ...] = ()
        if rating is not None:
            query += " WHERE v.rating = ?"
            args = (rating,)
        query += " ORDER BY v.voted_at DESC LIMIT ?"
        with self._lock:
            rows = self._db.execute(query, (*args, limit)).fetchall()
        return [
            FeedbackEntry(r[0], r[1], r[2], AnswerRecord(**json.loads(r[3])), r[4]) for r in rows
        ]

    def close(self) -> None:
        with self._lock:
            self._db.close()
