"""What only the Redis feedback store does: keys Redis expires by itself, and an outage
kept locally and listed when Redis is back. The behaviour both backends promise (votes,
listing, comments, sharing between workers) is in test_chat_feedback.py, run over each."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from adapters.chat.feedback import AnswerRecord, SqliteFeedbackStore
from adapters.chat.feedback_redis import RedisFeedbackStore
from agent.coordination.redis_connection import RedisConnection
from tests.support.redis_support import RedisServer
from tests.test_chat_feedback import FINAL, TURN


@asynccontextmanager
async def worker(redis: RedisConnection, folder: Path) -> AsyncIterator[RedisFeedbackStore]:
    """One worker's store: its own connection and fallback file, the shared Redis."""
    own = RedisConnection(redis.url, prefix=redis.prefix, retry_s=0.2, timeout_s=0.5)
    store = RedisFeedbackStore(own, SqliteFeedbackStore(folder / "feedback.sqlite"))
    try:
        yield store
    finally:
        store.close()
        await own.aclose()


async def test_records_keep_long(redis_connection: RedisConnection, tmp_path: Path) -> None:
    async with worker(redis_connection, tmp_path) as store:
        unvoted = await store.remember(AnswerRecord.of(TURN, FINAL))
        voted = await store.remember(AnswerRecord.of(TURN, FINAL))
        await store.rate(voted, "U-voter", "down")
    ttl = redis_connection.client.ttl
    assert (
        90 * 86400 - 5
        < await ttl(redis_connection.key("feedback", "answer", unvoted))
        <= 90 * 86400
    )
    assert (
        400 * 86400 - 5
        < await ttl(redis_connection.key("feedback", "answer", voted))
        <= 400 * 86400
    )


async def test_redis_down_keeps_feedback_locally_and_lists_it_when_back(
    redis_connection: RedisConnection, redis_server: RedisServer, tmp_path: Path
) -> None:
    async with worker(redis_connection, tmp_path) as store:
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
        await asyncio.sleep(0.3)  # the connection's retry_s
        # The answer kept locally can still be voted on, and is listed with the shared ones.
        assert await store.rate(local_id, "U-other", "down")
        fresh = await store.remember(AnswerRecord.of(TURN, FINAL))
        await asyncio.sleep(0.002)
        assert await store.rate(fresh, "U-voter", "down")
        listed = [(e.answer.answer_id, e.voter) for e in store.entries("down")]
        assert listed == [(fresh, "U-voter"), (local_id, "U-other"), (local_id, "U-voter")]
