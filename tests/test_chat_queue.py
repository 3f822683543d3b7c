"""The durable turn queue on a real Redis: once, in order per thread, taken over when a
worker dies, dropped after too many failures, and still answering while Redis is away."""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack
from typing import Any

import pytest

from adapters.chat.queue import Handler, Job, LocalTurnQueue
from adapters.chat.queue_redis import RedisTurnQueue
from agent.coordination.redis_connection import RedisConnection
from tests.support.redis_support import RedisServer
from tests.support.slack_support import until


def _worker(redis: RedisConnection, **options: Any) -> RedisTurnQueue:
    """Another worker on the same Redis and key prefix (its own connection and name)."""
    other = RedisConnection(redis.url, prefix=redis.prefix, retry_s=redis.retry_s, timeout_s=0.5)
    return RedisTurnQueue(other, "test", **options)


class Log:
    """What each handler saw, and when it started and ended."""

    def __init__(self) -> None:
        self.events: list[tuple[str, str, str]] = []  # (what, worker, event id)

    def handler(self, worker: str, *, slow: float = 0.0) -> Handler:
        async def handle(job: Job) -> None:
            self.events.append(("start", worker, job.event_id))
            await asyncio.sleep(random.uniform(0, slow))
            self.events.append(("end", worker, job.event_id))

        return handle

    def done(self, event_id: str) -> bool:
        return ("end", event_id) in {(what, e) for what, _w, e in self.events}


@pytest.fixture
async def workers(
    redis_connection: RedisConnection,
) -> AsyncIterator[tuple[RedisTurnQueue, RedisTurnQueue]]:
    a, b = _worker(redis_connection, claim_s=0.6), _worker(redis_connection, claim_s=0.6)
    yield a, b
    for queue in (a, b):
        await queue.redis.aclose()


async def test_each_job_is_answered_once_by_one_of_two_workers(
    workers: tuple[RedisTurnQueue, RedisTurnQueue],
) -> None:
    a, b = workers
    log = Log()
    async with a.serving(log.handler("a", slow=0.05)), b.serving(log.handler("b", slow=0.05)):
        for n in range(40):
            await (a if n % 2 else b).submit(Job("ask", f"thread-{n}", {"n": n}, event_id=f"e{n}"))
        await until(lambda: all(log.done(f"e{n}") for n in range(40)), timeout=20)
    starts = [e for what, _w, e in log.events if what == "start"]
    assert sorted(starts) == sorted(f"e{n}" for n in range(40))  # each exactly once
    assert {w for _what, w, _e in log.events} == {"a", "b"}  # both workers took work


async def test_jobs_of_one_thread_run_in_order_and_never_overlap(
    workers: tuple[RedisTurnQueue, RedisTurnQueue],
) -> None:
    a, b = workers
    log = Log()
    async with a.serving(log.handler("a", slow=0.08)), b.serving(log.handler("b", slow=0.08)):
        for n in range(8):
            await (a if n % 2 else b).submit(Job("ask", "one-thread", {}, event_id=f"m{n}"))
        await until(lambda: log.done("m7"), timeout=20)
    sequence = [(what, e) for what, _w, e in log.events]
    expected = [(what, f"m{n}") for n in range(8) for what in ("start", "end")]
    assert sequence == expected


async def test_a_dead_workers_job_is_taken_over_and_the_thread_goes_on(
    workers: tuple[RedisTurnQueue, RedisTurnQueue],
) -> None:
    a, b = workers
    log = Log()
    stuck = asyncio.Event()

    async def dies(job: Job) -> None:
        log.events.append(("start", "a", job.event_id))
        stuck.set()
        await asyncio.Event().wait()  # mid-answer when the worker "dies"

    async with a.serving(dies):
        await a.submit(Job("ask", "t", {}, event_id="first"))
        await asyncio.wait_for(stuck.wait(), 10)
        # A killed process: its tasks stop without acknowledging anything.
        for task in list(a._tasks.running):
            task.cancel()
    await b.submit(Job("ask", "t", {}, event_id="second"))  # queued behind the stuck one
    attempts: dict[str, int] = {}

    async def finish(job: Job) -> None:
        attempts[job.event_id] = job.attempt
        log.events.append(("end", "b", job.event_id))

    async with b.serving(finish):
        await until(lambda: log.done("second"), timeout=20)
    assert [e for what, _w, e in log.events if what == "end"] == ["first", "second"]
    assert attempts == {"first": 2, "second": 1}  # the first was handed over once


