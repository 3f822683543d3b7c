"""The durable turn queue: accepted questions in a Redis Stream read by every worker.

Slack wants an acknowledgement within 3 s and then considers the event delivered,
so a worker that dies mid-answer would lose the question for good. With Redis,
an acknowledged event is first added to a Redis Stream read by a consumer group
of every worker; the worker that reads it answers it and only then acknowledges
the entry. While it works, it keeps claiming the entry (a heartbeat); an entry
not heard from for ``claim_s`` is taken over by another worker (``XAUTOCLAIM``),
which answers it from the start. An entry that several workers failed in a row
(``max_attempts``) is dropped with an error in the log, so one poison message
cannot stall a thread; the ``gave_up`` handler given to :meth:`RedisTurnQueue.serving`
tells the asker so first (the adapters post why in the thread).

A worker notes what a successor would need to repair (:meth:`RedisTurnQueue.note`: the
reply message it opened, and each later message of a long answer as it posts it) in a
small hash per entry; a worker that takes the entry over reads it into ``Job.notes``, so
it edits those messages into its answer rather than posting a second reply beside a
"Thinking…" that never ends, or the answer's tail twice (:mod:`adapters.chat.parts`).

Jobs of one conversation run in the order they were queued, whichever worker
reads them: each thread has a list of its queued entry ids, and a job waits
until it is at the head of that list, woken when a job of its thread finishes
(:mod:`adapters.chat.queue_bell`). (The runner's thread lock then keeps a second
worker out should two ever hold one thread's head.)

While Redis is unreachable it runs jobs at once through its :class:`LocalTurnQueue`,
so questions are still answered, only not durably.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass, field, replace
from typing import cast

import redis.asyncio as aredis
from redis.exceptions import ResponseError

from adapters.chat import queue_redis_scripts as scripts
from adapters.chat.queue import Handler, Job, LocalTurnQueue, Tasks, answer
from adapters.chat.queue_bell import ThreadBell
from agent.coordination.redis_connection import UNREACHABLE, RedisConnection
from agent.plumbing.log_context import bind

log = logging.getLogger(__name__)


THREAD_LINE_TTL_MS = 24 * 3600 * 1000


@dataclass
class RedisTurnQueue:
    """The durable queue: a Redis Stream per platform and one consumer group of workers."""

    redis: RedisConnection
    stream: str  # e.g. "slack": one stream per platform, so each is read by its own bots
    claim_s: float = 15.0
    max_attempts: int = 3
    concurrency: int = 256  # jobs one worker has under way at most
    drain_s: float = 30.0
    group: str = "workers"
    # Every start is a new consumer name: forget those idle this long with nothing pending.
    forget_after_s: float = 3600.0
    # A job waiting for its thread looks again this often even if no finish was heard.
    recheck_s: float = 1.0
    _tasks: Tasks = field(default_factory=Tasks, init=False)
    _local: LocalTurnQueue = field(default_factory=LocalTurnQueue, init=False)
    _slots: asyncio.Semaphore = field(init=False)
    # Finished jobs whose acknowledgement failed (Redis was away): acknowledged on return.
    _unacked: list[tuple[str, str]] = field(default_factory=list, init=False)
    # Told of a job dropped after too many attempts (serving(gave_up=...)); None: only logged.
    _gave_up: Handler | None = field(default=None, init=False)

    def __post_init__(self) -> None:
        self._slots = asyncio.Semaphore(self.concurrency)
        client = self.redis.client
        self._submit = client.register_script(scripts.SUBMIT)
        self._may_run = client.register_script(scripts.MAY_RUN)
        self._heartbeat = client.register_script(scripts.HEARTBEAT)
        self._finish = client.register_script(scripts.FINISH)
        self._bell = ThreadBell(
            self.redis, self.redis.key("queue", self.stream, "finished"), recheck_s=self.recheck_s
        )

    @property
    def _key(self) -> str:
        return self.redis.key("queue", self.stream)

    def _line(self, thread_id: str) -> str:
        return self.redis.key("queue", self.stream, "thread", thread_id)

    def _notes(self, entry_id: str) -> str:
        return self.redis.key("queue", self.stream, "notes", entry_id)

    @property
    def _consumer(self) -> str:
        return self.redis.worker_id

    # --- taking work --------------------------------------------------------------------

    async def submit(self, job: Job) -> None:
        async def durable(client: aredis.Redis) -> None:
            entry = await self._submit(
                keys=[self._key, self._line(job.thread_id)],
                args=[job.to_json(), THREAD_LINE_TTL_MS],
            )
            log.debug("queued %s as %s", job.event_id or job.kind, entry)

        async def at_once() -> None:  # Redis unreachable: answer here, not durably
            await self._local.submit(job)

        await self.redis.attempt(durable, at_once, what="queueing a turn")

    async def note(self, job: Job, **fields: str) -> None:
        if not job.id or not fields:  # run at once while Redis was away: nothing to note
            return

        async def keep(client: aredis.Redis) -> None:
            key = self._notes(job.id)
            async with client.pipeline(transaction=True) as pipe:
                for name, value in fields.items():
                    pipe.hset(key, name, value)
                # Outlives any take-over; FINISH deletes it sooner.
                pipe.pexpire(key, THREAD_LINE_TTL_MS)
                await pipe.execute()

        async def lost() -> None:
            return None

        try:
            await self.redis.attempt(keep, lost, what="noting a turn's reply")
        except Exception:  # only a take-over's repair depends on it; the answer goes on
            log.warning("could not note %s for turn %s", sorted(fields), job.id, exc_info=True)

    async def _read_notes(self, job: Job) -> Job:
        """The job with what its earlier worker noted (a take-over reads it once)."""

        async def read(client: aredis.Redis) -> dict[str, str]:
            raw = await client.hgetall(self._notes(job.id))
            return {str(k): str(v) for k, v in raw.items()}  # the connection decodes responses

        async def none() -> dict[str, str]:
            return {}

        notes = await self.redis.attempt(read, none, what="reading a turn's notes")
        return replace(job, notes=notes)

    @contextlib.asynccontextmanager
    async def serving(
        self, handler: Handler, *, gave_up: Handler | None = None
    ) -> AsyncIterator[None]:
        self._gave_up = gave_up
        async with self._local.serving(handler):
            stop = asyncio.Event()
            reader = asyncio.create_task(self._read_forever(handler, stop))
            listener = asyncio.create_task(self._bell.listen(stop))
            try:
                yield
            finally:
                # They stop after their current read, which blocks for less than the socket
                # timeout.
                await self._stop(reader, stop)
                await self._stop(listener, stop)
                # What does not finish in time stays pending: another worker takes it over.
                await self._tasks.drain(self.drain_s)

    async def _read_forever(self, handler: Handler, stop: asyncio.Event) -> None:
        await self._ensure_group()
        last_claim = 0.0
        loop = asyncio.get_running_loop()
        while not stop.is_set():
            try:
                while self._unacked:
                    await self._finish_entry(*self._unacked[0])
                    self._unacked.pop(0)
                if loop.time() - last_claim >= self.claim_s / 2:
                    last_claim = loop.time()
                    await self._take_over(handler)
                await self._read(handler)
            except UNREACHABLE as exc:
                self.redis.failed(exc, "reading the turn queue")
                await asyncio.sleep(self.redis.retry_s)
            except ResponseError as exc:
                if "NOGROUP" in str(exc):
                    await self._ensure_group()  # Redis restarted empty
                    continue
                log.exception("reading the turn queue failed; trying again")
                await asyncio.sleep(self.redis.retry_s)
            except Exception:  # a reader that died would leave this worker deaf, silently
                log.exception("reading the turn queue failed; trying again")
                await asyncio.sleep(self.redis.retry_s)

    async def _ensure_group(self) -> None:
        async def create(client: aredis.Redis) -> None:
            try:
                await client.xgroup_create(self._key, self.group, id="0", mkstream=True)
            except ResponseError as exc:
                if "BUSYGROUP" not in str(exc):
                    raise

        async def later() -> None:
            return None

        await self.redis.attempt(create, later, what="creating the turn queue")

    async def _read(self, handler: Handler) -> None:
        if self._free_slots() <= 0:
            # Full: leave new questions to the other workers for now. Not a wait on the
            # slots: the take-over of a dead worker's turns must go on meanwhile (this
            # worker's own turns may be queued behind them in their threads).
            await asyncio.sleep(0.1)
            return
        replies = await self.redis.client.xreadgroup(
            self.group,
            self._consumer,
            {self._key: ">"},
            # One new turn per read, so a backlog is shared by the workers as they come
            # back for more: the busiest worker comes back last, and with a batch it took
            # the whole backlog (72 of 105 turns on one of two workers under team_load.py).
            count=1,
            # Inside the socket timeout, or a quiet queue would look like a dead server.
            block=int(self.redis.timeout_s * 500),
        )
        self.redis.worked()
        for _stream, entries in cast(list[tuple[str, list[tuple[str, dict[str, str]]]]], replies):
            for entry_id, fields in entries:
                self._start(handler, entry_id, fields, attempt=1)

    async def _take_over(self, handler: Handler) -> None:
        """Claim the jobs of workers that stopped answering (died, or hung)."""
        idle_ms = int(self.claim_s * 1000)
        cursor = "0-0"
        while True:  # every stalled entry, page by page: a dead worker may have held many
            reply = await self.redis.client.xautoclaim(
                self._key, self.group, self._consumer, idle_ms, start_id=cursor, count=64
            )
            cursor, claimed = str(reply[0]), reply[1]
            deleted = reply[2] if len(reply) > 2 else []  # Redis 7 also lists deleted entries
            for entry_id in deleted:
                await self.redis.client.xack(self._key, self.group, entry_id)
            for entry_id, fields in claimed:
                attempt = await self._deliveries(entry_id)
                log.warning("taking over turn %s from a worker that stopped (attempt %d)",
                            entry_id, attempt)  # fmt: skip
                self._start(handler, entry_id, fields, attempt=attempt)
            if cursor == "0-0":
                break
        await self._forget_stopped_workers()

    async def _forget_stopped_workers(self) -> None:
        """Drop the group's consumers that left nothing pending long ago (stopped workers),
        so the group does not grow by one name per restart forever."""
        client = self.redis.client
        for consumer in await client.xinfo_consumers(self._key, self.group):
            stopped = consumer["name"] != self._consumer and not int(consumer["pending"])
            if stopped and int(consumer["idle"]) / 1000 >= self.forget_after_s:
                await client.xgroup_delconsumer(self._key, self.group, consumer["name"])

    async def _deliveries(self, entry_id: str) -> int:
        pending = await self.redis.client.xpending_range(
            self._key, self.group, min=entry_id, max=entry_id, count=1
        )
        return int(pending[0]["times_delivered"]) if pending else 1

    def _free_slots(self) -> int:
        return self.concurrency - len(self._tasks.running)

    def _start(
        self, handler: Handler, entry_id: str, fields: dict[str, str], *, attempt: int
    ) -> None:
        try:
            job = Job.from_json(fields["job"], id=entry_id, attempt=attempt)
        except (KeyError, TypeError, ValueError):
            log.error("dropping unreadable queue entry %s: %r", entry_id, fields)
            self._tasks.start(self._drop(entry_id, ""))
            return
        self._tasks.start(self._work(handler, job))

    # --- answering one job --------------------------------------------------------------

    async def _work(self, handler: Handler, job: Job) -> None:
        if job.attempt > self.max_attempts:
            log.error(
                "dropping turn %s (%s): %d workers failed it; see the log of each",
                job.id, job.event_id, job.attempt - 1,
            )  # fmt: skip
            await self._say_gave_up(await self._with_notes(job))
            await self._drop(job.id, job.thread_id)
            return
        if job.attempt > 1:
            job = await self._with_notes(job)
        done = asyncio.Event()
        beating = asyncio.create_task(self._keep_claimed(job, done))
        try:
            await self._wait_for_turn(job)
            # A slot only for answering: a job waiting for its thread takes none.
            async with self._slots:
                await answer(handler, job)
        finally:
            await self._stop(beating, done)
        await self._drop(job.id, job.thread_id)

    async def _with_notes(self, job: Job) -> Job:
        try:
            return await self._read_notes(job)
        except Exception:  # answered all the same, only without the repair
            log.warning("could not read the notes of turn %s", job.id, exc_info=True)
            return job

    async def _say_gave_up(self, job: Job) -> None:
        """Let the adapter tell the asker why no answer comes. Bounded well inside the
        claim time: the job is not heart-beaten meanwhile, and a worker that took it over
        again would say it twice."""
        if self._gave_up is None:
            return
        with bind(thread_id=job.thread_id, event_id=job.event_id):
            try:
                await asyncio.wait_for(self._gave_up(job), self.claim_s / 2)
            except Exception:  # the drop must go on, or the poison message stalls its thread
                log.exception("could not tell the asker that turn %s was dropped", job.id)

    async def _stop(self, task: asyncio.Task[None], stop: asyncio.Event) -> None:
        """Tell a loop that talks to Redis to stop, and wait for it; cancel it only if it
        does not. A cancellation alone can be lost in a Redis call's socket timeout, and
        the loop (a heartbeat, say) would then run on forever."""
        stop.set()
        await asyncio.wait({task}, timeout=self.redis.timeout_s + 1)
        task.cancel()  # not awaited: a cancellation it lost would make this wait forever

    async def _wait_for_turn(self, job: Job) -> None:
        """Wait until every earlier job of this thread is done (on whichever worker)."""

        async def may_run() -> bool:
            try:
                return bool(
                    await self._may_run(keys=[self._key, self._line(job.thread_id)], args=[job.id])
                )
            except UNREACHABLE as exc:
                self.redis.failed(exc, "waiting for a thread's turn")
                return True  # the runner's lock still keeps one run at a time per thread

        await self._bell.wait_until(job.thread_id, may_run)

    async def _keep_claimed(self, job: Job, done: asyncio.Event) -> None:
        while True:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(done.wait(), self.claim_s / 3)
            if done.is_set():
                return
            try:
                ours = await self._heartbeat(
                    keys=[self._key], args=[self.group, self._consumer, job.id]
                )
            except UNREACHABLE as exc:
                self.redis.failed(exc, "keeping a turn claimed")
                continue
            if not ours:
                log.warning("turn %s was taken over by another worker", job.id)
                return

    async def _drop(self, entry_id: str, thread_id: str) -> None:
        """Acknowledge and delete the entry, letting the thread's next job go."""
        try:
            await self._finish_entry(entry_id, thread_id)
        except UNREACHABLE as exc:
            # Acknowledged when Redis is back (the read loop retries), unless this worker
            # dies first: then another takes it over and answers it again, a rare
            # duplicate rather than a lost question.
            self.redis.failed(exc, "finishing a queued turn")
            self._unacked.append((entry_id, thread_id))

    async def _finish_entry(self, entry_id: str, thread_id: str) -> None:
        await self._finish(
            keys=[self._key, self._line(thread_id), self._notes(entry_id), self._bell.channel],
            args=[self.group, entry_id, thread_id],
        )
        self._bell.ring(thread_id)  # this worker's waiters need not hear it from Redis
