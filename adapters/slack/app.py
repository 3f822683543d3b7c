"""The Bolt app: which Slack request goes to which :class:`~adapters.slack.bot.SlackBot` method.

Bolt acknowledges an event once its listener has taken it: checked it and queued it
(durably, with Redis), a few milliseconds. The answer is worked on afterwards, from
the queue, so Slack never waits on the agent (it retries an event not acknowledged
within 3 seconds) and never hears "200 OK" for a question not yet queued. A slash
command and a button click are acknowledged by the listener's first line, and the
acknowledgement is sent when the listener returns. The same app serves the HTTP Events API
(``app.web_app()``, one path for events, commands and clicks) and Socket Mode.
"""

from __future__ import annotations

import logging
from typing import Any

from slack_bolt.async_app import AsyncApp, AsyncBoltContext
from slack_sdk.web.async_client import AsyncWebClient

from adapters.slack.blocks import FEEDBACK_ACTION
from adapters.slack.bot import SlackBot

ASK_COMMAND = "/ask"


class _SameToken(logging.Filter):
    """Bolt also reads ``SLACK_BOT_TOKEN`` from the environment and warns that the given
    client's token wins. They are the same token, so the warning would only confuse."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "`token` will be unused" not in record.getMessage()


_bolt_log = logging.getLogger("slack_bolt.teamrag")
_bolt_log.addFilter(_SameToken())


def create_app(
    bot: SlackBot,
    client: AsyncWebClient,
    *,
    signing_secret: str | None,
    logger: logging.Logger | None = None,
) -> AsyncApp:
    """``signing_secret`` None is for Socket Mode only, where requests are not signed."""
    app = AsyncApp(
        client=client,
        signing_secret=signing_secret,
        request_verification_enabled=signing_secret is not None,
        logger=logger or _bolt_log,
        # Acknowledge only once the listener has taken the question (checked it and put it
        # in the durable queue, a few Redis calls): an acknowledged event is never sent
        # again, so a worker dying between "200 OK" and the queue would lose it.
        process_before_response=True,
    )

    @app.event("app_mention")
    async def mention(
        body: dict[str, Any], client: AsyncWebClient, context: AsyncBoltContext
    ) -> None:
        await bot.on_mention(body, client, context.bot_user_id or "")

    @app.event("message")
    async def message(
        body: dict[str, Any], client: AsyncWebClient, context: AsyncBoltContext
    ) -> None:
        await bot.on_message(body, client, context.bot_user_id or "")

    @app.command(ASK_COMMAND)
    async def ask(
        ack: Any, body: dict[str, Any], client: AsyncWebClient, context: AsyncBoltContext
    ) -> None:
        await bot.on_ask(body, ack, client, context.bot_user_id or "")

    @app.action(FEEDBACK_ACTION)
    async def feedback(ack: Any, body: dict[str, Any], client: AsyncWebClient) -> None:
        await ack()
        await bot.on_feedback(body, client)

    return app
