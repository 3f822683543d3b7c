"""The answer cache finds an answer: normalised questions, exact and semantic hits, scopes,
vector dimensions and vetoes, on each backend (a real SQLite file, and a real Redis with
a SQLite fallback), and the agent's veto of a hit whose subject differs. Expiry and
invalidation are in test_cache_invalidation.py, storing and sharing in
test_cache_storage.py, what only Redis does in test_cache_redis.py."""

from __future__ import annotations

from typing import Any

import pytest

from agent.cache import AnswerCache, CachedAnswer, normalize_question
from agent.nodes.entry import same_subject
from agent.retrieval.embeddings import UniversalSentenceEncoder
from tests.support.cache_support import DOCS, SCOPE, CacheBackend, FakeClock, other, store, vec

pytest_plugins = ("tests.support.cache_fixtures",)


# -- normalisation (no backend) -------------------------------------------------------
@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("How long are backups kept?", "how long are backups kept"),
        ("  How   long\tare backups\nkept ?!  ", "how long are backups kept"),
        # ideographic space, full-width ？
        ("백업은　며칠  보관하나요？", "백업은 며칠 보관하나요"),
        # full-width Latin, 。
        ("ＶＰＮ 접속 방법을 알려주세요。", "vpn 접속 방법을 알려주세요"),
        ("ﾊﾞｯｸｱｯﾌﾟ！", "バックアップ"),  # half-width katakana, full-width ！
        ("What is v2.0?", "what is v2.0"),  # only trailing punctuation goes
        ("?!.", ""),
    ],
)
def test_normalize_question(raw: str, expected: str) -> None:
    assert normalize_question(raw) == expected


# -- every backend: exact and semantic ------------------------------------------------
def test_korean_full_width_variant_is_an_exact_hit(cache: AnswerCache) -> None:
    store(cache, "백업은 며칠 보관하나요?")
    hit = cache.lookup("  백업은　며칠 보관하나요？？", None, SCOPE)
    assert hit is not None and hit.similarity == 1.0
    assert hit.question == "백업은 며칠 보관하나요?"  # as first asked


def test_exact_hit_round_trips_the_entry(cache: AnswerCache, clock: FakeClock) -> None:
    sources: list[dict[str, Any]] = [
        {"title": "백업 정책", "link": "https://wiki/backup", "page": None, "score": 0.5}
    ]
    cache.store("How long are backups kept?", vec(1.0), SCOPE, "7일", sources, "ko", DOCS)
    clock.now += 10
    hit = cache.lookup("how long are backups kept", None, SCOPE)
    assert hit == CachedAnswer(
        question="How long are backups kept?",
        answer="7일",
        sources=sources,
        language="ko",
        similarity=1.0,
        created_at=clock.now - 10,
        doc_versions=DOCS,
    )
    # The exact match wins even when the vector points elsewhere.
    hit = cache.lookup("How long are backups kept?", other(), SCOPE)
    assert hit is not None and hit.similarity == 1.0


def test_semantic_hit_at_threshold_and_miss_below(cache: AnswerCache) -> None:
    store(cache, "stored question", vec(1.0))
    hit = cache.lookup("reworded question", vec(0.95), SCOPE)
    assert hit is not None and hit.question == "stored question"
    assert hit.similarity == pytest.approx(0.95, abs=1e-6)
    assert cache.lookup("reworded question", vec(0.85), SCOPE) is None
    assert cache.lookup("reworded question", other(), SCOPE) is None
    assert cache.lookup("reworded question", None, SCOPE) is None
    # (1, dim) rows and unnormalised vectors are accepted.
    assert cache.lookup("reworded question", 3.0 * vec(0.95)[None, :], SCOPE) is not None


def test_semantic_returns_the_best_match(backend: CacheBackend) -> None:
    cache = backend.open(threshold=0.5)
    store(cache, "far", vec(0.6), answer="far")
    store(cache, "near", vec(0.99), answer="near")
    store(cache, "middle", vec(0.8), answer="middle")
    hit = cache.lookup("query", vec(1.0), SCOPE)
    assert hit is not None and hit.answer == "near"
    # Above the default threshold too, in a scope of its own.
    cache = backend.open()
    scope = "slack:T9|eng"
    store(cache, "closer", vec(0.99), scope=scope, answer="closer")
    store(cache, "further", vec(0.93), scope=scope, answer="further")
    store(cache, "far", vec(0.6), scope=scope, answer="far")
    hit = cache.lookup("query", vec(1.0), scope)
    assert hit is not None and hit.answer == "closer"


