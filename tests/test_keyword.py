"""The keyword index scores exactly as bm25s' "lucene" BM25, which the fusion was tuned on."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import bm25s
import numpy as np

from agent.retrieval.keyword import KeywordIndex, KeywordRow
from agent.retrieval.tokenizer import tokenize

CORPUS = [
    "서울 지하철은 1974년에 처음 개통되었다. 현재 9개 노선이 운행된다.",
    "The Eiffel Tower was completed in 1889 for the World's Fair in Paris.",
    "김치는 배추와 고춧가루로 만드는 한국의 전통 발효 음식이다. 김치는 맛있다.",
    "Deploys are allowed Tuesday to Thursday; deploys on Friday need approval.",
    "부산은 한국 제2의 도시이며 항구 도시다. 부산 지하철도 있다.",
]
QUERIES = [
    "서울 지하철 개통",
    "when was the tower completed",
    "김치의 재료",
    "deploys friday",
    "없는단어",
]


def _index(scopes: list[str] | None = None) -> tuple[KeywordIndex, dict[str, int]]:
    vocab: dict[str, int] = {}
    rows = []
    for i, text in enumerate(CORPUS):
        counts = Counter(tokenize(text))
        ids = np.array([vocab.setdefault(t, len(vocab)) for t in counts], dtype=np.int32)
        rows.append(
            KeywordRow(
                f"c{i}",
                (scopes or ["public"] * len(CORPUS))[i],
                sum(counts.values()),
                ids,
                np.array(list(counts.values()), dtype=np.float32),
            )
        )
    return KeywordIndex.build(rows, len(vocab) + 3, generation=1), vocab


def test_scores_match_bm25s() -> None:
    index, vocab = _index()
    reference = bm25s.BM25(method="lucene", k1=1.5, b=0.75)
    reference.index([tokenize(t) for t in CORPUS], show_progress=False)
    for query in QUERIES:
        tokens = tokenize(query)
        ours = dict(index.search([vocab.get(t) for t in tokens], k=len(CORPUS)))
        known = [t for t in tokens if t in reference.vocab_dict]
        theirs = reference.get_scores(known) if known else np.zeros(len(CORPUS))
        for i, expected in enumerate(theirs):
            assert abs(ours.get(f"c{i}", 0.0) - float(expected)) < 1e-4, (query, i)


def test_unknown_terms_scopes_and_persistence(tmp_path: Path) -> None:
    index, vocab = _index(["public", "public", "hr", "public", "hr"])
    assert index.search([None, 10_000], k=3) == []
    kimchi = [vocab[t] for t in tokenize("김치 배추")]
    assert [cid for cid, _ in index.search(kimchi, k=3)] == ["c2"]
    assert index.search(kimchi, k=3, scopes=frozenset({"public"})) == []
    # An unknown word counts at the maximum IDF, so it lowers how much of the query matched.
    assert index.query_idf_sum([*kimchi, None]) > index.query_idf_sum(kimchi)
    index.save(tmp_path / "kw")
    loaded = KeywordIndex.load(tmp_path / "kw")
    assert loaded is not None and loaded.generation == 1
    assert loaded.search(kimchi, k=3) == index.search(kimchi, k=3)
    assert KeywordIndex.load(tmp_path / "missing") is None
