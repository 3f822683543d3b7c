"""One question over HTTP: checked, admitted, stored, run, and its answer stored.

The turn runs in a task of its own, not in the request's: a client that disconnects
mid-stream (a closed tab) cancels only its reading, while the turn finishes, its
answer is stored in the conversation and its usage recorded, exactly as it would be
had the client stayed. Every turn ends in a response: when the run itself raises,
the response says why, in the asker's language.
"""

from __future__ import annotations

import asyncio
import logging
import math
import time
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from adapters.chat.feedback import remember_for_buttons
from adapters.chat.ratelimit import refusal
from adapters.http.accounts import Account
from adapters.http.context import CHANNEL, PLATFORM, WORKSPACE, HttpContext
from adapters.http.conversations import Conversation, Message, new_id, title_of, unsaved
from adapters.http.schemas import chat_response, source_out
from agent.config import FeatureError, Features
from agent.events import Event, Final, Progress, Token, Turn
from agent.wording.language import detect_language

log = logging.getLogger(__name__)


def check_features(features: Mapping[str, Any] | None) -> None:
    """A request's feature flags, checked before anything runs: an unknown name or a value
    of the wrong kind is the caller's mistake (422), not a failed turn."""
    try:
        Features().overridden(features)
    except FeatureError as exc:
        raise TurnRefused(422, f"features: {exc}") from None


