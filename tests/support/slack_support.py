"""The real Slack bot served over HTTP, driven the way Slack drives it, for the Slack tests.

:func:`slack_bot` builds the bot exactly as ``teamrag slack`` does (``bots.slack_bot``)
on the real agent, serves Bolt's aiohttp app on a free port, and points its Web API
client at a :class:`~tests.fakes.slack_server.FakeSlack`. :class:`SlackHarness` then
sends signed events, slash commands and button clicks like Slack does, and
:func:`until` waits for what the fake records.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, TypeVar
from urllib.parse import urlencode

import aiohttp
from slack_sdk.signature import SignatureVerifier

from adapters.chat.channels import ChannelRules
from adapters.chat.services import ChatServices
from adapters.slack.queued import SlackBot
from agent.events import Final
from agent.retrieval.knowledge_base import KnowledgeBase
from bots.settings import Settings
from bots.slack_bot import (
    EVENTS_PATH,
    build_slack_app,
    start_http,
    thread_record,
    web_api_session,
)
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.slack_server import BOT_TOKEN, BOT_USER, TEAM, FakeSlack
from tests.support.chat_support import chat_services

SECRET = "test-signing-secret"
CHANNEL = "C0GENERAL"
DM = "D0ALICE"
ALICE = "U0ALICE"
BOB = "U0BOB"

T = TypeVar("T")


async def until(
    probe: Callable[[], T | None], *, timeout: float = 30.0, what: str = "the expected calls"
) -> T:
    """Poll ``probe`` until it returns something truthy; fail after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = probe()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.02)


def settings_for(fake: FakeSlack, folder: Path, **overrides: Any) -> Settings:
    values: dict[str, Any] = {
        "data_dir": folder / "data",
        "SLACK_BOT_TOKEN": BOT_TOKEN,
        "SLACK_SIGNING_SECRET": SECRET,
        "SLACK_APP_TOKEN": None,
        "SLACK_API_URL": fake.base_url,
    }
    return Settings(**(values | overrides))


