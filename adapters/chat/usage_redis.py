"""Usage records shared by every worker, in Redis; the counting rules are in
:mod:`adapters.chat.usage`.

Layout (every key under the connection's prefix):

- ``usage:day:YYYY-MM-DD``: a hash per day (the team's time zone); field
  ``["user", "model", counter]`` (JSON, because user keys and model names both contain
  ``:`` and ``/``), counter one of ``requests``, ``prompt``, ``completion``, added to
  with HINCRBY, so any number of workers count into the same day without a lost update.
  It expires ``keep_days`` after the day. A report reads the days it asks for by name, so
  no index of days is kept.
- ``usage:questions:USER``: a sorted set of the user's questions scored by time, cut to
  the newest ``questions_per_user``; it expires ``keep_days`` after the user's last question.
  A sorted set rather than a list keeps the order right when records written locally
  during an outage arrive later, and makes handing them over twice harmless.
- ``usage:uncovered``: everyone's questions the documents did not answer, the same
  members scored by time, cut to the newest ``UNCOVERED``; it expires ``keep_days``
  after the last one.

While Redis is unreachable, records go to the local SQLite fallback. The first record
that reaches Redis again hands the fallback's records over (they are taken out of the
file in one transaction, and put back if Redis fails again), so the shared report is
complete once Redis is back. At start the fallback is handed over too: it may hold an
earlier outage's records, or the history of a single-process deployment moving to Redis.
A report made while Redis is down shows only this machine's fallback records.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict
from typing import cast

import redis.asyncio as aredis

from adapters.chat.usage import (
    KEEP_DAYS,
    QUESTIONS_PER_USER,
    UNCOVERED,
    AskedQuestion,
    Pending,
    SqliteUsageStore,
    UsageRow,
    asked,
    day_start,
    last_days,
    merge,
    usage_rows,
)
from agent.coordination.redis_connection import RedisConnection
from agent.events import Final, Turn

_COUNTERS = ("requests", "prompt", "completion")


class RedisUsageStore:
    """:class:`~adapters.chat.usage.UsageStore` on Redis, with a SQLite fallback: the
    fallback's ``zone`` says whose days both count, so the two never disagree."""

    def __init__(
        self,
        redis: RedisConnection,
        fallback: SqliteUsageStore,
        *,
        keep_days: int = KEEP_DAYS,
        questions_per_user: int = QUESTIONS_PER_USER,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._redis = redis
        self._fallback = fallback
        self._keep_s = keep_days * 86400
        self._cap = questions_per_user
        self._clock = clock
        self._handover_due = True

    def _day_key(self, day: str) -> str:
        return self._redis.key("usage", "day", day)

    def _questions_key(self, user: str) -> str:
        return self._redis.key("usage", "questions", user)

    async def record(self, turn: Turn, final: Final) -> None:
        now = self._clock()
        rows = usage_rows(turn, final, now, self._fallback.zone)
        pending = Pending(rows, [asked(turn, final, now)])
        if self._handover_due and not self._redis.down:
            await self._hand_over()
        await self._write_or_keep(pending, what="recording usage")

    async def _write_or_keep(self, pending: Pending, *, what: str) -> None:
        async def shared(client: aredis.Redis) -> None:
            await self._write(client, pending.rows, pending.questions)

        async def locally() -> None:
            await asyncio.to_thread(self._fallback.add, pending.rows, pending.questions)
            self._handover_due = True

        await self._redis.attempt(shared, locally, what=what)

    async def _hand_over(self) -> None:
        pending = await asyncio.to_thread(self._fallback.take_pending)
        self._handover_due = False
        if not pending:
            return
        try:
            await self._write_or_keep(pending, what="handing over usage recorded locally")
        except BaseException:
            # Not an outage (that put them back already) but a bug or a cancel: keep them.
            await asyncio.to_thread(self._fallback.add, pending.rows, pending.questions)
            self._handover_due = True
            raise

    async def _write(
        self, client: aredis.Redis, rows: Sequence[UsageRow], questions: Sequence[AskedQuestion]
    ) -> None:
        now = self._clock()
        async with client.pipeline(transaction=True) as pipe:
            for row in rows:
                expires = int(day_start(row.day, self._fallback.zone)) + self._keep_s
                if expires <= now:
                    continue  # older than anything kept
                key = self._day_key(row.day)
                for counter, value in zip(
                    _COUNTERS,
                    (row.requests, row.prompt_tokens, row.completion_tokens),
                    strict=True,
                ):
                    if value:
                        pipe.hincrby(key, json.dumps([row.user, row.model, counter]), value)
                pipe.expireat(key, expires)
            for user in {q.user for q in questions}:
                key = self._questions_key(user)
                pipe.zadd(
                    key,
                    {_member(q): q.asked_at for q in questions if q.user == user},
                )
                pipe.zremrangebyrank(key, 0, -self._cap - 1)
                pipe.expire(key, self._keep_s)
            uncovered = {_member(q): q.asked_at for q in questions if q.covered is False}
            if uncovered:
                key = self._redis.key("usage", "uncovered")
                pipe.zadd(key, uncovered)
                pipe.zremrangebyrank(key, 0, -UNCOVERED - 1)
                pipe.expire(key, self._keep_s)
            await pipe.execute()

    async def report(self, days: int, user: str | None = None) -> list[UsageRow]:
        wanted = last_days(days, self._clock(), self._fallback.zone)

        async def shared(client: aredis.Redis) -> list[UsageRow]:
            async with client.pipeline(transaction=False) as pipe:
                for day in wanted:
                    pipe.hgetall(self._day_key(day))
                hashes: list[dict[str, str]] = await pipe.execute()
            rows: list[UsageRow] = []
            for day, fields in zip(wanted, hashes, strict=True):
                for name, value in fields.items():
                    who, model, counter = json.loads(name)
                    if user is not None and who != user:
                        continue
                    counts = dict.fromkeys(_COUNTERS, 0) | {counter: int(value)}
                    rows.append(
                        UsageRow(
                            day,
                            who,
                            model,
                            counts["requests"],
                            counts["prompt"],
                            counts["completion"],
                        )
                    )
            return merge(rows)

        async def locally() -> list[UsageRow]:
            return await self._fallback.report(days, user)

        return await self._redis.attempt(shared, locally, what="reading usage")

    async def recent(self, user: str, limit: int = QUESTIONS_PER_USER) -> list[AskedQuestion]:
        async def shared(client: aredis.Redis) -> list[AskedQuestion]:
            members = await client.zrevrange(self._questions_key(user), 0, limit - 1)
            return [AskedQuestion(**json.loads(m)) for m in cast(list[str], members)]

        async def locally() -> list[AskedQuestion]:
            return await self._fallback.recent(user, limit)

        return await self._redis.attempt(shared, locally, what="reading recent questions")

    async def uncovered(self, limit: int = UNCOVERED) -> list[AskedQuestion]:
        async def shared(client: aredis.Redis) -> list[AskedQuestion]:
            key = self._redis.key("usage", "uncovered")
            members = await client.zrevrange(key, 0, limit - 1)
            return [AskedQuestion(**json.loads(m)) for m in cast(list[str], members)]

        async def locally() -> list[AskedQuestion]:
            return await self._fallback.uncovered(limit)

        return await self._redis.attempt(shared, locally, what="reading unanswered questions")

    def close(self) -> None:
        """Close the fallback; the Redis connection belongs to whoever opened it."""
        self._fallback.close()


def _member(question: AskedQuestion) -> str:
    """One question as a sorted-set member: the same question is the same member."""
    return json.dumps(asdict(question), ensure_ascii=False, sort_keys=True)
