"""Feedback records, run once over each backend (a SQLite file, and a real Redis with a
SQLite fallback): a vote is kept with its question, answer and sources, and listed.
Then what only the SQLite file does (expiry by record age, the CLI, an older layout);
what only Redis does is in test_chat_feedback_redis.py."""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from adapters.chat.feedback import AnswerRecord, FeedbackStore, SqliteFeedbackStore
from adapters.chat.feedback_redis import RedisFeedbackStore
from agent.coordination.redis_connection import RedisConnection
from agent.events import Citation, Final, Turn
from bots.cli import app

TURN = Turn(
    text="Postgres 백업은 며칠 보관되나요?",
    platform="slack",
    workspace="T1",
    channel="C1",
    thread_root="1700000000.000100",
    user="U-asker",
)
FINAL = Final(
    "Postgres 백업은 14일 동안 보관됩니다 [1].",
    sources=[Citation(1, "운영 가이드", "samples/kb/ops.md", "백업", "https://wiki/ops")],
    route="knowledge",
    language="ko",
)

OpenFeedback = Callable[[], FeedbackStore]
"""Opens the feedback store of one backend; each call is another worker on the same
store (the same SQLite file, or the same Redis through its own connection and its own
fallback file)."""


@pytest.fixture(params=["sqlite", "redis"])
async def open_feedback(
    request: pytest.FixtureRequest, tmp_path: Path
) -> AsyncIterator[OpenFeedback]:
    files: list[SqliteFeedbackStore] = []
    connections: list[RedisConnection] = []
    if request.param == "redis":
        url: str = request.getfixturevalue("redis_url")
        prefix = f"t{uuid.uuid4().hex[:6]}:"

        def open_store() -> FeedbackStore:
            connections.append(RedisConnection(url, prefix=prefix, retry_s=0.2, timeout_s=0.5))
            files.append(SqliteFeedbackStore(tmp_path / f"worker-{len(files)}" / "feedback.sqlite"))
            return RedisFeedbackStore(connections[-1], files[-1])
    else:

        def open_store() -> FeedbackStore:
            files.append(SqliteFeedbackStore(tmp_path / "data" / "feedback.sqlite"))
            return files[-1]

    yield open_store
    for file in files:
        file.close()
    for redis in connections:
        await redis.aclose()


@pytest.fixture
def store(open_feedback: OpenFeedback) -> FeedbackStore:
    return open_feedback()


# -- every backend --------------------------------------------------------------------
async def test_a_vote_is_kept_with_the_question_answer_and_sources(store: FeedbackStore) -> None:
    record = AnswerRecord.of(TURN, FINAL)
    answer_id = await store.remember(record)
    assert await store.rate(answer_id, "U-voter", "down")
    [entry] = store.entries("down")
    assert (entry.rating, entry.voter) == ("down", "U-voter")
    assert entry.answer == record
    assert (entry.answer.question, entry.answer.answer) == (TURN.text, FINAL.answer)
    assert entry.answer.thread_id == "slack:T1:C1:1700000000.000100"
    assert entry.source_list() == FINAL.sources


async def test_one_vote_per_user_and_a_changed_mind_replaces_it(store: FeedbackStore) -> None:
    answer_id = await store.remember(AnswerRecord.of(TURN, FINAL))
    await store.rate(answer_id, "U-voter", "down")
    await store.rate(answer_id, "U-voter", "down")
    await store.rate(answer_id, "U-voter", "up")
    assert store.entries("down") == []
    assert [(e.rating, e.voter) for e in store.entries(None)] == [("up", "U-voter")]


async def test_a_vote_on_an_unknown_answer_is_refused(store: FeedbackStore) -> None:
    assert not await store.rate("never-stored", "U-voter", "up")
    assert store.entries(None) == []


async def test_entries_newest_first_filtered_and_limited(store: FeedbackStore) -> None:
    ids = [await store.remember(AnswerRecord.of(TURN, FINAL)) for _ in range(4)]
    for n, (answer_id, rating) in enumerate(zip(ids, ["down", "up", "down", "down"], strict=True)):
        await store.rate(answer_id, f"U{n}", rating)  # type: ignore[arg-type]
        await asyncio.sleep(0.002)  # distinct vote times
    assert [e.answer.answer_id for e in store.entries("down")] == [ids[3], ids[2], ids[0]]
    assert [e.answer.answer_id for e in store.entries(None, limit=2)] == [ids[3], ids[2]]
    assert [e.voter for e in store.entries("up")] == ["U1"]


