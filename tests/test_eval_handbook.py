"""The team handbook format in ``teamrag eval``: categories, lists of accepted answers,
none-questions and follow-up threads; right and wrong per category; the holdout split."""

from __future__ import annotations

import json
from pathlib import Path

from agent.events import Citation, Final, Route
from bots.evaluation.categories import by_category, markdown_table, outcome
from bots.evaluation.scoring import Row, holds_answer, is_right
from bots.evaluation.sets import Question, load_question_set, sample
from bots.evaluation.split import held_keys, select_part, split_key

Line = dict[str, object]


def line(
    id: str,
    category: str,
    question: str,
    answer: list[str],
    source: str | None,
    thread: str | None = None,
    turn: int | None = None,
) -> Line:
    """One question as the team handbook writes it."""
    keys = ("id", "category", "question", "answer", "source", "thread", "turn")
    return dict(zip(keys, (id, category, question, answer, source, thread, turn), strict=True))


LINES = [
    line("KK01", "ko-ko", "나이틀리 몇시?", ["03:00", "새벽 3시"], "build.md"),
    # Turn 2 first in the file: it is still asked right after turn 1.
    line("FU02", "follow-up", "주말은요?", ["60,000"], "oncall.md", "T1", 2),
    line("NO01", "none", "주차비 얼마?", [], None),
    line("FU01", "follow-up", "평일 대기 하루 얼마?", ["30,000"], "oncall.md", "T1", 1),
]


def _write(folder: Path, lines: list[Line]) -> Path:
    path = folder / "questions.jsonl"
    path.write_text("\n".join(json.dumps(x, ensure_ascii=False) for x in lines), "utf-8")
    return path


def test_the_handbook_format_loads_categories_answer_lists_none_questions_and_threads(
    tmp_path: Path,
) -> None:
    loaded = load_question_set(_write(tmp_path, LINES))
    assert loaded.docs is None  # no docs/ beside it: the configured knowledge base
    ids = [q.id for q in loaded.questions]
    assert ids == ["KK01", "FU01", "FU02", "NO01"]  # the thread's turns together, in order
    first = loaded.questions[0]
    assert first.category == "ko-ko" and first.answers == ["03:00", "새벽 3시"]
    assert not first.unanswerable and first.thread == "" and first.turn == 0
    none = loaded.questions[3]
    assert none.unanswerable and none.answers == [] and none.source == ""
    assert [(q.thread, q.turn) for q in loaded.questions[1:3]] == [("T1", 1), ("T1", 2)]
    # A plain question without an answer is not a none-question: nothing to judge by.
    assert not load_question_set(_write(tmp_path, [{"question": "hi"}])).questions[0].unanswerable
    (tmp_path / "docs").mkdir()
    assert load_question_set(_write(tmp_path, LINES)).docs == tmp_path / "docs"


def test_limit_draws_a_thread_whole_with_its_turns_in_order(tmp_path: Path) -> None:
    questions = load_question_set(_write(tmp_path, LINES)).questions
    for seed in range(1, 12):
        drawn = [q.id for q in sample(questions, 2, seed)]
        if "FU01" in drawn or "FU02" in drawn:
            at = drawn.index("FU01")
            assert drawn[at + 1] == "FU02"


def _question(n: int, category: str, thread: str = "") -> Question:
    return Question(
        f"q{n}",
        ["x"],
        id=f"{category}{n}",
        category=category,
        thread=thread,
        turn=n % 2 + 1 if thread else 0,
    )


def test_the_split_is_a_third_of_each_category_the_same_every_time_and_keeps_threads() -> None:
    questions = [_question(n, "ko-ko") for n in range(30)]
    questions += [_question(n, "none") for n in range(8)]
    questions += [_question(n, "follow-up", thread=f"T{n // 2}") for n in range(12)]
    held = select_part(questions, "held")
    dev = select_part(questions, "dev")
    assert len(held) + len(dev) == len(questions) and not {q.id for q in held} & {q.id for q in dev}
    counts = {c: sum(q.category == c for q in held) for c in ("ko-ko", "none", "follow-up")}
    assert counts == {"ko-ko": 10, "none": 3, "follow-up": 4}  # a third (2 of 6 threads)
    for thread in {q.thread for q in questions if q.thread}:
        parts = {q in held for q in questions if q.thread == thread}
        assert len(parts) == 1  # both turns on the same side
    # The same on every run and in any file order: it hangs on the ids alone.
    assert held == select_part(questions, "held")
    assert {q.id for q in select_part(questions[::-1], "held")} == {q.id for q in held}
    assert split_key(questions[-1]) == "thread:T5" and len(held_keys(questions)) == 15
    assert select_part(questions, "all") == questions
    # Pinned: a change of the rule moves questions between the parts, which the team must
    # see (the held part is what nobody tuned on).
    assert sorted(q.id for q in held if q.category == "none") == ["none3", "none6", "none7"]


