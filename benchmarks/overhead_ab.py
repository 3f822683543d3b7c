"""Graph overhead of two checkouts, measured in alternation: a before/after you can trust.

On a shared 2-core machine the knowledge turn's overhead (``agent_latency.py``) drifts by
several milliseconds from one run to the next, as much as a change is worth. This runs
``--pairs`` pairs of short runs, *before* then *after*, each in a process of its own with
that checkout's code on ``sys.path``, and prints each run's overhead p50, the median of
each side and the difference within each pair (run back to back, they share the
machine's mood). Both checkouts need ``benchmarks/agent_latency.py`` and
``latency_scenarios.py``.

    .venv/bin/python benchmarks/overhead_ab.py --before ../teamrag-before --after . \\
        [--pairs 6] [--turns 20] [--latency 0.3] [--fake-process]

With ``--fake-process`` the fake OpenAI server runs in a process of its own, as the real
API does: its request parsing and streaming then no longer take the agent's interpreter
(the fake's thread otherwise competes with the turn for the GIL, and what it spends
outside a call's logged interval counts as the agent's overhead).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import multiprocessing
import shutil
import statistics
import subprocess
import sys
import tempfile
from multiprocessing.managers import BaseManager
from pathlib import Path
from typing import Any

WARM_UP = 3  # turns not counted: connections, lazy imports, first-call caches


class _FakeHost(BaseManager):
    """Hosts the checkout's ``FakeOpenAI`` in a process of its own."""


class _HostedFake:
    """What ``measure`` and ``Scenarios`` use of a ``FakeOpenAI``, served from another process.

    Call logs come back without their request bodies (the prompts), a few at a time: the
    turn's own process pays only for the few small reads of ``settle``.
    """

    def __init__(self) -> None:
        from tests.fakes.openai_calls import round_trips
        from tests.fakes.openai_server import FakeOpenAI

        class Served(FakeOpenAI):
            # Methods whose answers cross the process boundary (``start`` and ``reply``
            # answer the fake itself, which stays where it is).
            def begin(self) -> str:
                return self.start().base_url

            def queue_replies(self, task: str, *replies: Any) -> None:
                self.reply(task, *replies)

            def read(self, name: str) -> Any:
                return getattr(self, name)

            def write(self, name: str, value: Any) -> None:
                setattr(self, name, value)

            def logged(self, since: int) -> list[Any]:
                return [dataclasses.replace(c, body={}) for c in self.calls[since:]]

            def request_count(self) -> int:
                return len(self.chat_requests)

        _FakeHost.register("Served", Served)
        # fork, before the agent starts its threads: the child needs no imports of its own.
        self._host = _FakeHost(ctx=multiprocessing.get_context("fork"))
        self._host.start()
        self._fake: Any = self._host.Served()  # type: ignore[attr-defined]
        self._calls: list[Any] = []
        self._round_trips = round_trips
        self.base_url = ""

    def start(self) -> _HostedFake:
        self.base_url = self._fake.begin()
        return self

    def stop(self) -> None:
        self._fake.stop()
        self._host.shutdown()

    @property
    def latency_s(self) -> float:
        value: float = self._fake.read("latency_s")
        return value

    @latency_s.setter
    def latency_s(self, value: float) -> None:
        self._fake.write("latency_s", value)

    def reply(self, task: str, *replies: Any) -> _HostedFake:
        self._fake.queue_replies(task, *replies)
        return self

    @property
    def calls(self) -> list[Any]:
        self._calls += self._fake.logged(len(self._calls))
        return self._calls

    @property
    def chat_requests(self) -> list[None]:
        return [None] * self._fake.request_count()  # ``settle`` compares only the counts

    def round_trips(self, calls: list[Any]) -> int:
        trips: int = self._round_trips(calls)
        return trips


async def _overhead(turns: int, latency: float, fake_process: bool = False) -> dict[str, float]:
    """Knowledge turns on the sample documents against the fake OpenAI server."""
    from benchmarks.agent_latency import ingested_samples
    from benchmarks.latency_scenarios import Scenarios, measure
    from tests.fakes.openai_server import FakeOpenAI
    from tests.support.agent_support import agent

    # Started before anything else: its process forks from this one while it is small.
    fake: Any = (_HostedFake() if fake_process else FakeOpenAI()).start()
    folder = Path(tempfile.mkdtemp(prefix="teamrag-ab-"))
    kb = ingested_samples(folder)
    fake.latency_s = latency
    overheads: list[float] = []
    try:
        async with agent(kb, folder / "agent", llm=fake) as runner:
            scenarios = Scenarios(runner, fake)
            for i in range(turns + WARM_UP):
                sample = await measure(fake, runner.run(await scenarios.knowledge(i)))
                if i >= WARM_UP:
                    overheads.append(sample.overhead_ms)
    finally:
        fake.stop()
        kb.close()
        shutil.rmtree(folder, ignore_errors=True)
    return {"overhead_p50_ms": round(statistics.median(overheads), 1)}


def _run(checkout: Path, turns: int, latency: float, fake_process: bool) -> float:
    code = (
        f"import sys, json, asyncio; sys.path.insert(0, {str(checkout)!r}); "
        f"sys.path.insert(1, {str(Path(__file__).parent)!r}); import overhead_ab; "
        "print(json.dumps(asyncio.run("
        f"overhead_ab._overhead({turns}, {latency}, {fake_process}))))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=checkout, capture_output=True, text=True, check=True
    )
    value: float = json.loads(out.stdout.strip().splitlines()[-1])["overhead_p50_ms"]
    return value


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", type=Path, required=True, help="a checkout (worktree)")
    parser.add_argument("--after", type=Path, default=Path("."))
    parser.add_argument("--pairs", type=int, default=6)
    parser.add_argument("--turns", type=int, default=20, help="knowledge turns per run")
    parser.add_argument("--latency", type=float, default=0.3, help="fake LLM seconds per call")
    parser.add_argument(
        "--fake-process", action="store_true", help="run the fake OpenAI server in its own process"
    )
    args = parser.parse_args()
    sides = {"before": args.before.resolve(), "after": args.after.resolve()}
    runs: dict[str, list[float]] = {"before": [], "after": []}
    for pair in range(1, args.pairs + 1):
        for side, checkout in sides.items():
            runs[side].append(_run(checkout, args.turns, args.latency, args.fake_process))
        delta = runs["after"][-1] - runs["before"][-1]
        print(
            f"pair {pair}: before {runs['before'][-1]:.1f} ms, after {runs['after'][-1]:.1f} ms,"
            f" difference {delta:+.1f} ms",
            flush=True,
        )
    deltas = [a - b for a, b in zip(runs["after"], runs["before"], strict=True)]
    summary = {
        "before_median_ms": statistics.median(runs["before"]),
        "after_median_ms": statistics.median(runs["after"]),
        "paired_difference_median_ms": round(statistics.median(deltas), 1),
        "runs": runs,
    }
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
