"""How ``teamrag eval`` decides that an answer contains the expected text and cites the
expected source, and which questions ``--limit`` draws."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from bots.evaluation.scoring import contains_answer, matches_source, summarise
from bots.evaluation.sets import Question, QuestionSetError, load_question_set, sample


def test_contains_ignores_case_spacing_punctuation_and_citation_markers() -> None:
    answer = "> 백업은 35 일 동안 보관된다. [1]\n> Handover: #OnCall-Handover [2]"
    assert contains_answer(answer, ["35일"])
    assert contains_answer(answer, ["oncall handover"])
    assert not contains_answer(answer, ["90일"])
    assert not contains_answer(answer, [""])  # an empty expected text matches nothing
    assert not contains_answer("see [12]", ["12"])  # a citation marker is not the answer


def test_a_source_matches_by_file_name_path_title_or_link_but_not_a_longer_sibling() -> None:
    source = "/data/docs/korquad-v1-0-dev-p00012.txt"
    assert matches_source("korquad-v1-0-dev-p00012", source)
    assert matches_source("korquad-v1-0-dev-p00012.txt", source)
    assert not matches_source("korquad-v1-0-dev-p0001", source)
    assert matches_source("docs/korquad", source)
    assert matches_source("ops handbook", "/x/h.pdf", title="Ops Handbook")
    assert matches_source("wiki/page", "page.html", link="https://w.example/wiki/page")
    assert not matches_source("", source)


def test_limit_draws_the_same_random_questions_every_time() -> None:
    questions = [Question(f"q{i}") for i in range(100)]
    first, again = sample(questions, 10, seed=1), sample(questions, 10, seed=1)
    assert first == again and len(set(q.text for q in first)) == 10
    assert first != questions[:10]  # random, not the file's first ten
    assert sample(questions, 10, seed=2) != first
    assert sample(questions, None, seed=1) == questions


def test_a_file_that_is_neither_jsonl_nor_squad_is_refused_with_the_reason(
    tmp_path: Path,
) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n# nothing\n", encoding="utf-8")
    with pytest.raises(QuestionSetError, match="no questions"):
        load_question_set(empty)
    noq = tmp_path / "noq.jsonl"
    noq.write_text('{"answer": "x"}\n', encoding="utf-8")
    with pytest.raises(QuestionSetError, match=r"noq\.jsonl:1: the object has no 'question'"):
        load_question_set(noq)
    with pytest.raises(QuestionSetError, match="cannot read"):
        load_question_set(tmp_path / "missing.jsonl")


def test_summary_counts_routes_bypasses_and_shares_of_known_outcomes() -> None:
    from bots.evaluation.scoring import Row

    def row(route: str, contains: bool | None, rank: int | None, covered: bool = True) -> Row:
        return Row("q", "a", route, "ans", rank, contains, rank is not None, covered, 10.0, 0)

    rows = [row("knowledge", True, 1), row("knowledge", False, 7), row("smalltalk", None, None)]
    rows.append(row("knowledge", True, 3, covered=False))
    summary = summarise(rows, k=5)
    assert summary["bypassed"] == 1
    assert summary["not_covered"] == 1
    assert summary["answer_contains"] == round(2 / 3, 4)  # the greeting had no expectation
    assert summary["routes"] == {"knowledge": 3, "smalltalk": 1}


def test_off_point_counts_quoted_sentences_without_the_expected_text() -> None:
    from bots.evaluation.scoring import off_point, quoted_sentences

    answer = (
        "문서에서 찾은 내용입니다.\n\n"
        "> 해소 후 24시간 동안 모니터링을 유지한다. Postgres backups are kept for 35 days. [1]\n\n"
        "> Redis: a snapshot every 6 hours, kept for 7 days. [2]"
    )
    assert quoted_sentences(answer) == [
        "해소 후 24시간 동안 모니터링을 유지한다.",
        "Postgres backups are kept for 35 days.",
        "Redis: a snapshot every 6 hours, kept for 7 days.",
    ]  # the intro is not a quote, and a citation marker is not a sentence
    # Two quoted sentences hold no "35 days", and the first one is among them.
    quoted = quoted_sentences(answer)
    assert off_point(quoted, ["35 days"]) == (2, False)
    assert off_point(quoted, ["24시간", "35 days"]) == (1, True)  # any expected text will do
    one = quoted_sentences("> Postgres backups are kept for 35 days. [1]")
    assert off_point(one, ["35 days"]) == (0, True)
    # Nothing to judge: a written (not quoted) answer, or no expected text.
    assert off_point(quoted_sentences("Backups are kept for 35 days [1]."), ["35 days"]) is None
    assert off_point(quoted, []) is None


def test_summary_reports_off_point_quotes_and_answer_length() -> None:
    from bots.evaluation.scoring import Row

    def row(answer: str, off: int | None, lead: bool | None) -> Row:
        row = Row("q", "a", "knowledge", answer, 1, True, True, True, 10.0, 0)
        return replace(row, quoted=3, off_point=off, lead_on_point=lead)

    rows = [row("x" * 100, 2, False), row("x" * 300, 0, True), row("x" * 200, None, None)]
    summary = summarise(rows, k=5)
    assert summary["off_point_per_answer"] == 1.0  # (2 + 0) / the two answers judged
    assert summary["lead_off_point"] == 0.5
    assert summary["answer_chars_p50"] == 200
