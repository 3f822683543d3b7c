"""Usage records: requests and tokens per user, day and model, and each user's last questions.

What a team reads afterwards to see who uses the bot, how much, and at what cost.
Written once per finished turn by an observer (:mod:`adapters.chat.observe`).

The counting rules, so that every column of ``teamrag usage`` sums right:

- Days are dates (``YYYY-MM-DD``) in the team's time zone (``TEAMRAG_TIMEZONE``, the
  store's ``zone``; UTC by default here), the same for every worker whatever its host's
  zone: a Seoul team's Monday starts at 00:00 KST, not at 09:00.
- The user key is ``platform:workspace:user`` (:func:`user_key`): a Slack user and a
  Discord user with the same id are different people.
- Tokens are counted per model, exactly as the Final's ``usage_by_model`` reports them.
- Each turn is one request, counted once, under one model: the one that wrote the most
  (the answer, in practice; routing and checks write short JSON). The other models the
  turn used get their tokens with zero requests. Summing ``requests`` therefore counts
  turns, and summing tokens counts every token.
- A turn with no LLM tokens is one request under a label in parentheses, which no model
  name has: ``(cache)`` for an answer from the cache, ``(blocked)`` for input the guard
  refused, ``(extractive)`` when no LLM is configured, ``(no llm)`` otherwise (an LLM is
  configured but this turn did not use it, or it failed before reporting tokens).
  Tokens without a model name (an LLM that did not say) go under ``(unknown)``.
- The last ``questions_per_user`` (100) questions are kept per user, blocked ones too,
  each cut to ``QUESTION_CHARS`` characters.
- Records older than ``keep_days`` (400: a year and a bit, to compare with last year's
  month) are dropped.

:class:`SqliteUsageStore` keeps them in one SQLite file (one process, or the fallback of
the shared :class:`adapters.chat.usage_redis.RedisUsageStore` while Redis is down).
"""

from __future__ import annotations

import asyncio
import datetime as dt
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from adapters.chat.topics import source_title, topic_of
from agent.events import Final, Turn, Usage
from agent.plumbing.sqlite_tx import immediate

QUESTION_CHARS = 1000
KEEP_DAYS = 400
QUESTIONS_PER_USER = 100
UNCOVERED = 500  # the not-covered questions kept for everyone, newest first


@dataclass(frozen=True)
class UsageRow:
    """Requests and tokens of one user on one day (the store's zone) with one model."""

    day: str
    user: str
    model: str
    requests: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


@dataclass(frozen=True)
class AskedQuestion:
    """One question as a user asked it, and how it was answered."""

    user: str
    text: str
    asked_at: float  # seconds since the epoch
    thread_id: str
    route: str
    cached: bool
    # Whether the documents answered (None: not a question for them); and the document
    # the passages shown came from most, which names the question's topic ("" for none).
    covered: bool | None = None
    topic: str = ""


@dataclass
class Pending:
    """Records taken out of a store to be written elsewhere (or put back)."""

    rows: list[UsageRow] = field(default_factory=list)
    questions: list[AskedQuestion] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.rows or self.questions)


class UsageStore(Protocol):
    async def record(self, turn: Turn, final: Final) -> None:
        """Count one finished turn and keep its question."""
        ...

    async def report(self, days: int, user: str | None = None) -> list[UsageRow]:
        """Rows of the last ``days`` days (today included), oldest day first."""
        ...

    async def recent(self, user: str, limit: int = QUESTIONS_PER_USER) -> list[AskedQuestion]:
        """The user's last questions, newest first."""
        ...

    async def uncovered(self, limit: int = UNCOVERED) -> list[AskedQuestion]:
        """Everyone's last questions the documents did not answer, newest first."""
        ...


def user_key(turn: Turn) -> str:
    return f"{turn.platform}:{turn.workspace}:{turn.user}"


def day_of(at: float, zone: dt.tzinfo = dt.UTC) -> str:
    return dt.datetime.fromtimestamp(at, zone).date().isoformat()


def day_start(day: str, zone: dt.tzinfo = dt.UTC) -> float:
    """Seconds since the epoch at 00:00 of ``day`` in ``zone``."""
    return dt.datetime.fromisoformat(day).replace(tzinfo=zone).timestamp()


