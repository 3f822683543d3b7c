"""The fake Discord's model of Discord: guilds, channels and threads, messages, the
interactions a test started (:class:`InteractionState`) and the calls recorded; how a
test reads it, and what the REST routes and the gateway need of it. Mixed into
:class:`tests.fakes.discord_server.FakeDiscord`.
"""

from __future__ import annotations

import copy
import threading
from dataclasses import dataclass, field
from typing import Any

from tests.fakes.discord_payloads import (
    BOT_ID,
    Guild,
    Person,
    dm_channel,
    shard_of,
    snowflake,
    thread_payload,
)
from tests.fakes.discord_wire import Call


@dataclass
class InteractionState:
    id: int
    token: str
    channel_id: int
    guild_id: int | None
    person: Person
    expired: bool = False
    token_uses: int | None = None  # webhook calls allowed before the token dies
    acked: bool = False
    original_id: int | None = None
    followup_ids: list[int] = field(default_factory=list)


class DiscordModel:
    guilds: dict[int, Guild]
    channels: dict[int, dict[str, Any]]  # threads and DM channels too
    messages: dict[int, dict[str, Any]]
    interactions: dict[int, InteractionState]
    threads: list[int]
    dm_channels: dict[int, int]  # person -> their DM channel with the bot
    calls: list[Call]
    lock: threading.Lock

    # -- what a test reads ---------------------------------------------------------

    def message(self, message_id: int) -> dict[str, Any]:
        with self.lock:
            return copy.deepcopy(self.messages[message_id])

    def channel_messages(self, channel_id: int) -> list[dict[str, Any]]:
        with self.lock:
            found = [m for m in self.messages.values() if int(m["channel_id"]) == channel_id]
            return copy.deepcopy(sorted(found, key=lambda m: int(m["id"])))

    def bot_messages(self, channel_id: int) -> list[dict[str, Any]]:
        return [m for m in self.channel_messages(channel_id) if int(m["author"]["id"]) == BOT_ID]

    def original(self, interaction_id: int) -> dict[str, Any] | None:
        state = self.interactions[interaction_id]
        return None if state.original_id is None else self.message(state.original_id)

    def followups(self, interaction_id: int) -> list[dict[str, Any]]:
        """The interaction's followups that still exist, oldest first."""
        with self.lock:
            ids = [i for i in self.interactions[interaction_id].followup_ids if i in self.messages]
        return [self.message(i) for i in ids]

    def calls_to(self, route: str) -> list[Call]:
        with self.lock:
            return [c for c in self.calls if c.route == route]

    def thread_of(self, message_id: int) -> dict[str, Any] | None:
        """The thread started from a message (a thread has its starter message's id)."""
        with self.lock:
            return copy.deepcopy(self.channels.get(message_id))

    # -- what the routes and the gateway need ----------------------------------------

    def _guild_of(self, channel_id: int) -> Guild:
        return self.guilds[int(self.channels[channel_id]["guild_id"])]

    def dm_channel_for(self, person: Person) -> int:
        with self.lock:
            if person.id not in self.dm_channels:
                channel_id = snowflake()
                self.dm_channels[person.id] = channel_id
                self.channels[channel_id] = dm_channel(channel_id, person)
            return self.dm_channels[person.id]

    def _guild_creates(self, shard_id: int, shard_count: int) -> list[dict[str, Any]]:
        with self.lock:
            return [
                guild.create_payload(
                    [
                        copy.deepcopy(self.channels[t])
                        for t in self.threads
                        if int(self.channels[t]["guild_id"]) == guild.id
                    ]
                )
                for guild in self.guilds.values()
                if shard_of(guild.id, shard_count) == shard_id
            ]

    def new_thread(self, parent: int, message_id: int, name: str, archive: int) -> dict[str, Any]:
        guild = self._guild_of(parent)
        thread = thread_payload(message_id, guild.id, parent, name, BOT_ID, archive)
        with self.lock:
            self.channels[message_id] = thread
            self.threads.append(message_id)
        return thread
