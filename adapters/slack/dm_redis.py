"""Which conversation a DM message continues, known to workers on every host (Redis).

The worker that answers a DM message writes down the DM's current conversation; the
worker that takes the next DM message (often another one, on another host) reads it
there. With only the machine's SQLite file (:class:`~adapters.slack.dm.SqliteDmConversations`)
that second worker would find nothing and start a new conversation, losing the
history the user expects.

Keys: the DM's current conversation (its root and when the bot last answered),
expiring ``continue_s`` after that answer, and one per thread of a conversation,
kept ``KEEP_S``. Every write also goes to the machine's own record, which serves
while Redis is unreachable.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace

import redis.asyncio as aredis

from adapters.slack.dm import KEEP_S, SqliteDmConversations, dm_key, is_dm
from adapters.slack.turns import Incoming
from agent.coordination.redis_connection import RedisConnection


class RedisDmConversations:
    """:class:`~adapters.slack.dm.Conversations` in Redis, with ``local`` as the fallback."""

    def __init__(
        self,
        redis: RedisConnection,
        local: SqliteDmConversations,
        *,
        continue_s: float,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._redis = redis
        self._local = local
        self._continue_s = continue_s
        self._clock = clock

    def _current(self, message: Incoming) -> str:
        return self._redis.key("slack-dm", "current", dm_key(message))

    def _thread(self, message: Incoming, thread: str) -> str:
        return self._redis.key("slack-dm", "thread", dm_key(message, thread))

    async def place(self, message: Incoming) -> Incoming:
        if not is_dm(message):
            return message

        async def on_redis(client: aredis.Redis) -> Incoming:
            if message.thread_ts is not None:  # a reply: its thread's conversation, if any
                root = await client.get(self._thread(message, message.thread_ts))
                return replace(message, conversation=str(root)) if root else message
            found = await client.hmget(self._current(message), ["root", "answered"])
            root, answered = found[0], found[1]
            if root and answered and self._clock() - float(answered) < self._continue_s:
                return replace(message, conversation=str(root))
            return replace(message, conversation=message.thread_root)  # a new one starts here

        return await self._redis.attempt(
            on_redis, lambda: self._local.place(message), what="placing a DM message"
        )

    async def active(self, message: Incoming) -> None:
        root = message.conversation
        if root is None:
            return
        await self._local.active(message)  # the machine's copy, for an outage
        now = self._clock()

        async def on_redis(client: aredis.Redis) -> None:
            async with client.pipeline(transaction=True) as pipe:
                current = self._current(message)
                pipe.hset(current, mapping={"root": root, "answered": repr(now)})
                # Past the continuation time the DM starts a new conversation anyway.
                pipe.pexpire(current, max(1, int(self._continue_s * 1000)))
                thread = self._thread(message, message.thread_root)
                pipe.set(thread, root, px=int(KEEP_S * 1000))
                await pipe.execute()

        async def kept_locally() -> None:
            return None

        await self._redis.attempt(on_redis, kept_locally, what="recording a DM conversation")

    async def forget(self, message: Incoming) -> None:
        await self._local.forget(message)

        async def on_redis(client: aredis.Redis) -> None:
            await client.delete(self._current(message))

        async def forgotten_locally() -> None:
            return None

        await self._redis.attempt(on_redis, forgotten_locally, what="starting a DM over")
