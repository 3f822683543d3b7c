"""Discord under load: many questions at once through the real bot, over HTTP and websocket.

The real discord.py client (built as ``teamrag discord`` builds it) runs on the real
agent (the sample knowledge base, SQLite memory, the answer cache) and talks to the
fake Discord in ``tests/fakes``: its gateway delivers the questions, its REST API
records every call with its arrival time. The LLM is the fake OpenAI server, which
answers every call after ``--latency`` seconds. Each wave asks ``--conversations``
questions at once, each in a guild of its own, so no answer comes from another's cache.

Two ways of asking are measured: ``/ask`` (the deferred interaction response, edited)
and a mention (a thread opened from the message, a progress message posted in it and
edited). Per question, from the moment the fake gateway sent it: the first call back
(the defer, or the thread creation), the first visible progress (the defer, which Discord
shows as "thinking"; or the "Thinking" message in the thread), the first of the agent's
own steps shown, the final answer (the call that carries the feedback buttons), and the
REST calls the answer took.

    .venv/bin/python benchmarks/discord_load.py [--conversations 50] [--waves 3]
        [--latency 0.3] [--json-out benchmarks/results/discord_load.json]
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from adapters.chat.feedback import SqliteFeedbackStore  # noqa: E402
from adapters.chat.services import ChatServices  # noqa: E402
from adapters.discord.client import build_client, discord_endpoints  # noqa: E402
from adapters.discord.options import Adapter  # noqa: E402
from benchmarks.agent_latency import ingested_samples, run_header  # noqa: E402
from benchmarks.chat_load import load_arguments, load_summary, report  # noqa: E402
from benchmarks.latency_scenarios import BANK  # noqa: E402
from bots.common import startup_objects_frozen  # noqa: E402
from tests.fakes.discord_payloads import BOT_ID, TOKEN  # noqa: E402
from tests.fakes.discord_rest import CALLBACK, CHANNEL_MESSAGE, START_THREAD  # noqa: E402
from tests.fakes.discord_server import FakeDiscord  # noqa: E402
from tests.fakes.discord_wire import Call  # noqa: E402
from tests.fakes.openai_server import FakeOpenAI  # noqa: E402
from tests.support.agent_support import agent, analysis, review, verdict  # noqa: E402
from tests.support.discord_support import has_feedback, until  # noqa: E402

MODES = ("/ask", "mention")


def script(fake: FakeOpenAI) -> None:
    """Every question takes the knowledge route: 4 LLM calls in 3 round trips."""
    fake.reply("Analysis", analysis(variations=["Postgres backup retention", "백업 보관 기간"]))
    fake.reply("Review", review(0.9))
    fake.reply(
        "text", "Postgres 백업은 35일 동안 보관됩니다 [1]. 매일 밤 03:00에 전체 백업을 합니다 [1]."
    )
    fake.reply("Verdict", verdict(True))


def _buttons(call: Call) -> bool:
    return isinstance(call.body, dict) and has_feedback(call.body)


def _shows_a_step(call: Call) -> bool:
    """A call that shows one of the agent's own steps (not the opening "Thinking")."""
    content = str(call.body.get("content") or "") if isinstance(call.body, dict) else ""
    return "⏳" in content and "Thinking" not in content


async def ask_wave(fake: FakeDiscord, channels: list[int], number: int) -> list[dict[str, Any]]:
    """``/ask`` in every channel at once; the figures of each answer."""
    asked = await asyncio.gather(
        *(
            fake.slash(f"{BANK[i % len(BANK)][0]} (#{number}-{i})", channel=channel)
            for i, channel in enumerate(channels)
        )
    )
    await until(
        lambda: all(has_feedback(fake.original(i) or {}) for i in asked),
        f"every answer of wave {number}",
        timeout=120,
    )
    calls = list(fake.calls)
    figures = []
    for interaction in asked:
        token = fake.interactions[interaction].token
        mine = [c for c in calls if f"/{interaction}/" in c.path or f"/{token}" in c.path]
        sent = fake.sent_at[interaction]
        deferred = min(c.at for c in mine if c.route == CALLBACK)
        steps = [c.at for c in mine if _shows_a_step(c)]
        figures.append(
            {
                "first_call_ms": (deferred - sent) * 1000,
                # Discord shows "teamrag is thinking…" from the defer on.
                "first_progress_ms": (deferred - sent) * 1000,
                "first_step_ms": (min(steps) - sent) * 1000 if steps else None,
                "final_ms": (max(c.at for c in mine if _buttons(c)) - sent) * 1000,
                "calls": len(mine),
                "routes": Counter(c.route for c in mine),
                "answers": sum(_buttons(c) for c in mine),
            }
        )
    return figures


