"""Token counting, the token plan a context window is shared by, and fitting texts into
a budget (``agent/memory/budget.py``)."""

from __future__ import annotations

import random

import pytest

from agent.memory.budget import TokenPlan, count_tokens, fit_texts


def test_count_tokens_rule() -> None:
    assert count_tokens("") == 0
    assert count_tokens("   \n") == 0
    assert count_tokens("결제팀") == 3  # one per Hangul syllable
    assert count_tokens("I'm on the team") == 4  # one per short word
    assert count_tokens("payments") == 2  # ceil(8 / 4)
    assert count_tokens("API를") == 2
    assert count_tokens("The quick brown fox jumps over the lazy dog.") == 12
    korean = "Postgres 백업은 며칠 동안 보관되나요?"
    assert count_tokens(korean * 3) == 3 * count_tokens(korean)


@pytest.mark.parametrize("context", [1, 7, 100, 4096, 8000, 12800, 12801, 128_000])
def test_token_plan_sums_to_the_context(context: int) -> None:
    plan = TokenPlan.for_context(context)
    assert plan.total == context
    assert min(vars(plan).values()) >= 0


def test_token_plan_has_the_seed_proportions() -> None:
    assert TokenPlan.for_context(12800) == TokenPlan(640, 1280, 6400, 1920, 640, 1920)
    assert TokenPlan.for_context() == TokenPlan(400, 800, 4000, 1200, 400, 1200)
    with pytest.raises(ValueError):
        TokenPlan.for_context(0)


def test_fit_texts_keeps_order_and_cuts_the_last_at_a_sentence() -> None:
    texts = ["one two three", "첫 문장입니다. 두 번째 문장은 훨씬 더 길어서 잘립니다.", "never"]
    budget = count_tokens(texts[0]) + count_tokens("첫 문장입니다.") + 3
    kept = fit_texts(texts, budget)
    assert kept == ["one two three", "첫 문장입니다."]
    assert fit_texts(texts, 10_000) == texts
    assert fit_texts(texts, 0) == []


def test_fit_texts_never_exceeds_the_budget() -> None:
    rng = random.Random(7)
    words = ["결제", "팀", "backup", "policy.", "WAL", "아카이브는", "30일", "retention!", "\n"]
    texts = [" ".join(rng.choice(words) for _ in range(rng.randint(1, 60))) for _ in range(8)]
    for budget in range(0, 200, 7):
        kept = fit_texts(texts, budget)
        assert sum(count_tokens(t) for t in kept) <= budget
        if kept:
            assert kept[:-1] == texts[: len(kept) - 1]
            assert texts[len(kept) - 1].startswith(kept[-1])
