"""One run at a time per thread across workers: a Redis lease with expiry and fencing.

A worker holds a thread by a key that expires unless renewed, so a worker that
dies mid-answer lets the thread go by itself after ``ttl_s``. Each grant is
numbered from a per-thread fence counter and the key holds ``worker_id:token``:
a renewal that finds another value knows the lease expired under us (a stalled
event loop, a partition) and another worker has the thread. The holder is then
fenced out: its task is cancelled (again until it leaves the body, see
:mod:`agent.plumbing.stopping`) and :meth:`RedisThreadLocks.hold` raises
:class:`LockLostError`, so the turn ends with a stated reason instead of writing
a checkpoint over the other worker's turn.

While Redis is unreachable only the in-process lock applies (one process keeps
its threads in order; workers on other machines may overlap until Redis is back).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

import redis.asyncio as aredis

from agent.coordination.locks import LocalThreadLocks, LockLostError
from agent.coordination.redis_connection import RedisConnection
from agent.plumbing.stopping import AGAIN_EVERY_S

log = logging.getLogger(__name__)

# KEYS: lock, fence counter. ARGV: worker id, lease ms, counter ms.
# Checking, numbering and taking in one step: a token drawn before the lock is free
# could be older than one granted meanwhile, and fencing relies on grant order.
_ACQUIRE = """
if redis.call('exists', KEYS[1]) == 1 then return false end
local token = redis.call('incr', KEYS[2])
redis.call('pexpire', KEYS[2], ARGV[3])
redis.call('set', KEYS[1], ARGV[1] .. ':' .. token, 'PX', ARGV[2])
return token
"""

# KEYS: lock, fence counter. ARGV: our value, lease ms, our token.
# Returns 1 (still ours, extended), 2 (it had lapsed and nobody took it since: taken
# back, e.g. after Redis restarted empty), 0 (another worker took it: fenced out).
# Compare-and-extend must be atomic: between a GET and a PEXPIRE the lease could
# change hands and we would extend the other worker's lease.
_RENEW = """
local value = redis.call('get', KEYS[1])
if value == ARGV[1] then
  redis.call('pexpire', KEYS[1], ARGV[2])
  return 1
