"""What a quoted sentence means beyond its own words: the term of the definition it is in,
the sentences beside it, the same fact held twice by overlapping passages, a glossary
phrase held whole, and an English word said in other words.

The examples are written here (a studio's release glossary, an intern programme), not taken
from a benchmark, and run with the real encoder.
"""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from agent.answers.candidates import Candidate, quotable
from agent.answers.extractive import extractive_answer, led_with
from agent.answers.kind import asked_kind
from agent.answers.lead import judge_lead
from agent.answers.scoring import score_sentences
from agent.answers.sentences import defined_term
from agent.glossary.glossary import Glossary
from agent.retrieval.embeddings import UniversalSentenceEncoder
from agent.retrieval.tokenizer import words
from agent.retrieval.types import Chunk, SearchHit, TermPair

RELEASES = (
    "- **Canary release (카나리 배포)**: 새 버전을 서버 일부에 먼저 올려 지표를 확인하는 "
    "방식입니다. "
    "우리 팀은 보통 전체 트래픽의 5%로 시작합니다.\n"
    "- **Rollback (롤백)**: 직전 버전으로 되돌리는 것입니다. 결정은 그날의 온콜이 내립니다.\n"
    "- 배포 창구: 화요일과 목요일 오후에만 엽니다.\n"
)


def hit(text: str, name: str = "releases", heading: str = "Glossary") -> SearchHit:
    chunk = Chunk(f"{name}:1", name, 0, text, f"/docs/{name}.md", name.title(), heading=heading)
    return SearchHit(chunk, 1.0)


def quotes(answer: str) -> list[str]:
    return [line for line in answer.splitlines() if line.startswith("> ")]


def test_a_definition_names_its_term_and_a_plain_list_item_does_not() -> None:
    assert (
        defined_term("- **Canary release (카나리 배포)**: 새 버전을")
        == "Canary release (카나리 배포)"
    )
    assert defined_term("- 배포 창구: 화요일과 목요일") == "배포 창구"
    assert defined_term("- 배포는 화요일에 합니다: 예외 없이") is None  # a sentence, not a term
    assert defined_term("Canary release: 새 버전을") is None  # not a list item


def test_a_later_sentence_of_a_definition_answers_for_the_term_it_defines(
    embedder: UniversalSentenceEncoder,
) -> None:
    """ "우리 팀은 보통 전체 트래픽의 5%로 시작합니다." does not name the canary release, the
    item it stands in does: it leads, and the answer opens as found."""
    answer = extractive_answer(
        "카나리 배포는 몇 퍼센트로 해요?", [hit(RELEASES)], embedder, unrelated_intro="NO"
    )
    assert answer.related, answer.text
    assert "5%" in quotes(answer.text)[0], answer.text


def test_the_same_sentence_from_two_overlapping_passages_is_quoted_once(
    embedder: UniversalSentenceEncoder,
) -> None:
    """A chunk cut inside a sentence holds its start: quoted beside the whole one, the
    reader sees the same fact twice."""
    whole = "Backups of the game database are kept for 35 days in the cold vault."
    cut = "Backups of the game database are kept for 35 days"
    answer = extractive_answer(
        "how long are game database backups kept?",
        [hit(f"Retention rules.\n\n{whole}", "ops"), hit(f"{cut}", "ops-2")],
        embedder,
    )
    lines = quotes(answer.text)
    assert sum("kept for 35 days" in line for line in lines) == 1, answer.text


def test_a_glossary_phrase_is_held_only_whole(embedder: UniversalSentenceEncoder) -> None:
    """ "소프트 런칭" is "soft launch": a sentence with "launch" alone is about something else."""
    glossary = Glossary([("g.md", TermPair("소프트 런칭", "Soft launch", "paren", 0.9))])
    assert glossary.counterpart_phrases(words("소프트 런칭 어디서 해요?")) == {
        "소프트": ("soft launch",),
        "런칭": ("soft launch",),
    }
    answer = extractive_answer(
        "소프트 런칭은 보통 어느 나라에서 해요?",
        [
            hit("- Season events launch on the first Friday of the month.", "events"),
            hit("- Our soft launch usually runs in Canada and the Philippines.", "launch"),
        ],
        embedder,
        glossary=glossary,
    )
    assert "Philippines" in quotes(answer.text)[0], answer.text


def test_the_sentence_before_says_what_it_is_about() -> None:
    """ "It takes place on the second Friday" answers a question about the intern lunch that
    the sentence before names."""
    question = "when's the monthly lunch for new interns with their mentors?"
    lead = "It takes place on the second Friday of every month at noon."
    nearby = "The intern lunch brings new interns together with their mentors."
    alone = judge_lead(question, lead, "Programme > Events", 0.2, same_language=True)
    beside = judge_lead(
        question, lead, "Programme > Events", 0.2, same_language=True, nearby=nearby
    )
    assert not alone.answers and beside.answers
    assert beside.support > alone.support


def test_an_english_word_said_in_other_words_counts_for_part(
    embedder: UniversalSentenceEncoder,
) -> None:
    """ "erase" and "reply" are "delete" and "respond" to the encoder; "monthly" and "weekly"
    sit as close, so a synonym counts for half a word."""

    def nearest(terms: Sequence[str], others: Sequence[str]) -> list[float]:
        vectors = embedder.embed_documents([*terms, *others])
        return [float(r.max()) for r in vectors[: len(terms)] @ vectors[len(terms) :].T]

    question = "do we erase transcripts after replying?"
    lead = "Transcripts are deleted after we respond."
    without = judge_lead(question, lead, "Support desk", 0.25, same_language=True)
    within = judge_lead(question, lead, "Support desk", 0.25, same_language=True, nearest=nearest)
    assert within.support > without.support
    assert within.answers and not without.answers


