"""Where a knowledge turn's time goes between its LLM calls: a median timeline.

The graph-overhead figure of ``agent_latency.py`` is one number; this prints the moments
it is made of. The same agent, sample knowledge base and fake OpenAI server run
``--turns`` knowledge turns; each node's end (from the ``teamrag.flow`` log) and each
LLM call's arrival and reply at the server are placed on the turn's clock, and the
median of each moment over the turns is printed in order. The gaps between the server's
``llm<`` and the next ``llm>`` are the overhead.

    .venv/bin/python benchmarks/turn_timeline.py [--turns 16] [--latency 0.3]
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from agent.events import Final  # noqa: E402
from benchmarks.agent_latency import ingested_samples  # noqa: E402
from benchmarks.latency_scenarios import Scenarios, settle  # noqa: E402
from tests.fakes.openai_server import FakeOpenAI  # noqa: E402
from tests.support.agent_support import agent  # noqa: E402

WARM_UP = 2  # turns not counted: connections, lazy imports, first-call caches


class NodeEnds(logging.Handler):
    """Each node's end on the monotonic clock, as the flow log reports it."""

    def __init__(self) -> None:
        super().__init__()
        self.marks: list[tuple[float, str]] = []

    def emit(self, record: logging.LogRecord) -> None:
        node = getattr(record, "node", None)
        if node:
            self.marks.append((time.monotonic(), f"end {node}"))


async def timeline(turns: int, latency: float) -> list[tuple[float, str, int]]:
    """(median ms since the turn began, moment, turns that had it), in order."""
    folder = Path(tempfile.mkdtemp(prefix="teamrag-timeline-"))
    kb = ingested_samples(folder)
    fake = FakeOpenAI().start()
    fake.latency_s = latency
    ends = NodeEnds()
    flow = logging.getLogger("teamrag.flow")
    flow.addHandler(ends)
    flow.setLevel(logging.INFO)
    moments: dict[str, list[float]] = {}
    try:
        async with agent(kb, folder / "agent", llm=fake) as runner:
            scenarios = Scenarios(runner, fake)
            for i in range(turns + WARM_UP):
                turn = await scenarios.knowledge(i)
                await settle(fake)
                before, start, final_at = len(fake.calls), time.monotonic(), None
                ends.marks.clear()
                async for event in runner.run(turn):
                    if isinstance(event, Final):
                        final_at = time.monotonic()
                await settle(fake)
                assert final_at is not None
                if i < WARM_UP:
                    continue
                marks = [*ends.marks, (final_at, "Final event")]
                for call in fake.calls[before:]:
                    marks += [(call.start, f"llm> {call.task}"), (call.end, f"llm< {call.task}")]
                named: set[str] = set()
                for at, name in sorted(marks):
                    key, n = name, 2
                    while key in named:  # a node that runs twice: "end retrieve #2"
                        key, n = f"{name} #{n}", n + 1
                    named.add(key)
                    moments.setdefault(key, []).append((at - start) * 1000)
    finally:
        flow.removeHandler(ends)
        fake.stop()
        kb.close()
        shutil.rmtree(folder, ignore_errors=True)
    return sorted((statistics.median(v), k, len(v)) for k, v in moments.items())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=16)
    parser.add_argument("--latency", type=float, default=0.3, help="fake LLM seconds per call")
    args = parser.parse_args()
    previous = 0.0
    print(f"{'ms':>8}  {'+ms':>6}  moment (median of {args.turns} knowledge turns)")
    for at, name, seen in asyncio.run(timeline(args.turns, args.latency)):
        note = "" if seen == args.turns else f"  (in {seen} turns)"
        print(f"{at:8.1f}  {at - previous:6.1f}  {name}{note}")
        previous = at


if __name__ == "__main__":
    main()
