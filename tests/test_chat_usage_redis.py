"""Usage records shared on a real Redis: several workers count into one table, and an
outage is recorded locally and handed over when Redis is back."""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path

from adapters.chat.observe import observed
from adapters.chat.usage import SqliteUsageStore, UsageRow, merge
from adapters.chat.usage_redis import RedisUsageStore
from agent.events import Final, Turn, Usage
from agent.retrieval.knowledge_base import KnowledgeBase
from agent.shared.link import RedisLink
from tests.agent_support import agent, script_answer
from tests.fakes.openai_server import FakeOpenAI
from tests.redis_support import RedisServer

NOON = dt.datetime(2026, 11, 3, 12, 0, tzinfo=dt.UTC).timestamp()


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


@asynccontextmanager
async def worker(
    link: RedisLink, folder: Path, clock: Callable[[], float] = lambda: NOON
) -> AsyncIterator[RedisUsageStore]:
    """One worker's store: its own connection and its own fallback file, shared Redis."""
    own = RedisLink(link.url, prefix=link.prefix, retry_s=0.2, timeout_s=0.5)
    fallback = SqliteUsageStore(folder / "usage.sqlite", clock=clock)
    try:
        yield RedisUsageStore(own, fallback, clock=clock)
    finally:
        fallback.close()
        await own.aclose()


async def test_two_workers_add_up(redis_link: RedisLink, tmp_path: Path) -> None:
    async with worker(redis_link, tmp_path / "a") as a, worker(redis_link, tmp_path / "b") as b:
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


async def test_keys_expire_after_400_days(redis_link: RedisLink, tmp_path: Path) -> None:
    now = time.time()
    async with worker(redis_link, tmp_path, clock=lambda: now) as store:
        await store.record(turn("U1"), final(10, 1))
    client = redis_link.client
    day = dt.datetime.fromtimestamp(now, dt.UTC).date().isoformat()
    day_start = dt.datetime.fromisoformat(day).replace(tzinfo=dt.UTC).timestamp()
    assert await client.expiretime(redis_link.key("usage", "day", day)) == day_start + 400 * 86400
    questions_ttl = await client.ttl(redis_link.key("usage", "questions", "slack:T1:U1"))
    assert 400 * 86400 - 5 < questions_ttl <= 400 * 86400


async def test_the_last_100_questions_newest_first(redis_link: RedisLink, tmp_path: Path) -> None:
    clock = [NOON]
    async with worker(redis_link, tmp_path, clock=lambda: clock[0]) as store:
        for n in range(105):
            clock[0] += 1
            await store.record(turn("U1", f"question {n}"), final(1, 1))
        asked = await store.recent("slack:T1:U1", limit=1000)
        assert [q.text for q in asked] == [f"question {n}" for n in range(104, 4, -1)]
        assert asked[0].thread_id == "slack:T1:terminal:U1" and asked[0].route == "knowledge"
        assert [q.text for q in await store.recent("slack:T1:U1", limit=2)] == [
            "question 104",
            "question 103",
        ]
        assert await store.recent("slack:T1:nobody") == []
    members = await redis_link.client.zcard(redis_link.key("usage", "questions", "slack:T1:U1"))
    assert members == 100


async def test_redis_down_records_locally_and_hands_over_when_back(
    redis_link: RedisLink, redis_server: RedisServer, tmp_path: Path
) -> None:
    ticks = iter(range(1000))
    async with worker(redis_link, tmp_path / "a", clock=lambda: NOON + next(ticks)) as a:
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
        await asyncio.sleep(0.3)  # the link's retry_s
        await a.record(turn("U1", "after"), final(40, 40))

    # Another worker (another fallback file) sees all three turns in Redis.
    async with worker(redis_link, tmp_path / "b") as b:
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
    redis_link: RedisLink, tmp_path: Path
) -> None:
    local = SqliteUsageStore(tmp_path / "usage.sqlite", clock=lambda: NOON)
    await local.record(turn("U1", "asked before Redis"), final(10, 10))
    local.close()
    async with worker(redis_link, tmp_path) as store:
        await store.record(turn("U1", "asked with Redis"), final(20, 20))
        [chat, _] = await store.report(1)
        assert (chat.model, chat.requests, chat.prompt_tokens) == ("chat", 2, 30)
        day = await redis_link.client.hgetall(redis_link.key("usage", "day", "2026-11-03"))
        assert day[json.dumps(["slack:T1:U1", "chat", "requests"])] == "2"


async def test_the_real_agent_through_the_observer_records_its_tokens_per_model(
    sample_kb: KnowledgeBase, tmp_path: Path, fake_llm: FakeOpenAI, redis_link: RedisLink
) -> None:
    """Runner -> observer -> Redis: the table holds exactly the Final's tokens per model."""
    script_answer(fake_llm, "Postgres backups are kept for 35 days [1].")
    async with (
        worker(redis_link, tmp_path, clock=time.time) as store,
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
