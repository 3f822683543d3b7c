""" "Ask about this message": a message shortcut (``ask_about_message``) that takes a
message (a customer's question pasted in a channel, an error log) as the question and
answers in its thread, for whoever used the shortcut.

The answer joins the message's thread (its conversation, so an earlier answer there is
context) and passes the same gates as a mention: the channel's rule, the asker's rate
limit, one answer per shortcut use. When the message is itself a reply in a thread, the
thread's first message (what the reply answers or follows up) comes along with the
question: the bot may never have answered in that thread, so its history has nothing of
it. That costs one ``conversations.replies`` call (limited to one a minute for new
apps); without it the message is asked alone.
"""

from __future__ import annotations

import logging
from dataclasses import replace
from typing import Any

from slack_bolt.async_app import AsyncApp, AsyncBoltContext
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from adapters.chat.phrases import language_of
from adapters.slack.gates import Asking, asking, reading, standard
from adapters.slack.markup import plain_question
from adapters.slack.messages import asked_message, message_asking
from adapters.slack.queued import SlackBot
from adapters.slack.turns import Incoming
from agent.plumbing.log_context import bind

log = logging.getLogger(__name__)

CALLBACK_ID = "ask_about_message"
_THREAD_STARTS = {
    "en": "(The thread starts with: {parent})",
    "ko": "(스레드의 첫 메시지: {parent})",
}


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


async def thread_parent(client: AsyncWebClient, message: Incoming, bot_user: str) -> str:
    """The text of the first message of the thread ``message`` replies in ("" when it
    starts no thread, is the thread's first message, or cannot be read)."""
    if message.thread_ts is None or message.thread_ts == message.ts:
        return ""
    try:
        found = await client.conversations_replies(
            channel=message.channel, ts=message.thread_ts, limit=1
        )
    except SlackApiError as exc:
        log.info("the thread's first message could not be read (%s)", exc.response.get("error"))
        return ""
    first = (found.get("messages") or [{}])[0]
    return plain_question(str(first.get("text") or ""), bot_user)


def with_parent(question: str, parent: str) -> str:
    """The question, then the thread's first message, introduced in the question's language."""
    if not parent:
        return question
    starts = _THREAD_STARTS.get(language_of(question), _THREAD_STARTS["en"])
    return f"{question}\n\n" + starts.format(parent=parent)


def register(app: AsyncApp, bot: SlackBot) -> None:
    async def read(body: dict[str, Any], context: AsyncBoltContext) -> Asking:
        message = shortcut_message(body)
        found = message_asking(bot, message, context.bot_user_id or "", follow_up=False)
        # One answer per use of the shortcut (the message may be asked about again).
        return replace(found, keys=(message.event_id,))

    @app.shortcut(CALLBACK_ID, middleware=[reading(read), *standard(bot.services)])
    async def ask_about(ack: Any, context: AsyncBoltContext) -> None:
        await ack()
        message = asked_message(context)
        with bot.working(), bind(event_id=message.event_id):
            parent = await thread_parent(bot.client, message, context.bot_user_id or "")
            await bot.take(message, with_parent(asking(context).question, parent))