async def test_a_vote_keeps_its_comment_and_a_changed_vote_replaces_it(
    store: FeedbackStore,
) -> None:
    answer_id = await store.remember(AnswerRecord.of(TURN, FINAL))
    assert await store.rate(answer_id, "U-voter", "down", "표가 빠졌어요")
    assert [e.comment for e in store.entries(None)] == ["표가 빠졌어요"]
    await store.rate(answer_id, "U-voter", "up")
    assert [(e.rating, e.comment) for e in store.entries(None)] == [("up", "")]


async def test_an_answer_posted_by_one_worker_is_voted_on_through_another(
    open_feedback: OpenFeedback,
) -> None:
    a, b = open_feedback(), open_feedback()
    answer_id = await a.remember(AnswerRecord.of(TURN, FINAL))
    assert await b.rate(answer_id, "U-voter", "down")
    assert [e.answer.answer_id for e in a.entries("down")] == [answer_id]


# -- the SQLite file only ---------------------------------------------------------------
async def test_unvoted_answers_expire_but_voted_ones_stay(tmp_path: Path) -> None:
    """The file drops records by their age (``created_at``); Redis lets its keys expire
    from the time they were written (test_chat_feedback_redis.py's
    test_records_keep_long), so a record cannot be made old there."""
    store = SqliteFeedbackStore(tmp_path / "f.sqlite", keep_s=60)
    old = AnswerRecord.of(TURN, FINAL)
    old_voted = AnswerRecord.of(TURN, FINAL)
    for record in (old, old_voted):
        object.__setattr__(record, "created_at", time.time() - 120)
        await store.remember(record)
    await store.rate(old_voted.answer_id, "U-voter", "down")
    await store.remember(AnswerRecord.of(TURN, FINAL))  # a new answer triggers the clean-up
    assert not await store.rate(old.answer_id, "U-voter", "down")
    assert [e.answer.answer_id for e in store.entries("down")] == [old_voted.answer_id]
    store.close()


async def test_teamrag_feedback_lists_the_negative_votes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TEAMRAG_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.chdir(tmp_path)
    store = SqliteFeedbackStore(tmp_path / "data" / "feedback.sqlite")
    liked = await store.remember(AnswerRecord.of(TURN, FINAL))
    disliked_final = Final("I do not know.", route="knowledge", language="en")
    disliked = await store.remember(
        AnswerRecord.of(Turn("How do I rotate keys?", platform="discord"), disliked_final)
    )
    await store.rate(liked, "U1", "up")
    await store.rate(disliked, "U2", "down")
    store.close()

    runner = CliRunner()
    shown = runner.invoke(app, ["feedback"])
    assert shown.exit_code == 0, shown.output
    assert "How do I rotate keys?" in shown.output
    assert "I do not know." in shown.output
    assert TURN.text not in shown.output

    as_json = runner.invoke(app, ["feedback", "--show", "all", "--json"])
    rows = [json.loads(line) for line in as_json.output.splitlines()]
    assert {r["rating"] for r in rows} == {"up", "down"}
    liked_row = next(r for r in rows if r["rating"] == "up")
    assert liked_row["sources"][0]["link"] == "https://wiki/ops"

    wrong = runner.invoke(app, ["feedback", "--show", "sideways"])
    assert wrong.exit_code == 2
    assert "--show must be down, up or all" in wrong.output


def test_a_feedback_file_from_before_comments_gains_the_column(tmp_path: Path) -> None:
    import sqlite3

    path = tmp_path / "feedback.sqlite"
    with sqlite3.connect(path) as old:
        old.executescript(
            "CREATE TABLE answers (answer_id TEXT PRIMARY KEY, record TEXT NOT NULL, "
            "created_at REAL NOT NULL);"
            "CREATE TABLE votes (answer_id TEXT NOT NULL, voter TEXT NOT NULL, "
            "rating TEXT NOT NULL, voted_at REAL NOT NULL, PRIMARY KEY (answer_id, voter));"
        )
    store = SqliteFeedbackStore(path)
    columns = [row[1] for row in store._db.execute("PRAGMA table_info(votes)")]
    store.close()
    assert columns[-1] == "comment"
