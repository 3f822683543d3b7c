"""The ``slack`` source kind: a channel's history as documents, kept in sync.

One document per thread (the root message and its replies) and one per UTC day of
messages that started no thread, cited by the message's permalink (the archives URL
form, built from ``auth.test``'s workspace URL: no ``chat.getPermalink`` call per
thread). Each sync lists the channel's history (one ``conversations.history`` call per
200 messages, no thread bodies) and reads a thread with ``conversations.replies`` only
when it is new or its ``latest_reply`` moved: Slack allows new apps one history call a
minute, so thread bodies are the cost to avoid. A thread whose root is gone from the
history leaves the knowledge base. The bot's own answers are never loaded (they would
be cited as if a person had written them). With ``--attachments`` the files people
posted in the channel go in too, each one document in the channel's scope, when it is a
type teamrag reads (agent/retrieval/loaders: FILE_TYPES), read again when it changes.

The source kinds are synchronous (they run on a worker thread), so this uses slack_sdk's
``WebClient``, the synchronous twin of the bot's ``AsyncWebClient``, with the same base
URL (``SLACK_API_URL``) and the same 429 handling: wait the ``Retry-After`` Slack sent.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError, SlackClientError
from slack_sdk.http_retry.builtin_handlers import (
    ConnectionErrorRetryHandler,
    RateLimitErrorRetryHandler,
)
from slack_sdk.web import SlackResponse

from adapters.chat.channels import ChannelRules
from adapters.chat.history import ChannelHistory, clock_of, day_of, history_scope, version_of
from adapters.slack.files import SIGNED_OUT, signed_out
from adapters.slack.markup import plain_question
from agent.retrieval.ingest import FileResult
from agent.retrieval.loaders import is_supported
from agent.sources.base import Item, KindContext, SourceError, SourceSpec, failed, item, skipped
from agent.sources.listed import Entry

TOKEN_ENV = "SLACK_BOT_TOKEN"
PAGE = 200
RATE_LIMIT_RETRIES = 5  # each waits the Retry-After (a minute for a new app's history calls)
# Subtypes a person writes; joins, topic changes, bot posts and tombstones are not content.
_PERSON = frozenset({None, "file_share", "thread_broadcast", "me_message"})
_FIXES = {
    "not_in_channel": "invite the bot to the channel (/invite @teamrag) and sync again",
    "channel_not_found": "check the channel id (channel details, at the bottom) and invite "
    "the bot to it",
    "missing_scope": "give the Slack app the channels:history, groups:history, channels:read "
    "and groups:read scopes and reinstall it",
    "ratelimited": "Slack kept refusing with 429 Retry-After; the next sync tries again",
}


class SlackHistory(ChannelHistory):
    service = "Slack"

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
        token = self.bot_token(ctx, self.token_env, "Slack bot token (xoxb-...)")
        super().__init__(spec, ctx, {})
        self.channel = spec.target
        self.rules, self.default_scope = rules, default_scope
        base = str(spec.option("api_url") or api_url or WebClient.BASE_URL)
        self.slack = WebClient(
            token=token,
            base_url=base if base.endswith("/") else base + "/",
            timeout=max(1, int(ctx.timeout_s)),
            retry_handlers=[
                RateLimitErrorRetryHandler(max_retry_count=RATE_LIMIT_RETRIES),
                ConnectionErrorRetryHandler(),
            ],
        )
        self.archives = ""
        self.label = self.channel
        self.attachments = bool(spec.option("attachments", False))

    # -- the channel ------------------------------------------------------------------

    def resolve(self) -> str:
        workspace = self.call(self.slack.auth_test)
        url = str(workspace.get("url") or "https://slack.com/").rstrip("/")
        self.archives = f"{url}/archives/{self.channel}"
        info = self.call(self.slack.conversations_info, channel=self.channel)["channel"]
        self.label = "#" + str(info.get("name") or self.channel)
        private = any(info.get(k) for k in ("is_private", "is_group", "is_im", "is_mpim"))
        return history_scope(
            self.rules, "slack", self.channel, private=private, default_scope=self.default_scope
        )

    def permalink(self, ts: str, thread_ts: str | None = None) -> str:
        link = f"{self.archives}/p{ts.replace('.', '')}"
        return link if not thread_ts or thread_ts == ts else f"{link}?thread_ts={thread_ts}"

    # -- listing and fetching ---------------------------------------------------------

    def entries(self) -> Iterator[Entry]:
        days: dict[str, list[dict[str, Any]]] = {}
        for message in self.pages(self.slack.conversations_history, channel=self.channel):
            if not by_person(message):
                continue
            ts, root = str(message["ts"]), message.get("thread_ts")
            if root == ts and message.get("reply_count"):
                version = f"{message.get('latest_reply')}|{message.get('reply_count')}|" + edited(
                    message
                )
                title = f"{self.label}: {first_line(message)}"
                yield Entry("thread:" + ts, version, self.permalink(ts), title, ts)
            elif not root or root == ts:  # a broadcast reply is read with its thread
                days.setdefault(day_of(float(ts)), []).append(message)
            if self.attachments:
                yield from self._file_entries(message)
        for day, messages in sorted(days.items()):
            messages.sort(key=lambda m: float(m["ts"]))
            version = version_of(f"{m['ts']}|{edited(m)}|{m.get('text', '')}" for m in messages)
            key = f"{self.archives}#day-{day}"
            yield Entry("day:" + day, version, key, f"{self.label} {day}", messages)

    def _file_entries(self, message: dict[str, Any]) -> Iterator[Entry]:
        for file in message.get("files") or []:
            name, url = str(file.get("name") or ""), file.get("url_private_download")
            if url and is_supported(Path(name)):  # screenshots and the like: not listed
                version = f"{file.get('timestamp') or file.get('created')}|{file.get('size')}"
                key = str(file.get("permalink") or url)
                yield Entry("file:" + str(file["id"]), version, key, name, file)

    def _fetch_file(self, entry: Entry) -> Item:
        url = str(entry.extra["url_private_download"])
        got = self.fetched(entry, url, headers={"Authorization": f"Bearer {self.slack.token}"})
        if isinstance(got, FileResult):
            return got
        if signed_out(got.headers.get("content-type", ""), entry.title):
            return failed(entry.key, SIGNED_OUT)
        return item(entry.key, entry.title, got.body, link=entry.key, scope=self.scope)

    def fetch(self, entry: Entry) -> Item:
        if entry.id.startswith("file:"):
            return self._fetch_file(entry)
        if entry.id.startswith("thread:"):
            messages = [
                m
                for m in self.pages(
                    self.slack.conversations_replies, channel=self.channel, ts=entry.extra
                )
                if by_person(m)
            ]
            link = entry.key
        else:
            messages = list(entry.extra)
            link = self.permalink(str(messages[0]["ts"]))
        text = render(entry.title, messages)
        data = text.encode("utf-8")
        if len(data) > self.limit:
            return skipped(entry.key, f"larger than {self.limit} bytes; raise --max-bytes")
        return item(entry.key, "history.md", data, link=link, title=entry.title, scope=self.scope)

    # -- the Web API ------------------------------------------------------------------

    def pages(self, method: Callable[..., SlackResponse], **args: Any) -> Iterator[dict[str, Any]]:
        cursor = ""
        while True:
            page = self.call(method, limit=PAGE, cursor=cursor or None, **args)
            yield from page.get("messages") or []
            cursor = str((page.get("response_metadata") or {}).get("next_cursor") or "")
            if not cursor:
                return

    def call(self, method: Callable[..., SlackResponse], **args: Any) -> dict[str, Any]:
        try:
            response = method(**args)
        except SlackApiError as exc:
            error = str(exc.response.get("error") or exc.response.status_code)
            raise SourceError(self.explain(error)) from None
        except (SlackClientError, OSError) as exc:
            raise SourceError(
                f"Slack: cannot reach {self.slack.base_url} ({type(exc).__name__}: {exc}); "
                "check SLACK_API_URL and the network"
            ) from None
        return dict(response.data) if isinstance(response.data, dict) else {}

    def explain(self, error: str) -> str:
        if error in ("invalid_auth", "not_authed", "token_revoked", "account_inactive"):
            fix = f"put a valid bot token (xoxb-...) in {self.token_env}"
        else:
            fix = _FIXES.get(error, "see https://api.slack.com/methods for what it means")
        return f"Slack refused channel {self.channel} ({error}): {fix}"


def by_person(message: dict[str, Any]) -> bool:
    return message.get("subtype") in _PERSON and not message.get("bot_id")


def edited(message: dict[str, Any]) -> str:
    return str((message.get("edited") or {}).get("ts") or "")


def first_line(message: dict[str, Any]) -> str:
    text = readable(str(message.get("text") or "")).strip()
    line = text.splitlines()[0] if text else "(no text)"
    return line[:80]


def readable(text: str) -> str:
    """Slack markup as the words a reader sees: ``<@U1>`` -> ``@U1``, links with URLs."""
    return plain_question(text, "")


def render(title: str, messages: list[dict[str, Any]]) -> str:
    parts = [f"# {title}", ""]
    for m in messages:
        profile = m.get("user_profile") or {}
        who = profile.get("display_name") or profile.get("real_name") or m.get("user") or "?"
        files = ", ".join(str(f.get("name")) for f in m.get("files") or [] if f.get("name"))
        parts.append(f"**{who}** ({clock_of(float(m['ts']))}):")
        parts.append(readable(str(m.get("text") or "")) + (f" (files: {files})" if files else ""))
        parts.append("")
    return "\n".join(parts)
