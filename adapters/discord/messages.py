"""Messages addressed to the bot: mentions, direct messages and follow-ups in its threads.

- A mention in a channel opens a thread from the message (named after the question)
  and answers there. Where the bot may not create threads (no permission, a channel
  type without threads) it replies inline instead.
- A mention inside a thread answers in that thread.
- A direct message is always for the bot, and the whole DM is one conversation.
- A message in a thread the bot opened is a follow-up, answered without a mention,
  unless the channel rule turns follow-ups off or the message mentions someone else
  (then the asker is talking to a colleague, not to the bot).

The bot never answers itself, another bot or a webhook (two bots answering each other
would never stop), nor system messages (joins, pins, thread renames).

Without the privileged MESSAGE_CONTENT intent Discord still sends the text of mentions
and DMs, but not of follow-ups: those then arrive empty and are left alone.

This module only decides: a message for the bot is checked (first delivery, access,
rate limit) and queued with where its answer goes; answering it, on whichever process
reads the job, is :mod:`adapters.discord.queued_messages`.
"""

from __future__ import annotations

import logging
import re
from dataclasses import replace
from typing import Literal, TypeGuard

import discord

from adapters.chat.channels import ChannelRules
from adapters.chat.queue import TurnQueue
from adapters.discord.gates import admitted, roles_of
from adapters.discord.options import Adapter
from adapters.discord.queued_messages import ReplyTarget, message_job
from adapters.discord.render import language_for, thread_name
from adapters.discord.turns import Place
from agent.plumbing.log_context import bind

log = logging.getLogger(__name__)

Addressed = Literal["mention", "direct", "follow_up"]

_PERSON_WRITES = frozenset({discord.MessageType.default, discord.MessageType.reply})


def addressed(
    message: discord.Message, me: discord.abc.User, rules: ChannelRules
) -> Addressed | None:
    """How ``message`` is addressed to the bot, or None when it is not for the bot."""
    author = message.author
    if author.bot or author.id == me.id or message.webhook_id is not None:
        return None
    if message.type not in _PERSON_WRITES:
        return None
    if message.guild is None:
        return "direct"
    if mentions_me(message, me):
        return "mention"
    channel = message.channel
    if (
        bot_thread(channel, me)
        and message.content.strip()
        and not any(user.id != me.id for user in message.mentions)
        and not message.role_mentions
    ):
        rule = rules.for_channel(str(channel.id), parent=str(channel.parent_id))
        if rule.follow_ups:
            return "follow_up"
    return None


def bot_thread(channel: object, me: discord.abc.User) -> TypeGuard[discord.Thread]:
    """A thread the bot opened (follow-ups there need no mention)."""
    return isinstance(channel, discord.Thread) and channel.owner_id == me.id


def mentions_me(message: discord.Message, me: discord.abc.User) -> bool:
    """The bot's user, or its own role (the one Discord offers first when people type
    ``@teamrag``), is mentioned."""
    if any(user.id == me.id for user in message.mentions):
        return True
    role = message.guild.self_role if message.guild is not None else None
    return role is not None and role in message.role_mentions


def question_of(message: discord.Message, me: discord.abc.User) -> str:
    """The message text without the mention of the bot (other mentions stay as written)."""
    text = re.sub(rf"<@!?{me.id}>", " ", message.content)
    role = message.guild.self_role if message.guild is not None else None
    if role is not None:
        text = text.replace(role.mention, " ")
    return re.sub(r"^[ \t]+|(?<![ \t])[ \t]+$", "", text, flags=re.MULTILINE)  # linear.strip()


async def on_message(
    adapter: Adapter, me: discord.abc.User, message: discord.Message, queue: TurnQueue
) -> None:
    """Check a message and queue it: any process of the bot may answer it
    (:mod:`adapters.discord.queued_messages`)."""
    services = adapter.services
    how = addressed(message, me, services.rules)
    if how is None:
        return
    if not await services.dedupe.first(f"discord:message:{message.id}"):
        log.info("message %s was delivered again; it is already answered", message.id)
        return
    guild = message.guild
    question = question_of(message, me)
    language = language_for(question, guild.preferred_locale if guild is not None else None)
    place = Place.of(message.channel, guild.id if guild else None, message.channel.id)
    decision = await admitted(
        adapter, place, roles_of(message.author), message.author.id, question, language
    )
    if isinstance(decision, str):
        await _reply(message, decision)
        return
    where, place, root = _where(how, message, me, place, question)
    turn = place.turn(
        question, root=root, user=message.author.id, message=message.id, rule=decision
    )
    with bind(thread_id=turn.thread_id, event_id=f"message-{message.id}"):
        await queue.submit(message_job(where, turn, language))


def _where(
    how: Addressed, message: discord.Message, me: discord.abc.User, place: Place, question: str
) -> tuple[ReplyTarget, Place, int]:
    """Where the answer goes, the place of its conversation and that conversation's root."""
    where = ReplyTarget(place.guild_id, place.channel_id, message.id)
    if how == "mention" and not place.in_thread:
        if isinstance(message.channel, discord.TextChannel):
            # Answered in a thread started from the message; the thread has its id.
            thread = Place(place.guild_id, message.id, place.channel_id)
            return replace(where, thread_name=thread_name(question)), thread, message.id
        # Voice and stage text chats have no threads: an inline answer, a one-off question
        # like /ask in a channel.
        return replace(where, reply=True), place, message.id
    # In someone else's thread, reply to the message, so it is clear which one is answered.
    reply = how == "mention" and not bot_thread(message.channel, me)
    return replace(where, reply=reply), place, place.channel_id


async def _reply(message: discord.Message, text: str) -> None:
    try:
        await message.reply(text, mention_author=False)
    except discord.HTTPException:
        log.warning("could not tell the author of message %s why there is no answer", message.id)
