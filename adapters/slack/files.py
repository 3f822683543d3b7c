"""Learning a file shared with the bot: ``@teamrag`` in a message that carries files.

Each file is looked up (``files.info``), downloaded from its private URL with the bot
token (the ``files:read`` scope), at most :data:`MAX_BYTES`, and ingested into the
channel's scope through the same Ingestor as ``teamrag ingest`` (``ChatServices.learn``).
The scope is the one the channel's history would get (:func:`history_scope`): a private
channel's file never answers in another channel. The bot replies in the thread with
what it learned, or why not, in the language the user wrote.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import Any

import httpx
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from adapters.chat.history import history_scope
from adapters.chat.phrases import language_of
from adapters.chat.services import ChatServices, Learn
from adapters.slack.delivery import slack_error
from adapters.slack.turns import PLATFORM, incoming
from agent.retrieval.ingest import IngestItem, Status
from agent.retrieval.loaders import is_supported, supported_names
from agent.retrieval.types import DEFAULT_SCOPE
from agent.sources.base import SourceError
from agent.sources.http import DEFAULT_MAX_BYTES

log = logging.getLogger(__name__)

MAX_BYTES = DEFAULT_MAX_BYTES
SIGNED_OUT = (
    "Slack sent its sign-in page instead of the file: give the app the files:read scope and "
    "reinstall it"
)


def signed_out(content_type: str, name: str) -> bool:
    """Slack answers a download without the files:read scope with its HTML sign-in page."""
    return content_type.startswith("text/html") and not name.endswith((".html", ".htm"))


_TYPES = supported_names()

_SAID = {
    "learned": ("Learned {name}: {n} passages, scope {scope}.",
                "{name} 내용을 배웠습니다: {n}개 단락, 범위 {scope}."),
    "known": ("Already knew {name} (unchanged), scope {scope}.",
              "{name}은(는) 이미 알고 있습니다 (변경 없음), 범위 {scope}."),
    "unsupported": (f"Cannot learn {{name}}: teamrag reads {_TYPES} files.",
                    f"{{name}}은(는) 배울 수 없습니다: teamrag은 {_TYPES} 파일만 읽습니다."),
    "too_large": ("Cannot learn {name}: it is {size:.1f} MB, over the {limit:.0f} MB limit.",
                  "{name}은(는) 배울 수 없습니다: {size:.1f}MB로 한도 {limit:.0f}MB를 넘습니다."),
    "failed": ("Could not learn {name}: {reason}",
               "{name}을(를) 배우지 못했습니다: {reason}"),
    "no_scope": ("Cannot learn files here: {reason}",
                 "이 채널에서는 파일을 배울 수 없습니다: {reason}"),
}  # fmt: skip


def say(key: str, language: str, **values: Any) -> str:
    english, korean = _SAID[key]
    return (korean if language == "ko" else english).format(**values)


async def learn_files(services: ChatServices, client: AsyncWebClient, body: dict[str, Any]) -> None:
    """Learn the files of a mention (once per message, whatever Slack redelivers) and say
    what was learned in its thread."""
    message, event = incoming(body), body["event"]
    keys = (f"slack:event:{message.event_id}" if message.event_id else "", message.message_key)
    if not await services.dedupe.first(*keys):
        return
    language = language_of(message.question(""))
    learn = services.learn
    if learn is None:  # the caller checks; a bot without a knowledge base learns nothing
        return
    try:
        scope = await _scope(services, client, message.channel)
        lines = [await _learn(learn, client, f, scope, language) for f in event["files"]]
    except SourceError as exc:
        lines = [say("no_scope", language, reason=str(exc))]
    await client.chat_postMessage(
        channel=message.channel, thread_ts=message.thread_root, text="\n".join(lines)
    )


async def _scope(services: ChatServices, client: AsyncWebClient, channel: str) -> str:
    try:
        info = (await client.conversations_info(channel=channel))["channel"]
    except SlackApiError as exc:
        raise SourceError(f"cannot look the channel up ({slack_error(exc)})") from None
    private = any(info.get(k) for k in ("is_private", "is_group", "is_im", "is_mpim"))
    return history_scope(
        services.rules, PLATFORM, channel, private=private, default_scope=DEFAULT_SCOPE
    )


async def _learn(
    learn: Learn, client: AsyncWebClient, shared: dict[str, Any], scope: str,
    language: str,
) -> str:  # fmt: skip
    name = str(shared.get("name") or shared.get("id"))
    if not is_supported(Path(name)):
        return say("unsupported", language, name=name)
    try:
        file = (await client.files_info(file=str(shared["id"])))["file"]
    except SlackApiError as exc:
        return say("failed", language, name=name, reason=f"files.info: {slack_error(exc)}")
    if int(file.get("size") or 0) > MAX_BYTES:
        mb = 1024 * 1024
        return say("too_large", language, name=name, size=file["size"] / mb, limit=MAX_BYTES / mb)
    try:
        data = await _download(str(file["url_private_download"]), str(client.token))
    except (httpx.HTTPError, ValueError) as exc:
        return say("failed", language, name=name, reason=str(exc))
    link = str(file.get("permalink") or file["url_private_download"])
    item = IngestItem(link, name, lambda: data, title=str(file.get("title") or name), link=link)
    result = await asyncio.to_thread(learn, item, scope)
    if result.status in (Status.ADDED, Status.UPDATED):
        return say("learned", language, name=name, n=result.chunks, scope=scope)
    if result.status is Status.UNCHANGED:
        return say("known", language, name=name, scope=scope)
    return say("failed", language, name=name, reason=result.reason or result.status.value)


async def _download(url: str, token: str) -> bytes:
    async with (
        httpx.AsyncClient(timeout=30, follow_redirects=True) as http,
        http.stream("GET", url, headers={"Authorization": f"Bearer {token}"}) as response,
    ):
        response.raise_for_status()
        if signed_out(response.headers.get("content-type", ""), url):
            raise ValueError(SIGNED_OUT)
        body = bytearray()
        async for part in response.aiter_bytes():
            body.extend(part)
            if len(body) > MAX_BYTES:
                raise ValueError(f"it is over the {MAX_BYTES // (1024 * 1024)} MB limit")
        return bytes(body)
