"""The ``discord`` source kind: a forum channel's posts, or a text channel's messages and
threads, as documents kept in sync, through Discord's REST API (``DISCORD_API_BASE``).

One document per thread (a forum post is a thread: active ones from the guild's active
thread list, archived ones paged from the channel), and for a text channel one per UTC
day of its own messages. A thread is read again only when its ``last_message_id`` or
message count moved; a thread or day that is gone leaves the knowledge base. Citations
link to ``https://discord.com/channels/GUILD/CHANNEL/MESSAGE``. Bots' messages (this
bot's answers among them) are never loaded. A 429 is waited out for the ``retry_after``
Discord sends, a few times, before the sync gives up until the next run.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import datetime
from typing import Any

import httpx

from adapters.chat.channels import ChannelRules
from adapters.chat.history import ChannelHistory, clock_of, day_of, history_scope, version_of
from agent.sources import http
from agent.sources.base import Item, KindContext, SourceError, SourceSpec, item, skipped
from agent.sources.listed import Entry

TOKEN_ENV = "DISCORD_TOKEN"
PUBLIC_API = "https://discord.com/api/v10"
LINK = "https://discord.com/channels"
PAGE = 100
RATE_LIMIT_RETRIES = 5
VIEW_CHANNEL = 1 << 10
FORUMS = (15, 16)  # forum and media channels: every post is a thread
PERSON_TYPES = (0, 19)  # a message, a reply


class DiscordHistory(ChannelHistory):
    service = "Discord"

    def __init__(
        self,
        spec: SourceSpec,
        ctx: KindContext,
        *,
        rules: ChannelRules,
        default_scope: str,
        api_url: str | None,
    ) -> None:
        self.token_env = str(spec.option("token_env") or TOKEN_ENV)
        token = self.bot_token(ctx, self.token_env, "Discord bot token")
        super().__init__(spec, ctx, {"Authorization": f"Bot {token}"})
        self.channel = spec.target
        self.rules, self.default_scope = rules, default_scope
        self.base = str(spec.option("api_url") or api_url or PUBLIC_API).rstrip("/")
        self.guild = ""
        self.forum = False
        self.label = self.channel

    # -- the channel ------------------------------------------------------------------

    def resolve(self) -> str:
        info = self.get(f"/channels/{self.channel}")
        self.guild = str(info.get("guild_id") or "")
        self.forum = int(info.get("type", 0)) in FORUMS
        self.label = "#" + str(info.get("name") or self.channel)
        # Private: @everyone (the role whose id is the guild's) may not view the channel.
        private = any(
            str(o.get("id")) == self.guild and int(o.get("deny") or 0) & VIEW_CHANNEL
            for o in info.get("permission_overwrites") or []
        )
        return history_scope(
            self.rules, "discord", self.channel, private=private, default_scope=self.default_scope
        )

    def link(self, channel: str, message: str = "") -> str:
        return f"{LINK}/{self.guild}/{channel}" + (f"/{message}" if message else "")

    # -- listing and fetching ---------------------------------------------------------

    def entries(self) -> Iterator[Entry]:
        for thread in self.threads():
            tid = str(thread["id"])
            version = f"{thread.get('last_message_id')}|{thread.get('message_count')}"
            title = f"{self.label}: {thread.get('name') or tid}"
            yield Entry("thread:" + tid, version, self.link(tid), title, tid)
        if self.forum:
            return
        days: dict[str, list[dict[str, Any]]] = {}
        for message in self.messages(self.channel):
            days.setdefault(day_of(stamp(message)), []).append(message)
        for day, messages in sorted(days.items()):
            version = version_of(
                f"{m['id']}|{m.get('edited_timestamp')}|{m.get('content', '')}" for m in messages
            )
            key = f"{self.link(self.channel)}#day-{day}"
            yield Entry("day:" + day, version, key, f"{self.label} {day}", messages)

    def fetch(self, entry: Entry) -> Item:
        if entry.id.startswith("thread:"):
            messages = list(self.messages(str(entry.extra)))
            where = str(entry.extra)
        else:
            messages, where = list(entry.extra), self.channel
        if not messages:
            return skipped(entry.key, "no messages written by people")
        data = render(entry.title, messages).encode("utf-8")
        if len(data) > self.limit:
            return skipped(entry.key, f"larger than {self.limit} bytes; raise --max-bytes")
        link = self.link(where, str(messages[0]["id"]))
        return item(entry.key, "history.md", data, link=link, title=entry.title, scope=self.scope)

    def threads(self) -> Iterator[dict[str, Any]]:
        active = self.get(f"/guilds/{self.guild}/threads/active").get("threads") or []
        yield from (t for t in active if str(t.get("parent_id")) == self.channel)
        before = ""
        while True:
            params = {"limit": PAGE} | ({"before": before} if before else {})
            page = self.get(f"/channels/{self.channel}/threads/archived/public", params)
            threads = page.get("threads") or []
            yield from threads
            if not page.get("has_more") or not threads:
                return
            before = str(threads[-1]["thread_metadata"]["archive_timestamp"])

    def messages(self, channel: str) -> Iterator[dict[str, Any]]:
        """The channel's messages written by people, oldest first."""
        found: list[dict[str, Any]] = []
        before = ""
        while True:
            params = {"limit": PAGE} | ({"before": before} if before else {})
            page: list[dict[str, Any]] = self.get(f"/channels/{channel}/messages", params)
            found += page
            if len(page) < PAGE:
                break
            before = str(min(int(m["id"]) for m in page))
        people = [m for m in found if by_person(m)]
        yield from sorted(people, key=lambda m: int(m["id"]))

    # -- the REST API -----------------------------------------------------------------

    def get(self, path: str, params: dict[str, Any] | None = None) -> Any:
        url = self.base + path
        for _ in range(RATE_LIMIT_RETRIES):
            try:
                response = self.http.get(url, params=params)
            except httpx.HTTPError as exc:
                raise SourceError(f"Discord: {http.describe(exc, url)}") from None
            if response.status_code != 429:
                break
            time.sleep(retry_after(response))
        else:
            raise SourceError(f"Discord kept answering 429 at {url}; the next sync tries again")
        if response.status_code in (401, 403):
            raise SourceError(
                f"Discord refused channel {self.channel} (HTTP {response.status_code}): check the "
                f"bot token in {self.token_env} and that the bot may view the channel and read "
                "its message history"
            )
        if response.status_code == 404:
            raise SourceError(
                f"Discord knows no channel {self.channel} (HTTP 404 at {url}): check the id "
                "(Developer Mode, right-click the channel, Copy Channel ID)"
            )
        if response.status_code >= 400:
            raise SourceError(f"Discord answered HTTP {response.status_code} at {url}")
        return response.json()


def retry_after(response: httpx.Response) -> float:
    try:
        return float(response.json().get("retry_after"))
    except (ValueError, TypeError, AttributeError):
        return float(response.headers.get("Retry-After") or 1.0)


def by_person(message: dict[str, Any]) -> bool:
    author = message.get("author") or {}
    return int(message.get("type", 0)) in PERSON_TYPES and not author.get("bot")


def stamp(message: dict[str, Any]) -> float:
    return datetime.fromisoformat(str(message["timestamp"])).timestamp()


def render(title: str, messages: list[dict[str, Any]]) -> str:
    parts = [f"# {title}", ""]
    for m in messages:
        author = m.get("author") or {}
        who = author.get("global_name") or author.get("username") or "?"
        files = ", ".join(str(a.get("filename")) for a in m.get("attachments") or [])
        parts.append(f"**{who}** ({clock_of(stamp(m))}):")
        parts.append(str(m.get("content") or "") + (f" (files: {files})" if files else ""))
        parts.append("")
    return "\n".join(parts)
