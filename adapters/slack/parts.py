"""A Slack reply's messages as noted with its queued turn (:mod:`adapters.chat.parts`).

The reply's first message (the live one: a stream or a posted "Thinking…") is noted as
``reply_ts`` and ``reply_kind`` when it is opened; every later message of the answer is
noted as a part when it is posted. :class:`ReplyNotes` carries both ways: what this
worker notes, and what a dead worker noted, so a worker taking the turn over edits the
messages already in the thread instead of posting them twice.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from adapters.chat.parts import Gone, ReplyParts
from adapters.slack.render import SlackMessage

# The message is not there any more (deleted), or is not one the bot may edit.
GONE_ERRORS = frozenset({"message_not_found", "cant_update_message", "cant_delete_message"})

# Told the ts of the reply's first message once it is posted, and its kind ("post", "stream").
Opened = Callable[[str, str], Awaitable[None]]


async def _nobody(ts: str, kind: str) -> None:
    return None


def slack_error(exc: SlackApiError) -> str:
    return str(exc.response.get("error", "")) if exc.response is not None else ""


def gone(exc: SlackApiError) -> bool:
    return slack_error(exc) in GONE_ERRORS


@dataclass
class ReplyNotes:
    """What one reply notes with its queued turn, and what a dead worker noted for it."""

    opened: Opened = _nobody
    parts: ReplyParts = field(default_factory=ReplyParts)

    async def first(self, ts: str, kind: str) -> None:
        """The reply's first message was posted (not edited): note it; any parts a dead
        worker left are above it now, so they follow it (:meth:`ReplyParts.moved`)."""
        self.parts.moved()
        await self.opened(ts, kind)


class ThreadParts:
    """The parts of a reply in one Slack thread (a :class:`~adapters.chat.parts.PartChannel`)."""

    def __init__(
        self,
        client: AsyncWebClient,
        channel: str,
        thread_ts: str | None,
        *,
        last_resort: bool = False,
    ) -> None:
        """``last_resort``: an edit Slack refuses for any reason counts as a part gone, so
        it is posted anew (the plain-text fallback, which must get through)."""
        self._client = client
        self._channel = channel
        self._thread_ts = thread_ts
        self._last_resort = last_resort

    async def post(self, index: int, message: SlackMessage) -> str:
        response = await self._client.chat_postMessage(
            channel=self._channel,
            thread_ts=self._thread_ts,
            text=message.text,
            blocks=message.blocks or None,
        )
        return str(response["ts"])

    async def edit(self, message_id: str, message: SlackMessage) -> None:
        try:
            # blocks=[] on a plain message clears the blocks the part showed before.
            await self._client.chat_update(
                channel=self._channel, ts=message_id, text=message.text, blocks=message.blocks
            )
        except SlackApiError as exc:
            if gone(exc) or self._last_resort:
                raise Gone(slack_error(exc)) from exc
            raise

    async def delete(self, message_id: str) -> None:
        try:
            await self._client.chat_delete(channel=self._channel, ts=message_id)
        except SlackApiError as exc:
            if gone(exc):
                raise Gone(slack_error(exc)) from exc
            raise
