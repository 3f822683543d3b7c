"""The answer cache shared by every worker, in Redis.

The same contract and behaviour as the embedded :class:`~agent.cache.SqliteAnswerCache`
(exact match on the normalised question, then the nearest stored question in the
scope; expiry; entries citing a changed document are dropped, never served), with
the entries in Redis (layout and scripts: :mod:`agent.cache.answer_redis_scripts`).

Redis 7 has no vector search here, so each worker keeps the scope's question
vectors as a numpy matrix (:class:`~agent.cache.index.Matrix`) and only fetches the
entries stored since its last lookup; a cosine over a few thousand rows is
microseconds. While Redis is unreachable every call goes to the in-process
``fallback`` instead; invalidation and clearing reach both, because the fallback
keeps what it was given during an earlier outage.
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, NoReturn, TypeVar

import numpy as np
import numpy.typing as npt
import redis

from agent.cache import answer_redis_scripts as cache_scripts
from agent.cache.answer import (
    AnswerCache,
    CachedAnswer,
    SameQuestion,
    VersionLookup,
    normalize_question,
    outdated,
)
from agent.cache.index import Matrix, unit_vector
from agent.coordination.redis_connection import RedisConnection

T = TypeVar("T")

_FIELDS = ("question", "answer", "sources", "language", "versions", "created")


class _RedisGone(Exception):
    """Redis became unreachable part-way through a call: redo the call on the fallback."""


def _gone() -> NoReturn:
    raise _RedisGone


@dataclass
class _Scope:
    """One scope's vectors as this worker loaded them, valid while ``epoch`` holds."""

    epoch: str
    max_id: int = 0  # highest entry id looked at (with or without a vector)
    matrices: dict[int, Matrix] = field(default_factory=dict)  # by dimension


