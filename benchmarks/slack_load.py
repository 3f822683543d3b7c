"""Slack under load: many conversations at once through the real bot, over HTTP.

The bot is built as ``teamrag slack`` builds it (``bots.slack_bot``) on the real agent
(the sample knowledge base, SQLite memory, the answer cache) and served on a local
port. Everything outside the bot runs in a second process, as it would be elsewhere in
production: the fake Slack of ``tests/fakes`` (Web API calls land there, and it sends
the events), and the fake OpenAI server, which answers every call after ``--latency``
seconds. So the bot's process does only the bot's work, and the outside clock is not
slowed by it (both processes read the same monotonic clock).

Each wave mentions the bot in ``--conversations`` channels at once (a signed
``app_mention`` and its ``message`` twin each, like Slack sends); every conversation
is its own workspace, so no answer comes from another's cache. Measured per
conversation, from the moment its event is sent: the acknowledgement, the first call
that reaches Slack, the first visible progress (the reply opening with "Thinking…"),
the first of the agent's own steps on screen, and the final answer (the call that
carries the feedback buttons); and the Slack API calls each answer took. Both reply
modes are measured: native streaming, and post-then-edit.

    .venv/bin/python benchmarks/slack_load.py [--conversations 50] [--waves 3]
        [--latency 0.3] [--json-out benchmarks/results/slack_load.json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

import aiohttp  # noqa: E402
from aiohttp import web  # noqa: E402

from adapters.chat.feedback import SqliteFeedbackStore  # noqa: E402
from adapters.chat.services import ChatServices  # noqa: E402
from agent.retrieval.knowledge_base import KnowledgeBase  # noqa: E402
from benchmarks.agent_latency import ingested_samples, run_header  # noqa: E402
from benchmarks.chat_load import load_arguments, load_summary, report  # noqa: E402
from benchmarks.latency_scenarios import BANK  # noqa: E402
from bots.common import startup_objects_frozen  # noqa: E402
from bots.settings import Settings  # noqa: E402
from bots.slack_bot import (  # noqa: E402
    EVENTS_PATH,
    build_slack_app,
    start_http,
    thread_record,
    web_api_session,
)
from tests.fakes.openai_server import FakeOpenAI  # noqa: E402
from tests.fakes.slack_server import BOT_TOKEN, BOT_USER, Call, FakeSlack  # noqa: E402
from tests.support.agent_support import agent, analysis, review, verdict  # noqa: E402
from tests.support.slack_support import SECRET, SlackSender, until  # noqa: E402

PROGRESS = ("chat.startStream", "chat.postMessage")

# --- the outside world: a process of its own ------------------------------------------


def script(fake: FakeOpenAI) -> None:
    """Every conversation takes the knowledge route: 4 LLM calls in 3 round trips."""
    fake.reply("Analysis", analysis(variations=["Postgres backup retention", "백업 보관 기간"]))
    fake.reply("Review", review(0.9))
    answer = "Postgres 백업은 35일 동안 보관됩니다 [1]. 매일 밤 03:00에 전체 백업을 합니다 [1]."
    fake.reply("text", answer)
    fake.reply("Verdict", verdict(True))


def _has_buttons(call: Call) -> bool:
    return any(b.get("type") == "context_actions" for b in call.args.get("blocks") or [])


def _shows_a_step(call: Call) -> bool:
    """A call that shows one of the agent's own steps (not the opening "Thinking")."""
    chunks = call.args.get("chunks") or []
    titles = [c.get("title") or "" for c in chunks if c.get("type") == "task_update"]
    if any(not t.startswith(("Thinking", "생각하는")) for t in titles):
        return True
    return ":hourglass_flowing_sand:" in json.dumps(call.args.get("blocks") or [])


async def wave(fake: FakeSlack, url: str, conversations: int, number: int) -> list[dict[str, Any]]:
    """Mention the bot in ``conversations`` channels at once; the figures of each."""
    fake.reset()
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=1000)) as session:
        sender = SlackSender(fake, url, session)

        async def converse(i: int) -> dict[str, Any]:
            channel, team = f"C{number:02d}{i:04d}", f"T{number:02d}{i:04d}"
            question, _, _ = BANK[i % len(BANK)]
            message = sender.user_message(
                f"<@{BOT_USER}> {question} (#{number}-{i})", channel=channel, user=f"U{i:04d}"
            )
            message["team"] = team
            mention = {k: v for k, v in message.items() if k != "channel_type"}
            mention["type"] = "app_mention"
            sent = time.monotonic()
            status = await sender.event(mention, team=team)
            acked = time.monotonic()
            await sender.event(message, team=team)  # the twin Slack also sends
            return {"channel": channel, "ts": message["ts"], "sent": sent, "ack": acked,
                    "http": status}  # fmt: skip

        started = await asyncio.gather(*(converse(i) for i in range(conversations)))
    await until(
        lambda: all(fake.answered(s["channel"], s["ts"]) for s in started),
        timeout=300,
        what=f"every answer of wave {number}",
    )
    await asyncio.sleep(0.5)  # the thread statuses are cleared just after the answers
    calls = list(fake.calls)
    figures = []
    for s in started:
        replies = {m.ts for m in fake.replies(s["channel"], s["ts"])}
        mine = [
            c
            for c in calls
            if c.args.get("channel", c.args.get("channel_id")) == s["channel"]
            and (c.args.get("thread_ts") == s["ts"] or c.args.get("ts") in replies)
        ]
        steps = [c.at for c in mine if _shows_a_step(c)]
        figures.append(
            {
                "ack_ms": (s["ack"] - s["sent"]) * 1000,
                "first_call_ms": (min(c.at for c in mine) - s["sent"]) * 1000,
                "first_progress_ms": (min(c.at for c in mine if c.method in PROGRESS) - s["sent"])
                * 1000,
                # None when the answer was ready before an update showed a step.
                "first_step_ms": (min(steps) - s["sent"]) * 1000 if steps else None,
                "final_ms": (max(c.at for c in mine if _has_buttons(c)) - s["sent"]) * 1000,
                "calls": len(mine),
                "methods": dict(Counter(c.method for c in mine)),
                "answers": len(fake.answered(s["channel"], s["ts"])),
                "http": s["http"],
            }
        )
    return figures


