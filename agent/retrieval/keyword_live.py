"""A BM25 index that takes one document's changes in milliseconds, for a shared catalog.

:class:`~agent.retrieval.keyword.KeywordIndex` stores final BM25 scores, so any change
to the corpus (its size, its mean length, a term's document frequency) means a full
rebuild: right for one machine that rebuilds after an ingest, wrong for hosts that
follow a catalog in Postgres which other hosts change one document at a time.

This index stores term frequencies instead and scores at query time with the live
statistics, with the same formula (Lucene IDF, k1=1.5, b=0.75), so the ranking is
the embedded index's. Chunks live in two segments: ``main`` (large, rebuilt rarely)
and ``delta`` (recent additions, rebuilt on each change; small). A removed chunk is
a tombstone until the next merge. A merge happens when the delta or the tombstones
grow past a fraction of main, so its cost is amortised over many changes.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from agent.retrieval.fusion import bm25_idf
from agent.retrieval.keyword import K1, B, KeywordRow

_MERGE_MIN = 2048  # chunks: below this a delta is always cheap to rebuild


@dataclass
class _Segment:
    ids: list[str]
    scopes: list[str]
    lengths: npt.NDArray[np.float32]
    indptr: npt.NDArray[np.int64]  # CSC by term id
    rows: npt.NDArray[np.int32]
    tf: npt.NDArray[np.float32]
    alive: npt.NDArray[np.bool_]

    @classmethod
    def build(cls, rows: Sequence[KeywordRow]) -> _Segment:
        if not rows:
            none = np.zeros(0, np.float32)
            return cls([], [], none, np.zeros(1, np.int64), np.zeros(0, np.int32), none,
                       np.zeros(0, np.bool_))  # fmt: skip
        terms = [r.term_ids for r in rows]
        term = np.concatenate(terms)
        tf = np.concatenate([r.counts for r in rows])
        per_chunk = np.fromiter((len(t) for t in terms), np.int64, count=len(terms))
        chunk = np.repeat(np.arange(len(rows), dtype=np.int32), per_chunk)
        order = np.argsort(term, kind="stable")
        indptr = np.zeros(int(term.max(initial=0)) + 2, np.int64)
        np.cumsum(np.bincount(term, minlength=len(indptr) - 1), out=indptr[1:])
        return cls(
            [r.chunk_id for r in rows],
            [r.scope for r in rows],
            np.fromiter((r.length for r in rows), np.float32, count=len(rows)),
            indptr,
            chunk[order],
            tf[order],
            np.ones(len(rows), np.bool_),
        )

    def postings(self, term: int) -> tuple[npt.NDArray[np.int32], npt.NDArray[np.float32]]:
        if term + 1 >= len(self.indptr):
            return np.zeros(0, np.int32), np.zeros(0, np.float32)
        start, end = self.indptr[term], self.indptr[term + 1]
        rows, tf = self.rows[start:end], self.tf[start:end]
        keep = self.alive[rows]
        return rows[keep], tf[keep]

    def live_rows(self) -> list[KeywordRow]:
        """The chunks still alive, as rows again (for a merge)."""
        term = np.repeat(np.arange(len(self.indptr) - 1, dtype=np.int32), np.diff(self.indptr))
        order = np.argsort(self.rows, kind="stable")
        by_chunk, terms, tfs = self.rows[order], term[order], self.tf[order]
        bounds = np.searchsorted(by_chunk, np.arange(len(self.ids) + 1))
        return [
            KeywordRow(self.ids[i], self.scopes[i], int(self.lengths[i]),
                       terms[bounds[i] : bounds[i + 1]], tfs[bounds[i] : bounds[i + 1]])
            for i in np.flatnonzero(self.alive)
        ]  # fmt: skip


class LiveKeywordIndex:
    """BM25 over a catalog that changes under it; ``apply`` takes a catalog's changes."""

    def __init__(self, rows: Iterable[KeywordRow], generation: int) -> None:
        self.generation = generation
        self._scope_code: dict[str, int] = {}
        self._delta_rows: list[KeywordRow] = []
        self._set_main(_Segment.build(list(rows)))
        self._set_delta()

    def _codes_of(self, segment: _Segment) -> npt.NDArray[np.int32]:
        # Integer scope codes keep the per-query scope mask cheap, as in KeywordIndex.
        for scope in segment.scopes:
            self._scope_code.setdefault(scope, len(self._scope_code))
        codes = (self._scope_code[s] for s in segment.scopes)
        return np.fromiter(codes, np.int32, len(segment.scopes))

    def _set_main(self, main: _Segment) -> None:
        """O(main): only at start and at a merge."""
        self._main = main
        self._main_codes = self._codes_of(main)
        self._in_main = {cid: i for i, cid in enumerate(main.ids)}

    def _set_delta(self) -> None:
        """O(delta): at every change."""
        self._delta = _Segment.build(self._delta_rows)
        self._delta_codes = self._codes_of(self._delta)
        self._in_delta = {cid: i for i, cid in enumerate(self._delta.ids)}

    @property
    def _segments(self) -> tuple[_Segment, _Segment]:
        return self._main, self._delta

    @property
    def _codes(self) -> tuple[npt.NDArray[np.int32], npt.NDArray[np.int32]]:
        return self._main_codes, self._delta_codes

    def __len__(self) -> int:
        return len(self._in_main) + len(self._in_delta)

    def apply(self, removed: Iterable[str], added: Sequence[KeywordRow], generation: int) -> None:
        """Removals first, then additions: a chunk removed and added again is current.
        A chunk added again without a removal replaces its older row."""
        gone = set(removed) | {r.chunk_id for r in added}
        for cid in gone:
            i = self._in_main.pop(cid, None)
            if i is not None:
                self._main.alive[i] = False
        if gone & self._in_delta.keys():
            self._delta_rows = [r for r in self._delta_rows if r.chunk_id not in gone]
        self._delta_rows.extend(added)
        self.generation = generation
        dead = len(self._main.ids) - len(self._in_main)
        limit = max(_MERGE_MIN, len(self._main.ids) // 8)
        if len(self._delta_rows) > limit or dead > limit:
            self._set_main(_Segment.build(self._main.live_rows() + self._delta_rows))
            self._delta_rows = []
        self._set_delta()

    # -- statistics and scores -------------------------------------------------------
    def _stats(self) -> tuple[int, float]:
        n = len(self)
        total = sum(float(s.lengths[s.alive].sum()) for s in self._segments)
        return n, total / n if n else 0.0

    def _doc_freq(self, term: int | None) -> int:
        if term is None:
            return 0
        return sum(len(s.postings(term)[0]) for s in self._segments)

    def query_idf_sum(self, terms: Sequence[int | None]) -> float:
        n = len(self)
        return sum(bm25_idf(self._doc_freq(t), n) for t in terms)

    def _masks(self, scopes: frozenset[str] | None) -> list[npt.NDArray[np.bool_]]:
        if scopes is None:
            return [s.alive for s in self._segments]
        wanted = [self._scope_code[s] for s in scopes if s in self._scope_code]
        pairs = zip(self._segments, self._codes, strict=True)
        return [s.alive & np.isin(codes, wanted) for s, codes in pairs]

    def search(
        self, terms: Sequence[int | None], k: int, scopes: frozenset[str] | None = None
    ) -> list[tuple[str, float]]:
        n, mean = self._stats()
        known = [t for t in terms if t is not None]
        if not known or not n:
            return []
        doc_freq = {t: self._doc_freq(t) for t in set(known)}
        scored: list[npt.NDArray[np.float32]] = []
        for segment in self._segments:
            scores = np.zeros(len(segment.ids), np.float32)
            norm = K1 * ((1.0 - B) + B * segment.lengths / max(mean, 1e-9))
            for t in known:  # repeated query terms count again, as in KeywordIndex
                if not doc_freq[t]:
                    continue
                idf = np.float32(np.log1p((n - doc_freq[t] + 0.5) / (doc_freq[t] + 0.5)))
                rows, tf = segment.postings(t)
                scores[rows] += idf * (tf / (norm[rows] + tf))
            scored.append(scores)
        for scores, mask in zip(scored, self._masks(scopes), strict=True):
            scores[~mask] = 0.0
        ids = self._main.ids + self._delta.ids
        every = np.concatenate(scored)
        k = min(k, len(every))
        if k <= 0:
            return []
        top = np.argpartition(-every, k - 1)[:k]
        top = top[np.argsort(-every[top], kind="stable")]
        return [(ids[i], float(every[i])) for i in top if every[i] > 0]

    def coverage(self, terms: Sequence[int | None], scopes: frozenset[str] | None = None) -> float:
        """As :meth:`KeywordIndex.coverage`: the best chunk's IDF-weighted share of the
        distinct query terms."""
        distinct = list(dict.fromkeys(terms))
        n = len(self)
        doc_freq = {t: self._doc_freq(t) for t in distinct}
        total = sum(bm25_idf(doc_freq[t], n) for t in distinct)
        known = [t for t in distinct if t is not None and doc_freq[t]]
        if not known or total <= 0:
            return 0.0
        best = 0.0
        for segment, mask in zip(self._segments, self._masks(scopes), strict=True):
            mass = np.zeros(len(segment.ids), np.float32)
            for t in known:
                assert t is not None
                mass[segment.postings(t)[0]] += bm25_idf(doc_freq[t], n)
            mass[~mask] = 0.0
            best = max(best, float(mass.max(initial=0.0)))
        return min(1.0, best / total)
