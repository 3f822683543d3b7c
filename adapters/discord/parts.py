"""A Discord answer's later messages (its parts, :mod:`adapters.chat.parts`) in a channel.

The parts of an answer in a channel, thread or DM are ordinary messages of the bot: any
process may edit or delete them by id through the REST API, so a process taking a turn
over puts its parts where a dead one left them. Interaction followups are the same
through the interaction's webhook (:class:`adapters.discord.queued.WebhookParts`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, cast

import discord

from adapters.chat.parts import Gone
from adapters.discord.render import Outgoing


@dataclass(frozen=True)
class Part:
    """One part of an answer: its message, and the feedback buttons on the last one."""

    message: Outgoing
    view: discord.ui.View | None = None

    def fields(self) -> dict[str, Any]:
        """The message's fields for an edit: every one given, so an edit replaces whatever
        the message showed before (``None`` content and view clear them)."""
        return {
            "content": self.message.content or None,
            "embeds": list(self.message.embeds),
            "view": self.view,
        }


class ChannelParts:
    """A reply's parts as messages in one channel (a :class:`~adapters.chat.parts.PartChannel`)."""

    def __init__(self, channel: discord.abc.Messageable) -> None:
        self._channel = channel

    async def post(self, index: int, part: Part) -> str:
        extra: dict[str, Any] = {} if part.view is None else {"view": part.view}
        message = part.message
        sent = await self._channel.send(
            content=message.content or None, embeds=list(message.embeds), **extra
        )
        return str(sent.id)

    async def edit(self, message_id: str, part: Part) -> None:
        try:
            await self._message(message_id).edit(**part.fields())
        except discord.NotFound as exc:
            raise Gone(str(exc)) from exc

    async def delete(self, message_id: str) -> None:
        try:
            await self._message(message_id).delete()
        except discord.NotFound as exc:
            raise Gone(str(exc)) from exc

    def _message(self, message_id: str) -> discord.PartialMessage:
        # Every channel a reply goes to (a partial messageable, a DM) takes partial messages.
        return discord.PartialMessage(channel=cast(Any, self._channel), id=int(message_id))
