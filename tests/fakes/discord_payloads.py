"""The JSON objects the fake Discord sends: users, guilds, channels, messages, interactions.

Shaped like Discord's own (API v10) with the fields discord.py reads, so the real
client parses them exactly as it would parse Discord's.
"""

from __future__ import annotations

import itertools
import threading
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

DISCORD_EPOCH_MS = 1_420_070_400_000
APP_ID = 1_300_000_000_000_000_001
BOT_ID = APP_ID  # a bot user has its application's id
BOT_ROLE_ID = 1_300_000_000_000_000_099
TOKEN = "fake-bot-token"
MESSAGE_CONTENT_INTENT = 1 << 15
ATTACHMENT_SIZE_LIMIT = 25 * 1024 * 1024

_counter = itertools.count(1)
_counter_lock = threading.Lock()


def snowflake(age_s: float = 0.0) -> int:
    """A new id, increasing with time like Discord's; ``age_s`` dates it back (discord.py
    reads an interaction's age, and so its token's expiry, from its id)."""
    with _counter_lock:
        at_ms = int((time.time() - age_s) * 1000)
        return ((at_ms - DISCORD_EPOCH_MS) << 22) | (next(_counter) % 4096)


def shard_of(guild_id: int | None, shard_count: int) -> int:
    """Discord's rule: which shard carries a guild's events (DMs go to shard 0)."""
    return 0 if guild_id is None else (guild_id >> 22) % shard_count


def now_iso() -> str:
    return datetime.now(UTC).isoformat()


@dataclass(frozen=True)
class Person:
    id: int
    name: str
    bot: bool = False

    def user(self) -> dict[str, Any]:
        return {
            "id": str(self.id),
            "username": self.name,
            "discriminator": "0",
            "global_name": self.name,
            "avatar": None,
            "bot": self.bot,
            "public_flags": 0,
            "flags": 0,
        }

    def member(self, roles: tuple[int, ...] = ()) -> dict[str, Any]:
        return {
            "user": self.user(),
            "roles": [str(r) for r in roles],
            "nick": None,
            "joined_at": "2024-01-01T00:00:00+00:00",
            "deaf": False,
            "mute": False,
            "flags": 0,
            "pending": False,
            "permissions": "2248473465835073",
        }


BOT = Person(BOT_ID, "teamrag", bot=True)


@dataclass
class Guild:
    id: int
    name: str
    channels: dict[int, dict[str, Any]] = field(default_factory=dict)
    roles: dict[int, str] = field(default_factory=dict)
    locale: str = "en-US"

    def text_channel(self, channel_id: int, name: str) -> dict[str, Any]:
        channel = {
            "id": str(channel_id),
            "type": 0,
            "guild_id": str(self.id),
            "name": name,
            "position": len(self.channels),
            "permission_overwrites": [],
            "topic": None,
            "nsfw": False,
            "last_message_id": None,
            "rate_limit_per_user": 0,
            "parent_id": None,
            "default_auto_archive_duration": 1440,
            "flags": 0,
        }
        self.channels[channel_id] = channel
        return channel

    def role_payloads(self) -> list[dict[str, Any]]:
        roles = [_role(self.id, "@everyone", 0)]
        roles += [_role(rid, name, i + 1) for i, (rid, name) in enumerate(self.roles.items())]
        bot_role = _role(BOT_ROLE_ID, BOT.name, len(roles), managed=True)
        bot_role["tags"] = {"bot_id": str(BOT_ID)}
        return [*roles, bot_role]

    def create_payload(self, threads: list[dict[str, Any]]) -> dict[str, Any]:
        """GUILD_CREATE: everything the client caches about the guild."""
        return {
            "id": str(self.id),
            "name": self.name,
            "icon": None,
            "splash": None,
            "discovery_splash": None,
            "owner_id": "1",
            "afk_channel_id": None,
            "afk_timeout": 300,
            "verification_level": 0,
            "default_message_notifications": 0,
            "explicit_content_filter": 0,
            "roles": self.role_payloads(),
            "emojis": [],
            "stickers": [],
            "features": [],
            "mfa_level": 0,
            "application_id": None,
            "system_channel_id": None,
            "system_channel_flags": 0,
            "rules_channel_id": None,
            "public_updates_channel_id": None,
            "joined_at": "2024-01-01T00:00:00+00:00",
            "large": False,
            "unavailable": False,
            "member_count": 3,
            "voice_states": [],
            "members": [BOT.member((BOT_ROLE_ID,))],
            "channels": [dict(c) for c in self.channels.values()],
            "threads": threads,
            "presences": [],
            "stage_instances": [],
            "guild_scheduled_events": [],
            "soundboard_sounds": [],
            "max_members": 500000,
            "vanity_url_code": None,
            "description": None,
            "banner": None,
            "premium_tier": 0,
            "premium_subscription_count": 0,
            "preferred_locale": self.locale,
            "nsfw_level": 0,
            "premium_progress_bar_enabled": False,
        }


