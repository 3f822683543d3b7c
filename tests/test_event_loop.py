"""A long turn must not stall the process: while one turn reads a long pasted message,
the event loop (and with it the Slack ack, /healthz and every other turn) keeps running.

Real parts only: the HTTP service as ``teamrag serve`` composes it, on the sample
documents, asked a real 99,000-character message (TEAMRAG_MAX_INPUT_CHARS allows up to
100,000). A probe coroutine on the service's own event loop wakes every 10 ms and records
how late it woke (the loop lag) and how much CPU the loop's thread spent meanwhile.

A stall is the part of a late wake the loop spent computing: ``min(lag, loop CPU)``. With
the text checks on the loop, the input guard (~0.25 s) and the fact rules (~0.2 s) each
held it that long, all of it CPU of the loop's thread. Lag alone would also count what
a loaded machine does to any process (the process descheduled, the loop waiting for the
GIL while the turn's worker thread computes); neither is CPU of the loop's thread, so
this holds on a busy 2-core machine.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from agent.retrieval.knowledge_base import KnowledgeBase
from tests.support.http_support import http_service, http_settings

pytestmark = pytest.mark.slow

# A pasted survey column, one short answer a line.
LINE = "네\n"
QUESTION = "이 설문 응답에서 백업 관련 답은 몇 개인가요?\n" + LINE * (99_000 // len(LINE))
TICK_S = 0.01  # the probe's sleep
# The longest the loop may compute without letting the probe run. The checks on the loop
# took 0.2-0.25 s each; off it, the loop's own share of the turn is a few ms a step.
STALL_S = 0.1


@dataclass
class LoopProbe:
    """Wakes every ``TICK_S`` on the running loop; each wake's lag and the CPU time the
    loop's thread used since the previous one (:func:`time.thread_time`: the calling
    thread's, and the probe runs on the loop's thread)."""

    wakes: list[tuple[float, float]] = field(default_factory=list)  # (lag, loop CPU)
    stop: asyncio.Event = field(default_factory=asyncio.Event)

    async def run(self) -> None:
        loop = asyncio.get_running_loop()
        while not self.stop.is_set():
            due, cpu = loop.time() + TICK_S, time.thread_time()
            await asyncio.sleep(TICK_S)
            self.wakes.append((loop.time() - due, time.thread_time() - cpu))

    def stalls(self) -> list[float]:
        """The part of each wake's lag the loop spent computing, longest first."""
        return sorted((min(lag, cpu) for lag, cpu in self.wakes), reverse=True)


async def test_the_event_loop_keeps_running_while_a_turn_reads_a_long_message(
    sample_kb: KnowledgeBase, tmp_path: Path
) -> None:
    settings = http_settings(tmp_path, max_input_chars=100_000)
    async with (
        http_service(sample_kb, settings) as service,
        # The turn reads 99,000 characters: beside a CPU-heavy job it took over the client's
        # usual 30 s. The test is about the loop's lag, not the turn's length: wait for it.
        service.client(service.add_user("minji"), timeout=180.0) as client,
    ):
        assert len(QUESTION) <= 100_000
        # A first turn loads what every turn shares, so the measured one is only its own work.
        assert (await client.post("/api/chat", json={"query": "hello"})).status_code == 200
        probe = LoopProbe()
        probing = asyncio.create_task(probe.run())
        try:
            answer = await client.post("/api/chat", json={"query": QUESTION})
        finally:
            probe.stop.set()
            await probing
        assert answer.status_code == 200, answer.text
        assert answer.json()["is_blocked"] is False, answer.json()
    assert len(probe.wakes) >= 5, f"only {len(probe.wakes)} probe wakes during the turn"
    stalls = [round(s, 3) for s in probe.stalls()[:5]]
    lags = sorted((round(lag, 3) for lag, _ in probe.wakes), reverse=True)[:5]
    assert stalls[0] < STALL_S, (
        f"the event loop computed {stalls[0]:.3f} s without a break while a turn read a "
        f"long message (longest stalls {stalls}, lags {lags}); a CPU-heavy step runs on "
        "the event loop. Run it with asyncio.to_thread."
    )
