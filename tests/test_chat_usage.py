"""Usage records: the counting rules; then the store, run once over each backend (a SQLite
file, and a real Redis with a SQLite fallback per worker): counts per day, user and model,
the last questions per user, several workers adding up. Then what only the SQLite file
does (age limit, the fallback's hand-over); what only Redis does is in
test_chat_usage_redis.py."""

from __future__ import annotations

import asyncio
import datetime as dt
import sqlite3
import uuid
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from adapters.chat.usage import (
    QUESTION_CHARS,
    SqliteUsageStore,
    UsageRow,
    UsageStore,
    last_days,
    merge,
    usage_rows,
    user_key,
)
from adapters.chat.usage_redis import RedisUsageStore
from agent.coordination.redis_connection import RedisConnection
from agent.events import Citation, Final, Turn, Usage

# 2026-11-03 23:59:30 UTC: 08:59 the next morning in Seoul, still the 3rd in UTC.
LATE = dt.datetime(2026, 11, 3, 23, 59, 30, tzinfo=dt.UTC).timestamp()
TURN = Turn(
    "백업은 며칠 보관되나요?", platform="slack", workspace="T1", user="U1", thread_root="1.1"
)
OTHER = Turn("How do I rotate keys?", platform="discord", workspace="G1", user="U1")
RAG = Final(
    "Backups are kept 35 days [1].",
    route="knowledge",
    mode="llm",
    usage=Usage(1300, 240),
    usage_by_model={"gpt-4o-mini": Usage(1000, 40), "gpt-4o": Usage(300, 200)},
)


NOON = dt.datetime(2026, 11, 3, 12, 0, tzinfo=dt.UTC).timestamp()


class Clock:
    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def turn(user: str, text: str = "백업은 며칠 보관되나요?") -> Turn:
    return Turn(text, platform="slack", workspace="T1", user=user, thread_root=user)


def final(prompt: int, completion: int) -> Final:
    """A turn's Final; the chat model writes the answer when ``completion`` > 5."""
    return Final(
        "Backups are kept 35 days [1].",
        mode="llm",
        usage=Usage(prompt + 50, completion + 5),
        usage_by_model={"chat": Usage(prompt, completion), "fast": Usage(50, 5)},
    )


OpenUsage = Callable[..., UsageStore]
"""Opens the usage store of one backend on a clock; each call is another worker on the
same store (the same SQLite file, or the same Redis through its own connection and its
own fallback file)."""


