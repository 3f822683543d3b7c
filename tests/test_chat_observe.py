"""The observer wrapper: events pass unchanged, observers see every Final, and neither a
slow nor a failing observer touches the answer."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator

import pytest

from adapters.chat.live import LiveView, relay
from adapters.chat.observe import observed
from agent.events import Event, Final, Progress, Token, Turn, Usage

TURN = Turn("백업은 며칠 보관되나요?", platform="slack", workspace="T1", user="U1")
EVENTS: list[Event] = [
    Progress("search", "Searching 2 queries"),
    Token("Backups are "),
    Token("kept 35 days [1].", reset=True),
    Final(
        "Backups are kept 35 days [1].",
        route="knowledge",
        usage=Usage(120, 30),
        usage_by_model={"fast": Usage(100, 10), "chat": Usage(20, 20)},
    ),
]


class Source:
    """A turn's event stream that notes when it was closed."""

    def __init__(self) -> None:
        self.closed = asyncio.Event()

    async def run(self, turn: Turn) -> AsyncIterator[Event]:
        try:
            for event in EVENTS:
                await asyncio.sleep(0)
                yield event
        finally:
            self.closed.set()


class Seen:
    def __init__(self) -> None:
        self.calls: list[tuple[Turn, Final]] = []

    async def __call__(self, turn: Turn, final: Final) -> None:
        self.calls.append((turn, final))


async def test_events_pass_unchanged_and_observers_get_the_final() -> None:
    seen, also = Seen(), Seen()
    run = observed(Source().run, [seen, also])
    events = [event async for event in run(TURN)]
    assert events == EVENTS
    await run.drain()
    assert seen.calls == also.calls == [(TURN, EVENTS[-1])]
    assert run.pending == 0


async def test_a_failing_observer_is_logged_and_the_others_still_run(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def broken(turn: Turn, final: Final) -> None:
        raise RuntimeError("disk full")

    seen = Seen()
    run = observed(Source().run, [broken, seen])
    with caplog.at_level(logging.WARNING, logger="adapters.chat.observe"):
        events = [event async for event in run(TURN)]
        await run.drain()
    assert events == EVENTS
    assert seen.calls == [(TURN, EVENTS[-1])]
    [record] = [r for r in caplog.records if r.name == "adapters.chat.observe"]
    assert record.levelno == logging.WARNING
    assert "broken" in record.getMessage() and "RuntimeError: disk full" in record.getMessage()
    assert TURN.thread_id in record.getMessage()


class Reply:
    def __init__(self) -> None:
        self.finished: list[Final] = []

    async def show(self, view: LiveView) -> None:
        pass

    async def finish(self, final: Final) -> None:
        self.finished.append(final)


async def test_the_answer_reaches_the_chat_before_a_slow_observer_ends() -> None:
    """The relay stops reading at the Final and closes the stream: the observer still runs,
    after the answer is posted, and the runner's stream is closed at once."""
    release = asyncio.Event()
    done: list[Final] = []

    async def slow(turn: Turn, final: Final) -> None:
        await release.wait()
        done.append(final)

    source, reply = Source(), Reply()
    run = observed(source.run, [slow])
    final = await asyncio.wait_for(relay(run(TURN), reply, interval_s=0), 5)
    assert reply.finished == [final] == [EVENTS[-1]]
    assert source.closed.is_set()  # the runner can release the thread now
    assert done == [] and run.pending == 1
    release.set()
    await run.drain()
    assert done == [final] and run.pending == 0


async def test_drain_gives_up_on_a_stuck_observer_with_a_warning(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def stuck(turn: Turn, final: Final) -> None:
        await asyncio.Event().wait()

    run = observed(Source().run, [stuck])
    [event async for event in run(TURN)]
    with caplog.at_level(logging.WARNING, logger="adapters.chat.observe"):
        await run.drain(timeout_s=0.05)
    assert "1 turn records were still being written after 0.05 s" in caplog.text
    assert run.pending == 0


async def test_a_stream_without_a_final_calls_no_observer() -> None:
    async def broken_run(turn: Turn) -> AsyncIterator[Event]:
        yield Progress("search", "Searching")
        raise RuntimeError("the runner broke")

    seen = Seen()
    run = observed(broken_run, [seen])
    with pytest.raises(RuntimeError, match="the runner broke"):
        [event async for event in run(TURN)]
    await run.drain()
    assert seen.calls == []
