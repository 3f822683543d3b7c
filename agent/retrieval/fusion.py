"""Adaptive convex fusion of keyword (BM25) and dense (USE cosine) hits.

Why this and not RRF
--------------------
On KorQuAD, BM25 with the light tokenizer gets hit@1 0.895, while multilingual USE dense
gets only 0.52. Equal-weight RRF throws away score magnitudes and drops hit@1 to ~0.73.
A convex combination of *scores* keeps both the confidence of a keyword match and the
cosine. Both the keyword score and its weight are scaled by how much of the query the
keyword side actually matched:

    scale    = sum of IDF over ALL query terms (out-of-vocabulary terms at the maximum IDF)
    kw(d)    = min(1, bm25(d) / scale)          ~ IDF-weighted fraction of the query that d matches
    rel      = max_d kw(d)                       keyword match strength of the best hit
    w        = clip(W_BASE + W_SLOPE * rel, 0, W_MAX)
    fused(d) = w * kw(d) + (1 - w) * cos(d) + TIE_EPS * cos(d)
    (missing from the keyword list -> kw = 0; missing from the dense list -> lowest cosine seen)

Why ``scale``: with Lucene BM25 (k1=1.5, b=0.75), a term that occurs once in a document of
average length scores exactly its IDF. A document that matches the whole query therefore
gets kw ~ 1, and one that matches only a shared number or a Latin acronym gets kw ~ 0.1.
- A strong, specific keyword match (rel >= 0.27) gives w = 0.9, which is about the BM25 order.
- A weak or partial match gives dense most of the weight, so cross-language questions still
  work when the query shares a digit string or acronym with some documents.
- With no keyword hits at all (e.g. a Korean question over English documents), w = 0 and the
  fused order is exactly the dense order.

Constants were tuned on a held-out split: KorQuAD-dev articles 0-69 plus XQuAD-en articles
0-23, 500-char chunks, korean_tokenizer.tokenize and top-50 candidates from each side.
Constraint: hit@1 and hit@5 >= max(BM25, dense) on the tune split. Among the settings that
met it, the one with the best cross-language MRR was kept. On the remaining articles
and on the full sets, hit@1 and hit@5 are >= the better single retriever for both
languages; see REPORT.md.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping
from typing import TypeVar

Id = TypeVar("Id", bound=Hashable)

W_BASE: float = 0.1
"""Keyword weight at zero keyword-match strength."""
W_SLOPE: float = 3.0
"""Growth of the keyword weight with match strength rel (w reaches W_MAX at rel = 0.27)."""
W_MAX: float = 0.9
"""Cap on the keyword weight; dense always keeps >= 10 % so it can reorder near-ties."""
W_FALLBACK: float = 0.5
"""Fixed weight with max-normalised BM25, used only if the caller gives no ``query_idf_sum``."""
TIE_EPS: float = 1e-6
"""Tiny dense term so that exact score ties are broken by dense similarity."""


def bm25_idf(doc_freq: int, n_docs: int) -> float:
    """Lucene/bm25s IDF; a term absent from the index (doc_freq=0) gets the maximum IDF."""
    return math.log(1.0 + (n_docs - doc_freq + 0.5) / (doc_freq + 0.5))


def keyword_weight(rel: float) -> float:
    """Per-query keyword weight w in [0, W_MAX] as a function of match strength rel in [0, 1]."""
    return min(W_MAX, max(0.0, W_BASE + W_SLOPE * rel))


def fuse(
    keyword_hits: Mapping[Id, float],
    dense_hits: Mapping[Id, float],
    *,
    query_idf_sum: float | None = None,
    top_k: int | None = None,
) -> list[tuple[Id, float]]:
    """Fuse keyword and dense candidate lists into one ranking.

    Args:
        keyword_hits: {id: BM25 score} for the keyword top-N (N=50 was used in tuning);
            non-positive scores are ignored.
        dense_hits: {id: cosine similarity} for the dense top-N.
        query_idf_sum: the IDF mass of the whole query (``KeywordIndex.query_idf_sum``).
            If None, BM25 is max-normalised and a fixed weight ``W_FALLBACK`` is used:
            slightly worse, and not safe across languages.
        top_k: truncate the result (None = all candidates).

    Returns:
        [(id, fused_score)] sorted by fused score, descending. Pure function.
    """
    kw = {i: s for i, s in keyword_hits.items() if s > 0.0}
    if not kw and not dense_hits:
        return []
    dense_floor = min(dense_hits.values()) if dense_hits else 0.0
    if not kw:
        w, scale = 0.0, 1.0
    elif query_idf_sum is None or query_idf_sum <= 0.0:
        scale = max(kw.values())
        w = W_FALLBACK
    else:
        scale = query_idf_sum
        w = keyword_weight(min(1.0, max(kw.values()) / scale))

    fused: dict[Id, float] = {}
    for i in kw.keys() | dense_hits.keys():
        d = dense_hits.get(i, dense_floor)
        k = min(1.0, kw.get(i, 0.0) / scale)
        fused[i] = w * k + (1.0 - w) * d + TIE_EPS * d
    ranked = sorted(fused.items(), key=lambda x: x[1], reverse=True)
    return ranked[:top_k] if top_k is not None else ranked
