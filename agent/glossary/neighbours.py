"""The knowledge base's English words by meaning: a bridge for the Korean words no pair lists.

A Korean question about an English page shares none of its words, and a team's glossary
names only its own terms. The multilingual encoder knows common words in both languages:
among the knowledge base's English words, 보안's nearest is "security" (cosine 0.87), 상태's
"state" and "status" (0.87, 0.85), 노트북's "laptop" (0.86). Below about 0.8 the nearest
word is as often a near miss ("submit" beside 첨부), so only a close neighbour counts, and
only in the keyword query, weighted as a counterpart (the lead judge, which decides what is
"found", does not trust it: used there it gave confident wrong answers).

Measured on the team handbook and ``benchmarks/crosslingual_eval.py`` (no LLM): with a bar
of 0.85, a Korean question found the status page it asked for (handbook ko-en 2 -> 3 of
10), cross-language answers held the gold 0.55 -> 0.57 and cited it 0.61 -> 0.64, with no
answer lost; at 0.8 and 0.75 a held-out handbook answer was lost.

The words' vectors live beside the chunks' in the vector store (a collection of their own),
written at ingest for the words not stored yet, so a search asks one query of the store and
every host of a team shares them.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Sequence

from agent.retrieval.embeddings import Embedder, QueryMemo
from agent.retrieval.tokenizer import inflected
from agent.retrieval.vectors import VectorStore, VectorStoreError

log = logging.getLogger(__name__)

NEAR = 0.85
# Words as near as the nearest one, less this, are its neighbours too (상태: state, status).
_TIED = 0.03
_MOST = 3
_BATCH = 512

Known = Callable[[Sequence[str]], Sequence[int | None]]


def bridgeable(word: str) -> bool:
    """An English word of the knowledge base worth a vector: letters only, three or more."""
    return word.isascii() and word.isalpha() and len(word) >= 3


def _asked(word: str) -> bool:
    """A Korean word of a question that may have an English neighbour: not a verb form."""
    return not word.isascii() and len(word) > 1 and not inflected(word)


class WordNeighbours:
    """The English words of a knowledge base, by meaning, in a vector store collection."""

    def __init__(self, store: VectorStore, embedder: Embedder) -> None:
        self._store = store
        self._embedder = embedder
        # A question's words recur (보안, 채널): remembered apart from whole questions.
        self._asked = QueryMemo()

    def sync(self, vocabulary: Iterable[str]) -> int:
        """Store the vectors of the vocabulary's English words not stored yet; how many."""
        stored = self._store.ids()
        new = sorted({w for w in vocabulary if bridgeable(w)} - stored)
        for start in range(0, len(new), _BATCH):
            batch = new[start : start + _BATCH]
            self._store.put(batch, self._embedder.embed_documents(batch))
        return len(new)

    def nearest(self, words: Sequence[str], known: Known) -> dict[str, tuple[str, ...]]:
        """For each Korean word of ``words``, the English words of the knowledge base at
        cosine ``NEAR`` or more (``known``: the catalog's term ids, None for a word no
        document uses any more). A store that fails gives none: the search goes on
        without them."""
        asked = [w for w in dict.fromkeys(words) if _asked(w)]
        if not asked:
            return {}
        try:
            vectors = self._asked.many(asked, self._embedder.embed_documents)
            found = self._store.query_many(vectors, _MOST)
        except VectorStoreError as exc:
            log.warning("word neighbours unavailable, searching without them: %s", exc)
            return {}
        near: dict[str, list[str]] = {}
        for word, hits in zip(asked, found, strict=True):
            best = max((cosine for _, cosine in hits), default=0.0)
            if best >= NEAR:
                near[word] = [w for w, cosine in hits if cosine >= max(NEAR, best - _TIED)]
        candidates = sorted({w for ws in near.values() for w in ws})
        used = {
            w for w, term in zip(candidates, known(candidates), strict=True) if term is not None
        }
        bridged = {k: tuple(w for w in ws if w in used) for k, ws in near.items()}
        return {k: ws for k, ws in bridged.items() if ws}
