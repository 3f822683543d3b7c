"""Putting an answer's messages in the thread, and the plainer message when Slack refuses them.

An answer is one message or several (:func:`~adapters.slack.render.final_messages`): the
first goes into the reply's live message (edited) or is posted, the others are its
*parts*, each put through :class:`~adapters.chat.parts.ReplyParts`, which notes it with
the queued turn and, on a take-over, edits the part a dead worker already posted
instead of posting it twice (:mod:`adapters.slack.parts`).

A reply must never go silent: when Slack rejects a message (a block it does not
like, a message that can no longer be edited, a channel that changed), the rest of
the answer is put in the same places as plain text, saying why. A 429 never gets here:
the client's retry handler has already waited the ``Retry-After`` Slack asked for and
tried again.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from adapters.slack.parts import ReplyNotes, ThreadParts, gone, slack_error
from adapters.slack.render import SlackMessage, plain_texts
from agent.events import Final

log = logging.getLogger(__name__)

__all__ = ["Render", "ReplyTarget", "deliver", "slack_error"]

# Turns a Final into the messages to post (and remembers the answer for feedback).
Render = Callable[[Final], Awaitable[list[SlackMessage]]]


@dataclass(frozen=True)
class ReplyTarget:
    """Where a reply goes: a channel, and the thread in it (None: a new top-level message)."""

    channel: str
    thread_ts: str | None


async def deliver(
    client: AsyncWebClient,
    target: ReplyTarget,
    messages: Sequence[SlackMessage],
    language: str,
    *,
    edit_ts: str | None = None,
    start: int = 0,
    notes: ReplyNotes | None = None,
) -> None:
    """Put ``messages`` in order as the reply's messages ``start``, ``start + 1``, ...

    Message 0 is edited into ``edit_ts`` when given (posted anew if Slack says it is
    gone), else posted; either way a posted one is noted as the reply's first. Later
    ones are parts (see the module doc), in the thread; for a top-level reply, in the
    first message's thread. Parts beyond the answer's last are deleted. On a Slack error
    the messages not yet delivered are put as plain text.
    """
    notes = notes or ReplyNotes()
    thread = target.thread_ts
    for offset, message in enumerate(messages):
        index = start + offset
        try:
            posted = await _put(client, target, thread, index, message, edit_ts, notes)
        except SlackApiError as exc:
            log.warning(
                "Slack refused an answer message (%s); sending it plainly", slack_error(exc)
            )
            rest = messages[offset:]
            await _put_plain(client, target, thread, rest, language, index, edit_ts, notes)
            return
        thread = thread or posted
    await notes.parts.clear(ThreadParts(client, target.channel, thread), start + len(messages))


async def _put(
    client: AsyncWebClient,
    target: ReplyTarget,
    thread: str | None,
    index: int,
    message: SlackMessage,
    edit_ts: str | None,
    notes: ReplyNotes,
    *,
    last_resort: bool = False,
) -> str:
    if index == 0:
        return await _first(client, target, message, edit_ts, notes)
    parts = ThreadParts(client, target.channel, thread, last_resort=last_resort)
    return await notes.parts.put(parts, index, message)


async def _first(
    client: AsyncWebClient,
    target: ReplyTarget,
    message: SlackMessage,
    edit_ts: str | None,
    notes: ReplyNotes,
) -> str:
    """The reply's first message: ``edit_ts`` edited, or a new message (noted)."""
    if edit_ts is not None:
        try:
            await client.chat_update(
                channel=target.channel, ts=edit_ts, text=message.text, blocks=message.blocks
            )
            return edit_ts
        except SlackApiError as exc:
            if not gone(exc):
                raise
            log.info("the reply's message is gone (%s); posting the answer anew", slack_error(exc))
    response = await client.chat_postMessage(
        channel=target.channel,
        thread_ts=target.thread_ts,
        text=message.text,
        blocks=message.blocks or None,
    )
    posted = str(response["ts"])
    await notes.first(posted, "post")
    return posted


async def _put_plain(
    client: AsyncWebClient,
    target: ReplyTarget,
    thread: str | None,
    messages: Sequence[SlackMessage],
    language: str,
    index: int,
    edit_ts: str | None,
    notes: ReplyNotes,
) -> None:
    """The last resort: ``messages`` as plain text, put as the reply's messages from
    ``index`` on. A message that takes no edit at all is posted anew. Its errors
    propagate (the caller logs them)."""
    texts = [SlackMessage(text=t, markdown="", plain=t) for t in plain_texts(messages, language)]
    for offset, text in enumerate(texts):
        at = index + offset
        if at == 0 and edit_ts is not None:
            try:
                posted = await _first(client, target, text, edit_ts, notes)
            except SlackApiError:
                posted = await _first(client, target, text, None, notes)
        else:
            posted = await _put(client, target, thread, at, text, None, notes, last_resort=True)
        thread = thread or posted
    await notes.parts.clear(ThreadParts(client, target.channel, thread), index + len(texts))
