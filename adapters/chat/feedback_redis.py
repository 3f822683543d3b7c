"""Feedback shared by every worker: an answer posted by one worker can be voted on
through another, and ``teamrag feedback`` lists the votes of all of them.

Same behaviour as :class:`adapters.chat.feedback.SqliteFeedbackStore`: one vote per
user and answer, a changed vote replaces the earlier one, entries newest first.

Layout (every key under the connection's prefix):

- ``feedback:answer:ID``: the answer record (JSON). Unvoted answers expire after
  ``keep_unvoted_s`` (90 days, as in SQLite); a vote extends the answer to ``keep_s``
  (400 days: feedback is read back months later, when someone reviews the bad answers).
- ``feedback:votes:up`` / ``feedback:votes:down``: sorted sets of ``["answer id", "voter"]``
  scored by the time of the vote. A vote moves its member from one set to the other in
  one transaction. Votes older than ``keep_s`` are dropped as new ones come in.
- ``feedback:comments``: a hash from the same members to the comment written with the vote.

While Redis is unreachable, answers and votes go to the local SQLite fallback. A vote
goes where its answer is: an answer kept locally during an outage can still be voted on
afterwards, and :meth:`RedisFeedbackStore.entries` lists the shared votes together with
this machine's local ones (which also keeps the history of a single-process deployment
that moves to Redis). A vote, during an outage, on an answer kept in Redis is refused
as unknown: the user is told the answer can no longer be rated, nothing breaks.
"""

from __future__ import annotations

import json
import time
from dataclasses import asdict
from typing import cast

import redis
import redis.asyncio as aredis

from adapters.chat.feedback import (
    AnswerRecord,
    FeedbackEntry,
    Rating,
    SqliteFeedbackStore,
)
from agent.coordination.redis_connection import RedisConnection

KEEP_S = 400 * 86400
KEEP_UNVOTED_S = 90 * 86400
_RATINGS: tuple[Rating, Rating] = ("up", "down")


class RedisFeedbackStore:
    """:class:`~adapters.chat.feedback.FeedbackStore` on Redis, with a SQLite fallback."""

    def __init__(
        self,
        redis: RedisConnection,
        fallback: SqliteFeedbackStore,
        *,
        keep_s: int = KEEP_S,
        keep_unvoted_s: int = KEEP_UNVOTED_S,
    ) -> None:
        self._redis = redis
        self._fallback = fallback
        self._keep_s = keep_s
        self._keep_unvoted_s = keep_unvoted_s

    def _answer_key(self, answer_id: str) -> str:
        return self._redis.key("feedback", "answer", answer_id)

    def _votes_key(self, rating: Rating) -> str:
        return self._redis.key("feedback", "votes", rating)

    async def remember(self, record: AnswerRecord) -> str:
        async def shared(client: aredis.Redis) -> str:
            data = json.dumps(asdict(record), ensure_ascii=False)
            await client.set(self._answer_key(record.answer_id), data, ex=self._keep_unvoted_s)
            return record.answer_id

        async def locally() -> str:
            return await self._fallback.remember(record)

        return await self._redis.attempt(shared, locally, what="keeping an answer for feedback")

    def _comments_key(self) -> str:
        return self._redis.key("feedback", "comments")

    async def rate(self, answer_id: str, user: str, rating: Rating, comment: str = "") -> bool:
        async def shared(client: aredis.Redis) -> bool | None:
            answer = self._answer_key(answer_id)
            if not await client.exists(answer):
                return None  # not here: perhaps kept locally during an outage
            member = json.dumps([answer_id, user])
            now = time.time()
            async with client.pipeline(transaction=True) as pipe:
                for other in _RATINGS:
                    if other != rating:
                        pipe.zrem(self._votes_key(other), member)
                    pipe.zremrangebyscore(self._votes_key(other), "-inf", now - self._keep_s)
                pipe.zadd(self._votes_key(rating), {member: now})
                if comment:
                    pipe.hset(self._comments_key(), member, comment)
                else:  # a changed vote without words drops the earlier vote's words
                    pipe.hdel(self._comments_key(), member)
                pipe.expire(answer, self._keep_s)
                await pipe.execute()
            return True

        async def locally() -> bool | None:
            return await self._fallback.rate(answer_id, user, rating, comment)

        found = await self._redis.attempt(shared, locally, what="recording a vote")
        if found is None:
            return await self._fallback.rate(answer_id, user, rating, comment)
        return found

    def entries(self, rating: Rating | None = "down", limit: int = 50) -> list[FeedbackEntry]:
        """The shared votes and this machine's local ones, newest first."""
        wanted = _RATINGS if rating is None else (rating,)

        def shared(client: redis.Redis) -> list[FeedbackEntry]:
            votes: list[tuple[Rating, str, str, float, bytes]] = []
            for which in wanted:
                found = client.zrevrange(self._votes_key(which), 0, limit - 1, withscores=True)
                for member, score in cast(list[tuple[bytes, float]], found):
                    answer_id, voter = json.loads(member)
                    votes.append((which, answer_id, voter, float(score), member))
            votes.sort(key=lambda v: v[3], reverse=True)
            votes = votes[:limit]
            if not votes:
                return []
            records = client.mget([self._answer_key(v[1]) for v in votes])
            comments = cast(
                list[bytes | None], client.hmget(self._comments_key(), [v[4] for v in votes])
            )
            return [
                FeedbackEntry(
                    which,
                    voter,
                    at,
                    AnswerRecord(**json.loads(data)),
                    comment.decode() if comment else "",
                )
                for (which, _, voter, at, _m), data, comment in zip(
                    votes, records, comments, strict=True
                )
                if data is not None  # the answer expired after its vote
            ]

        def none() -> list[FeedbackEntry]:
            return []

        found = self._redis.attempt_sync(shared, none, what="listing feedback")
        found += self._fallback.entries(rating, limit)
        found.sort(key=lambda e: e.voted_at, reverse=True)
        return found[:limit]

    def close(self) -> None:
        """Close the fallback; the Redis connection belongs to whoever opened it."""
        self._fallback.close()
