"""The live relay: first update at once, then throttled, never overlapping, always finished."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence

import pytest

from adapters.chat.live import LiveView, relay
from agent.events import Event, Final, Progress, Token


class RecordingReply:
    """A platform surface that records what it was asked to show."""

    def __init__(self, show_delay_s: float = 0.0, fail_show: bool = False) -> None:
        self.views: list[LiveView] = []
        self.finals: list[Final] = []
        self.show_delay_s = show_delay_s
        self.fail_show = fail_show
        self.busy = False
        self.overlaps = 0
        self.attempts = 0

    async def show(self, view: LiveView) -> None:
        self.attempts += 1
        if self.busy:
            self.overlaps += 1
        self.busy = True
        try:
            await asyncio.sleep(self.show_delay_s)
            if self.fail_show:
                raise ConnectionError("platform down")
            self.views.append(view)
        finally:
            self.busy = False

    async def finish(self, final: Final) -> None:
        if self.busy:
            self.overlaps += 1
        self.finals.append(final)


async def events(items: Sequence[Event | float]) -> AsyncIterator[Event]:
    """Yield events; a number is a pause (seconds) between them, like a working agent."""
    for item in items:
        if isinstance(item, float):
            await asyncio.sleep(item)
        else:
            yield item


STEPS: list[Event | float] = [
    Progress("understand", "질문을 이해하는 중"),
    Progress("search", "3개의 검색어로 찾는 중"),
    Token("백업은 "),
    Token("14일 보관됩니다 [1]."),
    Final("백업은 14일 동안 보관됩니다 [1].", language="ko"),
]


async def test_the_first_step_is_shown_at_once_and_the_rest_waits_for_the_interval() -> None:
    reply = RecordingReply()
    paced: list[Event | float] = []
    for item in STEPS:
        paced += [item, 0.02]
    final = await relay(events(paced), reply, interval_s=30.0)
    # A 30 s interval leaves room for one update only: the first, sent without waiting.
    assert [v.current.text for v in reply.views if v.current] == ["질문을 이해하는 중"]
    assert reply.finals == [final]
    assert final.answer.startswith("백업은 14일")


async def test_steps_complete_in_order_and_tokens_accumulate() -> None:
    reply = RecordingReply()
    script: list[Event | float] = []
    for item in STEPS[:-1]:
        script += [item, 0.03]
    await relay(events([*script, STEPS[-1]]), reply, interval_s=0.0)
    last = reply.views[-1]
    assert [(s.stage, s.status) for s in last.steps] == [
        ("understand", "complete"),
        ("search", "in_progress"),
    ]
    assert last.text == "백업은 14일 보관됩니다 [1]."
    assert last.rewrites == 0


async def test_a_reset_token_replaces_the_streamed_text_and_counts_a_rewrite() -> None:
    reply = RecordingReply()
    script: list[Event | float] = [
        Token("first draft"),
        0.03,
        Token("second ", reset=True),
        Token("draft"),
        0.03,
        Final("second draft"),
    ]
    await relay(events(script), reply, interval_s=0.0)
    assert reply.views[0].text == "first draft"
    assert (reply.views[-1].text, reply.views[-1].rewrites) == ("second draft", 1)


async def test_a_turn_faster_than_an_update_goes_straight_to_the_answer() -> None:
    # A blocked or cached turn ends within milliseconds: no progress edit, only the answer.
    reply = RecordingReply()
    await relay(events(STEPS), reply, interval_s=0.0)
    assert reply.views == []
    assert len(reply.finals) == 1


async def test_updates_never_overlap_each_other_or_the_finish() -> None:
    reply = RecordingReply(show_delay_s=0.02)
    script: list[Event | float] = []
    for i in range(30):
        script += [Token(f"w{i} "), 0.005]
    await relay(events([*script, Final("done")]), reply, interval_s=0.0)
    assert reply.overlaps == 0
    assert len(reply.views) >= 2
    assert reply.finals and reply.finals[0].answer == "done"


async def test_a_failing_update_does_not_cost_the_answer() -> None:
    reply = RecordingReply(fail_show=True)
    final = await relay(events([STEPS[0], 0.02, *STEPS[1:]]), reply, interval_s=0.0)
    assert reply.attempts >= 1
    assert reply.views == []
    assert reply.finals == [final]


async def test_a_stream_without_a_final_is_an_error_not_silence() -> None:
    reply = RecordingReply()
    with pytest.raises(RuntimeError, match="without a Final"):
        await relay(events(STEPS[:-1]), reply, interval_s=0.0)
    assert reply.finals == []
