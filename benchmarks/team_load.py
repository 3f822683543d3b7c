"""The team deployment under load: two ``teamrag slack`` workers, many conversations at once.

Two worker processes (the real command, ``tests/support/workers_support.py``) share a Redis
of their own, Postgres (thread memory; SQLite in the shared data folder when no
Postgres answers), a Chroma server and one data folder holding the sample knowledge
base. The fake Slack and the fake OpenAI server (every call answered after
``--latency`` seconds) run in this process. Every conversation is its own workspace
and user (no answer comes from another's cache) and has ``--turns`` turns: the first
a mention sent to one worker, each next one a thread reply sent ``--gap`` seconds
later to the other worker, while the one before is still being answered, so it
waits in the durable queue for its turn.

Measured from the fake Slack's own clock: every turn answered exactly once and in
order per thread (each answer names the question it answers), and per turn the
time from when it could start (sent, or its predecessor answered, whichever is
later) to the answer with its feedback buttons; the ideal is the LLM round trips of
one turn times ``--latency``, and an uncontended turn is measured beside it. Then
the same load again, with one worker SIGKILLed ``--kill-after`` seconds in: no turn
may be lost (the survivor finishes its own and takes the dead worker's over after
``--claim`` seconds).

    .venv/bin/python benchmarks/team_load.py [--conversations 200] [--turns 2]
        [--latency 1.0] [--gap 0.5] [--claim 5] [--kill-after 4]
        [--json-out benchmarks/results/team_load.json]
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import shutil
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

import psycopg  # noqa: E402
import redis  # noqa: E402

from agent.retrieval.embeddings import UniversalSentenceEncoder  # noqa: E402
from benchmarks.agent_latency import run_header  # noqa: E402
from benchmarks.chat_load import report  # noqa: E402
from benchmarks.team_load_figures import (  # noqa: E402
    INVOCATION,
    TAG,
    Conversation,
    Record,
    figures,
    markdown,
    stuck,
    targets,
)
from tests.fakes.openai_calls import Call as LLMCall  # noqa: E402
from tests.fakes.openai_server import FakeOpenAI, Reply  # noqa: E402
from tests.fakes.slack_server import FakeSlack  # noqa: E402
from tests.support.agent_support import analysis, request_text, review, verdict  # noqa: E402
from tests.support.redis_support import RedisServer  # noqa: E402
from tests.support.servers import chroma_server  # noqa: E402
from tests.support.workers_support import Team, ingest, reachable_postgres, worker_env  # noqa: E402


def script(llm: FakeOpenAI) -> None:
    """Every turn takes the knowledge route (4 LLM calls in 3 round trips, as in
    slack_load.py); each answer names the tag of the question it answers."""

    def answer(body: dict[str, Any]) -> Reply:
        tags = TAG.findall(request_text(body).rsplit("Question:", 1)[-1])
        tag = tags[-1] if tags else "#none"
        return Reply(content=f"{tag}: Postgres 백업은 35일 동안 보관됩니다 [1].")

    llm.reply("Analysis", analysis(variations=["Postgres backup retention", "백업 보관 기간"]))
    llm.reply("Review", review(0.9))
    llm.script["text"] = answer
    llm.reply("Verdict", verdict(True))


# The shared catalog of this invocation, when Postgres is there; dropped at the end
# unless --keep.
CATALOG_SCHEMA = f"bench_team_{INVOCATION.lower()}"


async def converse(
    team: Team, conversations: list[Conversation], gap: float, first_worker: int = 0
) -> None:
    """Start every conversation at once; each next turn ``gap`` s later, to the other worker."""

    async def one(i: int, c: Conversation) -> None:
        for turn in range(len(c.tags)):
            if turn:
                await asyncio.sleep(gap)
            await c.send(team.sender((first_worker + i + turn) % len(team.workers)), turn)

    await asyncio.gather(*(one(i, c) for i, c in enumerate(conversations)))


async def wait_answered(
    team: Team, conversations: list[Conversation], timeout: float
) -> tuple[float, bool]:
    """Seconds until every turn was answered (or ``timeout``), and whether all were."""
    began = time.monotonic()
    wanted = {(c.channel, c.root): len(c.tags) for c in conversations}

    def done() -> bool:
        answered: Counter[tuple[str, str | None]] = Counter(
            (m.channel, m.thread_ts)
            for m in list(team.slack.messages.values())
            if m.feedback_values()
        )
        return all(answered[thread] >= n for thread, n in wanted.items())

    while not done():
        if time.monotonic() - began > timeout:
            return time.monotonic() - began, False
        await asyncio.sleep(0.25)
    took = time.monotonic() - began
    await asyncio.sleep(1.0)  # a duplicate answer would show by now
    return took, True


def cpu_now(team: Team) -> dict[str, float]:
    """CPU seconds used so far by each live worker and by this process (the fakes)."""
    used = {f"worker {w.name}": w.cpu_s() for w in team.workers}
    found = {name: value for name, value in used.items() if value is not None}
    return found | {"fakes (this process)": time.process_time()}


def round_trips_of_one_turn(llm: FakeOpenAI, since: float) -> tuple[int, int]:
    calls: list[LLMCall] = [c for c in llm.calls if c.start >= since]
    return llm.round_trips(calls), len(calls)


@contextmanager
def shared_parts(folder: Path) -> Iterator[tuple[RedisServer, str]]:
    """Redis and a Chroma server holding the sample knowledge base (data in ``folder``)."""
    redis_server = RedisServer(folder / "redis").start()
    try:
        with chroma_server(folder / "chroma") as chroma_url:
            ingest(folder / "data", chroma_url, UniversalSentenceEncoder(),
                   {"public": [REPO / "samples" / "kb"]}, database_url=reachable_postgres(),
                   schema=CATALOG_SCHEMA)  # fmt: skip
            yield redis_server, chroma_url
    finally:
        redis_server.stop()


async def one_run(
    args: argparse.Namespace,
    parts: tuple[RedisServer, str],
    folder: Path,
    slack: FakeSlack,
    llm: FakeOpenAI,
    run: int,
    *,
    kill: bool,
) -> dict[str, Any]:
    redis_server, chroma_url = parts
    redis.Redis.from_url(redis_server.url).flushdb()
    env = worker_env(
        data_dir=folder / "data",
        redis_url=redis_server.url,
        chroma_url=chroma_url,
        slack=slack,
        llm=llm,
        database_url=reachable_postgres(),
        queue_claim_s=args.claim,
        rate_limit_per_minute=0,
        catalog_schema=CATALOG_SCHEMA,
    )
    team = await Team.start(slack, env, folder / f"workers-{run}")
    try:
        slack.reset()
        llm.reset()
        script(llm)
        llm.latency_s = args.latency
        # Warm-up, not measured: connections, the first Postgres and Chroma calls.
        warm = [Conversation(run, 9000 + i, 1) for i in range(4)]
        await converse(team, warm, args.gap)
        await wait_answered(team, warm, 60)
        # One turn alone: what a turn costs without contention.
        alone = Conversation(run, 9100, 1)
        since = time.monotonic()
        await converse(team, [alone], args.gap)
        await wait_answered(team, [alone], 60)
        single = figures(slack, [alone])["turn_ms"]["p50"]
        round_trips, calls = round_trips_of_one_turn(llm, since)
        # The load.
        load = [Conversation(run, i, args.turns) for i in range(args.conversations)]
        started, cpu_before = time.monotonic(), cpu_now(team)
        await converse(team, load, args.gap)
        killed: dict[str, Any] = {}
        if kill:  # once every event is delivered: a load balancer would route around it
            await asyncio.sleep(max(0.0, args.kill_after - (time.monotonic() - started)))
            victim = team.workers[1]
            under_way = [m for c in load for m in slack.replies(c.channel, c.root)
                         if m.state == "streaming"]  # fmt: skip
            victim.kill()
            killed = {"worker": victim.name, "at_s": round(time.monotonic() - started, 1),
                      "replies_streaming_at_kill": len(under_way)}  # fmt: skip
        waiting_from = time.monotonic()
        took_s, complete = await wait_answered(team, load, args.timeout)
        took_s += waiting_from - started
        cpu_after = cpu_now(team)
        result = figures(slack, load)
        if not complete:
            result["stuck"] = stuck(redis_server.url, load, Record(slack))
        survivor = team.workers[0]
        result |= {
            "all_answered": complete,
            "load_s": round(took_s, 1),
            "uncontended_turn_ms": single,
            "llm_round_trips_per_turn": round_trips,
            "llm_calls_per_turn": calls,
            "ideal_turn_ms": round(round_trips * args.latency * 1000, 1),
            "turns_taken_over": survivor.log(0).count("taking over turn"),
            "turns_dropped": sum(w.log(0).count("dropping turn") for w in team.workers),
            "tracebacks": team.tracebacks(),
            "redis_unreachable_warnings": sum(w.log(0).count("unreachable") for w in team.workers),
            "cpu_s_during_load": {
                name: round(cpu_after[name] - before, 1)
                for name, before in cpu_before.items()
                if name in cpu_after
            },
        }
        if kill:
            result["killed"] = killed
            result["orphaned_live_replies"] = sum(
                1 for c in load for m in slack.replies(c.channel, c.root) if m.state == "streaming"
            )
        return result
    finally:
        codes = await team.close()
        if not kill and any(code != 0 for code in codes.values()):
            print(f"warning: worker exit codes {codes}\n{team.logs()}", file=sys.stderr)


def drop_catalog_schema() -> None:
    """The run's catalog schema leaves Postgres with the run (each run makes a new one)."""
    url = reachable_postgres()
    if url is not None:
        with psycopg.connect(url, autocommit=True) as db:
            db.execute(f"DROP SCHEMA IF EXISTS {CATALOG_SCHEMA} CASCADE")


