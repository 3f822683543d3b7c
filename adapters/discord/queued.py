"""``/ask`` and *Ask teamrag* through the durable turn queue, answered by any process.

The process that receives the interaction only checks it and defers it (Discord wants
that within 3 seconds); then it queues what answering needs: the turn, and the
interaction's application id and token. Whichever process reads the job (another
shard's, if this one dies mid-answer: :mod:`adapters.chat.queue_redis` hands it over)
answers through the interaction's webhook, ``PATCH /webhooks/{app}/{token}/messages/@original``
and followups, which any holder of the token may call for 15 minutes. Past that, or
when Discord no longer knows the token, the answer goes to the channel (mentioning the
asker) or, for a private question, to the asker's DMs.

A deferred interaction's "thinking…" is the original response itself, so a process that
takes a job over edits the same message: no second reply, nothing stuck. A long answer's
followups are noted with the job as they are sent (:mod:`adapters.chat.parts`), so that
process edits the followups already sent too (through the same webhook), sends only the
missing ones and deletes those beyond a shorter answer: the answer's tail never shows
twice. An answer that had to leave the interaction (its token died) for the channel is
not noted: a process taking it over would find the token dead too, and posts it again.
"""

from __future__ import annotations

import datetime
import logging
from dataclasses import dataclass
from typing import Any, cast

import discord

from adapters.chat.parts import Gone, ReplyParts, noted_parts, part_note
from adapters.chat.phrases import language_of, phrase
from adapters.chat.queue import Job, TurnQueue
from adapters.discord.live import ChannelPoster, Poster, TokenGone, answer, token_gone
from adapters.discord.options import Adapter
from adapters.discord.parts import Part
from adapters.discord.render import Outgoing
from adapters.discord.turns import turn_fields, turn_of
from agent.events import Turn
from agent.plumbing.log_context import bind

log = logging.getLogger(__name__)

ASK_JOB = "discord.ask"
TOKEN_LIFE = datetime.timedelta(minutes=15)


@dataclass(frozen=True)
class Asked:
    """An interaction as queued: enough to answer it from another process."""

    application_id: int
    token: str
    interaction_id: int
    user_id: int
    channel_id: int
    guild_id: int | None
    private: bool
    deferred: bool  # False: the defer failed, so the interaction cannot carry the answer

    @classmethod
    def of(cls, interaction: discord.Interaction[Any], *, private: bool, deferred: bool) -> Asked:
        return cls(
            application_id=interaction.application_id,
            token=interaction.token,
            interaction_id=interaction.id,
            user_id=interaction.user.id,
            channel_id=interaction.channel_id or 0,
            guild_id=interaction.guild_id,
            private=private,
            deferred=deferred,
        )

    @property
    def expires(self) -> datetime.datetime:
        return discord.utils.snowflake_time(self.interaction_id) + TOKEN_LIFE


def ask_job(asked: Asked, turn: Turn, language: str) -> Job:
    payload = {"asked": asked.__dict__, "turn": turn_fields(turn), "language": language}
    return Job(ASK_JOB, turn.thread_id, payload, event_id=f"interaction-{asked.interaction_id}")


async def answer_asked(
    adapter: Adapter, client: discord.Client, queue: TurnQueue, job: Job
) -> None:
    """Answer a queued interaction (on whichever process read it)."""
    asked = Asked(**job.payload["asked"])
    turn = turn_of(job.payload["turn"])
    language = str(job.payload["language"])
    # The webhook needs the client's HTTP session and state (for the feedback buttons).
    await client.wait_until_ready()

    async def note(index: int, message_id: str) -> None:
        await queue.note(job, **{part_note(index): message_id})

    parts = ReplyParts(noted_parts(job.notes), note)
    fallback = _fallback(client, asked)
    poster: Poster = WebhookPoster(client, asked, parts) if asked.deferred else fallback
    if job.attempt > 1:
        log.info(
            "finishing interaction %s left by a stopped process (followups %s)",
            asked.interaction_id, sorted(parts.ids.values()),
        )  # fmt: skip
    with bind(thread_id=turn.thread_id, event_id=job.event_id):
        await answer(
            adapter.services,
            turn,
            poster,
            language=language,
            fallback=(lambda: fallback) if asked.deferred else None,
            placeholder=not asked.deferred,
        )


