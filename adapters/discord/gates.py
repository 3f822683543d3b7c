"""Who may ask where: the allowed channels and roles, then the per-channel rules.

Checked before any work, for ``/ask``, mentions, follow-ups and direct messages alike,
so a refused person always hears why (``/ask`` privately) instead of silence.

A direct message has no channel an admin could list and no roles, so it is refused
whenever allowed channels or roles are configured: otherwise a DM would be a way
around the restriction.
"""

from __future__ import annotations

import logging
from collections.abc import Collection
from typing import Literal

import discord

from adapters.chat.channels import ChannelRule, ChannelRules
from adapters.chat.phrases import phrase
from adapters.chat.ratelimit import refusal
from adapters.discord.options import Adapter, DiscordOptions
from adapters.discord.turns import PLATFORM, Place

log = logging.getLogger(__name__)

Refusal = Literal["not_allowed", "role_not_allowed"]


def check(
    options: DiscordOptions,
    rules: ChannelRules,
    place: Place,
    roles: Collection[int] | None,
) -> ChannelRule | Refusal:
    """The channel's rule when the asker may be answered here, else the phrase saying why.

    ``roles`` are the asker's role ids (None outside a guild).
    """
    if options.allowed_channels and not (
        place.channel_id in options.allowed_channels
        or (place.parent_id is not None and place.parent_id in options.allowed_channels)
    ):
        log.info("refused in channel %s: not an allowed channel", place.channel_id)
        return "not_allowed"
    if options.allowed_roles and not (roles and options.allowed_roles.intersection(roles)):
        log.info("refused in channel %s: the asker has none of the allowed roles", place.channel_id)
        return "role_not_allowed"
    parent = str(place.parent_id) if place.parent_id is not None else None
    rule = rules.for_channel(str(place.channel_id), parent=parent)
    if not rule.answer:
        log.info("refused in channel %s: the channel rules say not to answer", place.channel_id)
        return "not_allowed"
    return rule


def roles_of(user: discord.abc.User) -> list[int] | None:
    """A member's role ids (the guild's @everyone role included); None outside a guild."""
    return [role.id for role in user.roles] if isinstance(user, discord.Member) else None


async def admitted(
    adapter: Adapter,
    place: Place,
    roles: Collection[int] | None,
    user: int,
    question: str,
    language: str,
) -> ChannelRule | str:
    """The channel's rule when this asker may be answered here and now, else the text
    that tells them why not (access, an empty question, or their questions per minute)."""
    decision = check(adapter.options, adapter.services.rules, place, roles)
    if isinstance(decision, str) or not question:
        return phrase(decision if isinstance(decision, str) else "empty_question", language)
    wait = await adapter.services.admit(PLATFORM, place.workspace, str(user))
    return decision if wait is None else refusal(wait, language)