class TurnRefused(Exception):
    """The question was not run; ``status`` and ``reason`` are the HTTP answer."""

    def __init__(self, status: int, reason: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(reason)
        self.status = status
        self.reason = reason
        self.headers = headers or {}


def check_text(text: str, where: str) -> None:
    """Text that cannot be stored or searched: a lone surrogate ("\\ud800" in JSON) is
    valid JSON but not Unicode text; refused before the turn is admitted (before, it
    failed deep in the turn with 500, after it had counted against the quota)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise TurnRefused(
            422,
            f"{where}: character {exc.start} is a lone surrogate "
            f"({text[exc.start]!a}), not text: send valid UTF-8",
        ) from None


@dataclass
class LiveTurn:
    """A turn under way: its events for a streaming client, and its response."""

    conversation: Conversation
    query: str
    new: bool = False  # the conversation is stored with this turn's question
    events: asyncio.Queue[Event | None] = field(default_factory=asyncio.Queue)
    response: asyncio.Future[dict[str, Any]] = field(
        default_factory=lambda: asyncio.get_running_loop().create_future()
    )
    final: Final | None = None
    # The (role, text) messages of an OpenAI-style request, the new question last.
    history: list[tuple[str, str]] = field(default_factory=list)

    async def stream(self) -> AsyncIterator[Event | dict[str, Any]]:
        """Progress and Token events as they come, then the response (a dict)."""
        while (event := await self.events.get()) is not None:
            yield event
        yield await self.response


class HttpTurns:
    def __init__(self, ctx: HttpContext) -> None:
        self.ctx = ctx
        self._running: set[asyncio.Task[None]] = set()

    def check_query(self, query: str) -> str:
        check_text(query, "query")
        text = query.strip()
        if not text:
            raise TurnRefused(422, 'the question is empty: send it in "query"')
        if len(text) > self.ctx.max_input_chars:
            raise TurnRefused(
                422,
                f"the question is {len(text)} characters long; the limit is "
                f"{self.ctx.max_input_chars} (TEAMRAG_MAX_INPUT_CHARS): shorten it or split it",
            )
        return text

    async def admit(self, account: Account, query: str) -> None:
        wait = await self.ctx.services.admit(PLATFORM, WORKSPACE, account.name)
        if wait is not None:
            raise TurnRefused(
                429,
                refusal(wait, detect_language(query)),
                {"Retry-After": str(max(1, math.ceil(wait)))},
            )

    async def conversation(
        self, account: Account, conversation_id: str | None, query: str
    ) -> Conversation | None:
        """The caller's conversation; None when a new one is to be started."""
        store = self.ctx.conversations
        if conversation_id is None:
            return None
        found = await store.get(conversation_id, account.name)
        if found is None:
            raise TurnRefused(
                404, f"no conversation {conversation_id!r} among yours (GET /api/conversations)"
            )
        return found

    def start(
        self,
        account: Account,
        query: str,
        conversation: Conversation | None,
        features: Mapping[str, Any] | None = None,
    ) -> LiveTurn:
        """Run the turn in the background; it stores the question first (and a new
        conversation, titled with the question), so the caller can answer at once."""
        new = conversation is None
        if conversation is None:
            conversation = unsaved(account.name, title_of(query))
        turn = Turn(
            text=query,
            platform=PLATFORM,
            workspace=WORKSPACE,
            channel=CHANNEL,
            thread_root=conversation.id,
            user=account.name,
            message_id=new_id(),
            scopes=account.searchable(self.ctx.default_scope),
            features=features,
        )
        live = LiveTurn(conversation, query, new)
        task = asyncio.create_task(self._drive(live, turn))
        self._running.add(task)
        task.add_done_callback(self._running.discard)
        return live

    async def ask(
        self,
        account: Account,
        query: str,
        conversation_id: str | None,
        features: Mapping[str, Any] | None = None,
    ) -> LiveTurn:
        """The whole admission: check, limit, find or create the conversation, start."""
        text = self.check_query(query)
        check_features(features)
        await self.admit(account, text)
        conversation = await self.conversation(account, conversation_id, text)
        return self.start(account, text, conversation, features)

    async def _drive(self, live: LiveTurn, turn: Turn) -> None:
        try:
            question = Message(new_id(), live.conversation.id, "user", turn.text, time.time())
            await self.ctx.conversations.add_question(live.conversation, question, new=live.new)
        except Exception as exc:  # not run: an answer nobody could find again is worse
            log.exception("could not store the question in %s", live.conversation.id)
            self.ctx.services.count_error("http_store")
            reason = f"the conversation could not be saved ({type(exc).__name__}); ask again"
            final = Final.failed(turn, reason)
            live.final = final
            live.response.set_result(chat_response(turn.text, final, live.conversation.id, ""))
            live.events.put_nowait(None)
            return
        await self._run(live, turn)

    async def _run(self, live: LiveTurn, turn: Turn) -> None:
        final: Final | None = None
        try:
            async for event in self.ctx.services.run(turn):
                if isinstance(event, Final):
                    final = event
                elif isinstance(event, Progress | Token):
                    live.events.put_nowait(event)
        except Exception as exc:  # the runner promises a Final; a broken one still gets one
            log.exception("the turn of %s failed before its answer", turn.thread_id)
            final = Final.failed(turn, f"{type(exc).__name__}: {str(exc)[:200]}")
        if final is None:
            final = Final.failed(turn, "the agent ended without an answer")
        live.final = final
        message_id = await remember_for_buttons(self.ctx.services.feedback, turn, final)
        message_id = message_id or new_id()
        payload = chat_response(turn.text, final, live.conversation.id, message_id)
        try:
            await self.ctx.conversations.add_message(
                Message(
                    message_id,
                    live.conversation.id,
                    "assistant",
                    final.answer,
                    time.time(),
                    sources=[source_out(s) for s in final.sources],
                    meta={k: payload[k] for k in _META},
                )
            )
        except Exception as exc:
            log.exception("could not store the answer in conversation %s", live.conversation.id)
            payload["notes"] = [
                *payload["notes"],
                f"the answer was not saved: {type(exc).__name__}",
            ]
            self.ctx.services.count_error("http_store")
        live.response.set_result(payload)
        live.events.put_nowait(None)

    async def drain(self, timeout_s: float = 30.0) -> None:
        """Let the turns under way finish (and be stored) before the stores close."""
        if self._running:
            await asyncio.wait(set(self._running), timeout=timeout_s)

    @property
    def running(self) -> int:
        return len(self._running)


_META = (
    "intent",
    "complexity",
    "model",
    "confidence",
    "is_blocked",
    "cached",
    "covered",
    "usage",
    "timings",
    "language",
    "notes",
)
