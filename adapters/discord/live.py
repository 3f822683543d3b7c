"""The Discord reply that shows the agent working, then the answer, and its fallbacks.

Two places a reply can live:

- :class:`InteractionPoster`: the deferred response of ``/ask`` ("thinking…"), edited
  with the progress and then the answer; further messages are followups. Its token
  lasts 15 minutes and dies with the interaction (10062 Unknown interaction).
- :class:`ChannelPoster`: an ordinary message in a channel, thread or DM, posted at
  the first update and edited after that.

:class:`LiveMessage` is the :class:`~adapters.chat.live.LiveReply` on top of either: when
the interaction token is gone it carries on with a fallback poster (a message in the
channel, or a DM for a private question) from the message it had reached; when
Discord refuses the rich answer it sends the plain text instead. Either way the asker
gets the answer or a reason.

An answer longer than one message has *parts* after its first (:mod:`adapters.chat.parts`):
each poster puts them through a :class:`~adapters.chat.parts.ReplyParts`, which notes each
with the queued turn as it is posted and, when a process takes the turn over from one
that died, edits the parts already in the channel instead of posting them again
(:mod:`adapters.discord.parts` has the Discord side). A second pass over the answer (the
plain text after a refused rich answer) edits the first pass's parts the same way.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from functools import partial
from typing import Any, Protocol

import discord

from adapters.chat.feedback import remember_for_buttons
from adapters.chat.live import LiveView, relay
from adapters.chat.parts import ReplyParts
from adapters.chat.phrases import phrase
from adapters.chat.services import ChatServices
from adapters.discord.buttons import feedback_view
from adapters.discord.parts import ChannelParts, Part
from adapters.discord.render import (
    CONTENT_LIMIT,
    Outgoing,
    final_messages,
    plain_messages,
    progress_text,
)
from agent.events import Final, Turn

log = logging.getLogger(__name__)

# Unknown interaction, Unknown webhook, Invalid webhook token: the token cannot be used.
_TOKEN_GONE_CODES = frozenset({10062, 10015, 50027})


class TokenGone(Exception):
    """The interaction token expired or was never valid; post somewhere else."""


def token_gone(exc: discord.HTTPException) -> bool:
    return exc.code in _TOKEN_GONE_CODES or exc.status == 401


class Poster(Protocol):
    async def progress(self, content: str) -> None:
        """Show a progress text (the first call may create the message)."""

    async def put(self, index: int, message: Outgoing, view: discord.ui.View | None) -> None:
        """Deliver message ``index`` of the answer: 0 replaces the progress message."""

    async def done(self, count: int) -> None:
        """The answer has ``count`` messages: clear any part posted beyond them."""


class InteractionPoster:
    """The deferred interaction response and its followups."""

    def __init__(self, interaction: discord.Interaction[Any], *, ephemeral: bool) -> None:
        self.interaction = interaction
        self.ephemeral = ephemeral

    async def progress(self, content: str) -> None:
        self._check_age()
        try:
            await self.interaction.edit_original_response(content=content)
        except discord.HTTPException as exc:
            if token_gone(exc):
                raise TokenGone(str(exc)) from exc
            raise

    async def put(self, index: int, message: Outgoing, view: discord.ui.View | None) -> None:
        self._check_age()
        fields: dict[str, Any] = {"embeds": list(message.embeds)}
        if view is not None:
            fields["view"] = view
        try:
            if index == 0:
                await self.interaction.edit_original_response(
                    content=message.content or None, **fields
                )
            else:
                if message.content:
                    fields["content"] = message.content
                await self.interaction.followup.send(ephemeral=self.ephemeral, wait=True, **fields)
        except discord.HTTPException as exc:
            if token_gone(exc):
                raise TokenGone(str(exc)) from exc
            raise

    async def done(self, count: int) -> None:
        return None  # answers in one process only: nothing to clear

    def _check_age(self) -> None:
        if self.interaction.is_expired():
            raise TokenGone("the interaction token is older than 15 minutes")


Target = Callable[[], Awaitable[discord.abc.Messageable]]


class Mentionable(Protocol):
    """A user to mention: a discord.py user, or only an id (a queued question's asker)."""

    @property
    def id(self) -> int: ...

    @property
    def mention(self) -> str: ...


Reference = discord.Message | discord.PartialMessage | discord.MessageReference
Opened = Callable[[int], Awaitable[None]]


class ChannelPoster:
    """Ordinary messages: the first one is posted at the first update and then edited.

    ``reference``: the message the answer replies to. ``mention`` starts the first message
    with the asker's mention, for answers that land in a channel without the interaction
    that tied them to the asker. ``first``: a message posted for this answer already (by
    a process that stopped half-way), edited instead of posting another; one deleted
    meanwhile is posted anew. ``opened`` is told the first message's id once it is
    posted, so that a process taking the answer over can be given it as ``first``.
    ``parts``: the answer's later messages, with those a dead process noted.
    """

    def __init__(
        self,
        target: discord.abc.Messageable | Target,
        *,
        reference: Reference | None = None,
        mention: Mentionable | None = None,
        first: discord.Message | discord.PartialMessage | None = None,
        opened: Opened | None = None,
        parts: ReplyParts | None = None,
    ) -> None:
        self._target = target
        self._resolved: discord.abc.Messageable | None = None
        self._reference = reference
        self._mention = mention
        self._first = first
        self._opened = opened
        self._parts = parts or ReplyParts()

    async def progress(self, content: str) -> None:
        if self._first is not None:
            try:
                await self._first.edit(content=self._lead(content))
                return
            except discord.NotFound:
                log.info("the progress message was deleted; posting it anew")
        await self._open(await self._send(self._lead(content)))

    async def put(self, index: int, message: Outgoing, view: discord.ui.View | None) -> None:
        if index > 0:
            channel = ChannelParts(await self._where())
            await self._parts.put(channel, index, Part(message, view))
            return
        content = self._lead(message.content)
        if self._first is not None:
            try:
                await self._first.edit(
                    content=content or None, embeds=list(message.embeds), view=view
                )
                return
            except discord.NotFound:
                log.info("the progress message was deleted; posting the answer anew")
        await self._open(await self._send(content, embeds=message.embeds, view=view))

    async def done(self, count: int) -> None:
        await self._parts.clear(ChannelParts(await self._where()), count)

    async def _open(self, first: discord.Message) -> None:
        """The first message was posted (not edited): parts a dead process left are above
        it now, so they follow it (:meth:`ReplyParts.moved`)."""
        self._first = first
        self._parts.moved()
        if self._opened is not None:
            await self._opened(first.id)

    async def _send(
        self,
        content: str,
        *,
        embeds: tuple[discord.Embed, ...] = (),
        view: discord.ui.View | None = None,
    ) -> discord.Message:
        target = await self._where()
        extra: dict[str, Any] = {} if view is None else {"view": view}
        if self._reference is not None:
            extra |= {"reference": self._reference, "mention_author": False}
        if self._mention is not None:
            extra["allowed_mentions"] = discord.AllowedMentions(
                users=[discord.Object(self._mention.id)]
            )
        return await target.send(content=content or None, embeds=list(embeds), **extra)

    async def _where(self) -> discord.abc.Messageable:
        if self._resolved is None:
            target = self._target
            self._resolved = (
                target if isinstance(target, discord.abc.Messageable) else await target()
            )
        return self._resolved

    def _lead(self, content: str) -> str:
        if self._mention is None:
            return content
        lead = f"{self._mention.mention} "
        # Room for the mention is taken from the preview's tail; a full answer piece that
        # leaves no room keeps its text whole and goes without the mention.
        return lead + content if len(lead) + len(content) <= CONTENT_LIMIT else content


Remember = Callable[[Final], Awaitable[str | None]]


class LiveMessage:
    """A :class:`~adapters.chat.live.LiveReply` that posts through a :class:`Poster`."""

    def __init__(
        self,
        poster: Poster,
        *,
        language: str,
        remember: Remember,
        fallback: Callable[[], Poster] | None = None,
    ) -> None:
        self.poster = poster
        self.language = language
        self._remember = remember
        self._fallback = fallback

    async def show(self, view: LiveView) -> None:
        content = progress_text(view, self.language)
        await self._deliver(lambda poster: poster.progress(content))

    async def finish(self, final: Final) -> None:
        answer_id = await self._remember(final)
        messages = final_messages(final)
        try:
            await self._put_all(messages, feedback_view(answer_id) if answer_id else None)
        except discord.HTTPException as exc:
            log.warning("Discord refused the answer (%s); sending it as plain text", exc)
            await self._put_all(plain_messages(final), None)

    async def fail(self) -> None:
        """Tell the asker the turn failed (the agent normally says so in its Final)."""
        try:
            await self._put_all([Outgoing(phrase("turn_failed", self.language))], None)
        except Exception:
            log.exception("could not even say that the turn failed")

    async def _put_all(self, messages: list[Outgoing], view: discord.ui.View | None) -> None:
        last = len(messages) - 1
        for index, message in enumerate(messages):
            buttons = view if index == last else None
            await self._deliver(partial(_put, index=index, message=message, view=buttons))
        await self.poster.done(len(messages))

    async def _deliver(self, action: Callable[[Poster], Awaitable[None]]) -> None:
        try:
            await action(self.poster)
        except TokenGone as exc:
            if self._fallback is None:
                raise
            log.info("interaction token unusable (%s); answering with a message instead", exc)
            self.poster, self._fallback = self._fallback(), None
            await action(self.poster)


async def _put(
    poster: Poster, *, index: int, message: Outgoing, view: discord.ui.View | None
) -> None:
    await poster.put(index, message, view)


def remembering(services: ChatServices, turn: Turn) -> Remember:
    """Store each answer for its feedback buttons (see :func:`remember_for_buttons`)."""
    return partial(remember_for_buttons, services.feedback, turn)


async def answer(
    services: ChatServices,
    turn: Turn,
    poster: Poster,
    *,
    language: str,
    fallback: Callable[[], Poster] | None = None,
    placeholder: bool = True,
) -> None:
    """Run ``turn`` and show it live on ``poster``; the asker always hears something.

    ``placeholder`` posts "⏳ Thinking…" before the agent starts: under load its first
    step can take a while, and the asker should see at once that the bot took the
    question. A deferred interaction needs none: Discord already shows "thinking".
    """
    reply = LiveMessage(
        poster, language=language, remember=remembering(services, turn), fallback=fallback
    )
    if placeholder:
        try:
            await reply.show(LiveView())
        except Exception:  # the relay's updates and the answer may still get through
            log.warning("could not post the thinking message", exc_info=True)
    try:
        await relay(services.run(turn), reply, interval_s=services.update_interval_s)
    except Exception:
        log.exception("could not answer on thread %s", turn.thread_id)
        services.count_error("discord_delivery")
        await reply.fail()