async def mention_wave(fake: FakeDiscord, channels: list[int], number: int) -> list[dict[str, Any]]:
    """A mention in every channel at once: each opens a thread and is answered there."""
    asked = await asyncio.gather(
        *(
            fake.say(f"<@{BOT_ID}> {BANK[i % len(BANK)][0]} (#{number}-{i})", channel=channel)
            for i, channel in enumerate(channels)
        )
    )

    def answered(message: int) -> bool:
        return any(has_feedback(m) for m in fake.bot_messages(message))  # thread id = message id

    await until(lambda: all(answered(m) for m in asked), f"every answer of wave {number}", 120)
    calls = list(fake.calls)
    figures = []
    for message in asked:
        mine = [c for c in calls if f"/{message}/" in c.path or c.path.endswith(f"/{message}")]
        sent = fake.sent_at[message]
        posts = [c.at for c in mine if c.route == CHANNEL_MESSAGE]
        steps = [c.at for c in mine if _shows_a_step(c)]
        figures.append(
            {
                "first_call_ms": (min(c.at for c in mine if c.route == START_THREAD) - sent) * 1000,
                # The "Thinking" message in the new thread.
                "first_progress_ms": (min(posts) - sent) * 1000,
                "first_step_ms": (min(steps) - sent) * 1000 if steps else None,
                "final_ms": (max(c.at for c in mine if _buttons(c)) - sent) * 1000,
                "calls": len(mine),
                "routes": Counter(c.route for c in mine),
                "answers": sum(_buttons(c) for c in mine),
            }
        )
    return figures


def summary(figures: list[dict[str, Any]]) -> dict[str, Any]:
    return load_summary(
        figures,
        ("first_call_ms", "first_progress_ms", "first_step_ms", "final_ms"),
        "routes",
        "questions",
    )


async def run_mode(
    mode: str, kb: Any, folder: Path, llm: FakeOpenAI, args: argparse.Namespace
) -> dict[str, Any]:
    fake = FakeDiscord().start()
    # A guild per question and wave (and two for the warm-up): no shared answer cache.
    channels = [fake.add_guild(f"team {i}")[1] for i in range(args.conversations * args.waves + 2)]
    feedback = SqliteFeedbackStore(folder / "feedback.sqlite")
    wave = ask_wave if mode == "/ask" else mention_wave
    figures: list[dict[str, Any]] = []
    async with agent(kb, folder, llm=llm) as runner:
        await runner.warm_up()
        services = ChatServices(runner.run, feedback, update_interval_s=args.interval)
        # startup_objects_frozen: as `teamrag discord` runs the bot.
        with discord_endpoints(fake.api_base, fake.gateway_url), startup_objects_frozen():
            client = build_client(Adapter(services), guild_ready_timeout=0.05)
            running = asyncio.create_task(client.start(TOKEN))
            await until(client.is_ready, "the bot to connect", timeout=60)
            await wave(fake, channels[:2], 0)  # warm-up, not measured
            for number in range(args.waves):
                first = 2 + number * args.conversations
                figures += await wave(
                    fake, channels[first : first + args.conversations], number + 1
                )
            await client.close()
            await running
    feedback.close()
    fake.stop()
    return summary(figures)


async def run(args: argparse.Namespace) -> dict[str, Any]:
    began, header = time.monotonic(), run_header("discord_load.py")
    folder = Path(tempfile.mkdtemp(prefix="teamrag-discord-load-"))
    kb = ingested_samples(folder)
    llm = FakeOpenAI().start()
    llm.latency_s = args.latency
    script(llm)
    modes = {}
    for mode in MODES:
        modes[mode] = await run_mode(mode, kb, folder / mode.strip("/"), llm, args)
    llm.stop()
    kb.close()
    shutil.rmtree(folder, ignore_errors=True)
    return {
        **header,
        "llm_latency_s": args.latency,
        "update_interval_s": args.interval,
        "conversations_per_wave": args.conversations,
        "waves": args.waves,
        "modes": modes,
        "target_defer_p95_under_3_s": modes["/ask"]["first_call_ms"]["p95"] < 3000,
        "target_first_progress_p95_under_300_ms": {
            name: mode["first_progress_ms"]["p95"] < 300 for name, mode in modes.items()
        },
        "run_s": round(time.monotonic() - began, 1),
    }


def main() -> None:
    parser = load_arguments(
        __doc__.splitlines()[0], REPO / "benchmarks" / "results" / "discord_load.json"
    )
    args = parser.parse_args()
    result = asyncio.run(run(args))
    report(result, args.json_out)


if __name__ == "__main__":
    main()
