"""The real agent wrapped as a chat adapter gets it: for the Slack and Discord tests."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

from adapters.chat.channels import ChannelRules
from adapters.chat.feedback import SqliteFeedbackStore
from adapters.chat.observe import Observer, observed
from adapters.chat.services import ChatServices, learner
from agent.events import Final, Turn
from agent.retrieval.knowledge_base import KnowledgeBase
from tests.fakes.openai_server import FakeOpenAI
from tests.support.agent_support import agent


@asynccontextmanager
async def chat_services(
    kb: KnowledgeBase,
    folder: Path,
    *,
    llm: FakeOpenAI | None = None,
    rules: ChannelRules | None = None,
    update_interval_s: float = 0.05,
    finals: list[Final] | None = None,
) -> AsyncIterator[ChatServices]:
    """Real agent, real feedback file, in-process de-duplication; edits every 50 ms so
    tests see several live updates without waiting a second for each. ``finals``: where
    every answer is kept as the agent gave it (the flags it ran with among its fields)."""
    feedback = SqliteFeedbackStore(folder / "feedback.sqlite")
    try:
        async with agent(kb, folder, llm=llm) as runner:
            yield ChatServices(
                run=runner.run if finals is None else observed(runner.run, [keep(finals)]),
                feedback=feedback,
                rules=rules or ChannelRules(),
                update_interval_s=update_interval_s,
                learn=learner(kb),
                documents=kb.catalog.documents,
            )
    finally:
        feedback.close()


def keep(finals: list[Final]) -> Observer:
    async def kept(_turn: Turn, final: Final) -> None:
        finals.append(final)

    return kept
