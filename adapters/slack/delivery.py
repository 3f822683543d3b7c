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

from slack_sdk.errors import SlackApiError
from slack_sdk.http_retry.async_handler import AsyncRetryHandler
from slack_sdk.web.async_client import AsyncWebClient
from slack_sdk.webhook.async_client import AsyncWebhookClient

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


async def respond_all(
    response_url: str,
    messages: Sequence[SlackMessage],
    language: str,
    *,
    response_type: str,
    retry_handlers: list[AsyncRetryHandler],
) -> None:
    """The same through a slash command's ``response_url`` (the only way to an ephemeral
    message that carries blocks; Slack allows five uses in 30 minutes)."""
    webhook = AsyncWebhookClient(response_url, retry_handlers=retry_handlers)
    for i, message in enumerate(messages):
        sent = await webhook.send(
            text=message.text,
            blocks=message.blocks,
            response_type=response_type,
            replace_original=False,
        )
        if sent.status_code != 200:
            log.warning("response_url refused an answer (%s); sending it plainly", sent.body)
            plain = "".join(plain_texts(messages[i:], language))
            sent = await webhook.send(text=plain, response_type=response_type)
            if sent.status_code != 200:
                raise RuntimeError(f"response_url refused the plain answer too: {sent.body}")
            return
