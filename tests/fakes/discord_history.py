"""The fake Discord's read side for the history source: a channel, the guild's active
threads, a channel's archived public threads (paged by archive time) and a channel's
messages (paged by id, newest first), from the fake's model. Tests create forums,
posts and messages with the helpers below."""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Any

from aiohttp import web

from tests.fakes.discord_payloads import TOKEN, Person, message_payload, snowflake, thread_payload
from tests.fakes.discord_wire import error, json_response

if TYPE_CHECKING:
    from tests.fakes.discord_server import FakeDiscord

VIEW_CHANNEL = 1 << 10


def forum(fake: FakeDiscord, guild_id: int, name: str, *, private: bool = False) -> int:
    """A forum channel (type 15); ``private``: @everyone may not view it."""
    channel_id = snowflake()
    channel = fake.guilds[guild_id].text_channel(channel_id, name) | {"type": 15}
    if private:
        channel["permission_overwrites"] = [
            {"id": str(guild_id), "type": 0, "allow": "0", "deny": str(VIEW_CHANNEL)}
        ]
    with fake.lock:
        fake.channels[channel_id] = channel
    return channel_id


def post(
    fake: FakeDiscord, parent: int, title: str, author: Person, *texts: str, archived: bool = False
) -> int:
    """A forum post (or a thread of a text channel) with its messages; returns its id."""
    guild_id = int(fake.channels[parent]["guild_id"])
    thread_id = snowflake()
    thread = thread_payload(thread_id, guild_id, parent, title, author.id, 1440)
    thread["thread_metadata"]["archived"] = archived
    with fake.lock:
        fake.channels[thread_id] = thread
    for text in texts:
        write(fake, thread_id, author, text)
    return thread_id


def write(fake: FakeDiscord, channel_id: int, author: Person, text: str) -> int:
    message_id = snowflake()
    with fake.lock:
        fake.messages[message_id] = message_payload(message_id, channel_id, author, text)
        channel = fake.channels[channel_id]
        channel["last_message_id"] = str(message_id)
        channel["message_count"] = int(channel.get("message_count") or 0) + 1
    return message_id


def delete_thread(fake: FakeDiscord, thread_id: int) -> None:
    with fake.lock:
        del fake.channels[thread_id]
        for message_id in [
            i for i, m in fake.messages.items() if m["channel_id"] == str(thread_id)
        ]:
            del fake.messages[message_id]


def add_history_routes(app: web.Application, fake: FakeDiscord, api: str) -> None:
    def threads_of(parent: str | None = None, guild: str | None = None) -> list[dict[str, Any]]:
        with fake.lock:
            return [
                copy.deepcopy(c)
                for c in fake.channels.values()
                if c.get("type") == 11
                and (parent is None or c.get("parent_id") == parent)
                and (guild is None or c.get("guild_id") == guild)
            ]

    def refused(request: web.Request) -> web.Response | None:
        if request.headers.get("Authorization") != f"Bot {TOKEN}":
            return error(401, 0, "401: Unauthorized")
        return None

    async def channel(request: web.Request) -> web.Response:
        if (denied := refused(request)) is not None:
            return denied
        with fake.lock:
            found = fake.channels.get(int(request.match_info["channel_id"]))
        return error(404, 10003, "Unknown Channel") if found is None else json_response(found)

    async def active(request: web.Request) -> web.Response:
        if (denied := refused(request)) is not None:
            return denied
        live = [t for t in threads_of(guild=request.match_info["guild_id"])
                if not t["thread_metadata"]["archived"]]  # fmt: skip
        return json_response({"threads": live, "members": []})

    async def archived(request: web.Request) -> web.Response:
        if (denied := refused(request)) is not None:
            return denied
        limit, before = int(request.query.get("limit", 50)), request.query.get("before")
        done = [t for t in threads_of(parent=request.match_info["channel_id"])
                if t["thread_metadata"]["archived"]]  # fmt: skip
        done.sort(key=lambda t: (t["thread_metadata"]["archive_timestamp"], t["id"]), reverse=True)
        if before:
            done = [t for t in done if t["thread_metadata"]["archive_timestamp"] < before]
        return json_response(
            {"threads": done[:limit], "members": [], "has_more": len(done) > limit}
        )

    async def messages(request: web.Request) -> web.Response:
        if (denied := refused(request)) is not None:
            return denied
        channel_id = request.match_info["channel_id"]
        limit, before = int(request.query.get("limit", 50)), request.query.get("before")
        with fake.lock:
            if int(channel_id) not in fake.channels:
                return error(404, 10003, "Unknown Channel")
            found = [copy.deepcopy(m) for m in fake.messages.values()
                     if m["channel_id"] == channel_id]  # fmt: skip
        found.sort(key=lambda m: int(m["id"]), reverse=True)
        if before:
            found = [m for m in found if int(m["id"]) < int(before)]
        return json_response(found[:limit])

    app.router.add_get(f"{api}/channels/{{channel_id}}", channel)
    app.router.add_get(f"{api}/guilds/{{guild_id}}/threads/active", active)
    app.router.add_get(f"{api}/channels/{{channel_id}}/threads/archived/public", archived)
    app.router.add_get(f"{api}/channels/{{channel_id}}/messages", messages)