end
if value then return 0 end
local fence = tonumber(redis.call('get', KEYS[2]) or '0')
if fence > tonumber(ARGV[3]) then return 0 end
redis.call('set', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 2
"""

# KEYS: lock. ARGV: our value. Delete only our own lease: after it lapsed, the key
# may be another worker's, and deleting it would let a third one in beside them.
_RELEASE = """
if redis.call('get', KEYS[1]) == ARGV[1] then
  return redis.call('del', KEYS[1])
end
return 0
"""

# The fence counter outlives any lease by far; it only has to keep counting up while
# a thread is active, so an idle thread's counter may go.
_FENCE_KEEP_MS = 7 * 86_400_000


@dataclass
class _Lease:
    thread_id: str
    value: str
    token: int
    holder: asyncio.Task[object]
    cancelling: int  # the holder's pending cancellations when it took the lease
    in_body: bool = False
    lost: bool = False
    cancels_sent: int = 0
    stop: asyncio.Event = field(default_factory=asyncio.Event)


class RedisThreadLocks:
    """:class:`~agent.coordination.locks.ThreadLocks` shared by every worker through Redis."""

    def __init__(self, redis: RedisConnection, *, ttl_s: float = 30.0) -> None:
        if ttl_s <= 0:
            raise ValueError(f"ttl_s must be positive, got {ttl_s}: the lease must expire")
        self._redis = redis
        self._ttl_ms = max(1, int(ttl_s * 1000))
        self._renew_every_s = ttl_s / 3
        # Waiters of one process queue here first: first come, first served, and only
        # one of them per thread polls Redis.
        self._local = LocalThreadLocks()
        client = redis.client
        self._acquire_script = client.register_script(_ACQUIRE)
        self._renew_script = client.register_script(_RENEW)
        self._release_script = client.register_script(_RELEASE)

    def lock_key(self, thread_id: str) -> str:
        return self._redis.key("lock", thread_id)

    def fence_key(self, thread_id: str) -> str:
        return self._redis.key("fence", thread_id)

    @contextlib.asynccontextmanager
    async def hold(self, thread_id: str) -> AsyncIterator[None]:
        async with self._local.hold(thread_id):
            lease = await self._acquire(thread_id)
            if lease is None:  # Redis unreachable: this process's order is what we have
                yield
                return
            keeper = asyncio.create_task(self._keep(lease))
            try:
                lease.in_body = True
                try:
                    yield
                finally:
                    lease.in_body = False
            except BaseException as exc:
                if lease.lost and not self._cancelled_from_outside(lease, exc):
                    raise self._lost(lease) from exc
                raise
            finally:
                # Stopped, not cancelled: a renewal already sent must be answered before
                # the release goes out, or it could land after it and take the key back.
                lease.stop.set()
                await asyncio.shield(keeper)
                if not lease.lost:
                    await self._release(lease)
            if lease.lost:  # the body swallowed our cancellation and ended anyway
                self._cancelled_from_outside(lease, None)
                raise self._lost(lease)

    # -- internals --------------------------------------------------------------
    async def _acquire(self, thread_id: str) -> _Lease | None:
        """Poll until the lease is ours (10 ms doubling to 200 ms); None if Redis is down.

        Polling, not a blocking pop: waiting stays cancellable and needs no release
        signal from a worker that may have died.
        """
        holder = asyncio.current_task()
        assert holder is not None, "hold() runs inside a task"
        value_prefix = f"{self._redis.worker_id}:"
        keys = [self.lock_key(thread_id), self.fence_key(thread_id)]
        args: list[str | int] = [self._redis.worker_id, self._ttl_ms, _FENCE_KEEP_MS]

        async def poll(client: aredis.Redis) -> _Lease | None:
            delay = 0.01
            while True:
                token = await self._acquire_script(keys=keys, args=args, client=client)
                if token is not None:
                    value = value_prefix + str(token)
                    return _Lease(thread_id, value, int(token), holder, holder.cancelling())
                await asyncio.sleep(delay)
                delay = min(delay * 2, 0.2)

        async def unshared() -> _Lease | None:
            return None

        try:
            return await self._redis.attempt(poll, unshared, what=f"locking thread {thread_id}")
        except asyncio.CancelledError:
            # Cancelled while a grant may have been on its way back to us: a lease we
            # do not know about would block the thread for ttl_s.
            await asyncio.shield(self._abandon(thread_id, value_prefix))
            raise

    async def _abandon(self, thread_id: str, value_prefix: str) -> None:
        key = self.lock_key(thread_id)

        async def release(client: aredis.Redis) -> None:
            value = await client.get(key)
            if isinstance(value, str) and value.startswith(value_prefix):
                await self._release_script(keys=[key], args=[value], client=client)

        async def nothing() -> None:
            return None

        with contextlib.suppress(Exception):  # best effort: the lease expires anyway
            await self._redis.attempt(release, nothing, what=f"unlocking thread {thread_id}")

    async def _keep(self, lease: _Lease) -> None:
        """Renew every ttl/3 until stopped; fence the holder out if the lease was taken."""
        keys = [self.lock_key(lease.thread_id), self.fence_key(lease.thread_id)]
        args: list[str | int] = [lease.value, self._ttl_ms, lease.token]

        async def renew(client: aredis.Redis) -> int | None:
            return int(await self._renew_script(keys=keys, args=args, client=client))

        async def unknown() -> int | None:
            return None  # unreachable: no answer either way; the next renewal decides

        while True:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(lease.stop.wait(), self._renew_every_s)
            if lease.stop.is_set():
                return
            try:
                state = await self._redis.attempt(
                    renew, unknown, what=f"renewing the lock of thread {lease.thread_id}"
                )
            except Exception:  # e.g. a read-only replica after a failover: try again later
                log.exception("could not renew the lock of thread %s", lease.thread_id)
                continue
            if state == 2:
                log.warning("lock of thread %s had lapsed; taken back", lease.thread_id)
            if state == 0:
                lease.lost = True
                log.error(
                    "lock of thread %s lost to another worker (lease %s lapsed); "
                    "stopping this turn",
                    lease.thread_id,
                    lease.value,
                )
                await self._fence_out(lease)
                return

    async def _fence_out(self, lease: _Lease) -> None:
        """Cancel the holder's body, and again every second until it has left the body
        (``hold`` sets ``stop`` then): one cancellation can be swallowed inside a Redis
        call, and a body that ran on would write over the other worker's turn."""
        while lease.in_body and not lease.stop.is_set():
            if lease.holder.cancel():
                lease.cancels_sent += 1
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(lease.stop.wait(), AGAIN_EVERY_S)

    async def _release(self, lease: _Lease) -> None:
        key = self.lock_key(lease.thread_id)

        async def release(client: aredis.Redis) -> None:
            await self._release_script(keys=[key], args=[lease.value], client=client)

        async def expire_by_itself() -> None:
            return None  # Redis unreachable: the lease lapses after ttl_s

        await self._redis.attempt(
            release, expire_by_itself, what=f"unlocking thread {lease.thread_id}"
        )

    @staticmethod
    def _cancelled_from_outside(lease: _Lease, exc: BaseException | None) -> bool:
        """Withdraw our own cancellation of the holder (as ``asyncio.timeout`` does); True
        if ``exc`` is a cancellation somebody else asked for too, which must go on."""
        remaining = lease.holder.cancelling()
        for _ in range(lease.cancels_sent):
            remaining = lease.holder.uncancel()
        lease.cancels_sent = 0
        return isinstance(exc, asyncio.CancelledError) and remaining > lease.cancelling

    def _lost(self, lease: _Lease) -> LockLostError:
        return LockLostError(
            f"the lock of thread {lease.thread_id} lapsed (not renewed within "
            f"{self._ttl_ms / 1000:g} s: the event loop was blocked or Redis was out of reach) "
            "and another worker took the thread; this turn stopped so as not to overwrite "
            "that worker's answer. Ask again; if it recurs, raise the lock TTL"
        )
