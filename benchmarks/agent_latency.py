"""Agent latency: LLM round trips and latency per route, graph overhead, checkpoint size.

The real agent (SQLite memory, answer cache, the sample knowledge base with the USE
encoder) talks over HTTP to the fake OpenAI server in ``tests/fakes``, which answers
every call after a fixed delay. Each route runs ``--turns`` turns (the scripts are in
``latency_scenarios.py``); the seeds' order done naively (``naive_pipeline.py``) runs
beside it on the same server and the same search. Round trips are the waves of
overlapping LLM calls the server saw during a turn; overhead is a turn's wall time
minus the time covered by its LLM calls. Then 200 turns in one thread measure the
checkpoint a long thread leaves behind.

    .venv/bin/python benchmarks/agent_latency.py [--turns 20] [--latency 0.3]
        [--json-out benchmarks/results/agent_latency.json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from langchain_core.messages import HumanMessage  # noqa: E402

from agent.events import Event, Turn  # noqa: E402
from agent.llm.calls import structured  # noqa: E402
from agent.llm.schemas import Analysis  # noqa: E402
from agent.retrieval.embeddings import UniversalSentenceEncoder  # noqa: E402
from agent.retrieval.ingest import Ingestor  # noqa: E402
from agent.retrieval.knowledge_base import KnowledgeBase, SearchOptions  # noqa: E402
from agent.runner import Runner  # noqa: E402
from benchmarks.latency_scenarios import BANK, Sample, Scenarios, measure  # noqa: E402
from benchmarks.naive_pipeline import NaivePipeline  # noqa: E402
from bots.bench import percentile  # noqa: E402
from tests.conftest import open_kb  # noqa: E402
from tests.fakes.openai_server import FakeOpenAI  # noqa: E402
from tests.support.agent_support import agent, analysis  # noqa: E402

ROUTES = "blocked cached smalltalk knowledge history analysis tools creative knowledge_loop".split()


def summary(samples: list[Sample]) -> dict[str, Any]:
    def p50(values: list[float | None]) -> float | None:
        present = [v for v in values if v is not None]
        return round(percentile(present, 0.5), 1) if present else None

    def spread(values: list[int]) -> str:
        return str(min(values)) if min(values) == max(values) else f"{min(values)}-{max(values)}"

    walls = [s.wall_ms for s in samples]
    overheads = [s.overhead_ms for s in samples]
    return {
        "turns": len(samples),
        "llm_calls": spread([sum(s.tasks.values()) for s in samples]),
        "round_trips": spread([s.round_trips for s in samples]),
        "max_round_trips": max(s.round_trips for s in samples),
        "tasks": samples[0].tasks,
        "routes_seen": dict(Counter(s.route for s in samples)),
        "degraded_turns": sum(s.degraded for s in samples),
        "p50_ms": round(percentile(walls, 0.5), 1),
        "p95_ms": round(percentile(walls, 0.95), 1),
        "first_progress_p50_ms": p50([s.first_progress_ms for s in samples]),
        "first_token_p50_ms": p50([s.first_token_ms for s in samples]),
        "overhead_p50_ms": round(percentile(overheads, 0.5), 1),
        "overhead_p95_ms": round(percentile(overheads, 0.95), 1),
        "gaps_p50_ms": [p50(list(g)) for g in zip(*(s.gaps_ms for s in samples), strict=False)],
        "node_p50_ms": {k: p50([s.timings.get(k) for s in samples]) for k in samples[0].timings},
    }


async def run_turns(
    fake: FakeOpenAI,
    prepare: Callable[[int], Awaitable[Turn]],
    start: Callable[[Turn], AsyncIterator[Event]],
    turns: int,
) -> list[Sample]:
    return [await measure(fake, start(await prepare(i))) for i in range(turns)]


async def checkpoint_size(
    kb: KnowledgeBase, fake: FakeOpenAI, folder: Path, turns: int
) -> dict[str, Any]:
    """``turns`` turns in one thread (knowledge; turns 3, 8, 13... smalltalk), LLM latency 0."""
    fake.latency_s = 0.0
    sizes: dict[int, int] = {}
    async with agent(kb, folder, llm=fake) as runner:
        scenarios = Scenarios(runner, fake)
        saver = runner.graph.checkpointer
        assert saver is not None and not isinstance(saver, bool)
        config: Any = {"configurable": {"thread_id": Turn("").thread_id}}

        async def latest() -> Any:
            found = await saver.aget_tuple(config)
            assert found is not None
            return found.checkpoint

        for i in range(turns):
            scripted = await (scenarios.smalltalk(i) if i % 5 == 2 else scenarios.knowledge(i))
            final = await runner.ask(Turn(scripted.text))  # the same thread every time
            assert final.route in ("knowledge", "smalltalk") and not final.degraded, final
            if i == 0 or (i + 1) % 50 == 0 or i + 1 == turns:
                sizes[i + 1] = len(saver.serde.dumps_typed(await latest())[1])
        values = (await latest())["channel_values"]
        channels = {k: len(saver.serde.dumps_typed(v)[1]) for k, v in values.items()}
        stored = len([c async for c in saver.alist(config)])
    return {
        "turns": turns,
        "checkpoint_bytes": sizes[turns],
        "checkpoint_bytes_by_turn": sizes,
        "largest_channels_bytes": dict(sorted(channels.items(), key=lambda kv: -kv[1])[:6]),
        "messages_kept": len(values.get("messages", [])),
        "summary_chars": len(values.get("summary", "")),
        "checkpoints_stored": stored,
        "sqlite_files_bytes": {p.name: p.stat().st_size for p in folder.glob("memory.sqlite*")},
    }


async def component_costs(kb: KnowledgeBase, runner: Runner, fake: FakeOpenAI) -> dict[str, float]:
    """Parts of the overhead alone: one query embedding, one hybrid search (the agent's k and
    neighbours; a query text not seen before, so it is embedded too), one structured LLM
    call through the client with the server answering at once."""
    assert runner.deps.llms is not None
    fast = runner.deps.llms.fast
    fake.latency_s = 0.0
    fake.reply("Analysis", analysis(variations=["a query"]))

    async def p50_ms(fn: Callable[[str], Awaitable[object]]) -> float:
        times = []
        for n, (question, _, _) in enumerate(BANK):
            start = time.perf_counter()
            await fn(f"{question} ({n})")
            times.append((time.perf_counter() - start) * 1000)
        return round(percentile(times, 0.5), 2)

    async def embed(text: str) -> object:
        return kb.embedder.embed_documents([text])

    async def search(text: str) -> object:
        return kb.search(text, SearchOptions(k=6, neighbours=1))

    async def call(text: str) -> object:
        return await structured(fast, Analysis, [HumanMessage(text)])

    return {
        "query_embedding_p50_ms": await p50_ms(embed),
        "hybrid_search_p50_ms": await p50_ms(search),
        "structured_llm_call_at_0s_p50_ms": await p50_ms(call),
    }


def code_state() -> dict[str, Any]:
    """The commit measured, and the agent's files that differed from it when the run began."""

    def git(*args: str) -> str:
        return subprocess.run(["git", *args], cwd=REPO, capture_output=True, text=True).stdout

    changed = git("status", "--porcelain", "agent", "bots", "adapters").splitlines()
    return {"commit": git("rev-parse", "--short", "HEAD").strip(), "uncommitted": changed}