ALLOWANCES = (
    "| 항목 | 조건 | 한도 |\n|---|---|---|\n"
    "| 야간 택시비 | 자정 이후 퇴근 | 실비 |\n"
    "| 야근 간식비 | 21시 이후까지 근무 | 1인 9,000원 |\n"
    "| 휴일 근무 간식비 | 휴일에 4시간 이상 근무 | 1인 13,000원 |\n"
)


def test_a_follow_up_may_lead_with_what_the_last_answer_only_quoted_beside(
    embedder: UniversalSentenceEncoder,
) -> None:
    """The thread's last answer led with the overtime row and quoted the holiday row
    beside it; "주말에 나와서 일하면요?" asks about that row, which may lead now. Only what the
    last answer led with weighs less (see led_with)."""
    hits = [hit(ALLOWANCES, "allowances", "간식비")]
    first = extractive_answer("야근 간식비 얼마까지 돼요?", hits, embedder)
    lines = quotes(first.text)
    assert "야근 간식비" in lines[0] and any("휴일 근무" in line for line in lines[1:]), first.text
    asked = "주말에 나와서 일하면 간식비 얼마까지 돼요?"  # as agent/routing/followup.py resolves it
    second = extractive_answer(asked, hits, embedder, follow_up=asked, said=first.text)
    assert "휴일 근무 간식비" in quotes(second.text)[0], second.text


def test_what_an_answer_led_with_is_its_first_quote() -> None:
    answer = (
        "문서에서 찾은 내용입니다.\n\n> 첫 문장입니다.\n>\n> 둘째 문장입니다. [1]\n\n> 셋째. [2]"
    )
    assert led_with(answer) == "첫 문장입니다."
    assert led_with("> 하나뿐입니다. [1]") == "하나뿐입니다."
    assert led_with("An answer written by the model.") == "An answer written by the model."


# A PDF FAQ as its text layer has it: questions and answers in one paragraph.
FAQ = (
    "장비 대여 FAQ\n"
    "Q. 촬영 장비는 어디서 빌리나요?\n"
    "A. 3층 장비실에서 빌립니다. 대여 기록을 남기지 않으면 반출할 수 없습니다.\n"
    "Q. 빌린 장비는 언제까지 돌려줘야 하나요?\n"
    "A. 대여한 날부터 5영업일 안에 반납합니다. 연장하려면 장비실에 미리 알려 주세요.\n"
    "Q: Can contractors borrow equipment?\n"
    "A: Only with a sponsor from the team, who signs the checkout form."
)


def test_an_faq_question_is_not_quoted_and_says_what_its_answer_is_about(
    embedder: UniversalSentenceEncoder,
) -> None:
    """The question a document asks answers nothing; the sentence after it answers it,
    although it does not repeat its words ("돌려줘야" and "반납")."""
    candidates = quotable(0, hit(FAQ, name="equipment", heading="").chunk)
    texts = [c.text for c in candidates]
    assert not any(t.startswith(("Q.", "Q:")) for t in texts), texts
    returning = next(c for c in candidates if "5영업일" in c.text)
    assert returning.heading.endswith("Q. 빌린 장비는 언제까지 돌려줘야 하나요?")
    borrowing = next(c for c in candidates if "3층" in c.text)
    assert borrowing.group != returning.group  # each question starts a section of its own
    answer = extractive_answer(
        "장비 빌린 거 언제까지 돌려줘야 돼요?", [hit(FAQ, name="equipment")], embedder
    )
    assert answer.related, answer.text
    assert "5영업일" in quotes(answer.text)[0], answer.text
    assert not any("?" in q for q in quotes(answer.text)), answer.text


def test_a_question_in_a_story_is_quoted_and_a_quarter_is_not_an_faq() -> None:
    """Only a sentence marked as a question ("Q.", "Q:", "질문:") is an FAQ's question: quoted
    speech ending in "?" and "Q3:" in a report are text like any other."""
    story = (
        '당시 감독은 "유격수를 뭐하러 걱정하느냐? 차기 유격수에 그가 있다"고 말했다. '
        "Revenue rose in Q3: sales grew 5% over the quarter."
    )
    candidates = quotable(0, hit(story, heading="").chunk)
    texts = [c.text for c in candidates]
    assert texts[0] == '당시 감독은 "유격수를 뭐하러 걱정하느냐?', texts
    assert all(c.heading == "" for c in candidates)
    assert "Revenue rose in Q3: sales grew 5% over the quarter." in texts


def test_the_first_passage_lifts_a_sentence_in_the_other_language_only_if_closest(
    embedder: UniversalSentenceEncoder,
) -> None:
    """Retrieval's first passage is usually right within one language and often wrong across
    two: its sentence in the other language is lifted only when none is closer in meaning."""
    question = "Zephyr 서버는 몇 시에 재시작돼요?"
    answer = "Zephyr servers restart at 04:00 every night."
    aside = "Zephyr servers were bought in 2019 from a vendor in Oslo."
    korean = "Zephyr 서버는 매일 밤 04:00에 재시작합니다."
    wanted = asked_kind(question)

    def scores(*texts: tuple[int, str]) -> list[float]:
        candidates = [Candidate(rank, 0, 0, text) for rank, text in texts]
        return score_sentences(question, "ko", candidates, embedder, wanted)[0]

    # The closer one from the first passage is lifted; the farther one is not.
    lifted, below = scores((0, answer), (1, answer))
    assert lifted > below
    first, _ = scores((0, aside), (1, answer))
    alone, _ = scores((1, aside), (1, answer))
    assert first == pytest.approx(alone)
    # In the question's language the first passage is lifted as before.
    first_ko, second_ko = scores((0, korean), (1, korean))
    assert first_ko > second_ko
