"""What the Discord adapter is configured with, as plain values (no Settings object),
and how event handlers find it from the discord.py client they are called on."""

from __future__ import annotations

from dataclasses import dataclass, field

import discord

from adapters.chat.services import ChatServices


@dataclass(frozen=True)
class DiscordOptions:
    # Only answer in these channels (a thread counts as its parent channel); empty = all.
    allowed_channels: frozenset[int] = frozenset()
    # Only answer members holding one of these roles; empty = everyone.
    allowed_roles: frozenset[int] = frozenset()
    # Sync /ask to this guild only (appears at once; for development); None = globally.
    command_guild_id: int | None = None
    # Several processes sharing one bot (explicit shard ids): only one should sync commands.
    sync_commands: bool = True


@dataclass(frozen=True)
class Adapter:
    """Everything a handler needs: the agent with its bookkeeping, and the options."""

    services: ChatServices
    options: DiscordOptions = field(default_factory=DiscordOptions)


def adapter_of(client: discord.Client) -> Adapter:
    """The adapter a teamrag client carries (button callbacks only get the client)."""
    adapter = getattr(client, "teamrag", None)
    if not isinstance(adapter, Adapter):
        raise RuntimeError(f"{type(client).__name__} is not a teamrag client")
    return adapter