@dataclass
class SlackSender:
    """Sends what Slack sends, signed, to the bot's Events API ``url``."""

    fake: FakeSlack
    url: str
    session: aiohttp.ClientSession
    # Shared by every sender: event ids and message timestamps are unique in Slack, so
    # two senders (two waves of a benchmark, say) must not repeat each other's.
    _numbers: ClassVar[itertools.count[int]] = itertools.count(1)

    def next_ts(self) -> str:
        return f"1700000000.{next(self._numbers):06d}"

    # --- raw requests ------------------------------------------------------------------

    async def post(
        self,
        body: str,
        content_type: str,
        *,
        timestamp: int | None = None,
        secret: str = SECRET,
        headers: dict[str, str] | None = None,
    ) -> tuple[int, str]:
        """POST ``body`` signed the way Slack signs it; returns (status, response text)."""
        stamp = str(timestamp if timestamp is not None else int(time.time()))
        signature = SignatureVerifier(secret).generate_signature(timestamp=stamp, body=body)
        assert signature is not None
        sent = {
            "Content-Type": content_type,
            "X-Slack-Request-Timestamp": stamp,
            "X-Slack-Signature": signature,
            **(headers or {}),
        }
        async with self.session.post(self.url, data=body.encode(), headers=sent) as response:
            return response.status, await response.text()

    async def event(
        self,
        event: dict[str, Any],
        *,
        event_id: str | None = None,
        retry: int | None = None,
        team: str = TEAM,
    ) -> int:
        """One Events API delivery; ``retry`` adds Slack's retry headers (same event id)."""
        body = {
            "token": "unused",
            "team_id": team,
            "api_app_id": "A0TEAMRAG",
            "type": "event_callback",
            "event_id": event_id or f"Ev{next(self._numbers):08d}",
            "event_time": int(time.time()),
            "event": event,
            "authorizations": [{"team_id": team, "user_id": BOT_USER, "is_bot": True}],
        }
        headers = {}
        if retry is not None:
            headers = {"X-Slack-Retry-Num": str(retry), "X-Slack-Retry-Reason": "http_timeout"}
        status, _ = await self.post(json.dumps(body), "application/json", headers=headers)
        return status

    # --- what users do -----------------------------------------------------------------

    def user_message(
        self,
        text: str,
        *,
        channel: str = CHANNEL,
        user: str = ALICE,
        thread_ts: str | None = None,
        **extra: Any,
    ) -> dict[str, Any]:
        ts = self.next_ts()
        message = {
            "type": "message",
            "channel": channel,
            "channel_type": "im" if channel.startswith("D") else "channel",
            "user": user,
            "text": text,
            "ts": ts,
            "client_msg_id": f"msg-{ts}",
            "team": TEAM,
        }
        if thread_ts:
            message["thread_ts"] = thread_ts
        return message | extra

    async def mention(
        self,
        question: str,
        *,
        channel: str = CHANNEL,
        user: str = ALICE,
        thread_ts: str | None = None,
    ) -> dict[str, Any]:
        """``@teamrag question`` in a channel: Slack sends it as ``app_mention`` and as
        ``message`` (two event ids, one message). Returns the message."""
        message = self.user_message(
            f"<@{BOT_USER}> {question}", channel=channel, user=user, thread_ts=thread_ts
        )
        mention = {k: v for k, v in message.items() if k != "channel_type"} | {
            "type": "app_mention"
        }
        assert await self.event(mention) == 200
        assert await self.event(message) == 200
        return message

    async def say(
        self, text: str, *, channel: str = CHANNEL, user: str = ALICE, thread_ts: str | None = None
    ) -> dict[str, Any]:
        """A plain message (no mention): in a DM, or a reply in a thread."""
        message = self.user_message(text, channel=channel, user=user, thread_ts=thread_ts)
        assert await self.event(message) == 200
        return message

    async def command(
        self, text: str, *, channel: str = CHANNEL, user: str = ALICE, key: str | None = None
    ) -> tuple[int, dict[str, Any], str]:
        """``/ask text``; returns (status, acknowledgement body, the response_url key).
        The same ``key`` twice is one command delivered twice (same trigger id)."""
        key = key or f"ask-{next(self._numbers)}"
        form = {
            "token": "unused",
            "team_id": TEAM,
            "team_domain": "teamrag-test",
            "channel_id": channel,
            "channel_name": "general",
            "user_id": user,
            "user_name": "alice",
            "command": "/ask",
            "text": text,
            "api_app_id": "A0TEAMRAG",
            "response_url": self.fake.response_url(key),
            "trigger_id": f"trigger-{key}",
        }
        status, body = await self.post(urlencode(form), "application/x-www-form-urlencoded")
        return status, (json.loads(body) if body else {}), key

    async def click(
        self,
        value: str,
        *,
        user: str = ALICE,
        channel: str = CHANNEL,
        block_id: str = "teamrag_feedback:en",
        message_text: str = "",
        response_url: str | None = None,
    ) -> int:
        """A click on a feedback button whose value is ``value``, in block ``block_id``."""
        payload: dict[str, Any] = {
            "type": "block_actions",
            "team": {"id": TEAM},
            "user": {"id": user},
            "api_app_id": "A0TEAMRAG",
            "trigger_id": f"trigger-click-{next(self._numbers)}",
            "container": {"type": "message", "channel_id": channel},
            "channel": {"id": channel},
            "message": {"type": "message", "text": message_text, "ts": self.next_ts()},
            "actions": [
                {
                    "type": "feedback_buttons",
                    "action_id": "teamrag_feedback",
                    "block_id": block_id,
                    "value": value,
                    "action_ts": str(time.time()),
                }
            ],
        }
        if response_url:
            payload["response_url"] = response_url
        body = urlencode({"payload": json.dumps(payload)})
        status, _ = await self.post(body, "application/x-www-form-urlencoded")
        return status


@dataclass
class SlackHarness(SlackSender):
    """A sender to a bot built by :func:`slack_bot`, with that bot's services."""

    services: ChatServices = field(kw_only=True)
    bot: SlackBot = field(kw_only=True)


@asynccontextmanager
async def slack_bot(
    fake: FakeSlack,
    kb: KnowledgeBase,
    folder: Path,
    *,
    llm: FakeOpenAI | None = None,
    rules: ChannelRules | None = None,
    streaming: bool = True,
    update_interval_s: float = 0.05,
    finals: list[Final] | None = None,
) -> AsyncIterator[SlackHarness]:
    """The bot as ``teamrag slack`` builds it, on the real agent, served on a free port."""
    settings = settings_for(fake, folder, slack_streaming=streaming)
    threads = thread_record(settings)
    try:
        async with (
            chat_services(
                kb, folder, llm=llm, rules=rules, update_interval_s=update_interval_s, finals=finals
            ) as services,
            web_api_session() as web_api,
            aiohttp.ClientSession() as session,
        ):
            app, bot = build_slack_app(settings, services, threads, session=web_api)
            runner, port = await start_http(app, host="127.0.0.1", port=0)
            try:
                async with bot.serving():
                    url = f"http://127.0.0.1:{port}{EVENTS_PATH}"
                    yield SlackHarness(fake, url, session, services=services, bot=bot)
                    await bot.drain(30)
            finally:
                await runner.cleanup()
    finally:
        threads.close()
