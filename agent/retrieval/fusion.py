"""Adaptive convex fusion of keyword (BM25) and dense (USE) hits, safe for mixed-language indexes.

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
A strong, specific keyword match (rel >= 0.27) gives w = 0.9, about the BM25 order; a weak
one gives dense most of the weight. With no keyword hits at all, w = 0 and the fused order
is exactly the dense order.

Mixed-language indexes (``query_language`` + ``languages``)
-----------------------------------------------------------
Keyword search is blind to documents in the other language: a Korean question can never
match an English passage's words, so such a passage always has kw = 0 (bar shared acronyms
and numbers). In a Korean+English index, a Korean question whose answer is in English then
loses to Korean chunks that merely share generic words with it (kw 0.1-0.2). Measured on
KorQuAD-dev + XQuAD-en in ONE index (benchmarks/data/crosslingual.json, 150 questions each
way, hit@1): dense 0.49 / 0.39, the language-blind fusion 0.18 / 0.29.

So, when the caller says which language the query and each candidate are in:

* ``rel`` is taken over candidates in the query's language only;
* if that match is weak (rel <= XLANG_MAX_REL), documents in the other language get a
  keyword *credit*: they are scored as if they had matched the query
  ``XLANG_CREDIT`` (70 %) as well as the best same-language chunk did, rising to
  ``XLANG_CREDIT + XLANG_BONUS`` (90 %) when the best other-language cosine beats the
  cosine of that keyword winner by ``XLANG_MARGIN`` (0.1) or more - dense then decides
  between the two languages;
* in that case the best other-language dense candidate is also guaranteed a place in the
  top ``XLANG_GUARANTEED_RANK`` results.

A strong same-language keyword match (rel > 0.25: over 90 % of monolingual questions, about
5 % of cross-language ones) leaves the ranking as before.

Measured on the mixed index (all 964 KorQuAD-dev + 240 XQuAD-en paragraphs, 500-char
chunks, top-50 candidates each side; hit@1 / hit@5 over all questions):

    set                       BM25         dense        old fusion   this fusion
    ko question -> en answer  0.000/0.013  0.493/0.700  0.180/0.347  0.473/0.753
    en question -> ko answer  0.013/0.087  0.393/0.780  0.293/0.600  0.393/0.760
    KorQuAD (ko -> ko)        0.890/0.982  0.515/0.756  0.888/0.981  0.883/0.976
    XQuAD-en (en -> en)       0.931/0.985  0.796/0.938  0.941/0.992  0.939/0.988

It is a trade-off, not a free win: the credit also reaches the ~7 % of monolingual
questions whose keyword match is weak, which costs ~0.5 pt of monolingual hit@1 in a mixed
index, while cross-language questions gain 10-30 pt. Without language information (or in a
one-language index, where no candidate is "other") the function is exactly the old fusion.

Constants were tuned on a held-out split: KorQuAD-dev articles 0-69, XQuAD-en articles
0-23 and the cross-language questions about those articles. On the other half the
cross-language results are 1-4 pt below dense (70-83 questions per direction, so within
noise); no setting among ~1,000 tried kept monolingual hit@1 within 0.3 pt of the old
fusion while matching dense cross-language.
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

XLANG_MAX_REL: float = 0.25
"""Other-language documents get keyword credit only if the best same-language match is this
weak. Cross-language questions: rel median 0.14, 90th percentile 0.22; monolingual: 10th
percentile 0.27."""
XLANG_CREDIT: float = 0.7
"""Share of ``rel`` credited to other-language documents when dense gives no evidence."""
XLANG_BONUS: float = 0.2
"""Extra share when the best other-language cosine beats the keyword winner's cosine."""
XLANG_MARGIN: float = 0.1
"""Cosine margin at which the full bonus applies (linear from 0)."""
XLANG_GUARANTEED_RANK: int = 2
"""While the credit applies, the best other-language dense candidate ranks at least this high."""
BRIDGE_WEIGHT: float = 0.15
"""Added to an other-language document's fused score, times the share of the question's
words in the other language (glossary pairs, loanwords and names: 루터 "luther") that it
matches, IDF-weighted, while the same-language keyword match is weak. Those words are
scored apart from the question's own: mixed with them at any weight, the Korean
question's many bigrams outscored a page's "Luther" and "Wittenberg", and the credit
above, the same for every other-language document, hid what they matched."""


def bm25_idf(doc_freq: int, n_docs: int) -> float:
    """Lucene/bm25s IDF; a term absent from the index (doc_freq=0) gets the maximum IDF."""
    return math.log(1.0 + (n_docs - doc_freq + 0.5) / (doc_freq + 0.5))


def keyword_weight(rel: float) -> float:
    """Per-query keyword weight w in [0, W_MAX] as a function of match strength rel in [0, 1]."""
    return min(W_MAX, max(0.0, W_BASE + W_SLOPE * rel))


