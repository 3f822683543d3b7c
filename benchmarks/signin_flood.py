"""Authenticated requests during a flood of wrong passwords: before and after.

For each checkout given, this starts ``teamrag serve`` from it on 127.0.0.1 (a process
of its own, an empty knowledge base, SQLite in a fresh data folder), adds an account
with a password and takes a token for it, then:

1. quiet: ``--probes`` authenticated ``GET /api/conversations``, one after another;
2. flood: ``--clients`` clients post wrong passwords to ``POST /api/auth/token``,
   ``--requests`` in all, while one more client sends the same GET every
   ``--interval`` seconds (open loop) until the flood is over.

It prints, per checkout, the GET's p50/p95/max in both phases and what the flood got
(401 = a password was checked, 429 = refused before any check). The *after* checkout
runs twice: with its default sign-in limits, and with them off
(``TEAMRAG_SIGNIN_FAILURES_PER_*=0``), so that what the password pool alone does is
seen apart from the limit. The flood is bounded in count and every address is
127.0.0.1.

    .venv/bin/python benchmarks/signin_flood.py --before ../teamrag-main --after . \\
        [--clients 24] [--requests 240] [--probes 30] [--interval 0.1] [--json-out FILE]

A *before* checkout can be made without a worktree: ``git archive main | tar -x -C DIR``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.support.servers import free_port

SECRET = "benchmark-secret-" + "x" * 32
PASSWORD = "the right passphrase"
START_S = 120.0  # the service loads the encoder before it listens


def cli(checkout: Path, env: dict[str, str], *args: str, stdin: str = "") -> str:
    done = subprocess.run(
        [sys.executable, "-m", "bots", *args],
        cwd=checkout,
        env=env,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=300,
    )
    if done.returncode:
        raise SystemExit(f"teamrag {' '.join(args)} failed in {checkout}: {done.stderr}")
    return done.stdout.strip()


def percentiles(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return {
        "p50_ms": round(statistics.median(ordered), 1),
        "p95_ms": round(p95, 1),
        "max_ms": round(ordered[-1], 1),
        "n": len(ordered),
    }


async def timed_get(client: httpx.AsyncClient) -> float:
    began = time.perf_counter()
    response = await client.get("/api/conversations")
    response.raise_for_status()
    return (time.perf_counter() - began) * 1000


async def measure(url: str, token: str, args: argparse.Namespace) -> dict[str, Any]:
    auth = {"Authorization": f"Bearer {token}"}
    async with httpx.AsyncClient(base_url=url, headers=auth, timeout=120) as probe:
        for _ in range(3):  # warm-up: connection, first queries
            await timed_get(probe)
        quiet = [await timed_get(probe) for _ in range(args.probes)]

        remaining = args.requests
        statuses: Counter[int] = Counter()

        async def attacker() -> None:
            nonlocal remaining
            async with httpx.AsyncClient(base_url=url, timeout=120) as client:
                while remaining > 0:
                    remaining -= 1
                    response = await client.post(
                        "/api/auth/token", data={"username": "minji", "password": "wrong"}
                    )
                    statuses[response.status_code] += 1

        began = time.perf_counter()
        flood = [asyncio.create_task(attacker()) for _ in range(args.clients)]
        # Open loop: a GET every interval, whether the last one came back or not, so a
        # stalled GET counts for the whole time it stalls, not as one sample among many.
        probes: list[asyncio.Task[float]] = []
        while not all(task.done() for task in flood):
            probes.append(asyncio.create_task(timed_get(probe)))
            await asyncio.sleep(args.interval)
        await asyncio.gather(*flood)
        flood_s = time.perf_counter() - began
        during = list(await asyncio.gather(*probes))
    return {
        "quiet": percentiles(quiet),
        "flood": percentiles(during),
        "flood_s": round(flood_s, 1),
        "flood_statuses": dict(sorted(statuses.items())),
    }


async def run_one(checkout: Path, extra_env: dict[str, str], args: argparse.Namespace) -> Any:
    folder = Path(tempfile.mkdtemp(prefix="teamrag-signin-flood-"))
    env = os.environ | {
        "PYTHONPATH": str(checkout),
        "TEAMRAG_DATA_DIR": str(folder / "data"),
        "TEAMRAG_JWT_SECRET": SECRET,
        "TEAMRAG_LOG_LEVEL": "WARNING",
        "TEAMRAG_SOURCES_SCHEDULER": "false",
        "REDIS_URL": "",
        "DATABASE_URL": "",
        "OPENAI_API_KEY": "",
        "OPENAI_BASE_URL": "",
    }
    env |= extra_env
    for name in ("REDIS_URL", "DATABASE_URL", "OPENAI_API_KEY", "OPENAI_BASE_URL"):
        env.pop(name)  # embedded, whatever this shell has set
    cli(checkout, env, "users", "add", "minji", "--password-stdin", stdin=PASSWORD + "\n")
    token = cli(checkout, env, "users", "token", "minji")
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "bots", "serve", "--host", "127.0.0.1", "--port", str(port)],
        cwd=checkout,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=(folder / "serve.log").open("w"),
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + START_S
        async with httpx.AsyncClient(base_url=url, timeout=2) as client:
            while True:
                try:
                    if (await client.get("/healthz")).status_code == 200:
                        break
                except httpx.TransportError:
                    pass
                if server.poll() is not None or time.monotonic() > deadline:
                    log = (folder / "serve.log").read_text()
                    raise SystemExit(f"teamrag serve in {checkout} did not start:\n{log}")
                await asyncio.sleep(0.2)
        return await measure(url, token, args)
    finally:
        server.terminate()
        server.wait(30)
        shutil.rmtree(folder, ignore_errors=True)


async def run(args: argparse.Namespace) -> dict[str, Any]:
    runs: list[tuple[str, Path, dict[str, str]]] = []
    if args.before:
        runs.append(("before", args.before.resolve(), {}))
    off = {"TEAMRAG_SIGNIN_FAILURES_PER_ACCOUNT": "0", "TEAMRAG_SIGNIN_FAILURES_PER_ADDRESS": "0"}
    runs += [("after", args.after.resolve(), {}), ("after, limits off", args.after.resolve(), off)]
    results: dict[str, Any] = {
        "clients": args.clients,
        "requests": args.requests,
        "probes": args.probes,
        "cores": os.cpu_count(),
    }
    for name, checkout, extra in runs:
        results[name] = await run_one(checkout, extra, args)
        print(name, json.dumps(results[name]), flush=True)
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", type=Path, help="checkout of the code before the change")
    parser.add_argument("--after", type=Path, default=Path(__file__).resolve().parent.parent)
    parser.add_argument("--clients", type=int, default=24)
    parser.add_argument("--requests", type=int, default=240, help="wrong passwords in all")
    parser.add_argument("--probes", type=int, default=30, help="GETs timed while quiet")
    parser.add_argument("--interval", type=float, default=0.1, help="s between flood GETs")
    parser.add_argument("--json-out", type=Path)
    args = parser.parse_args()
    results = asyncio.run(run(args))
    if args.json_out:
        args.json_out.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
