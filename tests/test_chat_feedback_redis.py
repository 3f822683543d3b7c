"""Feedback shared on a real Redis: the SQLite store's behaviour, across workers, through
an outage."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest

from adapters.chat.feedback import AnswerRecord, FeedbackStore, SqliteFeedbackStore
from adapters.chat.feedback_redis import RedisFeedbackStore
from agent.events import Final, Source, Turn
from agent.shared.link import RedisLink
from tests.redis_support import RedisServer

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
    sources=[Source(1, "운영 가이드", "samples/kb/ops.md", "백업", "https://wiki/ops")],
    route="knowledge",
    language="ko",
)


@asynccontextmanager
async def worker(link: RedisLink, folder: Path) -> AsyncIterator[RedisFeedbackStore]:
    """One worker's store: its own connection and fallback file, the shared Redis."""
    own = RedisLink(link.url, prefix=link.prefix, retry_s=0.2, timeout_s=0.5)
    store = RedisFeedbackStore(own, SqliteFeedbackStore(folder / "feedback.sqlite"))
    try:
        yield store
    finally:
        store.close()
        await own.aclose()


@pytest.fixture(params=["sqlite", "redis"])
def store(
    request: pytest.FixtureRequest, tmp_path: Path, redis_link: RedisLink
) -> Iterator[FeedbackStore]:
    local = SqliteFeedbackStore(tmp_path / "feedback.sqlite")
    yield local if request.param == "sqlite" else RedisFeedbackStore(redis_link, local)
    local.close()


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


async def test_an_answer_posted_by_one_worker_is_voted_on_through_another(
    redis_link: RedisLink, tmp_path: Path
) -> None:
    async with worker(redis_link, tmp_path / "a") as a, worker(redis_link, tmp_path / "b") as b:
        answer_id = await a.remember(AnswerRecord.of(TURN, FINAL))
        assert await b.rate(answer_id, "U-voter", "down")
        assert [e.answer.answer_id for e in a.entries("down")] == [answer_id]


async def test_records_keep_long(redis_link: RedisLink, tmp_path: Path) -> None:
    async with worker(redis_link, tmp_path) as store:
        unvoted = await store.remember(AnswerRecord.of(TURN, FINAL))
        voted = await store.remember(AnswerRecord.of(TURN, FINAL))
        await store.rate(voted, "U-voter", "down")
    ttl = redis_link.client.ttl
    assert 90 * 86400 - 5 < await ttl(redis_link.key("feedback", "answer", unvoted)) <= 90 * 86400
    assert 400 * 86400 - 5 < await ttl(redis_link.key("feedback", "answer", voted)) <= 400 * 86400


async def test_redis_down_keeps_feedback_locally_and_lists_it_when_back(
    redis_link: RedisLink, redis_server: RedisServer, tmp_path: Path
) -> None:
    async with worker(redis_link, tmp_path) as store:
        shared_id = await store.remember(AnswerRecord.of(TURN, FINAL))
        redis_server.stop()
        try:
            local_id = await store.remember(AnswerRecord.of(TURN, FINAL))  # nothing raised
            assert await store.rate(local_id, "U-voter", "down")
            # An answer kept in Redis cannot be found while it is down: refused, not raised.
            assert not await store.rate(shared_id, "U-voter", "down")
            assert [e.answer.answer_id for e in store.entries("down")] == [local_id]
        finally:
            redis_server.start()
        await asyncio.sleep(0.3)  # the link's retry_s
        # The answer kept locally can still be voted on, and is listed with the shared ones.
        assert await store.rate(local_id, "U-other", "down")
        fresh = await store.remember(AnswerRecord.of(TURN, FINAL))
        await asyncio.sleep(0.002)
        assert await store.rate(fresh, "U-voter", "down")
        listed = [(e.answer.answer_id, e.voter) for e in store.entries("down")]
        assert listed == [(fresh, "U-voter"), (local_id, "U-other"), (local_id, "U-voter")]


async def test_a_vote_keeps_its_comment_and_a_changed_vote_replaces_it(
    store: FeedbackStore,
) -> None:
    answer_id = await store.remember(AnswerRecord.of(TURN, FINAL))
    assert await store.rate(answer_id, "U-voter", "down", "표가 빠졌어요")
    assert [e.comment for e in store.entries(None)] == ["표가 빠졌어요"]
    await store.rate(answer_id, "U-voter", "up")
    assert [(e.rating, e.comment) for e in store.entries(None)] == [("up", "")]


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
