"""Keyword tokens: Korean particles and compounds, English words."""

from __future__ import annotations

from agent.retrieval.tokenizer import tokenize


def test_particles_do_not_split_a_word_from_itself() -> None:
    # "서버가", "서버를", "서버에서" must all match the document word "서버".
    doc = set(tokenize("서버"))
    for query in ("서버가", "서버를", "서버에서", "서버의"):
        assert doc & set(tokenize(query)), query


def test_compounds_match_their_parts() -> None:
    assert set(tokenize("자연어처리")) & set(tokenize("자연어 처리"))
    assert set(tokenize("온콜 인수인계")) & set(tokenize("인수인계는"))


def test_english_is_lowercased_and_stopwords_dropped() -> None:
    tokens = tokenize("What is the Deploy window?")
    assert "deploy" in tokens and "window" in tokens
    assert "the" not in tokens


def test_mixed_and_empty() -> None:
    assert tokenize("") == []
    tokens = tokenize("REDIS_URL을 설정하세요")
    assert any(t.startswith("redis") for t in tokens)
