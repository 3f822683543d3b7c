"""Relay a turn's events into a chat message that is edited as the agent works.

Chat platforms limit how often one message may be edited (Slack's ``chat.update``
and Discord's message edits: about once per second). The agent, though, emits a
progress step every few milliseconds and a token per word. :func:`relay` keeps
the latest state and hands a snapshot to the platform at most once per interval,
the first one at once (the user sees "working on it" within milliseconds), and
always ends with the platform's ``finish(final)``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Literal, Protocol

from agent.events import Event, Final, Progress, Token, Turn

log = logging.getLogger(__name__)

RunTurn = Callable[[Turn], AsyncIterator[Event]]
StepStatus = Literal["in_progress", "complete"]


@dataclass(frozen=True)
class Step:
    """One progress step: the agent's stage name and its sentence in the user's language."""

    stage: str
    text: str
    status: StepStatus = "in_progress"


@dataclass(frozen=True)
class LiveView:
    """What the reply should show right now.

    ``text`` is the answer streamed so far; ``rewrites`` counts how often the agent
    started the answer over (a failed groundedness check), so a platform that
    appends deltas knows when it can no longer append.
    """

    steps: tuple[Step, ...] = ()
    text: str = ""
    rewrites: int = 0

    @property
    def current(self) -> Step | None:
        return self.steps[-1] if self.steps else None


@dataclass
class _State:
    steps: list[Step] = field(default_factory=list)
    text: str = ""
    rewrites: int = 0

    def apply(self, event: Progress | Token) -> None:
        if isinstance(event, Progress):
            self.steps = [
                Step(s.stage, s.text, "complete") if s.status == "in_progress" else s
                for s in self.steps
            ]
            self.steps.append(Step(event.stage, event.text))
        elif event.reset:
            self.text, self.rewrites = event.text, self.rewrites + 1
        else:
            self.text += event.text

    def view(self) -> LiveView:
        return LiveView(tuple(self.steps), self.text, self.rewrites)


class LiveReply(Protocol):
    """A platform's reply under construction."""

    async def show(self, view: LiveView) -> None:
        """Render the steps and the text so far. Called at most once per interval and
        never concurrently with itself or :meth:`finish`."""

    async def finish(self, final: Final) -> None:
        """Render the final answer; ``final.answer`` replaces whatever was streamed."""


async def relay(
    events: AsyncIterator[Event],
    reply: LiveReply,
    *,
    interval_s: float = 1.0,
    clock: Callable[[], float] = time.monotonic,
) -> Final:
    """Show ``events`` on ``reply`` (throttled to one update per ``interval_s``) and finish it.

    A failing ``show`` is logged and the turn goes on: a missed progress edit must not
    cost the user the answer. ``finish`` is the platform's own business; its errors
    propagate so the adapter can fall back to a plainer message.
    """
    state = _State()
    dirty = asyncio.Event()
    # Held while show() runs, so stopping never cuts an update off halfway (which would
    # leave the platform's message in an unknown state before the final edit).
    showing = asyncio.Lock()
    last_shown = -float("inf")

    async def pump() -> None:
        nonlocal last_shown
        while True:
            await dirty.wait()
            wait = last_shown + interval_s - clock()
            if wait > 0:
                await asyncio.sleep(wait)
            async with showing:
                dirty.clear()
                last_shown = clock()
                try:
                    await reply.show(state.view())
                except Exception:
                    log.warning("a live update failed; the answer is still sent", exc_info=True)

    pumping = asyncio.create_task(pump())
    final: Final | None = None
    try:
        async for event in events:
            if isinstance(event, Final):
                final = event
                break
            state.apply(event)
            dirty.set()
    finally:
        async with showing:
            pumping.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await pumping
        # Close the stream now rather than whenever it is garbage collected, so whatever
        # the producer does after the Final starts at once (the runner's housekeeping).
        aclose = getattr(events, "aclose", None)
        if aclose is not None:
            await aclose()
    if final is None:  # the runner guarantees a Final; this guards a broken event source
        raise RuntimeError("the turn ended without a Final event")
    await reply.finish(final)
    return final
