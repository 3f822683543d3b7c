"""The Bolt app: which Slack request goes to which listener module.

Bolt acknowledges an event once its listener has taken it: checked it and queued it
(durably, with Redis), a few milliseconds. The answer is worked on afterwards, from
the queue, so Slack never waits on the agent (it retries an event not acknowledged
within 3 seconds) and never hears "200 OK" for a question not yet queued. A slash
command and a button click are acknowledged by the listener's first line, and the
acknowledgement is sent when the listener returns. The same app serves the HTTP Events API
(``app.web_app()``, one path for events, commands and clicks) and Socket Mode.

The listeners, one module each: :mod:`~adapters.slack.messages` (mentions, DMs,
follow-ups), :mod:`~adapters.slack.commands` (``/ask``), :mod:`~adapters.slack.buttons`
(the thumbs), :mod:`~adapters.slack.assistant` (the AI-app pane),
:mod:`~adapters.slack.home` (App Home) and :mod:`~adapters.slack.shortcut` (the
"Ask about this message" shortcut).
"""

from __future__ import annotations

import logging

from slack_bolt.async_app import AsyncApp
from slack_sdk.web.async_client import AsyncWebClient

from adapters.slack import assistant, buttons, commands, home, messages, shortcut
from adapters.slack.commands import ASK_COMMAND
from adapters.slack.queued import SlackBot

__all__ = ["ASK_COMMAND", "create_app"]


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
    # The pane's middleware first: it takes the messages of assistant threads (DMs).
    assistant.register(app, bot)
    messages.register(app, bot)
    commands.register(app, bot)
    buttons.register(app, bot)
    home.register(app, bot)
    shortcut.register(app, bot)
    return app