def last_days(days: int, now: float, zone: dt.tzinfo = dt.UTC) -> list[str]:
    """The last ``days`` dates in ``zone``, oldest first, today last."""
    if days < 1:
        raise ValueError(f"days must be at least 1, not {days}")
    today = dt.datetime.fromtimestamp(now, zone).date()
    return [(today - dt.timedelta(days=back)).isoformat() for back in range(days - 1, -1, -1)]


def _no_llm_label(final: Final) -> str:
    if final.cached:
        return "(cache)"
    if final.blocked:
        return "(blocked)"
    if final.mode == "extractive":
        return "(extractive)"
    return "(no llm)"


def usage_rows(turn: Turn, final: Final, at: float, zone: dt.tzinfo = dt.UTC) -> list[UsageRow]:
    """The rows one turn adds (see the module docstring for the rules)."""
    by_model: dict[str, Usage] = dict(final.usage_by_model)
    if not by_model and final.usage.total_tokens:
        by_model = {"(unknown)": final.usage}
    day, user = day_of(at, zone), user_key(turn)
    if not by_model:
        return [UsageRow(day, user, _no_llm_label(final), requests=1)]
    lead = max(
        by_model,
        key=lambda m: (by_model[m].completion_tokens, by_model[m].prompt_tokens, m),
    )
    return [
        UsageRow(
            day,
            user,
            model,
            requests=1 if model == lead else 0,
            prompt_tokens=used.prompt_tokens,
            completion_tokens=used.completion_tokens,
        )
        for model, used in sorted(by_model.items())
    ]


def asked(turn: Turn, final: Final, at: float) -> AskedQuestion:
    text = turn.text if len(turn.text) <= QUESTION_CHARS else turn.text[: QUESTION_CHARS - 1] + "…"
    topic = topic_of(source_title(s) for s in final.sources)
    return AskedQuestion(
        user_key(turn), text, at, turn.thread_id, final.route, final.cached, final.covered, topic
    )


def merge(rows: Sequence[UsageRow]) -> list[UsageRow]:
    """Sum rows of the same day, user and model; oldest day first, then user, then model."""
    sums: dict[tuple[str, str, str], list[int]] = {}
    for row in rows:
        total = sums.setdefault((row.day, row.user, row.model), [0, 0, 0])
        total[0] += row.requests
        total[1] += row.prompt_tokens
        total[2] += row.completion_tokens
    return [UsageRow(*key, *values) for key, values in sorted(sums.items())]


_SCHEMA = """
CREATE TABLE IF NOT EXISTS usage (
    day TEXT NOT NULL,
    user TEXT NOT NULL,
    model TEXT NOT NULL,
    requests INTEGER NOT NULL,
    prompt_tokens INTEGER NOT NULL,
    completion_tokens INTEGER NOT NULL,
    PRIMARY KEY (day, user, model)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS questions (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    user TEXT NOT NULL,
    text TEXT NOT NULL,
    asked_at REAL NOT NULL,
    thread_id TEXT NOT NULL,
    route TEXT NOT NULL,
    cached INTEGER NOT NULL,
    covered INTEGER,
    topic TEXT NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS questions_by_user ON questions (user, asked_at);
"""
# Files written before questions knew whether they were answered: the columns are added,
# and their old questions read as "not asked of the documents" (NULL).
_MIGRATIONS = {
    "covered": "ALTER TABLE questions ADD COLUMN covered INTEGER",
    "topic": "ALTER TABLE questions ADD COLUMN topic TEXT NOT NULL DEFAULT ''",
}
_QUESTION = "user, text, asked_at, thread_id, route, cached, covered, topic"


def _question(row: tuple[Any, ...]) -> AskedQuestion:
    user, text, at, thread_id, route, cached, covered, topic = row
    answered = None if covered is None else bool(covered)
    return AskedQuestion(user, text, at, thread_id, route, bool(cached), answered, topic)