class RedisAnswerCache:
    """:class:`~agent.cache.AnswerCache` in Redis, shared by every worker."""

    def __init__(
        self,
        redis: RedisConnection,
        fallback: AnswerCache,
        *,
        threshold: float = 0.9,
        ttl_s: float = 86400.0,
        max_entries_per_scope: int = 2000,
        clock: Callable[[], float] = time.time,
    ) -> None:
        if ttl_s <= 0 or max_entries_per_scope < 1:
            raise ValueError(
                f"ttl_s ({ttl_s}) and max_entries_per_scope ({max_entries_per_scope}) must be "
                "positive; to turn the answer cache off, do not configure one"
            )
        self._connection = redis
        self._fallback = fallback
        self.threshold = threshold
        self.ttl_s = ttl_s
        self.max_entries_per_scope = max_entries_per_scope
        self._clock = clock
        self._base = redis.key("cache", "")
        client = redis.sync_client
        self._store_script = client.register_script(cache_scripts.STORE)
        self._drop_script = client.register_script(cache_scripts.DROP_ONE)
        self._invalidate_script = client.register_script(cache_scripts.INVALIDATE)
        self._refresh_script = client.register_script(cache_scripts.REFRESH)
        self._lock = threading.Lock()  # guards _scopes; lookups run in worker threads
        self._scopes: dict[str, _Scope] = {}

    # -- AnswerCache ------------------------------------------------------------
    def lookup(
        self,
        question: str,
        vector: npt.NDArray[Any] | None,
        scope_key: str,
        current_versions: VersionLookup | None = None,
        agrees: SameQuestion | None = None,
    ) -> CachedAnswer | None:
        try:
            return self._lookup(question, vector, scope_key, current_versions, agrees)
        except _RedisGone:
            return self._fallback.lookup(question, vector, scope_key, current_versions, agrees)

    def store(
        self,
        question: str,
        vector: npt.NDArray[Any] | None,
        scope_key: str,
        answer: str,
        sources: list[dict[str, Any]],
        language: str,
        doc_versions: dict[str, str],
    ) -> None:
        norm = normalize_question(question)
        if not norm:
            return  # "?" alone would make every punctuation-only message one question
        unit = unit_vector(vector)
        args: list[str | bytes | int | float] = [
            self._base,
            scope_key,
            norm,
            repr(self._clock()),
            max(1, int(self.ttl_s * 1000)),
            self.max_entries_per_scope,
            question,
            answer,
            json.dumps(sources, ensure_ascii=False),  # a non-JSON source is the caller's bug
            language,
            json.dumps(doc_versions, ensure_ascii=False),
            json.dumps(list(doc_versions), ensure_ascii=False),
            0 if unit is None else unit.shape[0],
            b"" if unit is None else unit.tobytes(),
        ]
        self._connection.attempt_sync(
            lambda client: self._store_script(args=args, client=client),
            lambda: self._fallback.store(
                question, vector, scope_key, answer, sources, language, doc_versions
            ),
            what="storing an answer in the cache",
        )

    def invalidate_documents(self, doc_ids: Iterable[str]) -> int:
        ids = list(dict.fromkeys(doc_ids))
        removed = self._fallback.invalidate_documents(ids)
        for start in range(0, len(ids), 500):
            args = [self._base, *ids[start : start + 500]]

            def invalidate(client: redis.Redis, args: list[str] = args) -> int:
                return int(self._invalidate_script(args=args, client=client))

            removed += self._connection.attempt_sync(
                invalidate,
                lambda: 0,  # stale entries are still caught by the version check at lookup
                what="invalidating cached answers",
            )
        return removed

    def clear(self) -> None:
        self._fallback.clear()
        pattern = _glob_escape(self._base) + "*"

        def clear(client: redis.Redis) -> None:
            batch: list[bytes] = []
            for key in client.scan_iter(match=pattern, count=500):
                batch.append(key)
                if len(batch) >= 500:
                    client.unlink(*batch)
                    batch = []
            if batch:
                client.unlink(*batch)

        self._connection.attempt_sync(clear, lambda: None, what="clearing the answer cache")
        with self._lock:
            self._scopes.clear()

    # -- internals --------------------------------------------------------------
    def _redis(self, operation: Callable[[redis.Redis], T], what: str) -> T:
        return self._connection.attempt_sync(operation, _gone, what=what)

    def _lookup(
        self,
        question: str,
        vector: npt.NDArray[Any] | None,
        scope_key: str,
        current_versions: VersionLookup | None,
        agrees: SameQuestion | None,
    ) -> CachedAnswer | None:
        norm = normalize_question(question)
        if norm:
            exact = self._base + "exact:" + scope_key
            found = self._redis(lambda r: r.hget(exact, norm), "looking up the answer cache")
            if found is not None:
                entry_id = int(found)
                fields = self._entry(entry_id)
                if fields is not None:
                    hit = self._validate(entry_id, fields, 1.0, scope_key, current_versions)
                    if hit is not None:
                        return hit
        query = unit_vector(vector)
        if query is None:
            return None
        for entry_id, score in self._candidates(scope_key, query):
            fields = self._entry(entry_id)
            if fields is None:  # gone meanwhile (expired, replaced, invalidated)
                self._forget(scope_key, [entry_id])
                continue
            if agrees is not None and not agrees(question, fields["question"]):
                continue  # close in meaning, yet another question: try the next one
            hit = self._validate(entry_id, fields, min(score, 1.0), scope_key, current_versions)
            if hit is not None:
                return hit
        return None

    def _entry(self, entry_id: int) -> dict[str, str] | None:
        key = f"{self._base}e:{entry_id}"
        values = self._redis(lambda r: r.hmget(key, _FIELDS), "reading a cached answer")
        if values[0] is None:
            return None
        return {name: _text(value) for name, value in zip(_FIELDS, values, strict=True)}

    def _validate(
        self,
        entry_id: int,
        fields: dict[str, str],
        similarity: float,
        scope_key: str,
        current_versions: VersionLookup | None,
    ) -> CachedAnswer | None:
        """The entry as an answer, or None after dropping it if expired or stale."""
        versions: dict[str, str] = json.loads(fields["versions"])
        created_at = float(fields["created"])
        expired = self._clock() - created_at > self.ttl_s
        if expired or outdated(versions, current_versions):
            self._redis(
                lambda r: self._drop_script(args=[self._base, entry_id], client=r),
                "dropping a stale cached answer",
            )
            self._forget(scope_key, [entry_id])
            return None
        return CachedAnswer(
            question=fields["question"],
            answer=fields["answer"],
            sources=json.loads(fields["sources"]),
            language=fields["language"],
            similarity=float(similarity),
            created_at=created_at,
            doc_versions=versions,
        )

    def _candidates(
        self, scope_key: str, query: npt.NDArray[np.float32]
    ) -> list[tuple[int, float]]:
        """Entry ids of the scope at or above the threshold, best first."""
        with self._lock:
            matrix = self._refresh(scope_key, query.shape[0])
            return [] if matrix is None else matrix.matches(query, self.threshold)

    def _refresh(self, scope_key: str, dim: int) -> Matrix | None:
        """The scope's matrix of ``dim`` with every entry stored since the last call.

        The caller holds the lock. Reloaded from scratch when Redis lost or cleared
        its data (a new epoch: ids may name other entries now) and once the matrix
        has doubled since its last full load (bounding the rows of deleted entries).
        """
        scope = self._scopes.get(scope_key)
        matrix = None if scope is None else scope.matrices.get(dim)
        if scope is not None and matrix is not None and matrix.size > 2 * matrix.loaded + 64:
            scope = None
        since = 0 if scope is None else scope.max_id
        args: list[str | int] = [self._base, scope_key, since, uuid.uuid4().hex]
        reply = self._redis(
            lambda r: self._refresh_script(args=args, client=r), "loading cached questions"
        )
        epoch = bytes(reply[0]).decode()
        if scope is None or scope.epoch != epoch:
            if scope is not None and since:  # loaded under another epoch: start over
                self._scopes.pop(scope_key, None)
                return self._refresh(scope_key, dim)
            scope = self._scopes[scope_key] = _Scope(epoch)
            full = True
        else:
            full = False
        scope.max_id = int(reply[1])
        rows: dict[int, tuple[list[int], list[bytes]]] = {}
        for i in range(2, len(reply), 3):
            ids, vectors = rows.setdefault(int(reply[i + 1]), ([], []))
            ids.append(int(reply[i]))
            vectors.append(bytes(reply[i + 2]))
        for row_dim, (ids, vectors) in rows.items():
            target = scope.matrices.setdefault(row_dim, Matrix(row_dim))
            target.append(
                np.asarray(ids, dtype=np.int64),
                np.frombuffer(b"".join(vectors), dtype=np.float32).reshape(-1, row_dim),
            )
        if full:
            for loaded in scope.matrices.values():
                loaded.loaded = loaded.size
        return scope.matrices.get(dim)

    def _forget(self, scope_key: str, entry_ids: list[int]) -> None:
        with self._lock:
            scope = self._scopes.get(scope_key)
            if scope is not None:
                for matrix in scope.matrices.values():
                    matrix.mark_dead(entry_ids)


def _text(value: bytes | str | None) -> str:
    return value.decode("utf-8") if isinstance(value, bytes) else (value or "")


def _glob_escape(text: str) -> str:
    """``text`` matched literally by SCAN's MATCH (a prefix may contain ``*?[]\\``)."""
    return "".join("\\" + c if c in "*?[]\\" else c for c in text)