def cross_language_credit(rel: float, winner_cosine: float, best_other_cosine: float) -> float:
    """Keyword score credited to other-language documents (0 when the keyword match is strong)."""
    if rel > XLANG_MAX_REL:
        return 0.0
    evidence = min(1.0, max(0.0, (best_other_cosine - winner_cosine) / XLANG_MARGIN))
    return rel * (XLANG_CREDIT + XLANG_BONUS * evidence)


def fuse(
    keyword_hits: Mapping[Id, float],
    dense_hits: Mapping[Id, float],
    *,
    query_idf_sum: float | None = None,
    top_k: int | None = None,
    query_language: str | None = None,
    languages: Mapping[Id, str] | None = None,
    bridged: Mapping[Id, float] | None = None,
    bridged_idf_sum: float = 0.0,
) -> list[tuple[Id, float]]:
    """Fuse keyword and dense candidate lists into one ranking.

    Args:
        keyword_hits: {id: BM25 score} for the keyword top-N (N=50 was used in tuning);
            non-positive scores are ignored.
        dense_hits: {id: cosine similarity} for the dense top-N.
        query_idf_sum: the IDF mass of the whole query (``KeywordIndex.query_idf_sum``).
            If None, BM25 is max-normalised and a fixed weight ``W_FALLBACK`` is used:
            slightly worse, not safe across languages, and the language inputs are ignored.
        top_k: truncate the result (None = all candidates).
        query_language: language code of the query (``agent.wording.language.detect_language``).
        languages: {id: language code} of the candidates, detected the same way at ingest.
            Candidates missing from it count as the query's language. With both language
            inputs, documents in another language are protected from losing to weak
            same-language keyword matches (see the module docstring); without them the
            result is the language-blind fusion.
        bridged: {id: BM25 score} for the question's words in the other language alone,
            and ``bridged_idf_sum`` their IDF mass (:data:`BRIDGE_WEIGHT`); used with the
            language inputs only.

    Returns:
        [(id, fused_score)] sorted by fused score, descending. Pure function.
    """
    kw = {i: s for i, s in keyword_hits.items() if s > 0.0}
    if not kw and not dense_hits:
        return []
    dense_floor = min(dense_hits.values()) if dense_hits else 0.0
    # Candidates in a fixed order (the keyword list's, then the dense list's), which equal
    # scores keep: iterating a set of ids, ties (a document ingested twice) came out in an
    # order that changed with every process, and so did the answer.
    candidates = [*kw, *(i for i in dense_hits if i not in kw)]
    other: dict[Id, None] = {}  # an ordered set
    bridge: dict[Id, float] = {}
    if query_language is not None and languages is not None:
        if bridged and bridged_idf_sum > 0.0:
            bridge = {
                i: min(1.0, s / bridged_idf_sum)
                for i, s in bridged.items()
                if s > 0.0 and languages.get(i, query_language) != query_language
            }
            candidates += [i for i in bridge if i not in kw and i not in dense_hits]
        other = dict.fromkeys(
            i for i in candidates if languages.get(i, query_language) != query_language
        )

    credit = 0.0
    weak = True  # the same-language keyword match, for the bridge
    if not kw:
        w, scale = 0.0, 1.0
    elif query_idf_sum is None or query_idf_sum <= 0.0:
        scale = max(kw.values())
        w = W_FALLBACK
        other = {}
    else:
        scale = query_idf_sum
        same = {i: s for i, s in kw.items() if i not in other}
        rel = min(1.0, max(same.values()) / scale) if same else 0.0
        w = keyword_weight(rel)
        weak = rel <= XLANG_MAX_REL
        other_cosines = [dense_hits[i] for i in other if i in dense_hits]
        if other_cosines and rel > 0.0:
            winner = max(same, key=lambda i: same[i])
            credit = cross_language_credit(
                rel, dense_hits.get(winner, dense_floor), max(other_cosines)
            )

    fused: dict[Id, float] = {}
    for i in candidates:
        d = dense_hits.get(i, dense_floor)
        k = min(1.0, kw.get(i, 0.0) / scale)
        if i in other:
            k = max(k, credit)
        fused[i] = w * k + (1.0 - w) * d + TIE_EPS * d
        if weak and i in bridge:
            fused[i] += BRIDGE_WEIGHT * bridge[i]
    ranked = sorted(fused.items(), key=lambda x: x[1], reverse=True)
    if credit > 0.0:
        ranked = _guarantee_rank(ranked, dense_hits, other, XLANG_GUARANTEED_RANK)
    return ranked[:top_k] if top_k is not None else ranked


def _guarantee_rank(
    ranked: list[tuple[Id, float]],
    dense_hits: Mapping[Id, float],
    other: Mapping[Id, None],
    rank: int,
) -> list[tuple[Id, float]]:
    """Move the best other-language dense candidate up to ``rank`` (1-based) if it is lower.

    It takes the score of the entry it displaces, so scores stay in descending order.
    """
    best = max((i for i in other if i in dense_hits), key=lambda i: dense_hits[i])
    position = next(p for p, (i, _) in enumerate(ranked) if i == best)
    target = rank - 1
    if position <= target:
        return ranked
    moved = [*ranked[:target], (best, ranked[target][1]), *ranked[target:position]]
    return moved + ranked[position + 1 :]