async def gave_up_asked(client: discord.Client, job: Job) -> None:
    """Say in the interaction's response (or, its token dead, where its answer would have
    gone) that the queue dropped the question after too many attempts."""
    asked = Asked(**job.payload["asked"])
    text = phrase("gave_up", language_of(turn_of(job.payload["turn"]).text),
                  attempts=job.attempt - 1)  # fmt: skip
    await client.wait_until_ready()
    fallback = _fallback(client, asked)
    if asked.deferred:
        try:
            await WebhookPoster(client, asked).progress(text)
            return
        except TokenGone as exc:
            log.info("interaction %s is gone (%s); saying so elsewhere", asked.interaction_id, exc)
    await fallback.progress(text)


class WebhookPoster:
    """The deferred response and its followups through the interaction's webhook: the
    same calls as ``Interaction.edit_original_response`` and ``followup.send``, made
    without the ``Interaction`` object (which only the receiving process has)."""

    def __init__(
        self, client: discord.Client, asked: Asked, parts: ReplyParts | None = None
    ) -> None:
        self._asked = asked
        self._parts = parts or ReplyParts()
        # An application webhook (type 3), as ``Interaction.followup`` builds it: only
        # those may send ephemeral followups, and with the client's state the feedback
        # buttons are dispatched to this client.
        payload = {"id": asked.application_id, "type": 3, "token": asked.token}
        state = client._connection  # what Interaction.followup passes, too
        self._webhook = discord.Webhook.from_state(data=cast(Any, payload), state=state)

    async def progress(self, content: str) -> None:
        await self._call(self._edit_original(content=content))

    async def put(self, index: int, message: Outgoing, view: discord.ui.View | None) -> None:
        fields: dict[str, Any] = {"embeds": list(message.embeds)}
        if view is not None:
            fields["view"] = view
        if index == 0:
            await self._call(self._edit_original(content=message.content or None, **fields))
            return
        await self._parts.put(WebhookParts(self), index, Part(message, view))

    async def done(self, count: int) -> None:
        await self._parts.clear(WebhookParts(self), count)

    async def followup(self, part: Part) -> str:
        fields: dict[str, Any] = {"embeds": list(part.message.embeds)}
        if part.view is not None:
            fields["view"] = part.view
        if part.message.content:
            fields["content"] = part.message.content
        sent = await self._call(
            self._webhook.send(ephemeral=self._asked.private, wait=True, **fields)
        )
        return str(sent.id)

    async def edit_followup(self, message_id: str, part: Part) -> None:
        await self._call(self._webhook.edit_message(int(message_id), **part.fields()))

    async def delete_followup(self, message_id: str) -> None:
        await self._call(self._webhook.delete_message(int(message_id)))

    def _edit_original(self, **fields: Any) -> Any:
        # "@original" is the interaction's first response, as Discord names it.
        return self._webhook.edit_message("@original", **fields)  # type: ignore[call-overload]

    async def _call(self, request: Any) -> Any:
        if discord.utils.utcnow() >= self._asked.expires:
            request.close()  # not sent: the token is dead
            raise TokenGone("the interaction token is older than 15 minutes")
        try:
            return await request
        except discord.HTTPException as exc:
            if token_gone(exc):
                raise TokenGone(str(exc)) from exc
            raise


class WebhookParts:
    """An interaction's followups as a reply's parts (a
    :class:`~adapters.chat.parts.PartChannel`): any holder of the token may edit or delete
    them by id, for the token's 15 minutes."""

    def __init__(self, poster: WebhookPoster) -> None:
        self._poster = poster

    async def post(self, index: int, part: Part) -> str:
        return await self._poster.followup(part)

    async def edit(self, message_id: str, part: Part) -> None:
        try:
            await self._poster.edit_followup(message_id, part)
        except discord.NotFound as exc:
            raise Gone(str(exc)) from exc

    async def delete(self, message_id: str) -> None:
        try:
            await self._poster.delete_followup(message_id)
        except discord.NotFound as exc:
            raise Gone(str(exc)) from exc


def _fallback(client: discord.Client, asked: Asked) -> Poster:
    """Where the answer goes when the interaction cannot carry it: the asker's DMs for a
    private question, else the channel with the asker mentioned."""
    asker = discord.Object(asked.user_id)
    if asked.private or not asked.channel_id:

        async def dm() -> discord.abc.Messageable:
            return await client.create_dm(asker)

        return ChannelPoster(dm)
    channel = client.get_partial_messageable(asked.channel_id, guild_id=asked.guild_id)
    return ChannelPoster(channel, mention=_Mention(asked.user_id))


@dataclass(frozen=True)
class _Mention:
    """Enough of a user for :class:`ChannelPoster` to mention them."""

    id: int

    @property
    def mention(self) -> str:
        return f"<@{self.id}>"
