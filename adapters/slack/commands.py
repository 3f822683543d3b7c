"""``/ask [-p] QUESTION``: a new message in the channel that becomes the answer, or an
answer only the asker sees (``-p``).

Slack needs the command acknowledged within 3 seconds: the gates run, the question is
queued, and the acknowledgement says "thinking" to the asker of a private question.
Where the bot cannot post (a channel it is not in), and for a private question, the
answer goes through the command's ``response_url``: a few progress updates, then the
answer, within the five uses Slack allows
(:class:`~adapters.slack.response_url.ResponseReply`).
"""

from __future__ import annotations

import logging
from typing import Any

from slack_bolt.async_app import AsyncApp, AsyncBoltContext
from slack_sdk.errors import SlackApiError

from adapters.chat.channels import under_rule
from adapters.chat.live import LiveView
from adapters.chat.phrases import language_of, phrase
from adapters.chat.queue import Job
from adapters.slack.delivery import ReplyTarget, slack_error
from adapters.slack.gates import (
    Asking,
    asking,
    channel_rule,
    ephemeral,
    first_delivery,
    has_question,
    rate_limit,
    reading,
)
from adapters.slack.live import PostReply
from adapters.slack.markup import escape, plain_question
from adapters.slack.queued import ASK, REPLY_TS, SlackBot
from adapters.slack.render import progress_message, question_block
from adapters.slack.response_url import ResponseReply, ResponseUrl
from adapters.slack.turns import PLATFORM, ask_options, thread_key
from agent.events import Turn
from agent.plumbing.log_context import bind

log = logging.getLogger(__name__)

ASK_COMMAND = "/ask"


def register(app: AsyncApp, bot: SlackBot) -> None:
    services = bot.services
    bot.handlers[ASK] = lambda job: answer(bot, job)

    async def read(body: dict[str, Any], context: AsyncBoltContext) -> Asking:
        _, raw = ask_options(str(body.get("text") or ""))

        async def refuse(text: str) -> Any:
            return ephemeral(text)

        channel = str(body["channel_id"])
        return Asking(
            keys=(f"slack:{body['team_id']}:ask:{body.get('trigger_id')}",),
            team=str(body["team_id"]),
            channel=channel,
            user=str(body["user_id"]),
            question=plain_question(raw, context.bot_user_id or ""),
            refuse=refuse,
            rule=services.rules.for_channel(channel),
            empty_reason="ask_usage",
        )

    # Usage and channel first: a wrong command is told so even when sent twice.
    gates = [has_question(), channel_rule(), first_delivery(services), rate_limit(services)]

    @app.command(ASK_COMMAND, middleware=[reading(read), *gates])
    async def ask(ack: Any, body: dict[str, Any], context: AsyncBoltContext) -> None:
        with bot.working(), bind(event_id=f"ask-{body.get('trigger_id')}"):
            private, _ = ask_options(str(body.get("text") or ""))
            question = asking(context).question
            if private:  # "thinking" at once, to the asker only; the answer follows
                await ack(response_type="ephemeral", text=phrase("thinking", language_of(question)))
            else:
                await ack()
            trigger = f"ask-{body.get('trigger_id')}"
            thread_id = ask_turn(bot, body, question, trigger).thread_id
            payload = {"body": body, "private": private, "question": question}
            await bot.queue.submit(Job(ASK, thread_id, payload, event_id=trigger))


async def answer(bot: SlackBot, job: Job) -> None:
    """Answer a queued ``/ask`` (on whichever worker took it)."""
    body: dict[str, Any] = job.payload["body"]
    question = str(job.payload["question"])
    language = language_of(question)
    channel, user = str(body["channel_id"]), str(body["user_id"])
    # What a dead worker sent through the URL already is noted with the job.
    url = ResponseUrl(str(body.get("response_url") or ""), bot.retry_handlers, bot.url_notes(job))
    trigger = f"ask-{body.get('trigger_id')}"
    if job.payload["private"]:
        turn = ask_turn(bot, body, question, trigger)
        # The acknowledgement showed "Thinking…": the progress replaces it.
        reply = responder(bot, url, turn, language, "ephemeral", replaces=True)
        await bot.run(turn, reply, lambda: bot.respond_reason(url, language, "ephemeral"))
        return
    head = (question_block(user, question),)
    notes = bot.notes(job)
    # A worker that died after posting the question's message left it noted (and the parts
    # of the answer it posted in its thread): answer there.
    ts = job.notes.get(REPLY_TS, "")
    if not ts:
        try:
            posted = await bot.client.chat_postMessage(
                channel=channel,
                text=escape(question),
                blocks=progress_message(LiveView(), language, head).blocks,
            )
        except SlackApiError as exc:
            # Not a member of this channel (or not allowed to post): answer via response_url.
            log.info("cannot post the /ask answer in %s (%s)", channel, slack_error(exc))
            turn = ask_turn(bot, body, question, trigger)
            reply = responder(bot, url, turn, language, "in_channel", replaces=False)
            await bot.run(turn, reply, lambda: bot.respond_reason(url, language, "in_channel"))
            return
        ts = str(posted["ts"])
        await notes.first(ts, "post")
    await bot.threads.add(thread_key(str(body["team_id"]), channel, ts))
    turn = ask_turn(bot, body, question, ts)
    live = PostReply(
        bot.client,
        ReplyTarget(channel, None),
        language,
        bot.render(turn, head),
        ts=ts,
        head=head,
        notes=notes,
    )
    target = ReplyTarget(channel, ts)
    await bot.run(turn, live, lambda: bot.post_reason(target, "turn_failed", language))


def responder(
    bot: SlackBot,
    url: ResponseUrl,
    turn: Turn,
    language: str,
    response_type: str,
    *,
    replaces: bool,
) -> ResponseReply:
    return ResponseReply(
        url, bot.render(turn), language, response_type=response_type, replaces=replaces
    )


def ask_turn(bot: SlackBot, body: dict[str, Any], question: str, thread_root: str) -> Turn:
    channel = str(body["channel_id"])
    turn = Turn(
        text=question,
        platform=PLATFORM,
        workspace=str(body["team_id"]),
        channel=channel,
        thread_root=thread_root,
        user=str(body["user_id"]),
        message_id=str(body.get("trigger_id") or ""),
    )
    return under_rule(turn, bot.services.rules.for_channel(channel))
