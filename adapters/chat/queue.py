"""Accepted work is durable: a question the platform handed us is queued before it is answered.

This module holds the queue's interface (:class:`TurnQueue`, :class:`Job`) and the
in-process :class:`LocalTurnQueue`; the durable one on Redis Streams is
:class:`adapters.chat.queue_redis.RedisTurnQueue`.

Without Redis, :class:`LocalTurnQueue` runs each job as a task at once, and the
runner's in-process lock keeps the order; while Redis is unreachable, the Redis
queue does the same, so questions are still answered, only not durably.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import asdict, dataclass, field
from typing import Any, Protocol

from agent.plumbing.log_context import bind
from agent.plumbing.stopping import cancel_until_done

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Job:
    """One accepted question, as the adapter needs it to answer on any worker."""

    kind: str  # which of the adapter's handlers answers it
    thread_id: str  # jobs of one conversation run in the order they were queued
    payload: dict[str, Any]  # JSON-able: the platform's own event, say
    event_id: str = ""  # for the log
    id: str = ""  # the stream entry id, once queued
    attempt: int = 1  # how many workers have been handed this job
    # What an earlier worker noted while answering (:meth:`TurnQueue.note`): the reply
    # message it opened, say. Read when a worker takes the job over, else empty.
    notes: dict[str, str] = field(default_factory=dict)

    def to_json(self) -> str:
        data = asdict(self)
        del data["id"], data["attempt"], data["notes"]
        return json.dumps(data, ensure_ascii=False)

    @classmethod
    def from_json(cls, text: str, *, id: str, attempt: int) -> Job:
        return cls(**json.loads(text), id=id, attempt=attempt)


Handler = Callable[[Job], Awaitable[None]]


class TurnQueue(Protocol):
    def serving(
        self, handler: Handler, *, gave_up: Handler | None = None
    ) -> contextlib.AbstractAsyncContextManager[None]:
        """Answer jobs with ``handler`` inside the block; on leaving it, finish the jobs
        under way (up to the drain time) and stop taking new ones. ``gave_up`` is called
        with a job the queue drops because too many workers failed it (a poison message),
        so the asker hears why no answer comes; its errors are logged, not raised."""
        ...

    async def submit(self, job: Job) -> None:
        """Queue ``job``; it is answered by some worker (this one without Redis)."""
        ...

    async def note(self, job: Job, **fields: str) -> None:
        """Remember ``fields`` with the queued ``job`` (the id of the reply message it
        opened, or of a later part of a long answer), so a worker that takes the job
        over finds them in ``job.notes`` and repairs those messages instead of leaving
        them behind or posting them again. Never raises: a note that cannot be kept
        costs only that repair."""
        ...


class Tasks:
    """The jobs this process is working on, so a stopping worker can finish them."""

    def __init__(self) -> None:
        self.running: set[asyncio.Task[None]] = set()

    def start(self, work: Awaitable[None]) -> None:
        task = asyncio.ensure_future(work)
        self.running.add(task)
        task.add_done_callback(self.running.discard)

    async def drain(self, timeout_s: float, *, give_up_s: float = 10.0) -> None:
        """Wait up to ``timeout_s``, then stop the rest: a queued job stopped here stays
        pending in Redis, where another worker takes it over. A job whose cancellation
        is swallowed (inside a Redis call) is cancelled again; one that never stops is
        left after ``give_up_s``, so the worker still exits."""
        if self.running:
            await asyncio.wait(set(self.running), timeout=timeout_s)
        await cancel_until_done(set(self.running), give_up_s=give_up_s)


async def answer(handler: Handler, job: Job) -> None:
    with bind(thread_id=job.thread_id, event_id=job.event_id):
        try:
            await handler(job)
        except Exception:  # the handler says so to the user itself; this is a bug
            log.exception("answering %s (%s) failed", job.kind, job.event_id or job.id)


@dataclass
class LocalTurnQueue:
    """One process: each job runs as a task at once (nothing survives the process)."""

    drain_s: float = 30.0
    _handler: Handler | None = field(default=None, init=False)
    _tasks: Tasks = field(default_factory=Tasks, init=False)

    @contextlib.asynccontextmanager
    async def serving(
        self, handler: Handler, *, gave_up: Handler | None = None
    ) -> AsyncIterator[None]:
        # ``gave_up`` is never called: one process runs each job once and drops none.
        self._handler = handler
        try:
            yield
        finally:
            await self._tasks.drain(self.drain_s)
            self._handler = None

    async def submit(self, job: Job) -> None:
        if self._handler is None:
            raise RuntimeError("submit() outside serving(): nothing would answer the job")
        self._tasks.start(answer(self._handler, job))

    async def note(self, job: Job, **fields: str) -> None:
        return None  # nothing takes a job over in one process