async def outside(latency: float) -> None:
    """Serve the fakes, and a control endpoint the bot's process drives the waves with."""
    slack, llm = FakeSlack().start(), FakeOpenAI().start()
    llm.latency_s = latency
    script(llm)

    async def run_wave(request: web.Request) -> web.Response:
        ask = await request.json()
        return web.json_response(await wave(slack, ask["url"], ask["conversations"], ask["number"]))

    app = web.Application()
    app.router.add_post("/wave", run_wave)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    info = {"control": f"http://127.0.0.1:{runner.addresses[0][1]}", "slack": slack.base_url,
            "llm": llm.base_url}  # fmt: skip
    print(json.dumps(info), flush=True)
    await asyncio.Event().wait()


# --- the bot's process -----------------------------------------------------------------


def summary(figures: list[dict[str, Any]]) -> dict[str, Any]:
    return load_summary(
        figures,
        ("ack_ms", "first_call_ms", "first_progress_ms", "first_step_ms", "final_ms"),
        "methods",
        "conversations",
    )


async def run_mode(
    kb: KnowledgeBase, folder: Path, world: dict[str, str], args: argparse.Namespace,
    *, streaming: bool,
) -> dict[str, Any]:  # fmt: skip
    settings = Settings(
        data_dir=folder / "data",
        slack_streaming=streaming,
        SLACK_BOT_TOKEN=BOT_TOKEN,
        SLACK_SIGNING_SECRET=SECRET,
        SLACK_APP_TOKEN=None,
        SLACK_API_URL=world["slack"],
    )
    threads = thread_record(settings)
    feedback = SqliteFeedbackStore(folder / "feedback.sqlite")
    llm = FakeOpenAI(base_url=world["llm"])  # not started here: the address of the other one
    async with agent(kb, folder, llm=llm) as runner, web_api_session() as session:
        await runner.warm_up()
        services = ChatServices(runner.run, feedback, update_interval_s=args.interval)
        app, bot = build_slack_app(settings, services, threads, session=session)
        server, port = await start_http(app, host="127.0.0.1", port=0)
        url = f"http://127.0.0.1:{port}{EVENTS_PATH}"

        async def one_wave(conversations: int, number: int) -> list[dict[str, Any]]:
            ask = {"url": url, "conversations": conversations, "number": number}
            async with session.post(world["control"] + "/wave", json=ask) as response:
                figures: list[dict[str, Any]] = await response.json()
                return figures

        with startup_objects_frozen():  # as `teamrag slack` does
            async with bot.serving():
                await one_wave(2, 0)  # warm-up, not measured: connections, first calls
                figures = []
                for number in range(1, args.waves + 1):
                    figures += await one_wave(args.conversations, number)
                await bot.drain(30)
        await server.cleanup()
    threads.close()
    feedback.close()
    return summary(figures)


async def run(args: argparse.Namespace) -> dict[str, Any]:
    began, header = time.monotonic(), run_header("slack_load.py")
    folder = Path(tempfile.mkdtemp(prefix="teamrag-slack-load-"))
    kb = ingested_samples(folder)
    world_process = subprocess.Popen(
        [sys.executable, __file__, "--outside", "--latency", str(args.latency)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert world_process.stdout is not None
        world = json.loads(world_process.stdout.readline())
        modes = {}
        for name, streaming in (("streaming", True), ("post and edit", False)):
            modes[name] = await run_mode(
                kb, folder / name.replace(" ", "-"), world, args, streaming=streaming
            )
    finally:
        world_process.terminate()
        world_process.wait(10)
        kb.close()
        shutil.rmtree(folder, ignore_errors=True)
    return {
        **header,
        "llm_latency_s": args.latency,
        "update_interval_s": args.interval,
        "conversations_per_wave": args.conversations,
        "waves": args.waves,
        "modes": modes,
        "target_first_progress_p95_under_300_ms": {
            name: mode["first_progress_ms"]["p95"] < 300 for name, mode in modes.items()
        },
        "run_s": round(time.monotonic() - began, 1),
    }


def main() -> None:
    parser = load_arguments(
        __doc__.splitlines()[0], REPO / "benchmarks" / "results" / "slack_load.json"
    )
    parser.add_argument("--outside", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.outside:
        asyncio.run(outside(args.latency))
        return
    result = asyncio.run(run(args))
    report(result, args.json_out)


if __name__ == "__main__":
    main()
