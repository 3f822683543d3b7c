"""Posting an answer's messages, and the plainer message when Slack refuses them.

A reply must never go silent: when Slack rejects a message (a block it does not
like, a message that can no longer be edited, a channel that changed), the rest of
the answer is posted again as plain text, saying why. A 429 never gets here: the
client's retry handler has already waited the ``Retry-After`` Slack asked for and
tried again.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

from slack_sdk.errors import SlackApiError
from slack_sdk.http_retry.async_handler import AsyncRetryHandler
from slack_sdk.web.async_client import AsyncWebClient
from slack_sdk.webhook.async_client import AsyncWebhookClient
from slack_sdk.webhook.webhook_response import WebhookResponse

from adapters.slack.blocks import SlackMessage, plain_texts
from agent.events import Final

log = logging.getLogger(__name__)

# Turns a Final into the messages to post (and remembers the answer for feedback).
Render = Callable[[Final], Awaitable[list[SlackMessage]]]


@dataclass(frozen=True)
class Place:
    """Where a reply goes: a channel, and the thread in it (None: a new top-level message)."""

    channel: str
    thread_ts: str | None


def slack_error(exc: SlackApiError) -> str:
    return str(exc.response.get("error", "")) if exc.response is not None else ""


async def deliver(
    client: AsyncWebClient,
    place: Place,
    messages: Sequence[SlackMessage],
    language: str,
    *,
    edit_ts: str | None = None,
) -> None:
    """Post ``messages`` in order, the first one edited into ``edit_ts`` when given.

    Later messages go in the thread; for a top-level reply, in the first message's
    thread. On a Slack error the messages not yet delivered are posted as plain text.
    """
    thread = place.thread_ts
    for i, message in enumerate(messages):
        try:
            if i == 0 and edit_ts is not None:
                await client.chat_update(
                    channel=place.channel, ts=edit_ts, text=message.text, blocks=message.blocks
                )
                posted = edit_ts
            else:
                response = await client.chat_postMessage(
                    channel=place.channel,
                    thread_ts=thread,
                    text=message.text,
                    blocks=message.blocks,
                )
                posted = str(response["ts"])
        except SlackApiError as exc:
            log.warning(
                "Slack refused an answer message (%s); sending it plainly", slack_error(exc)
            )
            await post_plain(client, Place(place.channel, thread), messages[i:], language)
            return
        thread = thread or posted


async def post_plain(
    client: AsyncWebClient, place: Place, messages: Sequence[SlackMessage], language: str
) -> None:
    """The last resort: text only. Its errors propagate (the caller logs them)."""
    for text in plain_texts(messages, language):
        await client.chat_postMessage(channel=place.channel, thread_ts=place.thread_ts, text=text)


RESPONSE_URL_USES = 5  # Slack allows five uses of a response_url, within 30 minutes


class ResponseUrl:
    """A slash command's ``response_url`` (the only way to an ephemeral message that
    carries blocks), counting its uses: past Slack's five it refuses here rather than
    spend a request Slack would refuse anyway."""

    def __init__(self, url: str, retry_handlers: list[AsyncRetryHandler]) -> None:
        self._webhook = AsyncWebhookClient(url, retry_handlers=retry_handlers)
        self.left = RESPONSE_URL_USES

    async def send(self, **fields: Any) -> WebhookResponse:
        if self.left <= 0:
            raise RuntimeError("the response_url's five uses are spent")
        self.left -= 1
        return await self._webhook.send(**fields)


async def respond_all(
    url: ResponseUrl,
    messages: Sequence[SlackMessage],
    language: str,
    *,
    response_type: str,
    replace_first: bool = False,
) -> None:
    """The same through a slash command's response URL. ``replace_first``: the first
    message replaces the one the URL showed last (the progress, or "Thinking…").

    One use is kept for the plain fallback while more than one message is left; on the
    URL's last use the rest of a long answer goes as one plain message."""
    for i, message in enumerate(messages):
        rest = messages[i:]
        if url.left < 2 and len(rest) > 1:
            await _respond_plain(url, rest, language, response_type)
            return
        sent = await url.send(
            text=message.text,
            blocks=message.blocks,
            response_type=response_type,
            replace_original=replace_first and i == 0,
        )
        if sent.status_code != 200:
            log.warning("response_url refused an answer (%s); sending it plainly", sent.body)
            await _respond_plain(url, rest, language, response_type)
            return


async def _respond_plain(
    url: ResponseUrl, messages: Sequence[SlackMessage], language: str, response_type: str
) -> None:
    plain = "".join(plain_texts(messages, language))
    sent = await url.send(text=plain, response_type=response_type)
    if sent.status_code != 200:
        raise RuntimeError(f"response_url refused the plain answer too: {sent.body}")
