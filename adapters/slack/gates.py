"""The checks every question passes before it is queued, as Bolt listener middleware.

A listener lists the gates it wants, in order, after :func:`reading` (which reduces
the request to an :class:`Asking`, or stops it when it is not for the bot):

- :func:`first_delivery`: Slack retries an event it thinks was missed, Socket Mode
  redelivers after a reconnect; the message key is the same across both, and the
  record is shared by every worker;
- :func:`channel_rule`: may the bot answer in this channel;
- :func:`has_question`: is there anything to answer;
- :func:`rate_limit`: has the asker not used up their questions for the minute.

A gate that stops a request answers Slack itself (a 200, with the reason for a slash
command) and says the reason where the asker sees it; the listener then never runs.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from slack_bolt.async_app import AsyncBoltContext
from slack_bolt.response import BoltResponse

from adapters.chat.channels import ChannelRule
from adapters.chat.phrases import Phrase, language_of, phrase
from adapters.chat.ratelimit import refusal
from adapters.chat.services import ChatServices
from adapters.slack.turns import PLATFORM, Incoming

Next = Callable[[], Awaitable[None]]
Middleware = Callable[..., Awaitable[BoltResponse | None]]
# Says a refusal where the asker sees it; returns the response Slack gets (None: a bare 200).
Refuse = Callable[[str], Awaitable[BoltResponse | None]]

_ASKING = "teamrag_asking"  # the context key of the request's Asking


@dataclass(frozen=True)
class Asking:
    """A request reduced to what the gates need, and what the listener behind them
    needs of it: read once per request, so neither parses the body nor looks up the
    channel's rule again."""

    keys: tuple[str, ...]  # de-duplication keys: the same for every delivery
    team: str
    channel: str  # whose rule applies
    user: str
    question: str
    refuse: Refuse
    rule: ChannelRule  # the rule of ``channel``
    quiet_refusal: bool = False  # a follow-up in a channel where the bot may not answer
    empty_reason: Phrase = "empty_question"
    message: Incoming | None = None  # the message event, when the request is one

    @property
    def language(self) -> str:
        return language_of(self.question)


def asking(context: AsyncBoltContext) -> Asking:
    """The request's Asking, for the listener behind the gates."""
    found = context[_ASKING]
    assert isinstance(found, Asking), "the listener must be registered behind reading()"
    return found


def ok() -> BoltResponse:
    return BoltResponse(status=200, body="")


def ephemeral(text: str) -> BoltResponse:
    """A slash command's reply that only the asker sees (the acknowledgement's body)."""
    body = json.dumps({"response_type": "ephemeral", "text": text}, ensure_ascii=False)
    return BoltResponse(status=200, body=body, headers={"content-type": "application/json"})


async def _refused(ask: Asking, text: str) -> BoltResponse:
    return await ask.refuse(text) or ok()


def reading(
    read: Callable[[dict[str, Any], AsyncBoltContext], Awaitable[Asking | None]],
) -> Middleware:
    """The first gate: ``read`` reduces the request, or returns None (not for the bot:
    acknowledged and dropped)."""

    async def reading(
        body: dict[str, Any], context: AsyncBoltContext, next: Next
    ) -> BoltResponse | None:
        found = await read(body, context)
        if found is None:
            return ok()
        context[_ASKING] = found
        await next()
        return None

    return reading


def first_delivery(services: ChatServices) -> Middleware:
    """Only the first delivery goes on; a repeat is acknowledged and dropped."""

    async def first_delivery(context: AsyncBoltContext, next: Next) -> BoltResponse | None:
        if not await services.dedupe.first(*asking(context).keys):
            return ok()
        await next()
        return None

    return first_delivery


def channel_rule() -> Middleware:
    """The channel's rule allows answering there."""

    async def channel_rule(context: AsyncBoltContext, next: Next) -> BoltResponse | None:
        ask = asking(context)
        if not ask.rule.answer:
            if ask.quiet_refusal:
                return ok()
            return await _refused(ask, phrase("not_allowed", ask.language))
        await next()
        return None

    return channel_rule


def has_question() -> Middleware:
    async def has_question(context: AsyncBoltContext, next: Next) -> BoltResponse | None:
        ask = asking(context)
        if not ask.question:
            return await _refused(ask, phrase(ask.empty_reason, ask.language))
        await next()
        return None

    return has_question


def rate_limit(services: ChatServices) -> Middleware:
    """The asker has questions left this minute (per user and workspace, every worker)."""

    async def rate_limit(context: AsyncBoltContext, next: Next) -> BoltResponse | None:
        ask = asking(context)
        wait = await services.admit(PLATFORM, ask.team, ask.user)
        if wait is not None:
            return await _refused(ask, refusal(wait, ask.language))
        await next()
        return None

    return rate_limit


def standard(services: ChatServices) -> list[Middleware]:
    """The gates of a message, in the order they always ran: first delivery, channel
    rule, a question at all, the rate limit."""
    return [first_delivery(services), channel_rule(), has_question(), rate_limit(services)]
