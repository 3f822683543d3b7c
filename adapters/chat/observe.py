"""Let bookkeeping (usage records, metrics) see every finished turn without touching it.

:func:`observed` wraps a :data:`~adapters.chat.live.RunTurn`: every event passes
through unchanged and, at the Final, each observer is handed the turn and its
Final.

The observers run in a background task started at the Final, not inline after
the Final is yielded. Inline would be wrong twice over: the chat relay stops
reading at the Final and closes the stream (:func:`adapters.chat.live.relay`),
so code after the ``yield`` would either never run or run inside that close,
before the relay posts the answer; and it would run while the runner still
holds the thread's lock. A task lets the Final reach the chat first and the
records be written while the platform call is under way. The tasks are tracked:
:meth:`ObservedRun.drain` waits for them at shutdown so a stopping worker does
not lose the records of its last answers. The task copies the log context, so
an observer's warnings carry the turn's thread and event ids.

An observer that fails is logged with the reason and costs nothing else: the
answer has already gone out and the other observers still run.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence

from adapters.chat.live import RunTurn
from agent.events import Event, Final, Turn

log = logging.getLogger(__name__)

Observer = Callable[[Turn, Final], Awaitable[None]]


def _name(observer: Observer) -> str:
    return getattr(observer, "__qualname__", None) or type(observer).__qualname__


class ObservedRun:
    """A :data:`RunTurn` that hands each Final to the observers; call it like the run."""

    def __init__(self, run: RunTurn, observers: Sequence[Observer]) -> None:
        self._run = run
        self._observers = tuple(observers)
        self._pending: set[asyncio.Task[None]] = set()

    def __call__(self, turn: Turn) -> AsyncIterator[Event]:
        return self._events(turn)

    async def _events(self, turn: Turn) -> AsyncIterator[Event]:
        events = self._run(turn)
        try:
            async for event in events:
                if isinstance(event, Final) and self._observers:
                    task = asyncio.create_task(self._observe(turn, event))
                    self._pending.add(task)
                    task.add_done_callback(self._pending.discard)
                yield event
        finally:
            # The consumer may stop at the Final (the relay does): close the runner's
            # stream now so its housekeeping (releasing the thread) starts at once.
            aclose = getattr(events, "aclose", None)
            if aclose is not None:
                await aclose()

    async def _observe(self, turn: Turn, final: Final) -> None:
        for observer in self._observers:
            try:
                await observer(turn, final)
            except Exception as exc:
                log.warning(
                    "observer %s failed on a turn of %s (%s: %s); the answer was sent, "
                    "only this record is missing",
                    _name(observer),
                    turn.thread_id,
                    type(exc).__name__,
                    exc,
                )

    @property
    def pending(self) -> int:
        """Observer tasks still running."""
        return len(self._pending)

    async def drain(self, timeout_s: float = 10.0) -> None:
        """Wait (at most ``timeout_s``) for the observers of turns already answered."""
        if not self._pending:
            return
        _, late = await asyncio.wait(set(self._pending), timeout=timeout_s)
        if late:
            log.warning(
                "%d turn records were still being written after %g s at shutdown; they are lost",
                len(late),
                timeout_s,
            )
            for task in late:
                task.cancel()
            await asyncio.gather(*late, return_exceptions=True)


def observed(run: RunTurn, observers: Sequence[Observer]) -> ObservedRun:
    """``run`` with ``observers`` called on every Final (see the module docstring)."""
    return ObservedRun(run, observers)
