"""BM25 keyword index over the catalog's chunk terms, as a sparse matrix in numpy.

Scores follow bm25s' "lucene" method (Lucene IDF, k1=1.5, b=0.75), which the
fusion was tuned on; ``tests/test_keyword.py`` checks them against bm25s.
We build the matrix ourselves because bm25s builds from token strings in
Python: at 150k chunks that took 25 s and 3 GB for every re-ingest. Here the
catalog stores each chunk's term ids and counts, and a rebuild is a few
vectorised passes (about a second at that size). A query sums a few columns.

The index is saved beside the vectors with the catalog generation it reflects;
a stale or missing index is rebuilt on load.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from agent.retrieval.fusion import bm25_idf

K1 = 1.5
B = 0.75
_ARRAYS = "index.npz"
_ROWS = "rows.json"
_GENERATION = "generation"


@dataclass(frozen=True)
class KeywordRow:
    """One chunk as the keyword index sees it: distinct term ids, their counts, its length."""

    chunk_id: str
    scope: str
    length: int
    term_ids: npt.NDArray[np.int32]
    counts: npt.NDArray[np.float32]


class KeywordIndex:
    def __init__(
        self,
        chunk_ids: list[str],
        scopes: list[str],
        matrix: tuple[npt.NDArray[np.float32], npt.NDArray[np.int32], npt.NDArray[np.int64]],
        generation: int,
    ) -> None:
        self.chunk_ids = chunk_ids
        self.generation = generation
        # CSC by term: column t is data[indptr[t]:indptr[t + 1]] for chunk rows[same slice].
        self._data, self._rows, self._indptr = matrix
        self._scope_list = scopes
        names = sorted(set(scopes))
        self._scope_code = {name: i for i, name in enumerate(names)}
        # Integer codes keep the per-query scope mask cheap at 100k chunks.
        self._scope_codes = np.fromiter(
            (self._scope_code[s] for s in scopes), dtype=np.int32, count=len(scopes)
        )

    def __len__(self) -> int:
        return len(self.chunk_ids)

    @classmethod
    def empty(cls, generation: int = 0) -> KeywordIndex:
        matrix = (np.zeros(0, np.float32), np.zeros(0, np.int32), np.zeros(1, np.int64))
        return cls([], [], matrix, generation)

    @classmethod
    def build(cls, rows: Iterable[KeywordRow], n_terms: int, generation: int) -> KeywordIndex:
        ids: list[str] = []
        scopes: list[str] = []
        lengths: list[int] = []
        terms: list[npt.NDArray[np.int32]] = []
        counts: list[npt.NDArray[np.float32]] = []
        for row in rows:
            ids.append(row.chunk_id)
            scopes.append(row.scope)
            lengths.append(row.length)
            terms.append(row.term_ids)
            counts.append(row.counts)
        if not ids:
            return cls.empty(generation)
        term = np.concatenate(terms)
        tf = np.concatenate(counts)
        per_chunk = np.fromiter((len(t) for t in terms), dtype=np.int64, count=len(terms))
        chunk = np.repeat(np.arange(len(ids), dtype=np.int32), per_chunk)
        length = np.asarray(lengths, dtype=np.float32)
        n_docs = len(ids)
        doc_freq = np.bincount(term, minlength=n_terms)
        idf = np.log1p((n_docs - doc_freq + 0.5) / (doc_freq + 0.5)).astype(np.float32)
        norm = K1 * ((1.0 - B) + B * length / max(float(length.mean()), 1e-9))
        score = idf[term] * (tf / (norm[chunk] + tf))
        order = np.argsort(term, kind="stable")  # chunks stay in row order within a term
        indptr = np.zeros(n_terms + 1, dtype=np.int64)
        np.cumsum(doc_freq, out=indptr[1:])
        matrix = (score[order].astype(np.float32), chunk[order], indptr)
        return cls(ids, scopes, matrix, generation)

    def save(self, directory: Path) -> None:
        """Write to a temporary folder, then swap it in, so readers never see half an index."""
        tmp = directory.with_name(directory.name + ".tmp")
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
        np.savez(tmp / _ARRAYS, data=self._data, rows=self._rows, indptr=self._indptr)
        (tmp / _ROWS).write_text(
            json.dumps(
                {
                    "generation": self.generation,
                    "chunk_ids": self.chunk_ids,
                    "scopes": self._scope_list,
                }
            ),
            encoding="utf-8",
        )
        (tmp / _GENERATION).write_text(str(self.generation), encoding="utf-8")
        old = directory.with_name(directory.name + ".old")
        shutil.rmtree(old, ignore_errors=True)
        if directory.exists():
            directory.rename(old)
        tmp.rename(directory)
        shutil.rmtree(old, ignore_errors=True)

    @staticmethod
    def saved_generation(directory: Path) -> int | None:
        """The generation of the index saved in ``directory``, read without loading it."""
        try:
            return int((directory / _GENERATION).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None

    @classmethod
    def load(cls, directory: Path) -> KeywordIndex | None:
        try:
            rows = json.loads((directory / _ROWS).read_text(encoding="utf-8"))
            with np.load(directory / _ARRAYS, allow_pickle=False) as arrays:
                matrix = (arrays["data"], arrays["rows"], arrays["indptr"])
        except (OSError, ValueError, KeyError):
            return None  # missing or damaged: the caller rebuilds it from the catalog
        return cls(rows["chunk_ids"], rows["scopes"], matrix, int(rows["generation"]))

    def _doc_freq(self, term: int | None) -> int:
        if term is None or term + 1 >= len(self._indptr):
            return 0
        return int(self._indptr[term + 1] - self._indptr[term])

    def query_idf_sum(self, terms: Sequence[int | None]) -> float:
        """Sum of IDF over all query terms, unknown ones at the maximum IDF.

        It is about the BM25 score of a chunk that matches the whole query, so
        ``bm25 / query_idf_sum`` says how much of the query a chunk matches.
        """
        n = len(self.chunk_ids)
        return sum(bm25_idf(self._doc_freq(t), n) for t in terms)

    def coverage(self, terms: Sequence[int | None], scopes: frozenset[str] | None = None) -> float:
        """The largest IDF-weighted share of the distinct query terms that one chunk
        contains, in [0, 1]; terms the index has never seen count at the maximum IDF.

        Unlike ``bm25 / query_idf_sum`` it ignores how often and in how long a chunk a
        term occurs: a name mentioned once in a long passage counts in full.
        """
        distinct = list(dict.fromkeys(terms))
        n = len(self.chunk_ids)
        total = sum(bm25_idf(self._doc_freq(t), n) for t in distinct)
        known = [t for t in distinct if t is not None and self._doc_freq(t)]
        if not known or total <= 0:
            return 0.0
        mass = np.zeros(n, dtype=np.float32)
        for t in known:
            rows = self._rows[self._indptr[t] : self._indptr[t + 1]]
            mass[rows] += bm25_idf(len(rows), n)
        if scopes is not None:
            codes = [self._scope_code[s] for s in scopes if s in self._scope_code]
            mass[~np.isin(self._scope_codes, codes)] = 0.0
        return min(1.0, float(mass.max()) / total)

    def search(
        self, terms: Sequence[int | None], k: int, scopes: frozenset[str] | None = None
    ) -> list[tuple[str, float]]:
        """Top ``k`` chunks by BM25; repeated query terms count again, as in bm25s."""
        known = [t for t in terms if t is not None and self._doc_freq(t)]
        if not known or not self.chunk_ids:
            return []
        scores = np.zeros(len(self.chunk_ids), dtype=np.float32)
        for t in known:
            start, end = self._indptr[t], self._indptr[t + 1]
            scores[self._rows[start:end]] += self._data[start:end]  # rows are distinct per term
        if scopes is not None:
            codes = [self._scope_code[s] for s in scopes if s in self._scope_code]
            scores[~np.isin(self._scope_codes, codes)] = 0.0
        k = min(k, len(scores))
        top = np.argpartition(-scores, k - 1)[:k]
        top = top[np.argsort(-scores[top], kind="stable")]
        return [(self.chunk_ids[i], float(scores[i])) for i in top if scores[i] > 0]
