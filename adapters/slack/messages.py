"""Mentions, direct messages and follow-ups in the bot's threads (which message is for
the bot: :mod:`adapters.slack.turns`).

Each passes the gates (:mod:`adapters.slack.gates`) and is queued; the bot answers in
the message's thread. A mention that carries files is a file to learn, not a question.
A DM message may continue the conversation of the bot's last answer in that DM
(:mod:`adapters.slack.dm`).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from slack_bolt.async_app import AsyncApp, AsyncBoltContext

from adapters.chat.channels import ChannelRule
from adapters.slack.delivery import ReplyTarget
from adapters.slack.dm import start_over
from adapters.slack.files import learn_files
from adapters.slack.gates import Asking, asking, reading, standard
from adapters.slack.queued import SlackBot
from adapters.slack.turns import Incoming, addressed_message, incoming, not_from_a_person
from agent.plumbing.log_context import bind


def message_asking(
    bot: SlackBot,
    message: Incoming,
    bot_user: str,
    *,
    follow_up: bool,
    rule_channel: str | None = None,
    rule: ChannelRule | None = None,
) -> Asking:
    """A message as the gates see it, carrying the parsed message for the listener;
    refusals are said in its thread. ``rule_channel``: the channel whose rule applies
    when not the message's own; ``rule``: that rule, when the caller has looked it up."""
    target = ReplyTarget(message.channel, message.thread_root)

    async def refuse(text: str) -> None:
        await bot.post(target, text)

    channel = rule_channel or message.channel
    keys = (f"slack:event:{message.event_id}" if message.event_id else "", message.message_key)
    return Asking(
        keys=keys,
        team=message.team,
        channel=channel,
        user=message.user,
        question=message.question(bot_user),
        refuse=refuse,
        rule=rule or bot.services.rules.for_channel(channel),
        quiet_refusal=follow_up,
        message=message,
    )


def asked_message(context: AsyncBoltContext) -> Incoming:
    """The message the reading gate parsed (a listener never parses the body again)."""
    message = asking(context).message
    assert message is not None, "registered behind a reading gate that keeps the message"
    return message


def register(app: AsyncApp, bot: SlackBot) -> None:
    services = bot.services

    async def files_to_learn(body: dict[str, Any]) -> bool:
        return bool(body["event"].get("files")) and services.learn is not None

    @app.event("app_mention", matchers=[files_to_learn])
    async def learn(body: dict[str, Any], context: AsyncBoltContext) -> None:
        if not_from_a_person(body["event"], context.bot_user_id or "") is None:
            with bot.working():
                await learn_files(services, bot.client, body)

    async def read_mention(body: dict[str, Any], context: AsyncBoltContext) -> Asking | None:
        if not_from_a_person(body["event"], context.bot_user_id or "") is not None:
            return None
        return message_asking(bot, incoming(body), context.bot_user_id or "", follow_up=False)

    async def read_message(body: dict[str, Any], context: AsyncBoltContext) -> Asking | None:
        bot_user = context.bot_user_id or ""
        how = addressed_message(body["event"], bot_user)
        if how is None:
            return None
        message = incoming(body)
        if how == "direct" and bot.dm is not None:
            # "새 질문: ..." starts a new conversation, even with no question after it.
            new, rest = start_over(message.text)
            if new:
                await bot.dm.forget(message)
                message = replace(message, text=rest)
        rule = services.rules.for_channel(message.channel)
        # A reply in a thread is for the bot only in its own threads, where the channel
        # wants follow-ups; anything else is people talking to each other.
        if how == "follow_up" and not (
            rule.follow_ups and await bot.threads.has(message.thread_key)
        ):
            return None
        return message_asking(bot, message, bot_user, follow_up=how == "follow_up", rule=rule)

    async def take(context: AsyncBoltContext) -> None:
        message = asked_message(context)
        with bot.working(), bind(event_id=message.event_id or message.message_key):
            if bot.dm is not None:
                message = await bot.dm.place(message)
            await bot.take(message, asking(context).question)

    app.event("app_mention", middleware=[reading(read_mention), *standard(services)])(take)
    app.event("message", middleware=[reading(read_message), *standard(services)])(take)
