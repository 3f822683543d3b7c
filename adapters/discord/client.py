"""The discord.py client teamrag runs: intents, sharding, ``/ask`` and its sync, and the
routing of gateway events to the handlers.

Intents are the fewest that work: guilds (channels and threads, so the bot knows which
threads it opened), guild and direct messages, and MESSAGE_CONTENT, which is privileged
and only needed for follow-ups without a mention. Mentions, DMs and ``/ask`` work
without it.

Sharding: one gateway connection serves up to 2,500 guilds, and Discord recommends
shards well before that. :func:`build_client` gives the one-connection client unless a
shard count is set; then an ``AutoShardedClient`` runs the given shards (all of them,
or ``shard_ids`` when several processes split one bot).
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from functools import partial
from typing import Any

import discord
import yarl
from discord import app_commands
from discord.gateway import DiscordWebSocket
from discord.http import Route

from adapters.chat.queue import Job, TurnQueue
from adapters.discord import messages
from adapters.discord.buttons import FeedbackButton
from adapters.discord.commands import CommandTexts, ask_command, ask_message_menu
from adapters.discord.options import Adapter
from adapters.discord.queued import ASK_JOB, answer_asked, gave_up_asked
from adapters.discord.queued_messages import MESSAGE_JOB, answer_message, gave_up_message
from adapters.discord.turns import PLATFORM

log = logging.getLogger(__name__)


class CommandSyncError(Exception):
    """Discord refused the slash commands (a guild the bot is not in, say)."""


def intents(*, message_content: bool) -> discord.Intents:
    wanted = discord.Intents.none()
    wanted.guilds = True
    wanted.guild_messages = True
    wanted.dm_messages = True
    wanted.message_content = message_content
    return wanted


class TeamragClient(discord.Client):
    """The bot on one gateway connection."""

    def __init__(self, adapter: Adapter, *, message_content: bool = True, **options: Any) -> None:
        # No message the bot posts may ping anyone unless it says so: answers quote
        # documents, and a quoted "@everyone" must stay text.
        super().__init__(
            intents=intents(message_content=message_content),
            allowed_mentions=discord.AllowedMentions.none(),
            **options,
        )
        self.teamrag = adapter
        # Accepted questions (/ask, the message command, messages for the bot): durable in
        # Redis, so any process of the bot may answer them.
        self.queue: TurnQueue = adapter.services.queue_for(PLATFORM)
        self._serving = contextlib.AsyncExitStack()
        self.tree: app_commands.CommandTree[TeamragClient] = app_commands.CommandTree(self)
        self.tree.add_command(ask_command(adapter))
        self.tree.add_command(ask_message_menu(adapter))

    async def setup_hook(self) -> None:
        # Buttons are matched by their custom_id pattern, so clicks on answers posted by
        # an earlier run of the bot are handled too.
        self.add_dynamic_items(FeedbackButton)
        await self._serving.enter_async_context(
            self.queue.serving(partial(_handle, self), gave_up=partial(_gave_up, self))
        )
        await self.tree.set_translator(CommandTexts())
        if self.teamrag.options.sync_commands:
            await sync_commands(self.tree, self.teamrag.options.command_guild_id)

    async def close(self) -> None:
        # The answers under way first (up to the queue's drain time): they need the
        # connection's HTTP session, which closing ends. Unfinished ones stay queued.
        await self._serving.aclose()
        await super().close()

    async def on_ready(self) -> None:
        log.info("connected to Discord as %s, in %d guilds", self.user, len(self.guilds))

    async def on_message(self, message: discord.Message) -> None:
        if self.user is not None:
            await messages.on_message(self.teamrag, self.user, message, self.queue)


async def _handle(client: TeamragClient, job: Job) -> None:
    if job.kind == ASK_JOB:
        await answer_asked(client.teamrag, client, client.queue, job)
    elif job.kind == MESSAGE_JOB:
        await answer_message(client.teamrag, client, client.queue, job)
    else:
        log.error("no Discord handler for queued %s; dropped", job.kind)


async def _gave_up(client: TeamragClient, job: Job) -> None:
    """The queue dropped ``job`` after too many attempts: tell the asker why."""
    if job.kind == ASK_JOB:
        await gave_up_asked(client, job)
    elif job.kind == MESSAGE_JOB:
        await gave_up_message(client, client.queue, job)
    else:
        log.error("no Discord handler for queued %s; nobody was told it was dropped", job.kind)


class ShardedTeamragClient(TeamragClient, discord.AutoShardedClient):
    """The same bot on several gateway connections (shards) in one process."""


def build_client(
    adapter: Adapter,
    *,
    message_content: bool = True,
    shard_count: int | None = None,
    shard_ids: Sequence[int] | None = None,
    **options: Any,
) -> TeamragClient:
    """``options`` go to discord.py (``guild_ready_timeout``, ``connector``...)."""
    if shard_count is None:
        if shard_ids:
            raise ValueError("shard ids need a shard count")
        return TeamragClient(adapter, message_content=message_content, **options)
    return ShardedTeamragClient(
        adapter,
        message_content=message_content,
        shard_count=shard_count,
        shard_ids=list(shard_ids) if shard_ids else None,
        **options,
    )


async def sync_commands(tree: app_commands.CommandTree[Any], guild_id: int | None) -> None:
    """Register ``/ask`` and *Ask teamrag* with Discord: in one guild (shows at once; for
    development) or globally (every guild and DMs; Discord may take a while to show a change)."""
    try:
        if guild_id is None:
            synced = await tree.sync()
        else:
            guild = discord.Object(guild_id)
            tree.copy_global_to(guild=guild)
            synced = await tree.sync(guild=guild)
    except discord.HTTPException as exc:
        where = "globally" if guild_id is None else f"to guild {guild_id}"
        raise CommandSyncError(
            f"Discord refused to register the commands {where}: {exc.text or exc.status}"
            + ("" if guild_id is None else "; is the bot in that guild (TEAMRAG_DISCORD_GUILD_ID)?")
        ) from exc
    log.info(
        "commands synced %s: %s",
        "globally" if guild_id is None else f"to guild {guild_id}",
        # Slash commands are typed with their slash; a message command is a menu item.
        ", ".join(
            f"/{c.name}" if c.type is discord.AppCommandType.chat_input else c.name for c in synced
        ),
    )


@contextmanager
def discord_endpoints(api_base: str | None, gateway_url: str | None) -> Iterator[None]:
    """Point discord.py at other REST and gateway URLs (local fakes in tests) meanwhile.

    discord.py keeps both as class attributes, so this is process-wide; they are put back
    afterwards. ``api_base`` includes the version, e.g. ``http://127.0.0.1:9001/api/v10``.
    """
    saved = Route.BASE, DiscordWebSocket.DEFAULT_GATEWAY
    if api_base:
        Route.BASE = api_base.rstrip("/")
    if gateway_url:
        DiscordWebSocket.DEFAULT_GATEWAY = yarl.URL(gateway_url)
    try:
        yield
    finally:
        Route.BASE, DiscordWebSocket.DEFAULT_GATEWAY = saved
