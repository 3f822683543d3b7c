"""The HTTP service under load: many streamed chats at once through `teamrag serve`.

The service is built as ``teamrag serve`` builds it (``bots.serve`` on the chat services
of ``bots.wiring``: the real agent on the sample knowledge base, SQLite memory and
conversations) and runs in a process of its own, so the clients' work does not slow
it. This process runs the clients (httpx) and the fake OpenAI server, which answers
every call after ``--latency`` seconds with the knowledge route of ``slack_load.py``
(4 LLM calls in 3 round trips).

Each wave sends ``--conversations`` streamed questions at once (``POST /api/chat`` with
``"stream": true``), each from its own account in a new conversation. The answer
cache is off so every question runs the whole graph. Measured per chat, from the
moment its request is sent: the response headers, the first SSE event (a progress
step), the final event; and the server's overhead: the time the client waited
beyond what the agent itself took (the Final's ``timings.total``): authentication,
admission, storing both messages, and the streaming.

    .venv/bin/python benchmarks/http_load.py [--conversations 50] [--waves 3]
        [--latency 0.3] [--json-out benchmarks/results/http_load.json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

import httpx  # noqa: E402

from adapters.http.accounts import AccountStore  # noqa: E402
from adapters.http.db import Database  # noqa: E402
from adapters.http.tokens import Tokens  # noqa: E402
from benchmarks.agent_latency import ingested_samples, run_header  # noqa: E402
from benchmarks.chat_load import load_arguments, load_summary, report  # noqa: E402
from benchmarks.latency_scenarios import BANK  # noqa: E402
from benchmarks.slack_load import script  # noqa: E402
from tests.fakes.openai_server import FakeOpenAI  # noqa: E402

SECRET = "benchmark-secret-" + "x" * 32


def server_env(data_dir: Path, llm_url: str) -> dict[str, str]:
    return os.environ | {
        "TEAMRAG_DATA_DIR": str(data_dir),
        "TEAMRAG_JWT_SECRET": SECRET,
        "OPENAI_BASE_URL": llm_url,
        "OPENAI_API_KEY": "benchmark",
        "TEAMRAG_FAST_MODEL": "fast-model",
        "TEAMRAG_CHAT_MODEL": "chat-model",
        "TEAMRAG_CACHE": "false",
        "TEAMRAG_RATE_LIMIT_PER_MINUTE": "0",
        "TEAMRAG_LOG_LEVEL": "WARNING",
    }


async def chat(client: httpx.AsyncClient, token: str, question: str) -> dict[str, Any]:
    sent = time.monotonic()
    first_event = headers = None
    final: dict[str, Any] | None = None
    events = 0
    async with client.stream(
        "POST",
        "/api/chat",
        json={"query": question, "stream": True},
        headers={"Authorization": f"Bearer {token}"},
    ) as response:
        headers = time.monotonic()
        name = ""
        async for line in response.aiter_lines():
            if line.startswith("event:"):
                name = line[6:].strip()
                events += 1
                first_event = first_event or time.monotonic()
            elif line.startswith("data:") and name == "final":
                final = json.loads(line[5:])
    done = time.monotonic()
    assert final is not None, f"no final event (HTTP {response.status_code})"
    total_ms = (done - sent) * 1000
    return {
        "headers_ms": (headers - sent) * 1000,
        "first_event_ms": ((first_event or done) - sent) * 1000,
        "final_ms": total_ms,
        "overhead_ms": total_ms - final["timings"]["total"],
        "events": events,
        "answers": 1 if final["sources"] else 0,
        "calls": 1,
        "routes": {final["intent"]: 1},
    }


async def wave(
    url: str, tokens: list[str], conversations: int, number: int
) -> list[dict[str, Any]]:
    limits = httpx.Limits(max_connections=conversations + 10)
    async with httpx.AsyncClient(base_url=url, timeout=300, limits=limits) as client:
        return list(
            await asyncio.gather(
                *(
                    chat(client, tokens[i], f"{BANK[i % len(BANK)][0]} (#{number}-{i})")
                    for i in range(conversations)
                )
            )
        )


def start_server(data_dir: Path, llm_url: str) -> tuple[subprocess.Popen[str], str]:
    process = subprocess.Popen(
        [sys.executable, __file__, "--serve"],
        env=server_env(data_dir, llm_url),
        stdout=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    return process, process.stdout.readline().strip()


async def serve() -> None:
    """The service's process: `teamrag serve` on a free port, printed when listening."""
    import uvicorn

    from adapters.chat.channels import ChannelRules
    from bots.processes import _with_chat_services
    from bots.serve import open_http_app
    from bots.settings import Settings
    from tests.support.http_support import listening_socket

    settings = Settings()
    sock = listening_socket()

    async def run(services: Any, kb: Any) -> None:
        async with open_http_app(settings, services, kb) as app:
            config = uvicorn.Config(app, log_config=None, access_log=False)
            print(f"http://127.0.0.1:{sock.getsockname()[1]}", flush=True)
            await uvicorn.Server(config).serve(sockets=[sock])

    await _with_chat_services(settings, ChannelRules(), run)


async def run(args: argparse.Namespace) -> dict[str, Any]:
    began, header = time.monotonic(), run_header("http_load.py")
    folder = Path(tempfile.mkdtemp(prefix="teamrag-http-load-"))
    ingested_samples(folder).close()
    db = Database.open(None, folder / "data")
    accounts, issuer = AccountStore(db), Tokens(SECRET)
    tokens = []
    for i in range(max(2, args.conversations)):  # the warm-up wave has two
        accounts.add(f"user{i:03d}")
        tokens.append(issuer.issue(f"user{i:03d}"))
    db.close()
    llm = FakeOpenAI().start()
    llm.latency_s = args.latency
    script(llm)
    process, url = start_server(folder / "data", llm.base_url)
    try:
        await wave(url, tokens, 2, 0)  # warm-up, not measured: connections, first calls
        figures = []
        for number in range(1, args.waves + 1):
            figures += await wave(url, tokens, args.conversations, number)
    finally:
        process.terminate()
        process.wait(30)
        llm.stop()
        shutil.rmtree(folder, ignore_errors=True)
    summary = load_summary(
        figures, ("headers_ms", "first_event_ms", "final_ms", "overhead_ms"), "routes", "chats"
    )
    return {
        **header,
        "llm_latency_s": args.latency,
        "conversations_per_wave": args.conversations,
        "waves": args.waves,
        "summary": summary,
        "target_first_event_p95_under_200_ms": summary["first_event_ms"]["p95"] < 200,
        "run_s": round(time.monotonic() - began, 1),
    }


def main() -> None:
    parser = load_arguments(
        __doc__.splitlines()[0], REPO / "benchmarks" / "results" / "http_load.json"
    )
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        asyncio.run(serve())
        return
    result = asyncio.run(run(args))
    report(result, args.json_out)


if __name__ == "__main__":
    main()
