"""Answering on Slack: what happens to a question once it has been taken.

The listeners (``messages``, ``commands``, ``assistant``, ``shortcut``) check a question
through the gates (:mod:`adapters.slack.gates`: first delivery, channel rule, rate
limit) and queue it (:mod:`adapters.chat.queue`): durably in Redis when the team has
it, so that any worker, even another than this one, answers it. Answering
(:meth:`SlackBot.handle`) runs the turn through :func:`~adapters.chat.live.relay`
into a live reply. Whatever happens after that, the asker sees an answer or a reason.

The reply's messages are noted with the queued job as they are posted
(:meth:`SlackBot.notes`: the first one when it opens, each later part of a long answer
when it is posted), so a worker that takes the job over from a dead one edits those
messages into its answer instead of posting them again.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from slack_sdk.http_retry.async_handler import AsyncRetryHandler
from slack_sdk.web.async_client import AsyncWebClient

from adapters.chat.feedback import remember_for_buttons
from adapters.chat.live import LiveReply, relay
from adapters.chat.parts import ReplyParts, noted_parts, part_note
from adapters.chat.phrases import Phrase, language_of, phrase
from adapters.chat.queue import Job, LocalTurnQueue, TurnQueue
from adapters.chat.services import ChatServices
from adapters.slack.delivery import Render, ReplyTarget
from adapters.slack.dm import Conversations
from adapters.slack.live import (
    OpenedAtOnce,
    PostReply,
    StatusSteps,
    StreamReply,
    StreamSupport,
)
from adapters.slack.parts import ReplyNotes
from adapters.slack.render import Block, SlackMessage, final_messages
from adapters.slack.response_url import ResponseUrl, UrlNotes
from adapters.slack.threads import ThreadRecord
from adapters.slack.turns import Incoming, incoming
from agent.events import Final, Turn

log = logging.getLogger(__name__)

ANSWER = "slack.answer"  # a mention, a DM, a follow-up, the assistant pane, a shortcut
ASK = "slack.ask"  # the /ask command
# The notes a queued job carries about its reply (adapters.chat.queue: TurnQueue.note):
# its first message, and each later part under adapters.chat.parts.part_note(index).
REPLY_TS = "reply_ts"
REPLY_KIND = "reply_kind"

JobHandler = Callable[[Job], Awaitable[None]]


@dataclass
class SlackBot:
    """The Slack side of every conversation; the listener modules call it."""

    services: ChatServices
    threads: ThreadRecord
    client: AsyncWebClient  # the Web API client, also for questions queued by other workers
    queue: TurnQueue = field(default_factory=LocalTurnQueue)
    streaming: StreamSupport = field(default_factory=StreamSupport)
    # For response_url calls, which do not go through the Web API client.
    retry_handlers: list[AsyncRetryHandler] = field(default_factory=list)
    # Queued kinds answered elsewhere (``/ask``: adapters.slack.commands), registered by the app.
    handlers: dict[str, JobHandler] = field(default_factory=dict)
    # Which conversation a DM message continues (None: each DM thread is its own).
    dm: Conversations | None = None
    _busy: set[asyncio.Task[Any]] = field(default_factory=set, init=False, repr=False)

    def serving(self) -> contextlib.AbstractAsyncContextManager[None]:
        """Answer queued questions inside the block; leaving it finishes the answers
        under way (a stopping worker does not leave a half-edited message)."""
        return self.queue.serving(self.handle, gave_up=self.gave_up)

    async def drain(self, timeout_s: float) -> None:
        """Wait (up to ``timeout_s``) for the questions being taken and the clicks being
        recorded; the answers themselves are the queue's to finish."""
        pending = {t for t in self._busy if not t.done() and t is not asyncio.current_task()}
        if pending:
            await asyncio.wait(pending, timeout=timeout_s)

    @contextlib.contextmanager
    def working(self) -> Iterator[None]:
        """Count the current task as a request being taken (``drain`` waits for it)."""
        task = asyncio.current_task()
        if task is not None:
            self._busy.add(task)
        try:
            yield
        finally:
            if task is not None:
                self._busy.discard(task)

    # --- taking a checked message ---------------------------------------------------------

    async def take(
        self,
        message: Incoming,
        question: str,
        *,
        rule_channel: str | None = None,
        status_steps: bool = False,
    ) -> None:
        """Queue a message the gates let through. ``rule_channel``: the channel whose
        rule (scopes, persona) applies, when not the message's own (the assistant pane
        answers with the rule of the channel the user is viewing). ``status_steps``: the
        thread status follows the progress steps (the assistant pane shows it)."""
        # Before queueing: a follow-up sent at once must find the thread on any worker.
        await self.threads.add(message.thread_key)
        if self.dm is not None:
            # And a DM's next message must find the conversation it continues, even while
            # this one is still being answered (the answer refreshes the idle time).
            await self.dm.active(message)
        # Only the thread id is needed here (the order of the thread's jobs); the worker
        # that answers looks up the rule's scopes and persona as they are then.
        thread_id = message.turn(question).thread_id
        payload = {
            "message": message.to_dict(),
            "question": question,
            "rule_channel": rule_channel or message.channel,
            "status_steps": status_steps,
        }
        await self.queue.submit(Job(ANSWER, thread_id, payload, event_id=message.event_id))

    # --- answering (on whichever worker took the queued question) ------------------------

    async def handle(self, job: Job) -> None:
        if job.kind == ANSWER:
            await self._answer_job(job)
        elif job.kind in self.handlers:
            await self.handlers[job.kind](job)
        else:
            log.error("no Slack handler for queued %s; dropped", job.kind)

    async def gave_up(self, job: Job) -> None:
        """Tell the asker that the queue dropped their question after ``job.attempt - 1``
        workers took it and stopped (a poison message): in the thread, or for ``/ask``
        where its answer would have gone."""
        if job.kind == ASK:
            body: dict[str, Any] = job.payload["body"]
            question = str(job.payload["question"])
            text = self._gave_up_text(job, question)
            ts = job.notes.get(REPLY_TS)  # the question's message, once posted
            if ts:
                await self.post(ReplyTarget(str(body["channel_id"]), ts), text)
                return
            url = ResponseUrl(
                str(body.get("response_url") or ""), self.retry_handlers, self.url_notes(job)
            )
            private = bool(job.payload.get("private"))
            await url.send(text=text, response_type="ephemeral" if private else "in_channel")
        elif job.kind == ANSWER:
            message, question = self._asked(job)
            target = ReplyTarget(message.channel, message.thread_root)
            await self.post(target, self._gave_up_text(job, question))
        else:
            log.error("no Slack handler for queued %s; nobody was told it was dropped", job.kind)

    @staticmethod
    def _gave_up_text(job: Job, question: str) -> str:
        return phrase("gave_up", language_of(question), attempts=job.attempt - 1)

    @staticmethod
    def _asked(job: Job) -> tuple[Incoming, str]:
        """The message and question of a queued ``ANSWER`` job."""
        payload = job.payload
        if "message" in payload:
            return Incoming.from_dict(payload["message"]), str(payload["question"])
        message = incoming(payload["body"])  # queued by a worker of the previous version
        return message, message.question(str(payload.get("bot") or ""))

    async def _answer_job(self, job: Job) -> None:
        payload = job.payload
        message, question = self._asked(job)
        rule_channel = str(payload.get("rule_channel") or message.channel)
        await self.answer(
            message,
            question,
            rule_channel,
            status_steps=bool(payload.get("status_steps")),
            job=job,
        )

    async def answer(
        self,
        message: Incoming,
        question: str,
        rule_channel: str,
        *,
        status_steps: bool = False,
        job: Job | None = None,
    ) -> None:
        """``job``: the queued job this answers, to note the reply in and to find the
        reply a dead worker left (``job.notes``)."""
        language = language_of(question)
        target = ReplyTarget(message.channel, message.thread_root)
        turn = message.turn(question, self.services.rules.for_channel(rule_channel))
        render = self.render(turn)
        notes = self.notes(job)
        left = job.notes.get(REPLY_TS) if job is not None else None
        left_kind = job.notes.get(REPLY_KIND) if job is not None else None
        if left:
            log.info(
                "taking over reply %s (%s) and its parts %s left by a stopped worker",
                left, left_kind, sorted(notes.parts.ids.values()),
            )  # fmt: skip
        reply: LiveReply
        if self.streaming.enabled and not (left and left_kind != "stream"):
            reply = StreamReply(
                self.client,
                target,
                language,
                render,
                recipient_team=message.user_team,
                recipient_user=message.user,
                support=self.streaming,
                notes=notes,
                resume_ts=left,
            )
        else:
            reply = PostReply(self.client, target, language, render, ts=left, notes=notes)
        if status_steps:
            reply = StatusSteps(reply, lambda text: self.status(target, text))
        status = asyncio.create_task(self.status(target, phrase("is_thinking", language)))
        try:
            await self.run(
                turn,
                OpenedAtOnce(reply),
                lambda: self.post_reason(target, "turn_failed", language),
            )
            if self.dm is not None:
                await self.dm.active(message)
        finally:
            with contextlib.suppress(Exception):
                await status
            await self.status(target, "")

    async def run(
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

    def notes(self, job: Job | None) -> ReplyNotes:
        """Note a reply's messages with its queued job as they are posted, and hand over
        the parts a dead worker noted (see the module doc)."""

        async def opened(ts: str, kind: str) -> None:
            if job is not None:
                await self.queue.note(job, **{REPLY_TS: ts, REPLY_KIND: kind})

        async def part(index: int, ts: str) -> None:
            if job is not None:
                await self.queue.note(job, **{part_note(index): ts})

        left = noted_parts(job.notes) if job is not None else {}
        return ReplyNotes(opened, ReplyParts(left, part))

    def url_notes(self, job: Job) -> UrlNotes:
        """The same for a reply through a response URL (:mod:`adapters.slack.response_url`)."""

        async def note(**fields: str) -> None:
            await self.queue.note(job, **fields)

        return UrlNotes.of(job.notes, note)

    def render(self, turn: Turn, head: tuple[Block, ...] = ()) -> Render:
        async def render(final: Final) -> list[SlackMessage]:
            answer_id = await remember_for_buttons(self.services.feedback, turn, final)
            return final_messages(final, answer_id=answer_id, head=head)

        return render

    async def status(self, target: ReplyTarget, status: str) -> None:
        """The thread's "teamrag is thinking…" line; optional, so its errors are ignored
        (it needs the chat:write scope and may be refused outside assistant threads)."""
        try:
            await self.client.assistant_threads_setStatus(
                channel_id=target.channel, thread_ts=str(target.thread_ts), status=status
            )
        except Exception as exc:
            log.debug("thread status not set: %s", exc)

    async def post_reason(self, target: ReplyTarget, reason: Phrase, language: str) -> None:
        await self.post(target, phrase(reason, language))

    async def post(self, target: ReplyTarget, text: str) -> None:
        await self.client.chat_postMessage(
            channel=target.channel, thread_ts=target.thread_ts, text=text
        )

    async def respond_reason(self, url: ResponseUrl, language: str, response_type: str) -> None:
        await url.send(text=phrase("turn_failed", language), response_type=response_type)