def run_header(script: str) -> dict[str, Any]:
    """What every benchmark result starts with: how to run it again, on what, at which code."""
    return {
        "command": " ".join([".venv/bin/python", f"benchmarks/{script}", *sys.argv[1:]]),
        "machine": {
            "cpus": os.cpu_count(),
            "processor": platform.processor() or platform.machine(),
            "python": platform.python_version(),
        },
        "code": code_state(),
    }


def ingested_samples(folder: Path) -> KnowledgeBase:
    """The sample knowledge base, ingested into ``folder``: what the latency benchmarks ask."""
    kb = open_kb(folder / "data", UniversalSentenceEncoder())
    report = Ingestor(kb).run([REPO / "samples" / "kb"])
    assert not report.failed, report.failed
    return kb


def table(routes: dict[str, dict[str, Any]]) -> None:
    from rich.console import Console
    from rich.table import Table

    columns = {
        "LLM calls": "llm_calls",
        "round trips": "round_trips",
        "p50 ms": "p50_ms",
        "p95 ms": "p95_ms",
        "first progress ms": "first_progress_p50_ms",
        "first token ms": "first_token_p50_ms",
        "overhead p50 ms": "overhead_p50_ms",
    }
    out = Table("route", *columns)
    keys = list(columns.values())
    for name, summary_ in routes.items():
        out.add_row(name, *("-" if summary_[k] is None else str(summary_[k]) for k in keys))
    Console(width=140).print(out)