def _final(
    answer: str, covered: bool = True, route: Route = "knowledge", cite: str = "a.md"
) -> Final:
    sources = [Citation(1, cite, f"/docs/{cite}")] if cite else []
    return Final(answer, sources, route=route, covered=covered)


def test_right_needs_the_answer_as_written_and_the_source_and_a_none_question_a_refusal() -> None:
    q = Question("how much?", ["30,000원", "3만원"], "a.md")
    assert holds_answer("평일은 하루  30,000원 입니다", q.answers)  # whitespace collapsed
    assert not holds_answer("평일은 30000원", q.answers)  # stricter than contains_answer
    assert holds_answer("SEV1: Every 30 Minutes", ["every 30 minutes"])  # Latin case ignored
    assert is_right(q, _final("> 30,000원 [1]"), cited=True)
    assert not is_right(q, _final("> 30,000원 [1]"), cited=False)
    # A reader stops at "couldn't find": the fact under it is not a right answer.
    assert not is_right(q, _final("I couldn't find it. > 30,000원 [1]", covered=False), True)
    assert not is_right(q, _final("30,000원", route="memory"), cited=True)
    none = Question("parking?", [], unanswerable=True)
    assert is_right(none, _final("I couldn't find that", covered=False, cite=""), None)
    assert not is_right(none, _final("> Parking is 5,000 won [1]"), None)  # invented: wrong
    assert not is_right(none, _final("Hi!", covered=False, route="smalltalk", cite=""), None)
    assert is_right(Question("hi"), _final("Hello"), None) is None


def _row(
    category: str,
    right: bool,
    *,
    covered: bool = True,
    route: str = "knowledge",
    lead: bool | None = None,
    hidden: bool = False,
) -> Row:
    return Row(
        "q",
        "a",
        route,
        "ans",
        1,
        right,
        right,
        covered,
        10.0,
        0,
        lead_on_point=lead,
        right=right,
        hidden=hidden,
        category=category,
    )


def test_per_category_counts_each_question_once_and_the_share_of_found_answers_right() -> None:
    rows = [
        _row("ko-ko", True, lead=True),
        _row("ko-ko", True, lead=False),
        _row("ko-ko", False, covered=False, hidden=True),  # "not found" over a right answer
        _row("ko-ko", False),  # confident wrong
        _row("ko-ko", False, covered=False),  # not found, and the fact is not there either
        _row("ko-ko", False, route="smalltalk"),  # bypassed
        _row("none", True, covered=False),
        _row("none", False),  # a none-question answered as found
    ]
    rows.append(Row("hi", "", "smalltalk", "Hello", None, None, None, True, 5.0, 0))  # unjudged
    assert [outcome(r) for r in rows[:6]] == [
        "right",
        "right",
        "hidden",
        "confident_wrong",
        "not_found",
        "bypassed",
    ]
    table = by_category(rows)
    assert list(table) == ["ko-ko", "none", "all"]
    ko = table["ko-ko"]
    assert (ko["questions"], ko["right"], ko["confident_wrong"]) == (6, 2, 1)
    assert (ko["hidden"], ko["not_found"]) == (1, 1)
    assert ko["bypassed"] == 1 and ko["found"] == 3
    assert ko["found_right"] == 0.67  # 2 of the 3 searched answers that opened as found
    assert ko["lead_right"] == 0.5  # of the 2 right answers that quote, 1 leads with it
    none = table["none"]
    assert (none["right"], none["confident_wrong"], none["found_right"]) == (1, 1, 0.0)
    total = table["all"]
    assert total["questions"] == 8 and total["right"] == 3 and total["found"] == 4
    assert total["found_right"] == 0.5
    text = markdown_table(table)
    assert "| **all** | 8 | 3 | 2 | 1 | 1 | 1 | 0.5 | 0.5 |" in text
    assert by_category(rows[-1:]) == {}  # nothing judged: no table
