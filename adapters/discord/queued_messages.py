"""Messages for the bot (mentions, DMs, follow-ups) through the durable turn queue.

The process whose shard receives the message only checks it (:mod:`adapters.discord.messages`)
and queues where the answer goes (:class:`ReplyTarget`) with the turn. Whichever process
reads the job (another shard's, if this one dies mid-answer: :mod:`adapters.chat.queue_redis`
hands it over) opens the thread, posts "⏳ Thinking…" and edits it into the answer,
all through the REST API, which needs nothing of the shard the message came on.

The progress message's id is noted with the job once posted (:meth:`TurnQueue.note`),
and so is each later message of a long answer (:mod:`adapters.chat.parts`): a process
that takes the job over edits those messages into its answer instead of leaving one at
"Thinking…" beside a second reply or posting the answer's tail twice; it posts only the
parts the dead process had not reached and deletes those beyond a shorter answer. A
message a user deleted meanwhile is posted anew, with the later parts after it, so the
answer still reads in order. The thread needs no note: a thread
started from a message has the message's id, and Discord refuses a second one (160004),
so a process that finds the thread already open answers in it.
"""

from __future__ import annotations

import logging
from dataclasses import asdict, dataclass, replace
from typing import Literal

import discord

from adapters.chat.parts import ReplyParts, noted_parts, part_note
from adapters.chat.phrases import language_of, phrase
from adapters.chat.queue import Job, TurnQueue
from adapters.discord.live import ChannelPoster, answer
from adapters.discord.options import Adapter
from adapters.discord.turns import turn_fields, turn_of
from agent.events import Turn
from agent.plumbing.log_context import bind

log = logging.getLogger(__name__)

MESSAGE_JOB = "discord.message"
# The notes a queued message job carries about its reply (TurnQueue.note).
REPLY_ID = "reply_id"
REPLY_CHANNEL = "reply_channel"
# Threads archive after a day without messages; a new message brings them back.
THREAD_ARCHIVE_MINUTES: Literal[1440] = 1440
THREAD_EXISTS = 160004  # "A thread has already been created for this message"


@dataclass(frozen=True)
class ReplyTarget:
    """Where a queued message is answered, decided by the process that received it."""

    guild_id: int | None  # None in a DM
    channel_id: int  # where the message was written: a channel, a thread or a DM
    message_id: int
    # A mention in a channel: answer in a thread started from the message (its id is the
    # message's), or inline as a reply where no thread may be opened.
    thread_name: str = ""
    reply: bool = False  # answer as a reply to the message

    @property
    def opens_thread(self) -> bool:
        return bool(self.thread_name)

    def reference(self) -> discord.MessageReference:
        return discord.MessageReference(
            message_id=self.message_id,
            channel_id=self.channel_id,
            guild_id=self.guild_id,
            fail_if_not_exists=False,
        )


def message_job(where: ReplyTarget, turn: Turn, language: str) -> Job:
    payload = {"where": asdict(where), "turn": turn_fields(turn), "language": language}
    return Job(MESSAGE_JOB, turn.thread_id, payload, event_id=f"message-{where.message_id}")


async def answer_message(
    adapter: Adapter, client: discord.Client, queue: TurnQueue, job: Job
) -> None:
    """Answer a queued message (on whichever process read it)."""
    turn, poster = await _reply(client, queue, job)
    with bind(thread_id=turn.thread_id, event_id=job.event_id):
        await answer(adapter.services, turn, poster, language=str(job.payload["language"]))


async def gave_up_message(client: discord.Client, queue: TurnQueue, job: Job) -> None:
    """Say where the answer would have gone (in the "Thinking…" a stopped process left,
    if any) that the queue dropped the message after too many attempts."""
    turn, poster = await _reply(client, queue, job)
    await poster.progress(phrase("gave_up", language_of(turn.text), attempts=job.attempt - 1))


async def _reply(client: discord.Client, queue: TurnQueue, job: Job) -> tuple[Turn, ChannelPoster]:
    """The job's turn, and where its reply goes: the messages a stopped process left, or
    the message's thread (opened here), or the channel."""
    where = ReplyTarget(**job.payload["where"])
    turn = turn_of(job.payload["turn"])
    # Sending with feedback buttons needs the client's state, ready.
    await client.wait_until_ready()

    async def opened(message_id: int, channel_id: int) -> None:
        await queue.note(job, **{REPLY_ID: str(message_id), REPLY_CHANNEL: str(channel_id)})

    async def noted_part(index: int, message_id: str) -> None:
        await queue.note(job, **{part_note(index): message_id})

    left, left_in = job.notes.get(REPLY_ID), job.notes.get(REPLY_CHANNEL)
    parts = ReplyParts(noted_parts(job.notes), noted_part)
    if left and left_in:
        log.info(
            "taking over reply %s and its parts %s left by a stopped process",
            left, sorted(parts.ids.values()),
        )  # fmt: skip
        in_thread = where.opens_thread and int(left_in) != where.channel_id
        channel_id = int(left_in)
    elif where.opens_thread:
        in_thread = await _open_thread(client, where)
        channel_id = where.message_id if in_thread else where.channel_id
    else:
        in_thread, channel_id = False, where.channel_id
    inline = where.opens_thread and not in_thread
    if inline:  # a one-off question in the channel, no longer the thread's conversation
        turn = replace(turn, channel=str(where.channel_id))
    channel = client.get_partial_messageable(channel_id, guild_id=where.guild_id)
    poster = ChannelPoster(
        channel,
        reference=where.reference() if where.reply or inline else None,
        first=channel.get_partial_message(int(left)) if left and left_in else None,
        opened=lambda message_id: opened(message_id, channel_id),
        parts=parts,
    )
    return turn, poster


async def _open_thread(client: discord.Client, where: ReplyTarget) -> bool:
    """Open the thread from the message; False where the bot may not (answer inline)."""
    try:
        await client.http.start_thread_with_message(
            where.channel_id,
            where.message_id,
            name=where.thread_name,
            auto_archive_duration=THREAD_ARCHIVE_MINUTES,
        )
        return True
    except discord.HTTPException as exc:
        if exc.code == THREAD_EXISTS:  # opened by a process that stopped half-way
            return True
        # 50013 Missing Permissions is the usual one: answer inline rather than not at all.
        log.info(
            "could not open a thread in channel %s (%s); replying inline", where.channel_id, exc
        )
        return False
