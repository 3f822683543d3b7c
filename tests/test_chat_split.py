"""Splitting long answers for chat limits: nothing lost, limits kept, code blocks intact."""

from __future__ import annotations

import pytest

from adapters.chat.split import split_pieces, split_text

KOREAN = "백업은 매일 새벽 3시에 실행되며 14일 동안 보관됩니다. " * 120
CODE = (
    "설정 예시는 다음과 같습니다.\n\n```yaml\n"
    + "\n".join(f"key_{i}: value number {i}" for i in range(200))
    + "\n```\n\nThat is all."
)


@pytest.mark.parametrize("text", [KOREAN, CODE, "word " * 3000, "x" * 9000])
@pytest.mark.parametrize("limit", [100, 2000, 3000])
def test_pieces_fit_the_limit_and_say_everything(text: str, limit: int) -> None:
    pieces = split_pieces(text, limit)
    assert "".join(p.body for p in pieces) == text
    assert all(len(str(p)) <= limit for p in pieces)
    assert [str(p) for p in pieces] == split_text(text, limit)


def test_short_text_is_one_piece() -> None:
    assert split_text("짧은 답변입니다.", 2000) == ["짧은 답변입니다."]


def test_cuts_prefer_paragraphs_then_sentences() -> None:
    text = "First paragraph is here.\n\n" + "A sentence. " * 20 + "\n\nLast paragraph."
    pieces = split_text(text, 200)
    assert pieces[0].startswith("First paragraph is here.\n\nA sentence.")
    assert pieces[0].endswith("A sentence. ")
    assert pieces[1].startswith("A sentence.")
    assert pieces[-1].endswith("\n\nLast paragraph.")


def test_korean_sentences_are_not_cut_in_the_middle() -> None:
    pieces = split_text(KOREAN, 500)
    assert len(pieces) > 1
    assert all(p.endswith("보관됩니다. ") for p in pieces[:-1])


def test_a_code_block_cut_in_two_stays_two_code_blocks() -> None:
    pieces = split_text(CODE, 1000)
    assert len(pieces) > 2
    for piece in pieces:
        # Every piece opens and closes its fences: each renders on its own.
        assert piece.count("```") % 2 == 0, piece
    assert pieces[1].startswith("```yaml\n")


def test_a_word_longer_than_the_limit_is_cut_rather_than_dropped() -> None:
    pieces = split_text("a" * 250, 100)
    assert [len(p) for p in pieces] == [92, 92, 66]


def test_a_tiny_limit_is_refused() -> None:
    with pytest.raises(ValueError, match="too small"):
        split_text("text", 10)