async def run(args: argparse.Namespace) -> dict[str, Any]:
    # A killed worker leaves the fakes writing to closed sockets; aiohttp logs each one.
    logging.getLogger("aiohttp.server").setLevel(logging.CRITICAL)
    began, header = time.monotonic(), run_header("team_load.py")
    folder = Path(tempfile.mkdtemp(prefix="teamrag-team-load-"))
    slack, llm = FakeSlack().start(), FakeOpenAI().start()
    try:
        with shared_parts(folder) as parts:
            runs = {}
            if "steady" in args.runs:
                runs["two workers"] = await one_run(args, parts, folder, slack, llm, 1, kill=False)
            if "kill" in args.runs:
                runs["one killed"] = await one_run(args, parts, folder, slack, llm, 2, kill=True)
    finally:
        slack.stop()
        llm.stop()
        if args.keep:
            print(f"kept {folder} (worker logs in workers-*/) and Postgres schema "
                  f"{CATALOG_SCHEMA}", file=sys.stderr)  # fmt: skip
        else:
            shutil.rmtree(folder, ignore_errors=True)
            drop_catalog_schema()
    return {
        **header,
        "thread_memory": "postgres" if reachable_postgres() else "sqlite",
        "llm_latency_s": args.latency,
        "conversations": args.conversations,
        "turns_per_conversation": args.turns,
        "gap_s": args.gap,
        "claim_s": args.claim,
        "runs": runs,
        "targets": targets(runs),
        "run_s": round(time.monotonic() - began, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--conversations", type=int, default=200)
    parser.add_argument("--turns", type=int, default=2, help="per conversation")
    parser.add_argument("--latency", type=float, default=1.0, help="fake LLM seconds per call")
    parser.add_argument("--gap", type=float, default=0.5, help="seconds between two turns sent")
    parser.add_argument("--claim", type=float, default=5.0, help="TEAMRAG_QUEUE_CLAIM_S")
    parser.add_argument("--kill-after", type=float, default=4.0, help="seconds into the load")
    parser.add_argument("--timeout", type=float, default=180.0, help="for every turn answered")
    parser.add_argument("--runs", default="steady,kill", help="steady, kill or both")
    parser.add_argument(
        "--keep", action="store_true", help="keep the folder, worker logs and catalog schema"
    )
    parser.add_argument(
        "--json-out", type=Path, default=REPO / "benchmarks" / "results" / "team_load.json"
    )
    args = parser.parse_args()
    result = asyncio.run(run(args))
    report(result, args.json_out)
    print(markdown(result))


if __name__ == "__main__":
    main()
