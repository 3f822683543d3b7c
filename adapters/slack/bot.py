"""Answering on Slack: what happens to a question between Bolt's listener and the reply.

Taking a question (the listeners, right after Bolt acknowledged it) follows one
order: is this for the bot, is it the first delivery (Slack retries an event it
thinks was missed, Socket Mode redelivers after a reconnect: the message key is
the same across both, and the record is shared by every worker), may the bot
answer in this channel, has the asker not used up their questions for the
minute. Then the question is queued (:mod:`adapters.chat.queue`): durably in
Redis when the team has it, so that any worker, even another than this one,
answers it. Answering (:meth:`SlackBot.handle`) runs the turn through
:func:`~adapters.chat.live.relay` into a live reply. Whatever happens after
that, the asker sees an answer or a reason.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from slack_sdk.errors import SlackApiError
from slack_sdk.http_retry.async_handler import AsyncRetryHandler
from slack_sdk.web.async_client import AsyncWebClient
from slack_sdk.webhook.async_client import AsyncWebhookClient

from adapters.chat.feedback import Rating, remember_for_buttons
from adapters.chat.live import LiveReply, LiveView, relay
from adapters.chat.phrases import Phrase, language_of, phrase
from adapters.chat.queue import Job, LocalTurnQueue, TurnQueue
from adapters.chat.ratelimit import refusal
from adapters.chat.services import ChatServices
from adapters.slack.blocks import (
    Block,
    SlackMessage,
    final_messages,
    progress_message,
    question_block,
)
from adapters.slack.delivery import Place, Render, slack_error
from adapters.slack.files import learn_files
from adapters.slack.live import (
    OpenedAtOnce,
    PostReply,
    ResponseReply,
    StreamReply,
    StreamSupport,
)
from adapters.slack.markup import escape, plain_question
from adapters.slack.threads import ThreadRecord
from adapters.slack.turns import (
    PLATFORM,
    Incoming,
    addressed_message,
    ask_options,
    incoming,
    not_from_a_person,
    thread_key,
)
from agent.events import Final, Turn
from agent.log_context import bind

log = logging.getLogger(__name__)

ANSWER = "slack.answer"  # a mention, a DM or a follow-up in a bot thread
ASK = "slack.ask"  # the /ask command


@dataclass
class SlackBot:
    """The Slack side of every conversation; Bolt's listeners (``app.py``) call it."""

    services: ChatServices
    threads: ThreadRecord
    client: AsyncWebClient  # the Web API client, also for questions queued by other workers
    queue: TurnQueue = field(default_factory=LocalTurnQueue)
    streaming: StreamSupport = field(default_factory=StreamSupport)
    # For response_url calls, which do not go through the Web API client.
    retry_handlers: list[AsyncRetryHandler] = field(default_factory=list)
    _busy: set[asyncio.Task[Any]] = field(default_factory=set, init=False, repr=False)

    def serving(self) -> contextlib.AbstractAsyncContextManager[None]:
        """Answer queued questions inside the block; leaving it finishes the answers
        under way (a stopping worker does not leave a half-edited message)."""
        return self.queue.serving(self.handle)

    async def drain(self, timeout_s: float) -> None:
        """Wait (up to ``timeout_s``) for the questions being taken and the clicks being
        recorded; the answers themselves are the queue's to finish."""
        pending = {t for t in self._busy if not t.done() and t is not asyncio.current_task()}
        if pending:
            await asyncio.wait(pending, timeout=timeout_s)

    @contextlib.contextmanager
    def _working(self) -> Iterator[None]:
        task = asyncio.current_task()
        if task is not None:
            self._busy.add(task)
        try:
            yield
        finally:
            if task is not None:
                self._busy.discard(task)

    # --- the ways a question arrives ----------------------------------------------------

    async def on_mention(self, body: dict[str, Any], client: AsyncWebClient, bot: str) -> None:
        if not_from_a_person(body["event"], bot) is None:
            with self._working():
                if body["event"].get("files") and self.services.learn is not None:
                    await learn_files(self.services, self.client, body)  # a file to learn
                    return
                await self._take(body, bot, follow_up=False)

    async def on_message(self, body: dict[str, Any], client: AsyncWebClient, bot: str) -> None:
        how = addressed_message(body["event"], bot)
        if how is None:
            return
        message = incoming(body)
        with self._working():
            if how == "follow_up" and not (
                self.services.rules.for_channel(message.channel).follow_ups
                and await self.threads.has(message.thread_key)
            ):
                return
            await self._take(body, bot, follow_up=how == "follow_up")

    async def _take(self, body: dict[str, Any], bot: str, *, follow_up: bool) -> None:
        """Check a message and queue it; every refusal is said in the thread."""
        message = incoming(body)
        with bind(event_id=message.event_id or message.message_key):
            keys = (
                f"slack:event:{message.event_id}" if message.event_id else "",
                message.message_key,
            )
            if not await self.services.dedupe.first(*keys):
                log.info("already answered %s (a redelivery)", message.message_key)
                return
            question = message.question(bot)
            language = language_of(question)
            place = Place(message.channel, message.thread_root)
            rule = self.services.rules.for_channel(message.channel)
            if not rule.answer:
                if not follow_up:
                    await self._post_reason(place, "not_allowed", language)
                return
            if not question:
                await self._post_reason(place, "empty_question", language)
                return
            wait = await self.services.admit(PLATFORM, message.team, message.user)
            if wait is not None:
                await self._post(place, refusal(wait, language))
                return
            # Before queueing: a follow-up sent at once must find the thread on any worker.
            await self.threads.add(message.thread_key)
            turn = message.turn(question, rule.scopes)
            payload = {"body": body, "bot": bot}
            await self.queue.submit(Job(ANSWER, turn.thread_id, payload, event_id=message.event_id))

    async def on_ask(
        self, body: dict[str, Any], ack: Any, client: AsyncWebClient, bot: str
    ) -> None:
        """``/ask [-p] QUESTION``: a new message in the channel, or an ephemeral answer."""
        with self._working(), bind(event_id=f"ask-{body.get('trigger_id')}"):
            await self._take_ask(body, ack, bot)

    async def _take_ask(self, body: dict[str, Any], ack: Any, bot: str) -> None:
        private, raw = ask_options(str(body.get("text") or ""))
        question = plain_question(raw, bot)
        language = language_of(question)
        team, channel, user = str(body["team_id"]), str(body["channel_id"]), str(body["user_id"])
        rule = self.services.rules.for_channel(channel)
        if not question or not rule.answer:
            reason: Phrase = "ask_usage" if not question else "not_allowed"
            await ack(response_type="ephemeral", text=phrase(reason, language))
            return
        trigger = f"ask-{body.get('trigger_id')}"
        if not await self.services.dedupe.first(f"slack:{team}:ask:{body.get('trigger_id')}"):
            await ack()
            return
        wait = await self.services.admit(PLATFORM, team, user)
        if wait is not None:
            text = refusal(wait, language)
            await ack(response_type="ephemeral", text=text)
            return
        # A private answer shows "thinking" at once, to the asker only.
        if private:  # "thinking" at once, to the asker only; the answer follows
            await ack(response_type="ephemeral", text=phrase("thinking", language))
        else:
            await ack()
        thread_id = self._ask_turn(body, question, trigger).thread_id
        payload = {"body": body, "bot": bot, "private": private, "question": question}
        await self.queue.submit(Job(ASK, thread_id, payload, event_id=trigger))

    # --- answering (on whichever worker took the queued question) ------------------------

    async def handle(self, job: Job) -> None:
        bot = str(job.payload.get("bot") or "")
        body: dict[str, Any] = job.payload["body"]
        if job.kind == ANSWER:
            await self._answer(incoming(body), bot)
        elif job.kind == ASK:
            await self._ask(
                body, str(job.payload["question"]), private=bool(job.payload["private"])
            )
        else:
            log.error("no Slack handler for queued %s; dropped", job.kind)

    async def _ask(self, body: dict[str, Any], question: str, *, private: bool) -> None:
        language = language_of(question)
        channel, user = str(body["channel_id"]), str(body["user_id"])
        url = str(body.get("response_url") or "")
        trigger = f"ask-{body.get('trigger_id')}"
        if private:
            turn = self._ask_turn(body, question, trigger)
            reply = self._responder(url, turn, "ephemeral")
            await self._run(turn, reply, lambda: self._respond_reason(url, language, "ephemeral"))
            return
        head = (question_block(user, question),)
        try:
            posted = await self.client.chat_postMessage(
                channel=channel,
                text=escape(question),
                blocks=progress_message(LiveView(), language, head).blocks,
            )
        except SlackApiError as exc:
            # Not a member of this channel (or not allowed to post): answer via response_url.
            log.info("cannot post the /ask answer in %s (%s)", channel, slack_error(exc))
            turn = self._ask_turn(body, question, trigger)
            reply = self._responder(url, turn, "in_channel")
            await self._run(turn, reply, lambda: self._respond_reason(url, language, "in_channel"))
            return
        ts = str(posted["ts"])
        await self.threads.add(thread_key(str(body["team_id"]), channel, ts))
        turn = self._ask_turn(body, question, ts)
        live = PostReply(
            self.client, Place(channel, None), language, self._render(turn, head), ts=ts, head=head
        )
        place = Place(channel, ts)
        await self._run(turn, live, lambda: self._post_reason(place, "turn_failed", language))

    async def on_feedback(self, body: dict[str, Any], client: AsyncWebClient) -> None:
        """A thumbs click: record it with the answer, thank the user (only they see it)."""
        with self._working():
            await self._feedback(body, client)

    async def _feedback(self, body: dict[str, Any], client: AsyncWebClient) -> None:
        action = (body.get("actions") or [{}])[0]
        rating, _, answer_id = str(action.get("value", "")).partition(":")
        if rating not in ("up", "down") or not answer_id:
            log.warning("a feedback click without a usable value: %r", action.get("value"))
            return
        user = str(body["user"]["id"])
        vote: Rating = "up" if rating == "up" else "down"
        recorded = await self.services.feedback.rate(answer_id, user, vote)
        _, _, language = str(action.get("block_id", "")).partition(":")
        language = language or language_of(str((body.get("message") or {}).get("text") or ""))
        said: Phrase = "feedback_expired"
        if recorded:
            said = "thanks_up" if vote == "up" else "thanks_down"
        text = phrase(said, language)
        if body.get("response_url"):
            webhook = AsyncWebhookClient(body["response_url"], retry_handlers=self.retry_handlers)
            await webhook.send(text=text, response_type="ephemeral", replace_original=False)
            return
        channel = str((body.get("channel") or body.get("container") or {}).get("id", ""))
        await client.chat_postEphemeral(channel=channel, user=user, text=text)

    # --- answering ----------------------------------------------------------------------

    async def _answer(self, message: Incoming, bot: str) -> None:
        question = message.question(bot)
        language = language_of(question)
        place = Place(message.channel, message.thread_root)
        rule = self.services.rules.for_channel(message.channel)
        turn = message.turn(question, rule.scopes, persona=rule.persona or "")
        render = self._render(turn)
        reply: LiveReply
        if self.streaming.enabled:
            reply = StreamReply(
                self.client,
                place,
                language,
                render,
                recipient_team=message.user_team,
                recipient_user=message.user,
                support=self.streaming,
            )
        else:
            reply = PostReply(self.client, place, language, render)
        status = asyncio.create_task(self._status(place, phrase("is_thinking", language)))
        try:
            await self._run(
                turn,
                OpenedAtOnce(reply),
                lambda: self._post_reason(place, "turn_failed", language),
            )
        finally:
            with contextlib.suppress(Exception):
                await status
            await self._status(place, "")

    async def _run(
        self, turn: Turn, reply: LiveReply, say_failed: Callable[[], Awaitable[None]]
    ) -> None:
        """Relay the turn; if even the fallbacks failed, say so (and log why)."""
        try:
            await relay(self.services.run(turn), reply, interval_s=self.services.update_interval_s)
        except Exception:
            log.exception("answering %s failed", turn.thread_id)
            self.services.count_error("slack_delivery")
            try:
                await say_failed()
            except Exception:
                log.exception("could not even say that answering %s failed", turn.thread_id)

    def _render(self, turn: Turn, head: tuple[Block, ...] = ()) -> Render:
        async def render(final: Final) -> list[SlackMessage]:
            answer_id = await remember_for_buttons(self.services.feedback, turn, final)
            return final_messages(final, answer_id=answer_id, head=head)

        return render

    def _responder(self, url: str, turn: Turn, response_type: str) -> ResponseReply:
        return ResponseReply(
            url,
            self._render(turn),
            response_type=response_type,
            retry_handlers=self.retry_handlers,
        )

    def _ask_turn(self, body: dict[str, Any], question: str, thread_root: str) -> Turn:
        channel = str(body["channel_id"])
        rule = self.services.rules.for_channel(channel)
        return Turn(
            text=question,
            platform=PLATFORM,
            workspace=str(body["team_id"]),
            channel=channel,
            thread_root=thread_root,
            user=str(body["user_id"]),
            message_id=str(body.get("trigger_id") or ""),
            scopes=rule.scopes,
            persona=rule.persona or "",
        )

    async def _status(self, place: Place, status: str) -> None:
        """The thread's "teamrag is thinking…" line; optional, so its errors are ignored
        (it needs the chat:write scope and may be refused outside assistant threads)."""
        try:
            await self.client.assistant_threads_setStatus(
                channel_id=place.channel, thread_ts=str(place.thread_ts), status=status
            )
        except Exception as exc:
            log.debug("thread status not set: %s", exc)

    async def _post_reason(self, place: Place, reason: Phrase, language: str) -> None:
        await self._post(place, phrase(reason, language))

    async def _post(self, place: Place, text: str) -> None:
        await self.client.chat_postMessage(
            channel=place.channel, thread_ts=place.thread_ts, text=text
        )

    async def _respond_reason(self, url: str, language: str, response_type: str) -> None:
        webhook = AsyncWebhookClient(url, retry_handlers=self.retry_handlers)
        await webhook.send(text=phrase("turn_failed", language), response_type=response_type)
