"""Usage records: the counting rules, and the SQLite store (one process, and the fallback of
the shared store)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from adapters.chat.usage import (
    QUESTION_CHARS,
    SqliteUsageStore,
    UsageRow,
    last_days,
    usage_rows,
    user_key,
)
from agent.events import Final, Turn, Usage

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


class Clock:
    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


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


async def test_sqlite_counts_per_day_user_and_model(tmp_path: Path) -> None:
    clock = Clock(LATE)
    store = SqliteUsageStore(tmp_path / "data" / "usage.sqlite", clock=clock)
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
    store.close()

    reopened = SqliteUsageStore(tmp_path / "data" / "usage.sqlite", clock=clock)
    assert await reopened.report(7) == rows  # a file: it outlives the process
    reopened.close()


async def test_sqlite_keeps_the_last_100_questions_per_user(tmp_path: Path) -> None:
    clock = Clock(LATE - 3600)
    store = SqliteUsageStore(tmp_path / "usage.sqlite", clock=clock)
    for n in range(105):
        clock.now += 1
        await store.record(Turn(f"question {n}", user="U1"), Final("a"))
    await store.record(Turn("x" * 5000, user="U2"), Final("too long", blocked=True))
    asked = await store.recent("cli:local:U1", limit=1000)
    assert [q.text for q in asked] == [f"question {n}" for n in range(104, 4, -1)]
    [long] = await store.recent("cli:local:U2")
    assert len(long.text) == QUESTION_CHARS and long.text.endswith("…")
    [row] = await store.report(1, "cli:local:U1")
    assert row.requests == 105  # counts are not capped, only the question list
    store.close()


async def test_sqlite_drops_records_older_than_keep_days(tmp_path: Path) -> None:
    clock = Clock(LATE)
    store = SqliteUsageStore(tmp_path / "usage.sqlite", keep_days=30, clock=clock)
    await store.record(TURN, RAG)
    clock.now += 31 * 86400
    await store.record(OTHER, RAG)
    assert {r.user for r in await store.report(400)} == {"discord:G1:U1"}
    assert await store.recent("slack:T1:U1") == []
    store.close()


async def test_take_pending_empties_the_file_and_add_puts_it_back(tmp_path: Path) -> None:
    store = SqliteUsageStore(tmp_path / "usage.sqlite", clock=Clock(LATE))
    await store.record(TURN, RAG)
    before = await store.report(1), await store.recent("slack:T1:U1")
    pending = store.take_pending()
    assert pending and await store.report(1) == [] and not store.take_pending()
    store.add(pending.rows, pending.questions)
    assert (await store.report(1), await store.recent("slack:T1:U1")) == before
    store.close()