async def test_what_a_dead_worker_noted_reaches_the_worker_that_takes_its_job_over(
    workers: tuple[RedisTurnQueue, RedisTurnQueue],
) -> None:
    a, b = workers
    noted = asyncio.Event()
    entries: list[str] = []

    async def opens_a_reply_and_dies(job: Job) -> None:
        assert job.notes == {}  # the first worker finds nothing noted
        await a.note(job, reply_ts="111.222", reply_kind="stream")
        entries.append(job.id)
        noted.set()
        await asyncio.Event().wait()

    async with a.serving(opens_a_reply_and_dies):
        await a.submit(Job("ask", "t", {}, event_id="first"))
        await asyncio.wait_for(noted.wait(), 10)
        for task in list(a._tasks.running):
            task.cancel()
    seen: list[Job] = []

    async def finish(job: Job) -> None:
        seen.append(job)

    async with b.serving(finish):
        await until(lambda: seen, timeout=20)
    # Leaving serving() finished the job: its notes went with its entry.
    assert await b.redis.client.exists(b._notes(entries[0])) == 0
    (job,) = seen
    assert (job.attempt, job.notes) == (2, {"reply_ts": "111.222", "reply_kind": "stream"})


async def test_a_note_is_lost_quietly_when_redis_is_away_or_there_is_no_entry(
    redis_server: RedisServer, redis_connection: RedisConnection
) -> None:
    queue = RedisTurnQueue(redis_connection, "test")
    await queue.note(Job("ask", "t", {}), reply_ts="1")  # answered at once: no entry
    await LocalTurnQueue().note(Job("ask", "t", {}, id="1-1"), reply_ts="1")
    redis_server.stop()
    try:
        await queue.note(Job("ask", "t", {}, id="1-1"), reply_ts="1")  # no exception
    finally:
        redis_server.start()
    assert redis_connection.down


async def test_a_job_that_failed_too_often_is_dropped_and_frees_its_thread(
    redis_connection: RedisConnection,
) -> None:
    dying = _worker(redis_connection, claim_s=0.5, max_attempts=1, drain_s=0.1)
    finisher = _worker(redis_connection, claim_s=0.5, max_attempts=1)
    seen: list[str] = []
    started = asyncio.Event()

    async def hang(job: Job) -> None:
        started.set()
        await asyncio.Event().wait()

    async def record(job: Job) -> None:
        seen.append(job.event_id)

    async with AsyncExitStack() as stack:
        stack.push_async_callback(dying.redis.aclose)
        stack.push_async_callback(finisher.redis.aclose)
        async with dying.serving(hang):
            await dying.submit(Job("ask", "t", {}, event_id="poison"))
            await asyncio.wait_for(started.wait(), 10)
            for task in list(dying._tasks.running):
                task.cancel()
        await finisher.submit(Job("ask", "t", {}, event_id="next"))
        async with finisher.serving(record):
            await until(lambda: "next" in seen, timeout=20)
    assert seen == ["next"]  # the poison job was not run a second time


