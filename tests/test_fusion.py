"""Hybrid fusion: dense order without keywords, and cross-language safety in a mixed index."""

from __future__ import annotations

from pathlib import Path

from agent.retrieval.catalog import DocumentRecord
from agent.retrieval.catalog_sqlite import SqliteCatalog
from agent.retrieval.fusion import XLANG_GUARANTEED_RANK, fuse
from agent.retrieval.types import Chunk

# A Korean question over a Korean+English index. Its answer is the English chunk "en-answer":
# dense ranks it first. Korean chunks share only generic words with the question
# (weak BM25 scores against an IDF mass of 20, i.e. rel = 0.2).
DENSE = {
    "en-answer": 0.46,
    "ko-generic-1": 0.30,
    "en-other": 0.28,
    "ko-generic-2": 0.26,
    "ko-generic-3": 0.22,
}
KEYWORD = {"ko-generic-1": 4.0, "ko-generic-2": 3.8, "ko-generic-3": 3.5, "ko-generic-4": 3.2}
LANGS = {
    "en-answer": "en",
    "en-other": "en",
    "ko-generic-1": "ko",
    "ko-generic-2": "ko",
    "ko-generic-3": "ko",
    "ko-generic-4": "ko",
}


def _ids(ranked: list[tuple[str, float]]) -> list[str]:
    return [i for i, _ in ranked]


def test_no_keyword_hits_gives_exactly_the_dense_order() -> None:
    dense_order = sorted(DENSE, key=lambda i: DENSE[i], reverse=True)
    assert _ids(fuse({}, DENSE, query_idf_sum=20.0)) == dense_order
    assert _ids(fuse({}, DENSE, query_idf_sum=20.0, query_language="ko", languages=LANGS)) == (
        dense_order
    )


def test_weak_same_language_keywords_do_not_bury_the_top_dense_other_language_chunk() -> None:
    blind = _ids(fuse(KEYWORD, DENSE, query_idf_sum=20.0))
    aware = _ids(fuse(KEYWORD, DENSE, query_idf_sum=20.0, query_language="ko", languages=LANGS))
    # Without languages, every Korean chunk that shares a generic word outranks the answer.
    assert blind.index("en-answer") >= 3
    # With them, the English answer is first: its cosine beats the keyword winner's by > 0.1.
    assert aware[0] == "en-answer"


def test_best_other_language_dense_chunk_is_guaranteed_a_top_place() -> None:
    # Here dense barely prefers the English chunk, so the credit alone would not lift it.
    dense = {**DENSE, "en-answer": 0.31}
    ranked = fuse(KEYWORD, dense, query_idf_sum=20.0, query_language="ko", languages=LANGS)
    assert _ids(fuse(KEYWORD, dense, query_idf_sum=20.0)).index("en-answer") >= 3
    assert _ids(ranked).index("en-answer") < XLANG_GUARANTEED_RANK
    scores = [s for _, s in ranked]
    assert scores == sorted(scores, reverse=True)


def test_strong_same_language_keyword_match_keeps_the_language_blind_ranking() -> None:
    strong = {**KEYWORD, "ko-generic-1": 12.0}  # rel = 0.6: the question's words are all there
    blind = fuse(strong, DENSE, query_idf_sum=20.0)
    aware = fuse(strong, DENSE, query_idf_sum=20.0, query_language="ko", languages=LANGS)
    assert aware == blind
    assert aware[0][0] == "ko-generic-1"


def test_without_language_information_the_fusion_is_language_blind() -> None:
    blind = fuse(KEYWORD, DENSE, query_idf_sum=20.0)
    assert fuse(KEYWORD, DENSE, query_idf_sum=20.0, query_language="ko") == blind
    assert fuse(KEYWORD, DENSE, query_idf_sum=20.0, languages=LANGS) == blind
    # A one-language index has no "other" candidates: same ranking as before.
    only_ko = {i: "ko" for i in LANGS}
    assert fuse(KEYWORD, DENSE, query_idf_sum=20.0, query_language="ko", languages=only_ko) == (
        blind
    )


def test_catalog_stores_and_returns_chunk_languages(tmp_path: Path) -> None:
    catalog = SqliteCatalog(tmp_path / "catalog.sqlite3")
    try:
        chunks = [
            Chunk(f"d:h:{n}", "d", n, text, "/x.md", "x")
            for n, text in enumerate(["백업은 30일 동안 보관됩니다.", "Backups are kept 30 days."])
        ]
        record = DocumentRecord("d", "/x.md", "public", "x", "h", 2, "p", 0.0)
        catalog.replace_document(record, chunks, [["백업"], ["backup"]], ["ko", "en"])
        assert catalog.chunk_languages(["d:h:0", "d:h:1", "missing"]) == {
            "d:h:0": "ko",
            "d:h:1": "en",
        }
    finally:
        catalog.close()


def test_equal_scores_keep_the_order_the_lists_gave() -> None:
    """The same text in several documents scores the same: those hits keep the keyword
    list's order, then the dense list's, in every process (not a set's hash order, which
    changed with each worker, and with it the answer)."""
    same = {f"copy-{n}": 2.0 for n in (7, 3, 9, 1, 8, 2, 6, 4, 5, 0)}
    close = {f"near-{n}": 0.4 for n in (5, 1, 4, 2, 3)}
    ranked = _ids(fuse(same, close, query_idf_sum=4.0))
    assert ranked == [*same, *close]


def test_an_other_language_page_that_names_the_questions_names_rises() -> None:
    """A Korean question's names in Latin letters (루터 "luther", scored apart from its
    own words) lift the English page that holds them over one the encoder liked better;
    without the bridge the encoder's order stands, and a strong same-language keyword
    match is left as it was."""
    dense = {"en-answer": 0.40, "en-other": 0.46, "ko-generic-1": 0.30}
    bridged = {"en-answer": 6.0, "en-other": 0.5, "ko-generic-1": 6.0}
    args = {"query_idf_sum": 20.0, "query_language": "ko", "languages": LANGS}
    assert _ids(fuse(KEYWORD, dense, **args))[0] == "en-other"  # type: ignore[arg-type]
    ranked = _ids(fuse(KEYWORD, dense, **args, bridged=bridged, bridged_idf_sum=6.0))  # type: ignore[arg-type]
    assert ranked[:2] == ["en-answer", "en-other"]
    strong = {"ko-generic-1": 15.0}
    plain = fuse(strong, dense, **args)  # type: ignore[arg-type]
    assert fuse(strong, dense, **args, bridged=bridged, bridged_idf_sum=6.0) == plain  # type: ignore[arg-type]
