"""Building the real agent for tests: real stores, the fake LLM over HTTP, scripted replies.

The scripts below are the JSON objects the fast model returns for each structured
step (the task names are the schema class names the client sends), so a test
reads like the conversation the agent has with its models.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from agent.cache import SqliteAnswerCache
from agent.config import AgentConfig
from agent.deps import Deps
from agent.events import Event, Final, Progress, Token, Turn
from agent.graph import build_graph
from agent.llm.calls import openai_llms
from agent.memory.backends import open_checkpointer, open_store
from agent.retrieval.knowledge_base import KnowledgeBase
from agent.runner import Runner
from agent.websearch.provider import WebSearchProvider
from tests.fakes.openai_server import FakeOpenAI


@asynccontextmanager
async def agent(
    kb: KnowledgeBase,
    folder: Path,
    *,
    llm: FakeOpenAI | None = None,
    config: AgentConfig | None = None,
    web: WebSearchProvider | None = None,
    database_url: str | None = None,
    timeout_s: float = 5.0,
) -> AsyncIterator[Runner]:
    """The agent on real SQLite (or Postgres) memory, a real cache file and ``kb``."""
    config = config or AgentConfig()
    llms = None
    if llm is not None:
        llms = openai_llms(
            fast_model="fast-model",
            chat_model="chat-model",
            base_url=llm.base_url,
            api_key="test",
            timeout_s=timeout_s,
            max_retries=0,
        )
    cache = SqliteAnswerCache(folder / "cache.sqlite", threshold=config.cache_threshold)
    async with (
        open_checkpointer(database_url, folder / "memory.sqlite") as checkpointer,
        open_store(database_url, folder / "users.sqlite") as store,
    ):
        deps = Deps(kb=kb, config=config, llms=llms, cache=cache, web=web)
        runner = Runner(build_graph(checkpointer, store), deps)
        try:
            yield runner
        finally:
            await runner.wait_idle()
            if llms is not None:
                await llms.aclose()


async def collect(runner: Runner, turn: Turn) -> tuple[list[Event], Final]:
    events = [event async for event in runner.run(turn)]
    final = events[-1]
    assert isinstance(final, Final), events
    return events, final


def shown_text(events: Sequence[Event]) -> str:
    """What a chat adapter shows from the token stream, honouring resets."""
    text = ""
    for event in events:
        if isinstance(event, Token):
            text = event.text if event.reset else text + event.text
    return text


def stages(events: Sequence[Event]) -> list[str]:
    return [e.stage for e in events if isinstance(e, Progress)]


def analysis(
    route: str = "knowledge",
    *,
    standalone: str = "",
    needs_history: bool = False,
    subs: Sequence[tuple[int, str, Sequence[int]]] = (),
    variations: Sequence[str] = (),
    reply: str = "",
    facts: Sequence[tuple[str, str]] = (),
    confidence: float = 0.95,
    complexity: str = "moderate",
    style: str = "normal",
    filters: dict[str, Any] | None = None,
) -> dict[str, Any]:
    return {
        "route": route,
        "confidence": confidence,
        "needs_history": needs_history,
        "standalone_question": standalone,
        "complexity": complexity,
        "reply": reply,
        "sub_questions": [
            {"id": i, "question": q, "priority": 1, "depends_on": list(d)} for i, q, d in subs
        ],
        "variations": list(variations),
        "answer_style": style,
        "filters": {"source": None, "title": None, "page_from": None, "page_to": None}
        | (filters or {}),
        "user_facts": [{"kind": k, "text": t} for k, t in facts],
    }


def review(
    score: float, ranking: Sequence[int] = (1, 2, 3), missing: Sequence[str] = ()
) -> dict[str, Any]:
    return {"ranking": list(ranking), "sufficiency": score, "missing_aspects": list(missing)}


def verdict(ok: bool = True, reason: str = "") -> dict[str, Any]:
    score = 0.95 if ok else 0.3
    return {
        "grounded": ok,
        "grounded_score": score,
        "answers_question": ok,
        "answer_score": score,
        "reason": reason,
    }


def request_text(body: dict[str, Any]) -> str:
    """All message contents of a chat request, to check what the model was shown."""
    return "\n".join(str(m.get("content", "")) for m in body.get("messages", []))


def script_answer(llm: FakeOpenAI, *answers: str, analyses: Sequence[Any] = ()) -> None:
    """Script knowledge turns that pass every check: ``analyses`` (default: one plain
    knowledge route), enough evidence, the answer texts in order, a passing verdict."""
    llm.reply("Analysis", *(analyses or [analysis()]))
    llm.reply("Review", review(0.9))
    llm.reply("text", *answers)
    llm.reply("Verdict", verdict(True))


# Two turns of one thread: the second needs the first to make sense.
FOLLOW_UP_ANALYSES = (
    analysis(),
    analysis(needs_history=True, standalone="Where does the on-call handover happen?"),
)
FOLLOW_UP_ANSWERS = (
    "Postgres backups are kept for 35 days [1].",
    "The handover is in the #oncall-handover channel [1].",
)

# A question the sample ops handbook answers on p. 4 (35 days).
BACKUPS = "Postgres 백업은 며칠 동안 보관되나요?"


def answer_everything(llm: FakeOpenAI) -> None:
    """The happy path: a knowledge route, enough evidence, one cited answer, a pass."""
    script_answer(llm, "Backups are kept for 35 days [1].")
