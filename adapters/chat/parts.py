"""The messages of a reply after its first, noted as they are posted and found again.

A long answer is several messages: Slack and Discord each cap one message. Its first is
the live message (the "Thinking…", then the progress) that the adapter notes with the
queued turn as soon as it is posted; the others, its *parts* (numbered from 1, as their
place in the answer), are posted when the answer is done. Each part is noted too
(:func:`part_note`), so a worker that takes the turn over from one that died mid-answer
finds every message already on screen (:func:`noted_parts`) and :class:`ReplyParts` puts
each of its own parts there:

- a part a dead worker posted at the same place is edited, not posted again;
- a part it had not reached yet is posted (and noted);
- a noted part the platform says is gone (a user deleted it) is posted anew. A new
  message lands at the end of the thread, so every later part already there is above
  it now: each of those is deleted and posted again after it, and the answer still
  reads in order. The same holds when the first message itself had to be posted anew
  (:meth:`ReplyParts.moved`);
- when the answer now has fewer messages than the dead worker posted, the extra parts
  are deleted.

The same holds within one worker: a second pass over the parts (the plain-text fallback
after the platform refused the rich form) edits the parts the first pass posted.

A note that cannot be kept (Redis away) costs only that repair: the queue's
:meth:`~adapters.chat.queue.TurnQueue.note` never raises. Neither does a stale part that
cannot be deleted: it is logged and the answer goes on.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Awaitable, Callable, Mapping
from typing import Protocol, TypeVar

log = logging.getLogger(__name__)

M = TypeVar("M")
M_contra = TypeVar("M_contra", contravariant=True)

_PART = re.compile(r"^reply_part_(\d+)$")


def part_note(index: int) -> str:
    """The name under which part ``index`` (1 for the answer's second message) is noted."""
    return f"reply_part_{index}"


def noted_parts(notes: Mapping[str, str]) -> dict[int, str]:
    """The parts a dead worker noted, {index: message id}; cleared ones ('') left out."""
    found = {}
    for name, value in notes.items():
        match = _PART.match(name)
        if match and value:
            found[int(match.group(1))] = value
    return found


class Gone(Exception):
    """The platform says the message no longer exists (or may no longer be edited)."""


class PartChannel(Protocol[M_contra]):
    """Where a reply's parts go on one platform (a Slack thread, a Discord channel or an
    interaction's followups)."""

    async def post(self, index: int, message: M_contra) -> str:
        """Post part ``index`` as a new message; its id."""
        ...

    async def edit(self, message_id: str, message: M_contra) -> None:
        """Make message ``message_id`` show ``message``; :class:`Gone` if it does not exist."""
        ...

    async def delete(self, message_id: str) -> None:
        """Delete message ``message_id``; :class:`Gone` if it did not exist."""
        ...


NotePart = Callable[[int, str], Awaitable[None]]


async def _no_note(index: int, message_id: str) -> None:
    return None


class ReplyParts:
    """Where each part of one reply is: the dead worker's (from the notes), then this
    worker's as it posts them. See the module doc."""

    def __init__(self, noted: Mapping[int, str] | None = None, note: NotePart = _no_note) -> None:
        self._ids: dict[int, str] = {i: m for i, m in (noted or {}).items() if i >= 1 and m}
        self._note = note
        # Parts that are no longer where they belong: a message before them was posted
        # anew, at the end of the thread, so they are above it now.
        self._out_of_order: set[int] = set()

    @property
    def ids(self) -> dict[int, str]:
        """{index: message id} of the parts on screen (as far as this worker knows)."""
        return dict(self._ids)

    def moved(self) -> None:
        """The reply's first message was posted anew, at the end of the thread: the parts
        already posted are above it now, so each is posted again after it (and the old
        one deleted) rather than edited."""
        if self._ids:
            log.info("the reply's first message was posted anew; its later parts follow it")
        self._out_of_order = set(self._ids)

    async def put(self, channel: PartChannel[M], index: int, message: M) -> str:
        """Show ``message`` as part ``index`` (>= 1) of the reply; the message's id."""
        old = self._ids.get(index)
        if old and index not in self._out_of_order:
            try:
                await channel.edit(old, message)
                return old
            except Gone:
                log.info("part %d of the reply (%s) is gone; posting it anew", index, old)
        elif old:  # above the message before it now: it goes, and is posted after it
            await self._delete(channel, old)
        posted = await channel.post(index, message)
        # Posted at the end of the thread: every later part already there is above it now.
        self._out_of_order = {i for i in self._ids if i > index}
        self._ids[index] = posted
        await self._note(index, posted)
        return posted

    async def clear(self, channel: PartChannel[M], count: int) -> None:
        """Delete the parts at ``count`` and beyond: the answer now has ``count`` messages
        (its first included), fewer than were posted."""
        for index in sorted(i for i in self._ids if i >= count):
            old = self._ids.pop(index)
            log.info("deleting part %d of the reply (%s): the answer is shorter now", index, old)
            await self._delete(channel, old)
            await self._note(index, "")

    @staticmethod
    async def _delete(channel: PartChannel[M], message_id: str) -> None:
        try:
            await channel.delete(message_id)
        except Gone:
            pass
        except Exception:  # a stale part left on screen is a blemish, not a lost answer
            log.warning("could not delete the stale reply part %s", message_id, exc_info=True)
