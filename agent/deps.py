"""What the graph's nodes are given: the parts a process wires up once.

Passed as LangGraph's run context (``context_schema``), never imported as
globals, so a test builds the same graph on a temporary knowledge base and a
fake LLM, and a bot process builds it on the real ones.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from agent.config import AgentConfig
from agent.llm.calls import LLMs
from agent.retrieval.knowledge_base import KnowledgeBase

if TYPE_CHECKING:
    from agent.cache import AnswerCache
    from agent.routing.intent import PrototypeRouter
    from agent.websearch.provider import WebSearchProvider


def _now() -> datetime:
    return datetime.now(UTC)


@dataclass
class Deps:
    kb: KnowledgeBase
    config: AgentConfig = field(default_factory=AgentConfig)
    llms: LLMs | None = None  # None: extractive mode, every step has a deterministic stand-in
    cache: AnswerCache | None = None
    web: WebSearchProvider | None = None
    router: PrototypeRouter | None = None  # built from the knowledge base's embedder when None
    persona: str = ""
    clock: Callable[[], datetime] = _now

    def __post_init__(self) -> None:
        if self.router is None:
            from agent.routing.intent import PrototypeRouter

            self.router = PrototypeRouter(self.kb.embedder)

    @property
    def prototype_router(self) -> PrototypeRouter:
        assert self.router is not None
        return self.router