def _role(role_id: int, name: str, position: int, *, managed: bool = False) -> dict[str, Any]:
    return {
        "id": str(role_id),
        "name": name,
        "color": 0,
        "colors": {"primary_color": 0, "secondary_color": None, "tertiary_color": None},
        "hoist": False,
        "icon": None,
        "unicode_emoji": None,
        "position": position,
        "permissions": "2248473465835073",
        "managed": managed,
        "mentionable": True,
        "flags": 0,
    }


def thread_payload(
    thread_id: int, guild_id: int, parent_id: int, name: str, owner_id: int, archive: int
) -> dict[str, Any]:
    return {
        "id": str(thread_id),
        "type": 11,
        "guild_id": str(guild_id),
        "parent_id": str(parent_id),
        "owner_id": str(owner_id),
        "name": name,
        "last_message_id": None,
        "message_count": 0,
        "member_count": 1,
        "rate_limit_per_user": 0,
        "total_message_sent": 0,
        "flags": 0,
        "thread_metadata": {
            "archived": False,
            "auto_archive_duration": archive,
            "archive_timestamp": now_iso(),
            "locked": False,
        },
    }


def dm_channel(channel_id: int, person: Person) -> dict[str, Any]:
    return {
        "id": str(channel_id),
        "type": 1,
        "last_message_id": None,
        "recipients": [person.user()],
    }


def message_payload(
    message_id: int,
    channel_id: int,
    author: Person,
    content: str,
    *,
    embeds: list[dict[str, Any]] | None = None,
    components: list[dict[str, Any]] | None = None,
    flags: int = 0,
    message_type: int = 0,
    mentions: list[Person] | None = None,
    role_mentions: list[int] | None = None,
    reference: dict[str, Any] | None = None,
    webhook_id: int | None = None,
) -> dict[str, Any]:
    payload: dict[str, Any] = {
        "id": str(message_id),
        "channel_id": str(channel_id),
        "author": author.user(),
        "content": content,
        "timestamp": now_iso(),
        "edited_timestamp": None,
        "tts": False,
        "mention_everyone": False,
        "mentions": [p.user() for p in mentions or []],
        "mention_roles": [str(r) for r in role_mentions or []],
        "attachments": [],
        "embeds": embeds or [],
        "components": components or [],
        "pinned": False,
        "type": message_type,
        "flags": flags,
    }
    if reference is not None:
        payload["message_reference"] = reference
    if webhook_id is not None:
        payload["webhook_id"] = str(webhook_id)
    return payload


def interaction_payload(
    *,
    interaction_id: int,
    token: str,
    kind: int,
    data: dict[str, Any],
    channel: dict[str, Any],
    guild: Guild | None,
    person: Person,
    roles: tuple[int, ...],
    locale: str,
    message: dict[str, Any] | None = None,
) -> dict[str, Any]:
    payload: dict[str, Any] = {
        "id": str(interaction_id),
        "application_id": str(APP_ID),
        "type": kind,
        "data": data,
        "token": token,
        "version": 1,
        "locale": locale,
        "app_permissions": "2248473465835073",
        "entitlements": [],
        "channel": channel,
        "channel_id": channel["id"],
        "context": 0 if guild else 1,
        "attachment_size_limit": ATTACHMENT_SIZE_LIMIT,
    }
    if guild is not None:
        payload |= {
            "guild_id": str(guild.id),
            "guild": {"id": str(guild.id), "locale": guild.locale, "features": []},
            "guild_locale": guild.locale,
            "member": person.member(roles),
            "authorizing_integration_owners": {"0": str(guild.id)},
        }
    else:
        payload |= {"user": person.user(), "authorizing_integration_owners": {"1": str(person.id)}}
    if message is not None:
        payload["message"] = message
    return payload


def application_payload() -> dict[str, Any]:
    return {
        "id": str(APP_ID),
        "name": BOT.name,
        "icon": None,
        "description": "",
        "summary": "",
        "bot_public": True,
        "bot_require_code_grant": False,
        "owner": Person(1, "owner").user(),
        "verify_key": "0" * 64,
        "flags": 0,
        "team": None,
        "interactions_endpoint_url": None,
        "tags": [],
    }