async def test_while_redis_is_away_jobs_are_answered_at_once_and_later_durably_again(
    redis_server: RedisServer, redis_connection: RedisConnection
) -> None:
    queue = RedisTurnQueue(redis_connection, "test", claim_s=0.6)
    seen: list[str] = []

    async def record(job: Job) -> None:
        seen.append(job.event_id)

    async with queue.serving(record):
        await queue.submit(Job("ask", "t", {}, event_id="before"))
        await until(lambda: "before" in seen)
        redis_server.stop()
        await queue.submit(Job("ask", "t", {}, event_id="during"))  # no exception
        await until(lambda: "during" in seen)
        redis_server.start()
        await asyncio.sleep(redis_connection.retry_s + 0.1)
        await queue.submit(Job("ask", "t", {}, event_id="after"))
        await until(lambda: "after" in seen, timeout=20)
    assert seen == ["before", "during", "after"]


async def test_a_stale_head_of_line_does_not_block_the_thread(
    redis_connection: RedisConnection,
) -> None:
    queue = RedisTurnQueue(redis_connection, "test")
    line = queue._line("t")
    await redis_connection.client.rpush(line, "1-1")  # an entry that no longer exists
    seen: list[str] = []

    async def record(job: Job) -> None:
        seen.append(job.event_id)

    async with queue.serving(record):
        await queue.submit(Job("ask", "t", {}, event_id="real"))
        await until(lambda: seen == ["real"])
    assert await redis_connection.client.llen(line) == 0


async def test_the_local_queue_runs_jobs_and_refuses_them_when_not_serving() -> None:
    queue = LocalTurnQueue()
    seen: list[str] = []

    async def record(job: Job) -> None:
        seen.append(job.event_id)

    async with queue.serving(record):
        await queue.submit(Job("ask", "t", {}, event_id="x"))
    assert seen == ["x"]  # leaving serving() waited for it
    with pytest.raises(RuntimeError, match="outside serving"):
        await queue.submit(Job("ask", "t", {}))


def test_a_job_survives_its_json_form() -> None:
    job = Job("slack.answer", "slack:T:C:1", {"body": {"text": "안녕하세요"}}, event_id="Ev1")
    back = Job.from_json(job.to_json(), id="5-0", attempt=2)
    assert back.payload == job.payload and back.thread_id == job.thread_id
    assert (back.id, back.attempt, back.event_id) == ("5-0", 2, "Ev1")
    assert "안녕하세요" in job.to_json()  # readable in redis-cli, not \\u escapes


async def test_stopped_workers_are_forgotten_by_the_group(
    redis_connection: RedisConnection,
) -> None:
    """Each start is a new consumer name; names with nothing pending go after a while."""
    first, second = (
        _worker(redis_connection),
        _worker(redis_connection, forget_after_s=0.2, claim_s=0.4),
    )
    seen: list[str] = []

    async def record(job: Job) -> None:
        seen.append(job.event_id)

    async with first.serving(record):
        await first.submit(Job("ask", "t", {}, event_id="one"))
        await until(lambda: seen == ["one"])
    key, group = second._key, second.group
    assert first.redis.worker_id in {
        c["name"] for c in await redis_connection.client.xinfo_consumers(key, group)
    }
    async with second.serving(record):
        await asyncio.sleep(1.0)  # a few take-over rounds
    names = {c["name"] for c in await redis_connection.client.xinfo_consumers(key, group)}
    assert first.redis.worker_id not in names
    for queue in (first, second):
        await queue.redis.aclose()


async def test_an_unreadable_entry_is_dropped_and_the_queue_goes_on(
    redis_connection: RedisConnection, caplog: pytest.LogCaptureFixture
) -> None:
    queue = RedisTurnQueue(redis_connection, "test")
    seen: list[str] = []

    async def record(job: Job) -> None:
        seen.append(job.event_id)

    async with queue.serving(record):
        await redis_connection.client.xadd(queue._key, {"not": "a job"})  # an older version's, say
        await queue.submit(Job("ask", "t", {}, event_id="fine"))
        await until(lambda: seen == ["fine"])
        await until(lambda: "dropping unreadable queue entry" in caplog.text)
    pending = await redis_connection.client.xpending(queue._key, queue.group)
    assert pending["pending"] == 0  # nothing left to be taken over again and again


