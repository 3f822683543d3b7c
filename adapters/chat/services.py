"""What a chat adapter is given: the agent and the shared bookkeeping around it.

Passed in, never imported as globals, so tests build it from real parts and a
team deployment swaps the in-process pieces for shared ones (Redis) without the
adapters knowing.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from adapters.chat.channels import ChannelRules
from adapters.chat.dedupe import Deduper, LocalDeduper
from adapters.chat.feedback import FeedbackStore
from adapters.chat.live import RunTurn
from adapters.chat.metrics import Metrics
from adapters.chat.queue import LocalTurnQueue, TurnQueue
from adapters.chat.ratelimit import LocalRateLimiter, RateLimiter
from adapters.chat.usage import UsageStore
from agent.coordination.redis_connection import RedisConnection
from agent.retrieval.catalog import DocumentRecord
from agent.retrieval.ingest import FileResult, IngestItem, Ingestor
from agent.retrieval.knowledge_base import KnowledgeBase

Learn = Callable[[IngestItem, str], FileResult]
"""Ingest one document into a scope (a file shared with the bot); blocking."""


def learner(kb: KnowledgeBase) -> Learn:
    """The one ingestion path (``teamrag ingest``'s), for a document at a time."""

    def learn(item: IngestItem, scope: str) -> FileResult:
        return Ingestor(kb).ingest([item], scope=scope).results[0]

    return learn


def _local_queue(platform: str) -> TurnQueue:
    return LocalTurnQueue()


@dataclass
class ChatServices:
    run: RunTurn
    feedback: FeedbackStore
    dedupe: Deduper = field(default_factory=LocalDeduper)
    rules: ChannelRules = field(default_factory=ChannelRules)
    # Platforms allow about one edit per second per message.
    update_interval_s: float = 1.0
    limiter: RateLimiter = field(default_factory=lambda: LocalRateLimiter(0))
    metrics: Metrics | None = None
    # The queue of accepted questions for a platform ("slack"): durable with Redis.
    queue_for: Callable[[str], TurnQueue] = _local_queue
    # The process's Redis (None: in-process state), for the bots' readiness checks.
    redis: RedisConnection | None = None
    # The usage records every turn adds (for the HTTP service's usage reports).
    usage: UsageStore | None = None
    # Files shared with the bot are learned through this (None: the bot does not learn).
    learn: Learn | None = None
    # Every document in the knowledge base (the catalog), for what a surface shows of it
    # (the assistant's suggested prompts, App Home); filter with adapters.chat.library.
    documents: Callable[[], list[DocumentRecord]] = list
    # Delete a thread's memory by its thread id (a deleted HTTP conversation); None: kept.
    forget: Callable[[str], Awaitable[None]] | None = None

    async def admit(self, platform: str, workspace: str, user: str) -> float | None:
        """None when this user may ask now; else the seconds until they may ask again
        (counted per user and workspace, across every worker)."""
        wait = await self.limiter.admit(f"{platform}:{workspace}:{user}")
        if wait is not None and self.metrics is not None:
            self.metrics.rate_limited(platform)
        return wait

    def count_error(self, kind: str) -> None:
        """Count a failure the user was told about (``teamrag_errors_total{kind}``)."""
        if self.metrics is not None:
            self.metrics.error(kind)
