"""What the answer cache's tests share: a test clock, vectors of a chosen cosine, one
``store`` with the usual sources, and the backend a test runs on (its fixtures are in
``tests/support/cache_fixtures.py``)."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np
import numpy.typing as npt
import redis

from agent.cache import AnswerCache
from agent.coordination.redis_connection import RedisConnection

SCOPE = "slack:T123|public"
DOCS = {"doc-a": "h1:p1", "doc-b": "h2:p1"}


class FakeClock:
    def __init__(self, now: float = 1_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def vec(cosine: float, dim: int = 8) -> npt.NDArray[np.float32]:
    """A unit vector whose cosine with ``vec(1.0)`` is ``cosine``."""
    row = np.zeros(dim, dtype=np.float32)
    row[0], row[1] = cosine, math.sqrt(max(0.0, 1.0 - cosine * cosine))
    return row


def other(dim: int = 8) -> npt.NDArray[np.float32]:
    """Orthogonal to every ``vec``."""
    row = np.zeros(dim, dtype=np.float32)
    row[2] = 1.0
    return row


def store(
    cache: AnswerCache,
    question: str,
    vector: npt.NDArray[np.float32] | None = None,
    *,
    scope: str = SCOPE,
    answer: str = "seven days",
    docs: dict[str, str] | None = None,
) -> None:
    sources: list[dict[str, Any]] = [{"title": "Backups", "link": None, "page": 3}]
    cache.store(question, vector, scope, answer, sources, "en", DOCS if docs is None else docs)


def versions(table: dict[str, str]) -> Any:
    calls: list[list[str]] = []

    def current(doc_ids: list[str]) -> dict[str, str]:
        calls.append(doc_ids)
        return {d: table[d] for d in doc_ids if d in table}

    current.calls = calls  # type: ignore[attr-defined]
    return current


def redis_entry_count(connection: RedisConnection) -> int:
    client = redis.Redis.from_url(connection.url)
    try:
        return sum(1 for _ in client.scan_iter(match=connection.prefix + "cache:e:*"))
    finally:
        client.close()


class OpenCache(Protocol):
    def __call__(
        self, *, threshold: float = 0.9, ttl_s: float = 86400.0, max_entries: int = 5000
    ) -> AnswerCache: ...


@dataclass
class CacheBackend:
    """One backend of the answer cache on the test's store. Each ``open`` is another
    instance on it: the same SQLite file, or the same Redis through another worker's
    own connection and fallback file; ``max_entries`` is the SQLite file's bound and
    Redis's bound per scope (the tests keep to one scope, where the two agree)."""

    name: str
    open: OpenCache
    entries: Callable[[], int]
