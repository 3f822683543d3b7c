"""Run one turn through the graph and turn it into Progress, Token and Final events.

The runner owns what the graph cannot: the thread id, one run at a time per
thread (so two quick messages are answered in order and none is lost), the
draft-token gate (a speculative draft is shown only once the judge keeps it),
an overall time limit, and the guarantee that every turn ends in a Final,
even when something below fails.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, cast, get_args

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph.state import CompiledStateGraph

from agent.config import FeatureError
from agent.coordination.locks import LocalThreadLocks, LockLostError, ThreadLocks
from agent.deps import Deps
from agent.events import (
    Citation,
    Event,
    Final,
    Progress,
    Route,
    Token,
    Turn,
    Usage,
    quote_of,
)
from agent.memory.backends import prune_thread
from agent.plumbing import log_context
from agent.plumbing.stopping import deadline
from agent.state import RAG_ROUTES, PoolItem, TurnInput, fresh_turn, updated

log = logging.getLogger(__name__)


def to_citation(number: int, item: PoolItem | dict[str, Any]) -> Citation:
    return Citation(
        number=number,
        title=str(item.get("title", "")),
        source=str(item.get("source", "")),
        locator=str(item.get("locator", "")),
        link=item.get("link"),
        doc_id=str(item.get("doc_id", "")),
        kind="web" if item.get("kind") == "web" else "document",
        quote=quote_of(str(item.get("text", ""))),
    )


class _DraftGate:
    """Hold a speculative draft's tokens until the judge keeps it; mark rewrites with reset."""

    def __init__(self) -> None:
        self.held: list[str] = []
        self.holding = False
        self.dropping = False
        self.shown = False
        self.reset_next = False

    def start(self, speculative: bool) -> None:
        self.held, self.holding, self.dropping = [], speculative, False
        self.reset_next = self.shown

    def token(self, text: str) -> list[Token]:
        if self.dropping:
            return []
        if self.holding:
            self.held.append(text)
            return []
        return self._show([text])

    def judged(self, keep: bool) -> list[Token]:
        held, self.held, self.holding = self.held, [], False
        if not keep:
            self.dropping = True
            return []
        return self._show(held) if held else []

    def _show(self, texts: list[str]) -> list[Token]:
        tokens = []
        for text in texts:
            tokens.append(Token(text, reset=self.reset_next))
            self.reset_next = False
        self.shown = self.shown or bool(tokens)
        return tokens


def _usage(counts: dict[str, Any]) -> Usage:
    return Usage(int(counts.get("prompt_tokens", 0)), int(counts.get("completion_tokens", 0)))


def _answering_model(by_model: dict[str, Usage], chat_model: str | None) -> str:
    """The model that wrote the answer: the chat model when it was used; else the one that
    wrote the most (a smalltalk reply comes from the fast model's routing call)."""
    written = {m: u for m, u in by_model.items() if u.completion_tokens or u.prompt_tokens}
    if not written:
        return ""
    if chat_model in written:
        return chat_model
    return max(written, key=lambda m: (written[m].completion_tokens, written[m].prompt_tokens, m))


def _covered(values: dict[str, Any], route: str) -> bool | None:
    """Whether the documents answered: asked only of a turn that searched them. A cached
    answer was kept only because they did (see the cache store's rule)."""
    if values.get("blocked"):
        return None
    if values.get("cached"):
        return True
    if route not in RAG_ROUTES:
        return None
    return values.get("covered", True) is not False