def test_real_encoder_paraphrases(cache: AnswerCache, embedder: UniversalSentenceEncoder) -> None:
    """The default embedder (multilingual USE) at the default 0.9 threshold: only
    near-verbatim rewordings hit; real paraphrases score 0.67-0.88 and miss."""
    for question in ("백업은 며칠 보관하나요?", "How do I connect to the VPN?"):
        store(cache, question, embedder.embed_query(question))

    def sim(a: str, b: str) -> float:
        return float(embedder.embed_query(a) @ embedder.embed_query(b))

    # Same words, one more: well above 0.9 (measured 0.984 and 0.978).
    for question in ("백업은 며칠 동안 보관하나요?", "How can I connect to VPN?"):
        hit = cache.lookup(question, embedder.embed_query(question), SCOPE)
        assert hit is not None and hit.similarity >= 0.95, question
    # A real paraphrase falls short of 0.9 (measured 0.879): a miss, never a wrong answer.
    paraphrase = "백업 보관 기간은 며칠인가요?"
    assert sim("백업은 며칠 보관하나요?", paraphrase) < 0.9
    assert cache.lookup(paraphrase, embedder.embed_query(paraphrase), SCOPE) is None
    # Same shape, different subject (measured 0.544): must miss.
    logs = "로그는 며칠 보관하나요?"
    assert sim("백업은 며칠 보관하나요?", logs) < 0.7
    assert cache.lookup(logs, embedder.embed_query(logs), SCOPE) is None


def test_scope_isolation(cache: AnswerCache) -> None:
    store(cache, "What is the payroll date?", vec(1.0), scope="slack:T1|hr", answer="25th")
    assert cache.lookup("What is the payroll date?", vec(1.0), "slack:T1|public") is None
    assert cache.lookup("payroll?", vec(1.0), "slack:T2|hr") is None
    hit = cache.lookup("payroll?", vec(1.0), "slack:T1|hr")
    assert hit is not None and hit.answer == "25th"
    # Same question in two scopes: two entries, each answered in its own scope.
    store(cache, "What is the payroll date?", vec(1.0), scope="slack:T1|public", answer="ask HR")
    hit = cache.lookup("What is the payroll date?", None, "slack:T1|public")
    assert hit is not None and hit.answer == "ask HR"
    hit = cache.lookup("What is the payroll date?", None, "slack:T1|hr")
    assert hit is not None and hit.answer == "25th"
    # Vectors of another dimension in that scope are compared with their own kind only.
    store(cache, "sixteen", vec(1.0, dim=16), scope="slack:T1|hr", answer="sixteen")
    hit = cache.lookup("query", vec(0.97, dim=16), "slack:T1|hr")
    assert hit is not None and hit.answer == "sixteen"


def test_vectors_of_another_dimension_are_not_compared(cache: AnswerCache) -> None:
    store(cache, "eight", vec(1.0, dim=8))
    store(cache, "sixteen", vec(1.0, dim=16), answer="sixteen")
    hit = cache.lookup("query", vec(0.97, dim=16), SCOPE)
    assert hit is not None and hit.answer == "sixteen"


def test_a_vetoed_semantic_match_falls_through_to_the_next(cache: AnswerCache) -> None:
    store(cache, "connect to the VPN", vec(0.99), answer="wrong question")
    store(cache, "how to connect to the VPN", vec(0.95), answer="right question")

    def agrees(question: str, cached: str) -> bool:
        return cached.startswith("how")

    hit = cache.lookup("how do I connect to the VPN", vec(1.0), SCOPE, agrees=agrees)
    assert hit is not None and hit.answer == "right question"
    assert cache.lookup("anything", vec(1.0), SCOPE, agrees=lambda q, c: False) is None
    # A veto only skips: the vetoed entry is still there for other questions.
    assert cache.lookup("connect to the VPN", vec(1.0), SCOPE).answer == "wrong question"  # type: ignore[union-attr]


def test_questions_that_normalise_to_nothing_are_not_stored(
    cache: AnswerCache, backend: CacheBackend
) -> None:
    with pytest.raises(TypeError):  # a source that is not JSON is the caller's bug
        cache.store("q", None, SCOPE, "a", [{"when": object()}], "en", {})
    cache.store("?!", vec(1.0), SCOPE, "a", [], "en", {})  # punctuation only: not stored
    assert backend.entries() == 0
    assert cache.lookup("", vec(1.0), SCOPE) is None


@pytest.mark.parametrize(
    ("question", "cached", "same"),
    [
        ("How do I connect to the VPN?", "How do I disconnect from the VPN?", False),
        ("프로덕션 DB 백업은 며칠 보관하나요?", "스테이징 DB 백업은 며칠 보관하나요?", False),
        ("How long are Postgres backups retained?", "How long are MySQL backups retained?", False),
        ("백업은 며칠 보관하나요?", "백업은 며칠 동안 보관하나요?", True),
        ("휴가 신청은 어떻게 하나요?", "휴가 신청 어떻게 해요?", True),
    ],
)
def test_the_agent_vetoes_semantic_hits_with_a_swapped_term(
    question: str, cached: str, same: bool
) -> None:
    assert same_subject(question, cached) is same