@pytest.fixture(params=["sqlite", "redis"])
async def open_usage(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[OpenUsage]:
    files: list[SqliteUsageStore] = []
    connections: list[RedisConnection] = []
    if request.param == "redis":
        url: str = request.getfixturevalue("redis_url")
        prefix = f"t{uuid.uuid4().hex[:6]}:"

        def open_store(clock: Callable[[], float], zone: dt.tzinfo = dt.UTC) -> UsageStore:
            connections.append(RedisConnection(url, prefix=prefix, retry_s=0.2, timeout_s=0.5))
            folder = tmp_path / f"worker-{len(files)}"
            files.append(SqliteUsageStore(folder / "usage.sqlite", clock=clock, zone=zone))
            return RedisUsageStore(connections[-1], files[-1], clock=clock)
    else:

        def open_store(clock: Callable[[], float], zone: dt.tzinfo = dt.UTC) -> UsageStore:
            path = tmp_path / "data" / "usage.sqlite"
            files.append(SqliteUsageStore(path, clock=clock, zone=zone))
            return files[-1]

    yield open_store
    for file in files:
        file.close()
    for redis in connections:
        await redis.aclose()


def test_a_turn_is_one_request_under_the_model_that_wrote_most() -> None:
    rows = usage_rows(TURN, RAG, LATE)
    assert rows == [
        UsageRow("2026-11-03", "slack:T1:U1", "gpt-4o", 1, 300, 200),
        UsageRow("2026-11-03", "slack:T1:U1", "gpt-4o-mini", 0, 1000, 40),
    ]
    assert sum(r.requests for r in rows) == 1
    assert sum(r.total_tokens for r in rows) == RAG.usage.total_tokens


@pytest.mark.parametrize(
    ("final", "label"),
    [
        (Final("cached", route="cached", cached=True, mode="llm"), "(cache)"),
        (Final("no", route="blocked", blocked=True, mode="llm"), "(blocked)"),
        (Final("quote [1]", route="knowledge", mode="extractive"), "(extractive)"),
        (Final("stand-in", route="knowledge", mode="llm", degraded=True), "(no llm)"),
        (Final("hi", route="smalltalk", mode="llm", usage=Usage(5, 5)), "(unknown)"),
    ],
)
def test_turns_without_model_tokens_are_labelled(final: Final, label: str) -> None:
    [row] = usage_rows(TURN, final, LATE)
    assert (row.model, row.requests, row.total_tokens) == (label, 1, final.usage.total_tokens)


def test_user_keys_and_days() -> None:
    assert user_key(TURN) == "slack:T1:U1" and user_key(OTHER) == "discord:G1:U1"
    assert last_days(3, LATE) == ["2026-11-01", "2026-11-02", "2026-11-03"]
    with pytest.raises(ValueError, match="at least 1"):
        last_days(0, LATE)


# -- every backend --------------------------------------------------------------------
async def test_counts_per_day_user_and_model(open_usage: OpenUsage) -> None:
    clock = Clock(LATE)
    store = open_usage(clock)
    await store.record(TURN, RAG)
    await store.record(TURN, RAG)
    await store.record(OTHER, Final("quote", route="knowledge"))
    clock.now += 60  # past midnight UTC: the next day
    await store.record(TURN, Final("cached", route="cached", cached=True))

    rows = await store.report(7)
    assert rows == [
        UsageRow("2026-11-03", "discord:G1:U1", "(extractive)", 1, 0, 0),
        UsageRow("2026-11-03", "slack:T1:U1", "gpt-4o", 2, 600, 400),
        UsageRow("2026-11-03", "slack:T1:U1", "gpt-4o-mini", 0, 2000, 80),
        UsageRow("2026-11-04", "slack:T1:U1", "(cache)", 1, 0, 0),
    ]
    assert await store.report(1) == [rows[-1]]
    assert [r.user for r in await store.report(7, "discord:G1:U1")] == ["discord:G1:U1"]

    [latest, *_] = await store.recent("slack:T1:U1")
    assert (latest.text, latest.route, latest.cached) == (TURN.text, "cached", True)
    assert latest.thread_id == "slack:T1:terminal:1.1"

    # Another worker, or the same one after a restart: a file, or Redis, outlives it.
    assert await open_usage(clock).report(7) == rows


async def test_days_are_the_team_s_days_in_its_time_zone(open_usage: OpenUsage) -> None:
    """23:59 and 00:00 in Seoul are two days, though both are 2026-11-03 in UTC."""
    seoul = ZoneInfo("Asia/Seoul")
    clock = Clock(dt.datetime(2026, 11, 3, 23, 59, 30, tzinfo=seoul).timestamp())
    store = open_usage(clock, seoul)
    await store.record(TURN, Final("quote", route="knowledge"))
    clock.now += 60
    await store.record(TURN, Final("quote", route="knowledge"))
    rows = await store.report(7)
    assert [(r.day, r.requests) for r in rows] == [("2026-11-03", 1), ("2026-11-04", 1)]
    assert [r.day for r in await store.report(1)] == ["2026-11-04"]
    assert last_days(2, clock.now, seoul) == ["2026-11-03", "2026-11-04"]
    assert last_days(1, clock.now) == ["2026-11-03"]  # in UTC it is still the 3rd


async def test_the_last_100_questions_per_user_newest_first(open_usage: OpenUsage) -> None:
    clock = Clock(NOON)
    store = open_usage(clock)
    for n in range(105):
        clock.now += 1
        await store.record(turn("U1", f"question {n}"), final(1, 1))
    await store.record(Turn("x" * 5000, user="U2"), Final("too long", blocked=True))
    asked = await store.recent("slack:T1:U1", limit=1000)
    assert [q.text for q in asked] == [f"question {n}" for n in range(104, 4, -1)]
    assert asked[0].thread_id == "slack:T1:terminal:U1" and asked[0].route == "knowledge"
    assert [q.text for q in await store.recent("slack:T1:U1", limit=2)] == [
        "question 104",
        "question 103",
    ]
    assert await store.recent("slack:T1:nobody") == []
    [long] = await store.recent("cli:local:U2")
    assert len(long.text) == QUESTION_CHARS and long.text.endswith("…")
    rows = await store.report(1, "slack:T1:U1")
    assert sum(r.requests for r in rows) == 105  # counts are not capped, only the list


def passage(title: str) -> Citation:
    return Citation(1, title, f"/kb/{title}.md", "", None)


async def test_the_questions_the_documents_did_not_cover_are_kept_with_their_topic(
    open_usage: OpenUsage,
) -> None:
    """Only a not-covered answer is listed for everyone; its topic is the document most of
    its closest passages came from (a tie: the closest)."""
    clock = Clock(NOON)
    store = open_usage(clock)
    closest = [passage("Travel policy"), passage("Expenses"), passage("Expenses")]
    cases = [
        (turn("U1", "출장비 정산은 어떻게 하나요?"), Final("…", sources=closest, covered=False)),
        (turn("U2", "How long are backups kept?"), Final("35 days", covered=True)),
        (turn("U2", "hello"), Final("Hi!", route="smalltalk", covered=None)),
        (turn("U3", "What is the dress code?"), Final("…", covered=False)),
    ]
    for t, f in cases:
        clock.now += 1
        await store.record(t, f)
    uncovered = await store.uncovered()
    assert [(q.text, q.user, q.covered, q.topic) for q in uncovered] == [
        ("What is the dress code?", "slack:T1:U3", False, ""),
        ("출장비 정산은 어떻게 하나요?", "slack:T1:U1", False, "Expenses"),
    ]
    assert [q.text for q in await store.uncovered(limit=1)] == ["What is the dress code?"]
    assert [q.covered for q in await store.recent("slack:T1:U2")] == [None, True]


async def test_two_workers_add_up(open_usage: OpenUsage) -> None:
    a, b = open_usage(lambda: NOON), open_usage(lambda: NOON)
    finals = [final(100 + n, 10 + n) for n in range(40)]
    await asyncio.gather(
        *((a if n % 2 else b).record(turn(f"U{n % 3}"), f) for n, f in enumerate(finals))
    )
    rows = await a.report(1)
    assert rows == await b.report(1)
    expected = merge(
        [
            UsageRow("2026-11-03", f"slack:T1:U{n % 3}", model, int(model == "chat"), *tokens)
            for n, f in enumerate(finals)
            for model, u in f.usage_by_model.items()
            for tokens in [(u.prompt_tokens, u.completion_tokens)]
        ]
    )
    assert rows == expected
    assert sum(r.requests for r in rows) == 40
    assert sum(r.total_tokens for r in rows) == sum(f.usage.total_tokens for f in finals)


# -- the SQLite file only ---------------------------------------------------------------
async def test_sqlite_drops_records_older_than_keep_days(tmp_path: Path) -> None:
    """The file prunes by the store's clock; Redis lets each day's key expire at the real
    time its ``keep_days`` end (test_chat_usage_redis.py's test_keys_expire_after_400_days),
    which a test clock cannot move."""
    clock = Clock(LATE)
    store = SqliteUsageStore(tmp_path / "usage.sqlite", keep_days=30, clock=clock)
    await store.record(TURN, RAG)
    clock.now += 31 * 86400
    await store.record(OTHER, RAG)
    assert {r.user for r in await store.report(400)} == {"discord:G1:U1"}
    assert await store.recent("slack:T1:U1") == []
    store.close()


async def test_take_pending_empties_the_file_and_add_puts_it_back(tmp_path: Path) -> None:
    """How the file serves as Redis's fallback (the hand-over is in test_chat_usage_redis.py)."""
    store = SqliteUsageStore(tmp_path / "usage.sqlite", clock=Clock(LATE))
    await store.record(TURN, RAG)
    before = await store.report(1), await store.recent("slack:T1:U1")
    pending = store.take_pending()
    assert pending and await store.report(1) == [] and not store.take_pending()
    store.add(pending.rows, pending.questions)
    assert (await store.report(1), await store.recent("slack:T1:U1")) == before
    store.close()


async def test_a_file_from_before_coverage_is_migrated_in_place(tmp_path: Path) -> None:
    """A usage file written before questions knew whether they were answered opens: its
    questions read as "not asked of the documents", and new ones are recorded in full."""
    path = tmp_path / "usage.sqlite"
    with sqlite3.connect(path) as old:
        old.executescript(
            "CREATE TABLE questions (id INTEGER PRIMARY KEY AUTOINCREMENT, user TEXT NOT NULL, "
            "text TEXT NOT NULL, asked_at REAL NOT NULL, thread_id TEXT NOT NULL, "
            "route TEXT NOT NULL, cached INTEGER NOT NULL);"
            "INSERT INTO questions (user, text, asked_at, thread_id, route, cached) "
            f"VALUES ('slack:T1:U1', 'old question', {NOON}, 'slack:T1:C:1', 'knowledge', 0);"
        )
    old.close()
    store = SqliteUsageStore(path, clock=Clock(NOON + 5))
    await store.record(TURN, Final("…", sources=[passage("Backups")], covered=False))
    asked = await store.recent("slack:T1:U1")
    assert [(q.text, q.covered, q.topic) for q in asked] == [
        (TURN.text, False, "Backups"),
        ("old question", None, ""),
    ]
    assert [q.text for q in await store.uncovered()] == [TURN.text]
    store.close()