class SqliteUsageStore:
    """Usage records in one SQLite file (WAL, so the CLI reads while the bots write).

    Writes run in a worker thread: a busy file (another process writing) must not
    stall the event loop that is streaming other users' answers.
    """

    def __init__(
        self,
        path: Path,
        *,
        keep_days: int = KEEP_DAYS,
        questions_per_user: int = QUESTIONS_PER_USER,
        clock: Callable[[], float] = time.time,
        zone: dt.tzinfo = dt.UTC,
    ) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.zone = zone  # whose days the rows count (the Redis store counts the same)
        self.path = path
        self._db = sqlite3.connect(
            path, isolation_level=None, check_same_thread=False, timeout=10.0
        )
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.executescript(_SCHEMA)
        columns = {row[1] for row in self._db.execute("PRAGMA table_info(questions)")}
        for column, statement in _MIGRATIONS.items():
            if column not in columns:
                self._db.execute(statement)
        self._db.execute(
            "CREATE INDEX IF NOT EXISTS questions_uncovered ON questions (covered, asked_at)"
        )
        self._lock = threading.Lock()
        self._keep_days = keep_days
        self._cap = questions_per_user
        self._clock = clock
        self._pruned_at = -float("inf")

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        with self._lock, immediate(self._db):
            yield self._db

    async def record(self, turn: Turn, final: Final) -> None:
        now = self._clock()
        rows = usage_rows(turn, final, now, self.zone)
        await asyncio.to_thread(self.add, rows, [asked(turn, final, now)])

    def add(self, rows: Sequence[UsageRow], questions: Sequence[AskedQuestion]) -> None:
        """Add counts and questions (also how a fallback's records are put back)."""
        with self._write() as db:
            db.executemany(
                "INSERT INTO usage VALUES (?, ?, ?, ?, ?, ?) "
                "ON CONFLICT (day, user, model) DO UPDATE SET "
                "requests = requests + excluded.requests, "
                "prompt_tokens = prompt_tokens + excluded.prompt_tokens, "
                "completion_tokens = completion_tokens + excluded.completion_tokens",
                [
                    (r.day, r.user, r.model, r.requests, r.prompt_tokens, r.completion_tokens)
                    for r in rows
                ],
            )
            for q in questions:
                covered = None if q.covered is None else int(q.covered)
                db.execute(
                    f"INSERT INTO questions ({_QUESTION}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    (q.user, q.text, q.asked_at, q.thread_id, q.route, int(q.cached), covered,
                     q.topic),
                )  # fmt: skip
            for user in {q.user for q in questions}:
                db.execute(
                    "DELETE FROM questions WHERE user = ? AND id NOT IN (SELECT id FROM "
                    "questions WHERE user = ? ORDER BY asked_at DESC, id DESC LIMIT ?)",
                    (user, user, self._cap),
                )
            self._prune(db)

    def _prune(self, db: sqlite3.Connection) -> None:
        """Drop records older than ``keep_days``, at most once an hour."""
        now = self._clock()
        if now - self._pruned_at < 3600:
            return
        self._pruned_at = now
        cutoff = now - self._keep_days * 86400.0
        db.execute("DELETE FROM usage WHERE day < ?", (day_of(cutoff, self.zone),))
        db.execute("DELETE FROM questions WHERE asked_at < ?", (cutoff,))

    async def report(self, days: int, user: str | None = None) -> list[UsageRow]:
        first = last_days(days, self._clock(), self.zone)[0]
        query = "SELECT * FROM usage WHERE day >= ?"
        args: tuple[str, ...] = (first,)
        if user is not None:
            query += " AND user = ?"
            args += (user,)
        with self._lock:
            rows = self._db.execute(query + " ORDER BY day, user, model", args).fetchall()
        return [UsageRow(*row) for row in rows]

    async def recent(self, user: str, limit: int = QUESTIONS_PER_USER) -> list[AskedQuestion]:
        with self._lock:
            rows = self._db.execute(
                f"SELECT {_QUESTION} FROM questions "
                "WHERE user = ? ORDER BY asked_at DESC, id DESC LIMIT ?",
                (user, limit),
            ).fetchall()
        return [_question(row) for row in rows]

    async def uncovered(self, limit: int = UNCOVERED) -> list[AskedQuestion]:
        with self._lock:
            rows = self._db.execute(
                f"SELECT {_QUESTION} FROM questions "
                "WHERE covered = 0 ORDER BY asked_at DESC, id DESC LIMIT ?",
                (limit,),
            ).fetchall()
        return [_question(row) for row in rows]

    def take_pending(self) -> Pending:
        """Take every record out, in one transaction (so two workers sharing the file
        never both hand the same records over)."""
        with self._write() as db:
            rows = [UsageRow(*r) for r in db.execute("SELECT * FROM usage").fetchall()]
            questions = [_question(row) for row in db.execute(f"SELECT {_QUESTION} FROM questions")]
            db.execute("DELETE FROM usage")
            db.execute("DELETE FROM questions")
        return Pending(rows, questions)

    def close(self) -> None:
        with self._lock:
            self._db.close()
