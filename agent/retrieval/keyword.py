"""BM25 keyword index over the catalog's chunk tokens (bm25s, sparse matrices).

bm25s precomputes every (term, chunk) score, so a query is a sum of a few
sparse columns: about a millisecond at 100k chunks. It has no incremental
update, so the index is rebuilt from the catalog after a batch changes it
(seconds at 100k chunks) and saved beside the vectors with the catalog
generation it reflects; a stale or missing index is rebuilt on load.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterable
from pathlib import Path

import bm25s
import numpy as np

from agent.retrieval.catalog import KeywordRow
from agent.retrieval.fusion import bm25_idf

_ROWS_FILE = "rows.json"


class KeywordIndex:
    def __init__(
        self,
        model: bm25s.BM25 | None = None,
        chunk_ids: list[str] | None = None,
        scopes: list[str] | None = None,
        generation: int = 0,
    ) -> None:
        self._model = model
        self.chunk_ids = chunk_ids or []
        # Documents per term (columns of bm25s' CSC score matrix), for the query's IDF mass.
        self._doc_freq = np.diff(model.scores["indptr"]) if model is not None else np.zeros(0)
        self._scope_list = list(scopes or [])
        names = sorted(set(self._scope_list))
        self._scope_code = {name: i for i, name in enumerate(names)}
        # Integer codes keep the per-query scope mask cheap at 100k chunks.
        self._scope_codes = np.fromiter(
            (self._scope_code[s] for s in self._scope_list),
            dtype=np.int32,
            count=len(self._scope_list),
        )
        self.generation = generation

    def __len__(self) -> int:
        return len(self.chunk_ids)

    @classmethod
    def build(cls, rows: Iterable[KeywordRow], generation: int) -> KeywordIndex:
        ids: list[str] = []
        scopes: list[str] = []
        corpus: list[list[str]] = []
        for row in rows:
            ids.append(row.chunk_id)
            scopes.append(row.scope)
            corpus.append(row.tokens)
        if not ids:
            return cls(generation=generation)
        model = bm25s.BM25()
        model.index(corpus, show_progress=False)
        return cls(model, ids, scopes, generation)

    def save(self, directory: Path) -> None:
        """Write to a temporary folder, then swap it in, so readers never see half an index."""
        tmp = directory.with_name(directory.name + ".tmp")
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
        if self._model is not None:
            self._model.save(str(tmp), show_progress=False)
        (tmp / _ROWS_FILE).write_text(
            json.dumps(
                {
                    "generation": self.generation,
                    "chunk_ids": self.chunk_ids,
                    "scopes": self._scope_list,
                }
            ),
            encoding="utf-8",
        )
        old = directory.with_name(directory.name + ".old")
        shutil.rmtree(old, ignore_errors=True)
        if directory.exists():
            directory.rename(old)
        tmp.rename(directory)
        shutil.rmtree(old, ignore_errors=True)

    @classmethod
    def load(cls, directory: Path) -> KeywordIndex | None:
        rows_file = directory / _ROWS_FILE
        if not rows_file.exists():
            return None
        try:
            rows = json.loads(rows_file.read_text(encoding="utf-8"))
            model = (
                bm25s.BM25.load(str(directory), show_progress=False) if rows["chunk_ids"] else None
            )
        except (OSError, ValueError, KeyError):
            return None  # damaged: the caller rebuilds it from the catalog
        return cls(model, rows["chunk_ids"], rows["scopes"], int(rows["generation"]))

    def query_idf_sum(self, tokens: list[str]) -> float:
        """Sum of IDF over all query tokens, unknown tokens at the maximum IDF.

        It is the BM25 score a chunk would get for matching the whole query once,
        so ``bm25 / query_idf_sum`` says how much of the query a chunk matches.
        """
        n = len(self.chunk_ids)
        vocab = self._model.vocab_dict if self._model is not None else {}
        total = 0.0
        for token in tokens:
            term = vocab.get(token)
            df = int(self._doc_freq[term]) if term is not None and term < len(self._doc_freq) else 0
            total += bm25_idf(df, n)
        return total

    def search(
        self, tokens: list[str], k: int, scopes: frozenset[str] | None = None
    ) -> list[tuple[str, float]]:
        """Top ``k`` chunks by BM25 score; chunks with no query term are never returned."""
        if self._model is None or not tokens:
            return []
        known = [t for t in tokens if t in self._model.vocab_dict]
        if not known:
            return []
        mask = None
        if scopes is not None:
            codes = [self._scope_code[s] for s in scopes if s in self._scope_code]
            mask = np.isin(self._scope_codes, codes).astype(np.float32)
        scores = self._model.get_scores(known, weight_mask=mask)
        k = min(k, len(scores))
        top = np.argpartition(-scores, k - 1)[:k]
        top = top[np.argsort(-scores[top], kind="stable")]
        return [(self.chunk_ids[i], float(scores[i])) for i in top if scores[i] > 0]
