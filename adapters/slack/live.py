"""The reply under construction, three ways (each a :class:`~adapters.chat.live.LiveReply`).

- :class:`StreamReply`: Slack's native streaming. ``chat.startStream`` opens the reply
  in the thread with one task per progress step, ``chat.appendStream`` adds steps and
  answer text, ``chat.stopStream`` closes it with the sources and feedback buttons.
- :class:`PostReply`: post a message, then ``chat.update`` it (at most once per
  interval: :func:`~adapters.chat.live.relay` throttles). Used where streaming is not
  available, switched off, or after a stream expired (Slack ends a stream that is idle
  too long: ``message_not_in_streaming_state``; the message then takes edits).

An ``/ask`` answered through its ``response_url`` (ephemeral answers, or a channel the
bot is not in) is :class:`~adapters.slack.response_url.ResponseReply`.

:class:`OpenedAtOnce` shows any of them ("Thinking…") before the agent's first step.

A reply notes its messages with the queued turn as it posts them (:class:`ReplyNotes`:
the first when it opens, ``notes.first(ts, kind)``, each later part of the answer when it
is posted). A worker that takes the turn over after this one died is built with the first
message (``ts=`` for :class:`PostReply`, ``resume_ts=`` for :class:`StreamReply`) and the
noted parts, and edits them into its answer, rather than leaving a "Thinking…" behind
beside a second reply or posting the answer's tail twice. A first message that a user
deleted meanwhile is posted anew (and the parts after it follow it).

``Final.answer`` is authoritative. A stream can only append, so when the final text
does not continue what was streamed (the agent rewrote its draft) the stream is
closed and its message replaced by the final answer with ``chat.update``.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from slack_sdk.errors import SlackApiError
from slack_sdk.models.messages.chunk import Chunk, MarkdownTextChunk, TaskUpdateChunk
from slack_sdk.web.async_client import AsyncWebClient

from adapters.chat.live import LiveReply, LiveView, Step
from adapters.chat.phrases import phrase
from adapters.slack.delivery import Render, ReplyTarget, deliver, slack_error
from adapters.slack.parts import ReplyNotes, gone
from adapters.slack.render import ANSWER_PIECE, Block, progress_message
from agent.events import Final

log = logging.getLogger(__name__)

# Errors that mean this app or workspace cannot stream at all (not just this message).
_NO_STREAMING = frozenset(
    {"unknown_method", "not_allowed_token_type", "missing_scope", "method_deprecated",
     "feature_not_enabled", "not_implemented"}
)  # fmt: skip
_EXPIRED = "message_not_in_streaming_state"
_GONE = "message_not_found"
# Streamed text is kept within the first half of the first answer piece: split_text never
# cuts a piece shorter than half its limit, so the final first piece always continues it.
STREAM_TEXT_LIMIT = (ANSWER_PIECE - 8) // 2


@dataclass
class StreamSupport:
    """Whether to try native streaming; off for the process once Slack says it cannot."""

    enabled: bool = True

    def refused(self, error: str) -> None:
        if error in _NO_STREAMING and self.enabled:
            log.warning("Slack refused streaming (%s); posting and editing messages instead", error)
            self.enabled = False


class PostReply:
    """Post a progress message, edit it as the turn goes, end with the answer in it."""

    def __init__(
        self,
        client: AsyncWebClient,
        target: ReplyTarget,
        language: str,
        render: Render,
        *,
        ts: str | None = None,
        head: tuple[Block, ...] = (),
        notes: ReplyNotes | None = None,
    ) -> None:
        self._client = client
        self._target = target
        self._language = language
        self._render = render
        self._head = head
        self._notes = notes or ReplyNotes()
        # The live message, once posted (or given: an /ask placeholder, or the message a
        # dead worker opened for this turn).
        self.ts = ts

    async def show(self, view: LiveView) -> None:
        message = progress_message(view, self._language, self._head)
        if self.ts is None:
            response = await self._client.chat_postMessage(
                channel=self._target.channel,
                thread_ts=self._target.thread_ts,
                text=message.text,
                blocks=message.blocks,
            )
            self.ts = str(response["ts"])
            await self._notes.first(self.ts, "post")
            return
        try:
            await self._client.chat_update(
                channel=self._target.channel, ts=self.ts, text=message.text, blocks=message.blocks
            )
        except SlackApiError as exc:
            if not gone(exc):
                raise
            # A user deleted it (the one a dead worker left, say): a new one takes its place.
            log.info("the reply's message is gone (%s); posting it anew", slack_error(exc))
            self.ts = None
            await self.show(view)

    async def finish(self, final: Final) -> None:
        messages = await self._render(final)
        await deliver(
            self._client,
            self._target,
            messages,
            final.language,
            edit_ts=self.ts,
            notes=self._notes,
        )


@dataclass
class _Sent:
    """What the stream shows so far: step id -> (title, status), the text, rewrites seen."""

    steps: dict[str, tuple[str, str]] = field(default_factory=dict)
    text: str = ""
    rewrites: int = 0
    diverged: bool = False  # the text no longer continues what was streamed


class StreamReply:
    """A native Slack stream in the thread: tasks per step, then the answer text."""

    def __init__(
        self,
        client: AsyncWebClient,
        target: ReplyTarget,
        language: str,
        render: Render,
        *,
        recipient_team: str,
        recipient_user: str,
        support: StreamSupport,
        notes: ReplyNotes | None = None,
        resume_ts: str | None = None,
    ) -> None:
        """``resume_ts``: the stream a dead worker opened for this turn. What it shows is
        unknown here, so its text is never appended to (``finish`` edits the answer in),
        only its steps are brought up to date under the same task ids."""
        assert target.thread_ts is not None, "Slack streams only as a reply in a thread"
        self._client = client
        self._target = target
        self._language = language
        self._render = render
        self._recipient = (recipient_team, recipient_user)
        self._support = support
        self._notes = notes or ReplyNotes()
        self._sent = _Sent(diverged=resume_ts is not None)
        self._ts: str | None = resume_ts
        self._resuming = resume_ts is not None  # until this worker first reaches it
        self._fallback: PostReply | None = None

    async def show(self, view: LiveView) -> None:
        if self._fallback is not None:
            await self._fallback.show(view)
            return
        chunks, sent = self._changes(view)
        if self._ts is None:
            try:
                response = await self._client.chat_startStream(
                    channel=self._target.channel,
                    thread_ts=str(self._target.thread_ts),
                    recipient_team_id=self._recipient[0],
                    recipient_user_id=self._recipient[1],
                    task_display_mode="timeline",
                    chunks=chunks,
                )
            except SlackApiError as exc:
                self._support.refused(slack_error(exc))
                log.info("no stream (%s): posting and editing instead", slack_error(exc))
                self._fallback = PostReply(
                    self._client, self._target, self._language, self._render, notes=self._notes
                )
                await self._fallback.show(view)
                return
            self._ts = str(response["ts"])
            await self._notes.first(self._ts, "stream")
        elif chunks:
            try:
                await self._client.chat_appendStream(
                    channel=self._target.channel, ts=self._ts, chunks=chunks
                )
            except SlackApiError as exc:
                if slack_error(exc) == _GONE and self._resuming:
                    # The dead worker's message was deleted meanwhile: open a new one.
                    log.info("the reply to resume is gone; opening a new one")
                    self._ts, self._sent, self._resuming = None, _Sent(), False
                    await self.show(view)
                    return
                if slack_error(exc) != _EXPIRED:
                    raise
                log.info("the stream expired: editing its message instead")
                self._fallback = self._editing_stream_message()
                await self._fallback.show(view)
                return
        self._sent, self._resuming = sent, False

    async def finish(self, final: Final) -> None:
        if self._fallback is not None:
            await self._fallback.finish(final)
            return
        messages = await self._render(final)
        if self._ts is None:  # the answer came before any progress was shown
            await deliver(self._client, self._target, messages, final.language, notes=self._notes)
            return
        first = messages[0]
        done: list[Chunk] = [
            TaskUpdateChunk(id=step_id, title=title, status="complete")
            for step_id, (title, status) in self._sent.steps.items()
            if status != "complete"
        ]
        continues = not self._sent.diverged and first.markdown.startswith(self._sent.text)
        answered = False  # the stream's message now shows the answer's first message
        try:
            if continues and not first.head:
                rest = first.markdown[len(self._sent.text) :]
                await self._client.chat_stopStream(
                    channel=self._target.channel,
                    ts=self._ts,
                    chunks=[*done, *([MarkdownTextChunk(text=rest)] if rest else [])],
                    blocks=list(first.tail) or None,
                )
                answered = True
            else:
                await self._client.chat_stopStream(
                    channel=self._target.channel, ts=self._ts, chunks=done
                )
        except SlackApiError as exc:
            log.info("could not close the stream (%s): editing its message", slack_error(exc))
        if answered:  # the parts after it
            later, start, edit_ts = messages[1:], 1, None
        else:  # the streamed text is not the answer's start, or the stream is gone: replace it
            later, start, edit_ts = messages, 0, self._ts
        await deliver(
            self._client,
            self._target,
            later,
            final.language,
            edit_ts=edit_ts,
            start=start,
            notes=self._notes,
        )

    def _editing_stream_message(self) -> PostReply:
        return PostReply(
            self._client, self._target, self._language, self._render, ts=self._ts, notes=self._notes
        )

    def _changes(self, view: LiveView) -> tuple[list[Chunk], _Sent]:
        """The chunks that bring the stream up to ``view``, and what it shows after them.

        Before the agent's first step the stream opens with a "Thinking…" task; it has
        the first step's id, so that step's title replaces it.
        """
        sent = _Sent(dict(self._sent.steps), self._sent.text, view.rewrites, self._sent.diverged)
        chunks: list[Chunk] = []
        steps = view.steps or (Step("thinking", phrase("thinking", self._language)),)
        for i, step in enumerate(steps):
            step_id = f"step-{i}"
            if sent.steps.get(step_id) != (step.text, step.status):
                sent.steps[step_id] = (step.text, step.status)
                chunks.append(TaskUpdateChunk(id=step_id, title=step.text, status=step.status))
        rewritten = view.rewrites != self._sent.rewrites or not view.text.startswith(sent.text)
        if rewritten and sent.text:
            sent.diverged = True  # a stream cannot take text back: finish() replaces it
        if not sent.diverged:
            delta = view.text[len(sent.text) : STREAM_TEXT_LIMIT]
            if delta:
                chunks.append(MarkdownTextChunk(text=delta))
                sent.text += delta
        return chunks, sent


class OpenedAtOnce:
    """A reply shown before the agent's first step: the asker sees it working within one
    Slack call of the message, however busy the agent is. The opening runs beside the
    agent (a slow or rate-limited Slack call must not hold the answer back); the first
    update waits for it, so updates still never overlap."""

    def __init__(self, reply: LiveReply) -> None:
        self._reply = reply
        self._opening = asyncio.create_task(self._open())

    async def _open(self) -> None:
        try:
            await self._reply.show(LiveView())
        except Exception:  # the next update tries again
            log.warning("could not open the reply; the answer is still sent", exc_info=True)

    async def show(self, view: LiveView) -> None:
        await self._opening
        await self._reply.show(view)

    async def finish(self, final: Final) -> None:
        await self._opening
        await self._reply.finish(final)


class StatusSteps:
    """A reply whose thread status (``assistant.threads.setStatus``) names the step the
    agent is on: the assistant pane shows it under the thread while the answer comes."""

    def __init__(self, reply: LiveReply, set_status: Callable[[str], Awaitable[None]]) -> None:
        self._reply = reply
        self._set_status = set_status
        self._said = ""

    async def show(self, view: LiveView) -> None:
        current = view.current.text if view.current is not None else ""
        if current and current != self._said:
            self._said = current
            await self._set_status(current)
        await self._reply.show(view)

    async def finish(self, final: Final) -> None:
        await self._reply.finish(final)
