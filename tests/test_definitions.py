"""A definition in the team's glossary names what a question describes ("the monthly
all-hands" is the town hall, 타운홀): a sentence naming the term answers it."""

from __future__ import annotations

from agent.answers.definitions import defined_names
from agent.answers.extractive import extractive_answer
from agent.retrieval.embeddings import UniversalSentenceEncoder
from agent.retrieval.types import Chunk, SearchHit

GLOSSARY = (
    "## Working here\n\n"
    "- **Town hall (타운홀)**: The monthly all-hands meeting.\n"
    "- **No-meeting day (노미팅 데이)**: A weekly day without internal meetings.\n"
)
NORMS = (
    "- 전사 타운홀은 매월 마지막 금요일 16:30에 10층 타운홀 공간에서 열립니다.\n"
    "- 회의는 25분 또는 50분 단위로 잡습니다.\n"
    "- 회의록은 회의가 끝나고 24시간 안에 위키에 올립니다.\n"
)


def _hit(text: str, name: str, score: float) -> SearchHit:
    return SearchHit(Chunk(f"{name}:0", name, 0, text, f"/docs/{name}.md", name.title()), score)


def test_a_definition_whose_body_says_what_the_question_asks_names_it() -> None:
    names = defined_names("what time is the monthly all-hands?", GLOSSARY.splitlines())
    assert set(names) == {"month", "hand", "allhand"}
    assert names["month"] == ("Town hall", "타운홀")


def test_a_definition_that_shares_one_word_or_is_named_already_names_nothing() -> None:
    # "meeting" alone: near the question, not what it describes.
    assert defined_names("when is the design meeting?", GLOSSARY.splitlines()) == {}
    # The question names the term itself: nothing to bridge.
    assert defined_names("when is the monthly town hall?", GLOSSARY.splitlines()) == {}


def test_the_sentence_naming_the_defined_term_answers_the_description(
    embedder: UniversalSentenceEncoder,
) -> None:
    hits = [_hit(GLOSSARY, "glossary", 0.4), _hit(NORMS, "meeting-norms", 0.3)]
    answer = extractive_answer(
        "what time is the monthly all-hands?", hits, embedder, unrelated_intro="NOT FOUND"
    )
    first = next(line for line in answer.text.splitlines() if line.startswith("> "))
    assert "16:30" in first and answer.related, answer.text


def test_a_day_of_the_weekend_is_named_by_the_weekend(embedder: UniversalSentenceEncoder) -> None:
    assert defined_names("토요일에 출근하면요?", []) == {"토요일": ("주말",)}
    assert defined_names("working on a sunday?", []) == {"sunday": ("weekend",)}
    meals = (
        "| 항목 | 기준 | 한도 |\n|---|---|---|\n"
        "| 야근 식대 | 20:00 이후까지 근무 | 1인 12,000원 |\n"
        "| 주말·공휴일 근무 식대 | 4시간 이상 근무 | 1인 1식 15,000원 |\n"
    )
    answer = extractive_answer(
        "토요일에 출근해서 일하면 식대 얼마까지 돼요?",
        [_hit(meals, "expenses", 0.5)],
        embedder,
        unrelated_intro="NOT FOUND",
    )
    first = next(line for line in answer.text.splitlines() if line.startswith("> "))
    assert "15,000" in first and answer.related, answer.text
