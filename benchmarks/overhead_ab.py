"""Graph overhead of two checkouts, measured in alternation: a before/after you can trust.

On a shared 2-core machine the knowledge turn's overhead (``agent_latency.py``) drifts by
several milliseconds from one run to the next, as much as a change is worth. This runs
``--pairs`` pairs of short runs, *before* then *after*, each in a process of its own with
that checkout's code on ``sys.path``, and prints each run's overhead p50, the median of
each side and the difference within each pair (run back to back, they share the
machine's mood). Both checkouts need ``benchmarks/agent_latency.py`` and
``latency_scenarios.py``.

    .venv/bin/python benchmarks/overhead_ab.py --before ../teamrag-before --after . \\
        [--pairs 6] [--turns 20] [--latency 0.3]
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

WARM_UP = 3  # turns not counted: connections, lazy imports, first-call caches


async def _overhead(turns: int, latency: float) -> dict[str, float]:
    """Knowledge turns on the sample documents against the fake OpenAI server."""
    from benchmarks.agent_latency import ingested_samples
    from benchmarks.latency_scenarios import Scenarios, measure
    from tests.agent_support import agent
    from tests.fakes.openai_server import FakeOpenAI

    folder = Path(tempfile.mkdtemp(prefix="teamrag-ab-"))
    kb = ingested_samples(folder)
    fake = FakeOpenAI().start()
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


def _run(checkout: Path, turns: int, latency: float) -> float:
    code = (
        f"import sys, json, asyncio; sys.path.insert(0, {str(checkout)!r}); "
        f"sys.path.insert(1, {str(Path(__file__).parent)!r}); import overhead_ab; "
        f"print(json.dumps(asyncio.run(overhead_ab._overhead({turns}, {latency}))))"
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
    args = parser.parse_args()
    sides = {"before": args.before.resolve(), "after": args.after.resolve()}
    runs: dict[str, list[float]] = {"before": [], "after": []}
    for pair in range(1, args.pairs + 1):
        for side, checkout in sides.items():
            runs[side].append(_run(checkout, args.turns, args.latency))
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
