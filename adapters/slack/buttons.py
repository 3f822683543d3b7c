"""The thumbs on every answer: record the click with the answer, thank the user (only
they see it), in the language of the answer."""

from __future__ import annotations

import logging
from typing import Any

from slack_bolt.async_app import AsyncApp
from slack_sdk.web.async_client import AsyncWebClient
from slack_sdk.webhook.async_client import AsyncWebhookClient

from adapters.chat.feedback import Rating
from adapters.chat.phrases import Phrase, language_of, phrase
from adapters.slack.queued import SlackBot
from adapters.slack.render import FEEDBACK_ACTION

log = logging.getLogger(__name__)


def register(app: AsyncApp, bot: SlackBot) -> None:
    @app.action(FEEDBACK_ACTION)
    async def feedback(ack: Any, body: dict[str, Any], client: AsyncWebClient) -> None:
        await ack()
        with bot.working():
            await record(bot, body, client)


async def record(bot: SlackBot, body: dict[str, Any], client: AsyncWebClient) -> None:
    action = (body.get("actions") or [{}])[0]
    rating, _, answer_id = str(action.get("value", "")).partition(":")
    if rating not in ("up", "down") or not answer_id:
        log.warning("a feedback click without a usable value: %r", action.get("value"))
        return
    user = str(body["user"]["id"])
    vote: Rating = "up" if rating == "up" else "down"
    recorded = await bot.services.feedback.rate(answer_id, user, vote)
    _, _, language = str(action.get("block_id", "")).partition(":")
    language = language or language_of(str((body.get("message") or {}).get("text") or ""))
    said: Phrase = "feedback_expired"
    if recorded:
        said = "thanks_up" if vote == "up" else "thanks_down"
    text = phrase(said, language)
    if body.get("response_url"):
        webhook = AsyncWebhookClient(body["response_url"], retry_handlers=bot.retry_handlers)
        await webhook.send(text=text, response_type="ephemeral", replace_original=False)
        return
    channel = str((body.get("channel") or body.get("container") or {}).get("id", ""))
    await client.chat_postEphemeral(channel=channel, user=user, text=text)
