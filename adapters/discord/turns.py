"""Where on Discord a question was asked, and the Turn (so the conversation) it belongs to.

The thread id the agent keeps history under is
``discord:{guild or "dm"}:{channel}:{thread_root}``. The root decides what a question
shares history with:

- a thread (one the bot opened for a mention, or any other): the thread's id, so every
  follow-up there continues the same conversation;
- a direct message: the DM channel's id, so the whole DM is one conversation;
- ``/ask`` or an inline answer in a channel: the interaction or message id, a one-off
  question that does not drag the channel's other questions into its history.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

import discord

from adapters.chat.channels import ChannelRule, under_rule
from agent.events import Turn

PLATFORM = "discord"


@dataclass(frozen=True)
class Place:
    """Where on Discord a question was asked (where its answer goes is a
    :class:`~adapters.discord.queued_messages.ReplyTarget`)."""

    guild_id: int | None  # None in a direct message
    channel_id: int  # the thread's own id inside a thread
    parent_id: int | None = None  # the channel a thread belongs to

    @property
    def in_thread(self) -> bool:
        return self.parent_id is not None

    @property
    def workspace(self) -> str:
        return str(self.guild_id) if self.guild_id is not None else "dm"

    @classmethod
    def of(cls, channel: Any, guild_id: int | None, channel_id: int) -> Place:
        """The place of a message or interaction; ``channel`` may be any discord.py channel
        object, or None when discord.py has not cached it."""
        parent = channel.parent_id if isinstance(channel, discord.Thread) else None
        return cls(guild_id, channel_id, parent)

    def turn(self, question: str, *, root: int, user: int, message: int, rule: ChannelRule) -> Turn:
        """The question as a turn of the conversation rooted at ``root``, with what the
        channel's ``rule`` allows (its scopes) and asks for (its persona, its features)."""
        turn = Turn(
            text=question,
            platform=PLATFORM,
            workspace=self.workspace,
            channel=str(self.channel_id),
            thread_root=str(root),
            user=str(user),
            message_id=str(message),
        )
        return under_rule(turn, rule)


def turn_fields(turn: Turn) -> dict[str, Any]:
    """A Discord turn as JSON-able fields, for a queued job (:func:`turn_of` reads them
    back on whichever process answers), the channel's feature flags among them."""
    found = {f.name: getattr(turn, f.name) for f in fields(Turn)}
    found["scopes"] = None if turn.scopes is None else sorted(turn.scopes)
    found["features"] = None if turn.features is None else dict(turn.features)
    return found


def turn_of(found: dict[str, Any]) -> Turn:
    scopes = found.get("scopes")
    rest = {k: v for k, v in found.items() if k != "scopes"}
    return Turn(**rest, scopes=None if scopes is None else frozenset(scopes))
