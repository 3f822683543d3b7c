""" "Ask about this message": a message shortcut (``ask_about_message``) that takes a
message (a customer's question pasted in a channel, an error log) as the question and
answers in its thread, for whoever used the shortcut.

The answer joins the message's thread (its conversation, so an earlier answer there is
context) and passes the same gates as a mention: the channel's rule, the asker's rate
limit, one answer per shortcut use.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from slack_bolt.async_app import AsyncApp, AsyncBoltContext

from adapters.slack.bot import SlackBot
from adapters.slack.gates import Asking, asking, reading, standard
from adapters.slack.messages import message_asking
from adapters.slack.turns import Incoming
from agent.plumbing.log_context import bind

CALLBACK_ID = "ask_about_message"


def shortcut_message(body: dict[str, Any]) -> Incoming:
    """The shortcut as a message of the one who used it, in the message's thread."""
    message: dict[str, Any] = body.get("message") or {}
    team = str((body.get("team") or {}).get("id") or "")
    user = body.get("user") or {}
    return Incoming(
        team=team,
        user_team=str(user.get("team_id") or team),
        channel=str((body.get("channel") or {}).get("id") or ""),
        channel_type="",
        user=str(user.get("id") or ""),
        text=str(message.get("text") or ""),
        ts=str(message.get("ts") or ""),
        thread_ts=message.get("thread_ts") or None,
        event_id=f"shortcut-{body.get('trigger_id')}",
    )


def register(app: AsyncApp, bot: SlackBot) -> None:
    async def read(body: dict[str, Any], context: AsyncBoltContext) -> Asking:
        message = shortcut_message(body)
        found = message_asking(bot, message, context.bot_user_id or "", follow_up=False)
        # One answer per use of the shortcut (the message may be asked about again).
        return replace(found, keys=(message.event_id,))

    @app.shortcut(CALLBACK_ID, middleware=[reading(read), *standard(bot.services)])
    async def ask_about(ack: Any, body: dict[str, Any], context: AsyncBoltContext) -> None:
        await ack()
        message = shortcut_message(body)
        with bot.working(), bind(event_id=message.event_id):
            await bot.take(message, asking(context).question)