async def test_a_full_worker_still_takes_over_what_its_own_turns_wait_for(
    redis_connection: RedisConnection,
) -> None:
    """The survivor's own turns wait in their threads behind the dead worker's: filling
    its slots with them must not stop it from taking those over (it would wait forever)."""
    dead, survivor = _worker(redis_connection, claim_s=0.6), _worker(redis_connection, claim_s=0.6)
    survivor.concurrency = 2
    stuck = asyncio.Event()
    seen: list[str] = []

    async def dies(job: Job) -> None:
        stuck.set()
        await asyncio.Event().wait()

    async def record(job: Job) -> None:
        seen.append(job.event_id)

    async with dead.serving(dies):
        for thread in ("x", "y"):
            await dead.submit(Job("ask", thread, {}, event_id=f"{thread}1"))
        await until(lambda: len(dead._tasks.running) == 2)
        await asyncio.wait_for(stuck.wait(), 10)
        for task in list(dead._tasks.running):
            task.cancel()
    async with survivor.serving(record):
        for thread in ("x", "y"):
            await survivor.submit(Job("ask", thread, {}, event_id=f"{thread}2"))
        await until(lambda: len(seen) == 4, timeout=20)
    assert seen.index("x1") < seen.index("x2") and seen.index("y1") < seen.index("y2")
    for queue in (dead, survivor):
        await queue.redis.aclose()


@pytest.mark.parametrize("where", ["same worker", "other worker"])
async def test_a_waiting_job_starts_when_its_threads_previous_job_finishes(
    redis_connection: RedisConnection, where: str
) -> None:
    """No polling: with the periodic re-check an hour away, only the finished job's bell
    (rung in-process, or published through Redis to the other worker) can start the next."""
    first = _worker(redis_connection, recheck_s=3600, concurrency=1)
    second = first if where == "same worker" else _worker(redis_connection, recheck_s=3600)
    if where == "same worker":
        first.concurrency = 2
    release = asyncio.Event()
    seen: list[str] = []

    async def handle(job: Job) -> None:
        seen.append(job.event_id)
        if job.event_id == "one":
            await release.wait()

    async with AsyncExitStack() as stack:
        await stack.enter_async_context(first.serving(handle))
        await first.submit(Job("ask", "t", {}, event_id="one"))
        await until(lambda: seen == ["one"])
        if second is not first:  # the first worker is full: the second reads the next job
            await stack.enter_async_context(second.serving(handle))
        await first.submit(Job("ask", "t", {}, event_id="two"))
        await until(lambda: "t" in second._bell._waiting)  # asked once, and now waits
        release.set()
        await until(lambda: seen == ["one", "two"], timeout=10)
    for queue in {id(q): q for q in (first, second)}.values():
        await queue.redis.aclose()


async def test_a_backlog_is_shared_by_the_workers_not_taken_by_the_first_to_read(
    workers: tuple[RedisTurnQueue, RedisTurnQueue],
) -> None:
    """Each read takes one new turn: the first worker back must not take the whole
    backlog while the other stands idle (a busy worker comes back last and took most)."""
    a, b = workers
    for n in range(12):
        await a.submit(Job("ask", f"backlog-{n}", {}, event_id=f"q{n}"))
    taken: dict[str, list[str]] = {"a": [], "b": []}
    hold = asyncio.Event()

    def holding(worker: str) -> Handler:
        async def handle(job: Job) -> None:
            taken[worker].append(job.event_id)
            await hold.wait()

        return handle

    async with a.serving(holding("a")), b.serving(holding("b")):
        await until(lambda: len(taken["a"]) + len(taken["b"]) == 12, timeout=20)
        hold.set()
    assert sorted(taken["a"] + taken["b"]) == sorted(f"q{n}" for n in range(12))
    # A batch read gave one worker all 12; one at a time, the later starter (b) still
    # took 3 or more in every run, beside a CPU-heavy job too.
    assert min(len(taken["a"]), len(taken["b"])) >= 2, taken
