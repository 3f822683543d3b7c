"""``teamrag discord``: the Discord adapter on the configured agent.

Needs ``DISCORD_TOKEN``. ``DISCORD_API_BASE`` and ``DISCORD_GATEWAY_URL`` point the
client at other servers (the tests' local fakes). See docs/discord.md for creating
the application, its intents and the invite link.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

import discord

from adapters.chat.metrics import Metrics
from adapters.chat.services import ChatServices
from adapters.discord.client import CommandSyncError, build_client, discord_endpoints
from adapters.discord.options import Adapter, DiscordOptions
from bots.checks import readiness
from bots.common import BoundPorts
from bots.ops import ops_server
from bots.settings import BotConfigError, Settings

log = logging.getLogger(__name__)

PORTAL = "https://discord.com/developers/applications"


def check_discord_settings(settings: Settings) -> None:
    """Fail before opening anything when a needed variable is missing."""
    if not settings.discord_token:
        raise BotConfigError(
            f"DISCORD_TOKEN is not set: create an application at {PORTAL}, open Bot > "
            "Reset Token, copy the token into DISCORD_TOKEN (see docs/discord.md)"
        )
    count, ids = settings.discord_shard_count, settings.discord_shard_ids
    if ids and count is None:
        raise BotConfigError(
            "TEAMRAG_DISCORD_SHARD_IDS needs TEAMRAG_DISCORD_SHARD_COUNT (the total number "
            "of shards across all processes)"
        )
    if ids and count is not None and any(not 0 <= i < count for i in ids):
        raise BotConfigError(
            f"TEAMRAG_DISCORD_SHARD_IDS {ids} must lie in 0..{count - 1} "
            f"(TEAMRAG_DISCORD_SHARD_COUNT is {count})"
        )
    for name, value, schemes in (
        ("DISCORD_API_BASE", settings.discord_api_base, ("http://", "https://")),
        ("DISCORD_GATEWAY_URL", settings.discord_gateway_url, ("ws://", "wss://")),
    ):
        if value and not value.startswith(schemes):
            raise BotConfigError(f"{name} must start with {' or '.join(schemes)}, not {value!r}")


def discord_options(settings: Settings) -> DiscordOptions:
    ids = settings.discord_shard_ids
    return DiscordOptions(
        allowed_channels=frozenset(settings.discord_allowed_channels),
        allowed_roles=frozenset(settings.discord_allowed_roles),
        command_guild_id=settings.discord_guild_id,
        # Processes that split the shards share one command list: the one with shard 0
        # registers it.
        sync_commands=not ids or 0 in ids,
    )


async def serve_discord(
    settings: Settings,
    services: ChatServices,
    *,
    client_options: Mapping[str, Any] | None = None,
    ports: BoundPorts | None = None,
) -> None:
    """Run the bot until cancelled (Ctrl-C), then close the connection cleanly.

    If the application has not been granted the MESSAGE_CONTENT intent, the bot says so
    and carries on without it: mentions, DMs and /ask still work. ``client_options`` go
    to discord.py's client (tests shorten ``guild_ready_timeout``); ``ports`` holds the
    ops socket if the CLI bound it already.
    """
    check_discord_settings(settings)
    token = settings.discord_token or ""
    adapter = Adapter(services, discord_options(settings))
    checks = readiness(settings, redis=services.redis)
    try:
        metrics = services.metrics or Metrics()
        listening = ports.ops if ports else None
        async with ops_server(settings.ops_port, checks, metrics, listening=listening):
            await _connect(settings, adapter, token, client_options)
    finally:
        await checks.aclose()


async def _connect(
    settings: Settings, adapter: Adapter, token: str, client_options: Mapping[str, Any] | None
) -> None:
    message_content = True
    with discord_endpoints(settings.discord_api_base, settings.discord_gateway_url):
        while True:
            client = build_client(
                adapter,
                message_content=message_content,
                shard_count=settings.discord_shard_count,
                shard_ids=settings.discord_shard_ids,
                **(client_options or {}),
            )
            try:
                await client.start(token)
                return
            except discord.PrivilegedIntentsRequired:
                if not message_content:
                    raise
                log.warning(
                    "the MESSAGE_CONTENT intent is not enabled for this application (%s > "
                    "Bot > Privileged Gateway Intents); running without it: follow-ups in "
                    "threads need a mention",
                    PORTAL,
                )
                message_content = False
            except discord.LoginFailure:
                raise BotConfigError(
                    f"Discord rejected DISCORD_TOKEN: copy the bot token again from {PORTAL} "
                    "(Bot > Reset Token)"
                ) from None
            except CommandSyncError as exc:
                raise BotConfigError(str(exc)) from None
            finally:
                await client.close()