class Runner:
    def __init__(
        self,
        graph: CompiledStateGraph[Any, Any, Any, Any],
        deps: Deps,
        *,
        locks: ThreadLocks | None = None,
        turn_timeout_s: float = 180.0,
    ) -> None:
        self.graph = graph
        self.deps = deps
        self.locks = locks or LocalThreadLocks()
        self.turn_timeout_s = turn_timeout_s
        self._housekeeping: set[asyncio.Task[None]] = set()

    def _config(self, turn: Turn) -> dict[str, Any]:
        """The run's config. Name, tags and metadata label the trace when LangSmith tracing
        is switched on by its environment variables; LangChain reads them, nothing else."""
        return {
            "configurable": {"thread_id": turn.thread_id},
            "recursion_limit": self.deps.config.recursion_limit,
            "run_name": "teamrag turn",
            "tags": [turn.platform],
            "metadata": {
                "thread_id": turn.thread_id,
                "platform": turn.platform,
                "workspace": turn.workspace,
                "channel": turn.channel,
                "user": turn.user,
            },
        }

    async def run(self, turn: Turn) -> AsyncIterator[Event]:
        """Events for one turn; the last one is always a :class:`Final`."""
        start = time.perf_counter()
        thread_id = turn.thread_id
        try:
            flags = self.deps.config.features.overridden(turn.features).as_dict()
        except FeatureError as exc:  # a bad override is the caller's mistake: say which
            yield self._failure(turn, exc, start)
            return
        turn_input = TurnInput(
            text=turn.text,
            user=turn.user,
            workspace=turn.workspace,
            scopes=sorted(turn.scopes) if turn.scopes else None,
            thread_id=thread_id,
            persona=turn.persona,
            features=flags,
        )
        queue: asyncio.Queue[Event | None] = asyncio.Queue()
        task = asyncio.create_task(self._drive(turn, turn_input, queue, start))
        answered = False
        try:
            while (event := await queue.get()) is not None:
                if isinstance(event, Final) and not answered:
                    answered = True
                    # A caller may stop reading at the Final. The turn's housekeeping
                    # (pruning, under the thread's lock) then finishes on its own: cutting
                    # it off would leave a write half done. Registered before the Final is
                    # handed out, not when this generator is closed (which, after a
                    # caller's `break`, happens in a later task), so wait_idle() sees it.
                    self._housekeeping.add(task)
                    task.add_done_callback(self._housekeeping.discard)
                yield event
        finally:
            if not answered and not task.done():
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task

    async def forget(self, thread_id: str) -> None:
        """Delete a thread's memory (its checkpoints), waiting for a turn under way on it.

        A person who deletes a conversation expects what they said to be gone, not only
        hidden from a list.
        """
        checkpointer = self.graph.checkpointer
        if not isinstance(checkpointer, BaseCheckpointSaver):
            return
        async with self.locks.hold(thread_id):
            await checkpointer.adelete_thread(thread_id)

    async def wait_idle(self) -> None:
        """Wait for the housekeeping of answered turns (before closing the stores)."""
        if self._housekeeping:
            await asyncio.gather(*self._housekeeping, return_exceptions=True)

    async def warm_up(self) -> None:
        """Load the encoder (and the routing prototypes when there is no LLM) before the
        first message arrives, instead of making its sender wait."""
        deps = self.deps
        await asyncio.to_thread(deps.kb.embedder.embed_query, "warm up")
        if deps.llms is None:
            await asyncio.to_thread(deps.prototype_router.warm)

    async def ask(self, turn: Turn) -> Final:
        final: Final | None = None
        async for event in self.run(turn):
            if isinstance(event, Final):
                final = event
        assert final is not None
        return final

    async def _drive(
        self, turn: Turn, turn_input: TurnInput, queue: asyncio.Queue[Event | None], start: float
    ) -> None:
        thread_id = turn.thread_id
        final: Final | None = None
        # This task is the turn: every log line written in it (and in the graph's tasks,
        # which copy the context) names the thread, and concurrent turns keep their own.
        with log_context.bind(thread_id=thread_id):
            try:
                async with self.locks.hold(thread_id):
                    waited = time.perf_counter() - start

                    async def answer(values: dict[str, Any]) -> None:
                        nonlocal final
                        final = self._final(values, turn, start, waited)
                        await queue.put(final)

                    async with deadline(self.turn_timeout_s):
                        values, earlier = await self._stream(turn, turn_input, queue, answer)
                    if final is None:  # the graph ended without finalize (it always runs)
                        await answer(values)
                    # After the answer is out, still holding the thread: housekeeping. A
                    # thread's first turn wrote its only checkpoint: nothing to prune.
                    if earlier:
                        await self._prune(thread_id)
            except Exception as exc:  # every turn ends in a Final that says what happened
                if final is None:
                    log.exception("turn failed on thread %s", thread_id)
                    await queue.put(self._failure(turn, exc, start))
                else:  # the answer was out; only the thread's memory of it is lost
                    log.exception("turn answered, but not saved, on thread %s", thread_id)
        await queue.put(None)

    async def _prune(self, thread_id: str) -> None:
        """Keep only the thread's latest checkpoint: with trimming, a thread stays bounded."""
        checkpointer = self.graph.checkpointer
        if not isinstance(checkpointer, BaseCheckpointSaver):
            return
        try:
            await prune_thread(checkpointer, thread_id)
        except Exception:  # a missed prune costs disk space, not the answer
            log.warning("could not prune thread %s", thread_id, exc_info=True)

    async def _stream(
        self,
        turn: Turn,
        turn_input: TurnInput,
        queue: asyncio.Queue[Event | None],
        answer: Callable[[dict[str, Any]], Awaitable[None]],
    ) -> tuple[dict[str, Any], bool]:
        """Relay the graph's custom events and hand the final state to ``answer`` as soon
        as ``finalize`` has run; returns the state the turn ended with, and whether the
        thread had a conversation before this turn (a stored checkpoint).

        ``finalize`` is the last node, so its update completes the answer: the Final goes
        out then, not after the thread's checkpoint is written (1.8 ms on SQLite, more on
        Postgres). The thread stays locked until that write is done."""
        gate = _DraftGate()
        values: dict[str, Any] = {}
        earlier: bool | None = None
        stream = self.graph.astream(  # type: ignore[call-overload]
            fresh_turn(turn_input),
            config=self._config(turn),
            context=self.deps,
            stream_mode=["custom", "values", "updates"],
            # One checkpoint per turn: intermediate steps are not worth a write each.
            durability="exit",
        )
        async for mode, chunk in stream:
            if mode == "values":
                if earlier is None:  # the first: the stored state with this turn's input
                    earlier = len(chunk.get("messages") or ()) > 1 or bool(chunk.get("summary"))
                values = chunk
                continue
            if mode == "updates":
                finished = chunk.get("finalize")
                if finished is not None:
                    await answer(updated(values, finished))
                continue
            event: dict[str, Any] = chunk
            kind = event.get("type")
            if kind == "progress":
                await queue.put(Progress(event["stage"], event["text"]))
            elif kind == "draft_start":
                gate.start(bool(event.get("speculative")))
            elif kind == "token":
                for token in gate.token(event["text"]):
                    await queue.put(token)
            elif kind == "judged":
                for token in gate.judged(bool(event.get("keep"))):
                    await queue.put(token)
        return values, earlier is not False

    def _final(self, values: dict[str, Any], turn: Turn, start: float, waited: float) -> Final:
        usage = values.get("usage") or {}
        timings = dict(values.get("timings") or {})
        timings["total"] = round((time.perf_counter() - start) * 1000, 2)
        if waited > 0.05:
            timings["waited_for_thread"] = round(waited * 1000, 2)
        sources = [to_citation(n, item) for n, item in enumerate(values.get("sources") or [], 1)]
        notes = list(dict.fromkeys(values.get("notes") or []))
        cached = values.get("cached")
        if cached:  # say which earlier question this answer was kept for, and how close
            notes.append(
                f"answer cache: kept for “{cached['question']}” (similarity {cached['similarity']})"
            )
        if notes:
            log.info("turn %s: %s", turn.thread_id, "; ".join(notes))
        route = values.get("route") or "knowledge"
        if route not in get_args(Route):  # "general" is shown as smalltalk
            route = "smalltalk"
        by_model = {m: _usage(u) for m, u in (values.get("usage_by_model") or {}).items()}
        # A blocked or cached turn never reaches the router: its defaults say nothing.
        routed = not (values.get("blocked") or values.get("cached"))
        return Final(
            answer=values.get("answer", ""),
            sources=sources,
            route=cast(Route, route),
            language=values.get("language", "en"),
            cached=bool(values.get("cached")),
            blocked=bool(values.get("blocked")),
            degraded=bool(values.get("degraded")),
            mode="llm" if self.deps.llms is not None else "extractive",
            llm_calls=int(values.get("llm_calls") or 0),
            usage=_usage(usage),
            usage_by_model=by_model,
            timings=timings,
            thread_id=turn.thread_id,
            notes=notes,
            covered=_covered(values, route),
            complexity=str(values.get("complexity") or "") if routed else "",
            confidence=float(values.get("route_confidence") or 0.0) if routed else 0.0,
            model=values.get("answer_model")
            or _answering_model(by_model, self.deps.llms.chat_name if self.deps.llms else None),
            features=dict(values.get("features") or self.deps.config.features.as_dict()),
            path=list(values.get("path") or []),
        )

    def _failure(self, turn: Turn, exc: BaseException, start: float) -> Final:
        if isinstance(exc, TimeoutError):
            reason = f"the answer took longer than {self.turn_timeout_s:.0f} s"
        elif isinstance(exc, LockLostError):
            # This worker stalled past its lease and another took the conversation over;
            # writing on would overwrite that worker's turn.
            reason = "another worker took this conversation over; please ask again"
        else:
            reason = f"{type(exc).__name__}: {str(exc)[:200]}"
        return Final.failed(
            turn,
            reason,
            mode="llm" if self.deps.llms is not None else "extractive",
            timings={"total": round((time.perf_counter() - start) * 1000, 2)},
        )
