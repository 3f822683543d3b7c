"""The AI-app pane ("Agents & AI Apps"): a user opens teamrag beside any channel.

Built on slack-bolt's :class:`AsyncAssistant` middleware, which routes the pane's
events and hands each listener its thread's ``say``, ``set_title``,
``set_suggested_prompts`` and ``get_thread_context``:

- ``assistant_thread_started``: a greeting in the user's language (their Slack locale)
  and suggested prompts built from the newest documents the user may search there;
- ``assistant_thread_context_changed``: Bolt's default handler records the channel the
  user now views (as metadata on the greeting, read back through
  ``conversations.replies``);
- a message in the thread: the same gates as any message, then the answer with the
  rule (scopes, persona) of the channel the user views, so a question asked beside
  #team-a is answered from team A's documents only. A channel where the bot may not
  answer gives way to the DM's own rule: the pane never searches more than a DM could.
  The thread status follows the agent's steps; the first question titles the thread.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from slack_bolt.async_app import AsyncApp, AsyncBoltContext
from slack_bolt.middleware.assistant.async_assistant import AsyncAssistant
from slack_bolt.middleware.async_custom_middleware import AsyncCustomMiddleware
from slack_sdk.errors import SlackApiError
from slack_sdk.web.async_client import AsyncWebClient

from adapters.chat.library import Shelf
from adapters.chat.services import ChatServices
from adapters.slack.gates import Asking, asking, reading, standard
from adapters.slack.messages import asked_message, message_asking
from adapters.slack.queued import SlackBot
from adapters.slack.turns import incoming, not_from_a_person
from agent.plumbing.log_context import bind

log = logging.getLogger(__name__)

SUGGESTIONS = 3
TITLE_CHARS = 80

_SAID = {
    "greeting": (
        "Hi! Ask me about the team's documents; every answer cites its sources. "
        "{count} documents can answer here.",
        "안녕하세요! 팀 문서에 대해 물어보세요. 모든 답변에 출처를 붙입니다. "
        "여기서는 문서 {count}개로 답합니다.",
    ),
    "prompts_title": ("Recently added", "최근 추가된 문서"),
}


def said(key: str, language: str, **values: Any) -> str:
    english, korean = _SAID[key]
    return (korean if language == "ko" else english).format(**values)


async def user_language(client: AsyncWebClient, user: str) -> str:
    """ "ko" for a user whose Slack is in Korean, else "en" (users.info's locale)."""
    try:
        info = await client.users_info(user=user, include_locale=True)
    except SlackApiError as exc:
        log.info("no locale for %s (%s); greeting in English", user, exc.response.get("error"))
        return "en"
    locale = str((info.get("user") or {}).get("locale") or "")
    return "ko" if locale.lower().startswith("ko") else "en"


def rule_channel(services: ChatServices, viewing: str | None, own: str) -> str:
    """The channel whose rule answers in the pane: the one the user views when the bot
    may answer there, else the pane's own (DM) channel."""
    if viewing and services.rules.for_channel(viewing).answer:
        return viewing
    return own


async def shelf_for(services: ChatServices, channel: str) -> Shelf:
    documents = await asyncio.to_thread(services.documents)
    return Shelf.of(documents, services.rules.for_channel(channel).scopes)


def suggestions(shelf: Shelf, language: str) -> list[dict[str, str]]:
    return [
        {"title": text, "message": text}
        for text in shelf.suggested_questions(SUGGESTIONS, language)
    ]


def register(app: AsyncApp, bot: SlackBot) -> None:
    services = bot.services
    assistant = AsyncAssistant(logger=log)

    @assistant.thread_started
    async def started(
        payload: dict[str, Any], say: Any, set_suggested_prompts: Any, client: AsyncWebClient
    ) -> None:
        thread = payload["assistant_thread"]
        viewing = (thread.get("context") or {}).get("channel_id")
        language = await user_language(client, str(thread["user_id"]))
        shelf = await shelf_for(services, rule_channel(services, viewing, thread["channel_id"]))
        # The greeting is the bot's first reply: the thread context is kept on it.
        await say(text=said("greeting", language, count=len(shelf.documents)))
        prompts = suggestions(shelf, language)
        if prompts:
            await set_suggested_prompts(prompts=prompts, title=said("prompts_title", language))

    async def read(body: dict[str, Any], context: AsyncBoltContext) -> Asking | None:
        if not_from_a_person(body["event"], context.bot_user_id or "") is not None:
            return None
        message = incoming(body)
        viewing: str | None = None
        try:
            found = await context["get_thread_context"]()
            viewing = found.get("channel_id") if found else None
        except SlackApiError as exc:  # a DM thread the pane did not open: no context
            log.debug("no assistant thread context: %s", exc.response.get("error"))
        return message_asking(
            bot,
            message,
            context.bot_user_id or "",
            follow_up=False,
            rule_channel=rule_channel(services, viewing, message.channel),
        )

    async def asked(context: AsyncBoltContext, set_title: Any) -> None:
        message = asked_message(context)
        with bot.working(), bind(event_id=message.event_id or message.message_key):
            ask = asking(context)
            if not await bot.threads.has(message.thread_key):
                await set_title(ask.question[:TITLE_CHARS])
            if bot.dm is not None:  # a reply in the thread of a continued DM conversation
                message = await bot.dm.place(message)
            await bot.take(message, ask.question, rule_channel=ask.channel, status_steps=True)

    # AsyncAssistant takes middleware objects (not functions, as app listeners do), in
    # a list it adds to (its type hint says one item).
    gates: Any = [
        AsyncCustomMiddleware(app_name="teamrag", func=gate)
        for gate in [reading(read), *standard(services)]
    ]
    assistant.user_message(middleware=gates)(asked)
    app.use(assistant)
