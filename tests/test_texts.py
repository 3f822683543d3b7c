"""The one lookup rule behind the agent's replies, its progress steps and the chat phrases."""

from __future__ import annotations

import pytest

from adapters.chat.phrases import phrase
from agent.wording import progress, replies
from agent.wording.texts import Texts, text

TABLE: Texts[str] = {
    "hello": {"ko": "안녕하세요", "en": "Hello"},
    "found": {"ko": "자료 {n}건", "en": "Found {n}"},
}


def test_korean_or_else_english() -> None:
    assert text(TABLE, "hello", "ko") == "안녕하세요"
    assert text(TABLE, "hello", "en") == "Hello"
    assert text(TABLE, "hello", "ja") == "Hello"


def test_values_fill_the_placeholders() -> None:
    assert text(TABLE, "found", "ko", n=3) == "자료 3건"
    assert text(TABLE, "found", "en", n=3) == "Found 3"


def test_a_missing_key_is_named() -> None:
    with pytest.raises(KeyError, match="helo"):
        text(TABLE, "helo", "en")


def test_the_three_tables_follow_the_rule() -> None:
    assert replies.text("memory_forgot", "ko", n=2) == "알겠어요. 기억하던 내용 2건을 지웠어요."
    assert progress.message("found", "fr", n=4) == "Found 4 sources"
    assert phrase("rate_limited", "en", seconds=5).endswith("Please ask again in 5 s.")
    assert phrase("sources", "ko") == "출처"