def targets(result: dict[str, Any]) -> dict[str, bool]:
    routes, zero = result["routes"], result["knowledge_at_latency_0"]
    limits = {"blocked": 0, "cached": 0, "smalltalk": 1, "knowledge": 3}
    met = {f"{r} round trips <= {n}": routes[r]["max_round_trips"] <= n for r, n in limits.items()}
    met["overhead p50 < 20 ms, knowledge, LLM 0.3 s"] = routes["knowledge"]["overhead_p50_ms"] < 20
    met["overhead p50 < 20 ms, knowledge, LLM 0 s"] = zero["overhead_p50_ms"] < 20
    met["checkpoint < 256 KB"] = result["checkpoint"]["checkpoint_bytes"] < 256 * 1024
    return met


async def run(args: argparse.Namespace) -> dict[str, Any]:
    began, header = time.monotonic(), run_header("agent_latency.py")
    folder = Path(tempfile.mkdtemp(prefix="teamrag-latency-"))
    kb = ingested_samples(folder)
    fake = FakeOpenAI().start()
    fake.latency_s = args.latency
    naive = NaivePipeline(kb, fake.base_url)
    routes: dict[str, dict[str, Any]] = {}
    async with agent(kb, folder / "agent", llm=fake) as runner:
        scenarios = Scenarios(runner, fake)

        def naive_run(turn: Turn) -> AsyncIterator[Event]:
            return naive.run(turn.text)

        # Warm-up, not measured: HTTP connections, lazy imports, first-call caches.
        await run_turns(fake, scenarios.knowledge, runner.run, 1)
        await run_turns(fake, scenarios.naive_knowledge, naive_run, 1)
        for route in ROUTES:
            prepare = getattr(scenarios, route)
            routes[route] = summary(await run_turns(fake, prepare, runner.run, args.turns))
        for route in ("knowledge", "smalltalk"):
            prepare = getattr(scenarios, f"naive_{route}")
            routes[f"naive {route}"] = summary(
                await run_turns(fake, prepare, naive_run, args.turns)
            )
        costs = await component_costs(kb, runner, fake)
        zero = summary(await run_turns(fake, scenarios.knowledge, runner.run, args.turns))
    checkpoint = await checkpoint_size(kb, fake, folder / "long-thread", args.checkpoint_turns)
    fake.stop()
    kb.close()
    shutil.rmtree(folder, ignore_errors=True)

    def ratio(key: str, naive_route: str, agent_route: str) -> float:
        return round(float(routes[naive_route][key] / routes[agent_route][key]), 2)

    result = {
        **header,
        "latency_s": args.latency,
        "turns_per_route": args.turns,
        "routes": routes,
        "naive_over_agent": {
            "knowledge_round_trips": ratio("max_round_trips", "naive knowledge", "knowledge"),
            "knowledge_p50": ratio("p50_ms", "naive knowledge", "knowledge"),
            "knowledge_first_token_p50": ratio(
                "first_token_p50_ms", "naive knowledge", "knowledge"
            ),
            "smalltalk_p50": ratio("p50_ms", "naive smalltalk", "smalltalk"),
        },
        "knowledge_at_latency_0": zero,
        "components": costs,
        "checkpoint": checkpoint,
    }
    return result | {"targets_met": targets(result), "run_s": round(time.monotonic() - began, 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=20, help="turns per route")
    parser.add_argument("--latency", type=float, default=0.3, help="fake LLM seconds per call")
    parser.add_argument("--checkpoint-turns", type=int, default=200)
    parser.add_argument(
        "--json-out", type=Path, default=REPO / "benchmarks" / "results" / "agent_latency.json"
    )
    args = parser.parse_args()
    result = asyncio.run(run(args))
    table(result["routes"])
    zero, checkpoint = result["knowledge_at_latency_0"], result["checkpoint"]
    print(
        f"knowledge at LLM latency 0: p50 {zero['p50_ms']} ms, overhead p50/p95 "
        f"{zero['overhead_p50_ms']}/{zero['overhead_p95_ms']} ms; components {result['components']}"
    )
    print(
        f"checkpoint after {checkpoint['turns']} turns in one thread: "
        f"{checkpoint['checkpoint_bytes']:,} bytes, {checkpoint['checkpoints_stored']} stored"
    )
    print(json.dumps({k: result[k] for k in ("naive_over_agent", "targets_met")}, indent=1))
    print(f"whole run: {result['run_s']} s")
    args.json_out.parent.mkdir(parents=True, exist_ok=True)
    args.json_out.write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n", "utf-8")


if __name__ == "__main__":
    main()
