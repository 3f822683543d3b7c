"""What only the Redis usage store does: keys Redis expires by itself, the question list
trimmed in Redis, an outage recorded locally and handed over when Redis is back, a
single-process deployment's file moved over, and the real agent counted through the
observer. The behaviour both backends promise (counts, question lists, workers adding
up) is in test_chat_usage.py, run over each."""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path

from adapters.chat.observe import observed
from adapters.chat.usage import SqliteUsageStore
from adapters.chat.usage_redis import RedisUsageStore
from agent.coordination.redis_connection import RedisConnection
from agent.events import Final
from agent.retrieval.knowledge_base import KnowledgeBase
from tests.fakes.openai_server import FakeOpenAI
from tests.support.agent_support import agent, script_answer
from tests.support.redis_support import RedisServer
from tests.test_chat_usage import NOON, final, turn


@asynccontextmanager
async def worker(
    redis: RedisConnection, folder: Path, clock: Callable[[], float] = lambda: NOON
) -> AsyncIterator[RedisUsageStore]:
    """One worker's store: its own connection and its own fallback file, shared Redis."""
    own = RedisConnection(redis.url, prefix=redis.prefix, retry_s=0.2, timeout_s=0.5)
    fallback = SqliteUsageStore(folder / "usage.sqlite", clock=clock)
    try:
        yield RedisUsageStore(own, fallback, clock=clock)
    finally:
        fallback.close()
        await own.aclose()


async def test_keys_expire_after_400_days(
    redis_connection: RedisConnection, tmp_path: Path
) -> None:
    now = time.time()
    async with worker(redis_connection, tmp_path, clock=lambda: now) as store:
        await store.record(turn("U1"), final(10, 1))
    client = redis_connection.client
    day = dt.datetime.fromtimestamp(now, dt.UTC).date().isoformat()
    day_start = dt.datetime.fromisoformat(day).replace(tzinfo=dt.UTC).timestamp()
    assert (
        await client.expiretime(redis_connection.key("usage", "day", day))
        == day_start + 400 * 86400
    )
    questions_ttl = await client.ttl(redis_connection.key("usage", "questions", "slack:T1:U1"))
    assert 400 * 86400 - 5 < questions_ttl <= 400 * 86400


async def test_redis_keeps_only_the_last_100_questions(
    redis_connection: RedisConnection, tmp_path: Path
) -> None:
    clock = [NOON]
    async with worker(redis_connection, tmp_path, clock=lambda: clock[0]) as store:
        for n in range(105):
            clock[0] += 1
            await store.record(turn("U1", f"question {n}"), final(1, 1))
    members = await redis_connection.client.zcard(
        redis_connection.key("usage", "questions", "slack:T1:U1")
    )
    assert members == 100


async def test_redis_down_records_locally_and_hands_over_when_back(
    redis_connection: RedisConnection, redis_server: RedisServer, tmp_path: Path
) -> None:
    ticks = iter(range(1000))
    async with worker(redis_connection, tmp_path / "a", clock=lambda: NOON + next(ticks)) as a:
        redis_server.stop()  # it comes back empty (in memory only): what it had is gone
        try:
            await a.record(turn("U1", "during"), final(20, 20))  # nothing raised
            await a.record(turn("U2", "during too"), final(30, 30))
            local = await a.report(1)  # Redis is down: this worker's own records
            assert {(r.user, r.model, r.prompt_tokens) for r in local} == {
                ("slack:T1:U1", "chat", 20),
                ("slack:T1:U1", "fast", 50),
                ("slack:T1:U2", "chat", 30),
                ("slack:T1:U2", "fast", 50),
            }
            assert [q.text for q in await a.recent("slack:T1:U1")] == ["during"]
        finally:
            redis_server.start()
        await asyncio.sleep(0.3)  # the connection's retry_s
        await a.record(turn("U1", "after"), final(40, 40))

    # Another worker (another fallback file) sees all three turns in Redis.
    async with worker(redis_connection, tmp_path / "b") as b:
        rows = {(r.user, r.model): r for r in await b.report(1)}
        assert rows["slack:T1:U1", "chat"].requests == 2
        assert rows["slack:T1:U1", "chat"].prompt_tokens == 20 + 40
        assert rows["slack:T1:U1", "fast"].requests == 0
        assert rows["slack:T1:U2", "chat"].prompt_tokens == 30
        texts = [q.text for q in await b.recent("slack:T1:U1")]
        assert texts == ["after", "during"]
    emptied = SqliteUsageStore(tmp_path / "a" / "usage.sqlite", clock=lambda: NOON)
    assert await emptied.report(1) == []  # handed over, not counted twice
    emptied.close()


async def test_records_of_a_single_process_deployment_move_to_redis(
    redis_connection: RedisConnection, tmp_path: Path
) -> None:
    local = SqliteUsageStore(tmp_path / "usage.sqlite", clock=lambda: NOON)
    await local.record(turn("U1", "asked before Redis"), final(10, 10))
    local.close()
    async with worker(redis_connection, tmp_path) as store:
        await store.record(turn("U1", "asked with Redis"), final(20, 20))
        [chat, _] = await store.report(1)
        assert (chat.model, chat.requests, chat.prompt_tokens) == ("chat", 2, 30)
        day = await redis_connection.client.hgetall(
            redis_connection.key("usage", "day", "2026-11-03")
        )
        assert day[json.dumps(["slack:T1:U1", "chat", "requests"])] == "2"


async def test_the_real_agent_through_the_observer_records_its_tokens_per_model(
    sample_kb: KnowledgeBase,
    tmp_path: Path,
    fake_llm: FakeOpenAI,
    redis_connection: RedisConnection,
) -> None:
    """Runner -> observer -> Redis: the table holds exactly the Final's tokens per model."""
    script_answer(fake_llm, "Postgres backups are kept for 35 days [1].")
    async with (
        worker(redis_connection, tmp_path, clock=time.time) as store,
        agent(sample_kb, tmp_path, llm=fake_llm) as runner,
    ):
        run = observed(runner.run, [store.record])
        events = [e async for e in run(turn("U9", "How long are Postgres backups kept?"))]
        await run.drain()
        answer = events[-1]
        assert isinstance(answer, Final) and answer.mode == "llm"
        assert set(answer.usage_by_model) == {"fast-model", "chat-model"}
        rows = await store.report(1, "slack:T1:U9")
    tokens = {r.model: (r.prompt_tokens, r.completion_tokens) for r in rows}
    assert tokens == {
        m: (u.prompt_tokens, u.completion_tokens) for m, u in answer.usage_by_model.items()
    }
    assert sum(r.requests for r in rows) == 1
