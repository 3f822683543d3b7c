"""Running the real Discord adapter against the fake Discord, for the Discord tests.

:func:`discord_bot` starts a fake Discord, points discord.py at it, starts the real
client on the test's event loop and waits until it is connected. Tests then inject
what users do and wait (:func:`until`) on what the fake recorded.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

from adapters.chat.services import ChatServices
from adapters.discord.client import TeamragClient, build_client, discord_endpoints
from adapters.discord.options import Adapter, DiscordOptions
from tests.fakes.discord_payloads import TOKEN
from tests.fakes.discord_server import FakeDiscord
from tests.fakes.discord_wire import LOADING

T = TypeVar("T")


@dataclass
class Bot:
    fake: FakeDiscord
    client: TeamragClient


@asynccontextmanager
async def discord_bot(
    services: ChatServices,
    options: DiscordOptions | None = None,
    *,
    shard_count: int | None = None,
    shard_ids: Sequence[int] | None = None,
    message_content: bool = True,
    fake: FakeDiscord | None = None,
) -> AsyncIterator[Bot]:
    """The bot connected to ``fake`` (a new fake Discord unless given; a given one is
    left running, so a test can restart the bot on the same Discord)."""
    own = fake is None
    fake = fake or FakeDiscord().start()
    try:
        with discord_endpoints(fake.api_base, fake.gateway_url):
            client = build_client(
                Adapter(services, options or DiscordOptions()),
                message_content=message_content,
                shard_count=shard_count,
                shard_ids=shard_ids,
                guild_ready_timeout=0.05,
            )
            running = asyncio.create_task(client.start(TOKEN))
            try:
                await until(lambda: client.is_ready() or running.done(), "the bot to connect")
                if running.done():
                    running.result()  # the start failed: show why
                yield Bot(fake, client)
            finally:
                await client.close()
                with contextlib.suppress(Exception):
                    await running
    finally:
        if own:
            fake.stop()


async def until(
    check: Callable[[], T | Literal[False] | None], what: str, timeout: float = 20.0
) -> T:
    """Poll ``check`` until it returns something truthy; fail with ``what`` after ``timeout``."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        value = check()
        if value:
            return value
        if loop.time() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")
        await asyncio.sleep(0.02)


def buttons(message: dict[str, Any]) -> list[str]:
    """The custom ids of a message's buttons."""
    return [
        item.get("custom_id", "")
        for row in message.get("components", [])
        for item in row.get("components", [])
    ]


def has_feedback(message: dict[str, Any] | None) -> bool:
    return message is not None and any(b.startswith("teamrag:") for b in buttons(message))


def loading(message: dict[str, Any]) -> bool:
    return bool(message["flags"] & LOADING)


def embed_text(message: dict[str, Any]) -> str:
    return "\n".join(
        f"{e.get('title', '')}\n{e.get('description', '')}" for e in message.get("embeds", [])
    )
