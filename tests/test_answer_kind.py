"""The kind of answer a question asks for, and whether the lead quote answers it."""

from __future__ import annotations

import time
from collections.abc import Sequence

import pytest

from agent.answers.kind import (
    asked_counter,
    asked_kind,
    holds_kind,
    is_quantity,
    without_asking,
)
from agent.answers.lead import TermIds, focus_terms, judge_lead
from agent.routing.bypass import without_pleasantries
from agent.wording.progress import message


@pytest.mark.parametrize(
    ("question", "kind"),
    [
        ("나이틀리 보통 몇시에 뽑혀요?", "clock"),
        ("What time does the nightly build start?", "clock"),
        ("영수증은 며칠 안에 올려야 하나요", "duration"),
        ("how fast do i have to ack a page", "duration"),
        ("감사 로그는 얼마나 보관해요?", "count"),
        ("택시비는 얼마까지 돼요?", "amount"),
        ("how much is the meal allowance", "amount"),
        ("카나리 몇퍼로 나가요", "percent"),
        ("핫픽스 머지하려면 어프루브 몇 명 받아야 됨?", "count"),
        ("회의 안 잡는 날이 무슨 요일이었죠?", "when"),
        ("when is the handover?", "when"),
        # A question that ends on the year, the date or the period it asks for.
        ("사내 해커톤이 처음 열린 해는?", "when"),
        ("현재 사옥으로 이전한 연도는?", "when"),
        ("서버 점검 시기는?", "when"),
        ("in what year did the studio open?", "when"),
        ("숙제를 해?", None),  # a verb, not the year
        # After another question word, "when" and "where" join a clause: they do not ask.
        ("what's the daily allowance when you fly out to the austin studio?", None),
        ("who do I call when the build breaks?", "person"),
        ("how many days off do I get when my child is born?", "duration"),
        ("where do i park when i visit?", "place"),
        ("how often is the status page updated", "frequency"),
        ("보안 쪽 오너 누구임?", "person"),
        ("which slack channel do build alerts go to?", "address"),
        ("신규 입사자 질문 올리는 슬랙 채널 뭐예요?", "address"),
        ("해킹 당한 것 같을 때 신고하는 메일 주소 뭐임?", "address"),
        ("노트북 고장나면 어느 슬랙 채널에 물어봐요?", "address"),
        ("where do i forward a phishing email", "place"),
        ("노트북 어디서 받아요?", "place"),
        ("What is the deploy freeze?", None),
        ("왜 빌드가 실패해요?", None),
        ("워커 재시작 명령어 뭐예요?", "command"),
        ("what's the command to restart the worker?", "command"),
        ("what do i type to roll back?", "command"),
        ("What is the command center?", None),  # a name, not a command asked for
    ],
)
def test_the_kind_a_question_asks_for(question: str, kind: str | None) -> None:
    assert asked_kind(question) == kind


@pytest.mark.parametrize(
    ("sentence", "kind", "holds"),
    [
        ("나이틀리 빌드는 매일 03:00에 시작합니다.", "clock", True),
        ("Nightly builds start at 3 am.", "clock", True),
        ("나이틀리는 main 최신 리비전을 빌드합니다.", "clock", False),
        ("사용일로부터 7일 이내에 영수증을 첨부합니다.", "duration", True),
        ("Acknowledge within 15 minutes.", "duration", True),
        ("Acknowledge the page in PagerDuty.", "duration", False),
        # A date before the present or the common era is a "when" ("By 9000 BP, ...").
        ("By 9000 BP, Europe was fully forested.", "when", True),
        ("The wall was built around 500 BC.", "when", True),
        ("The 5 adults left early.", "when", False),
        ("1인 12,000원까지 지원합니다.", "amount", True),
        ("The limit is $50 a day.", "amount", True),
        ("카나리는 5%로 시작합니다.", "percent", True),
        ("Ask in #access-requests.", "place", True),
        ("Ask in #access-requests.", "address", True),
        ("Write to security@dalbit.example at once.", "address", True),
        ("The status page is status.dalbit.example.", "address", True),
        ("팀 채널에 스레드로 남겨 주세요.", "address", False),
        ("Triage runs on Tuesdays.", "when", True),
        ("Approved by Kim Min-ji (김민지).", "person", True),
        ("Run `make deploy` from the repo root.", "command", True),
        ("Type /oncall swap in any channel.", "command", True),
        ("Logs live under /var/log/app.", "command", False),
        ("Reviews take about one business day.", "duration", True),
        ("택배는 사흘 안에 찾아가야 합니다.", "duration", True),
        ("리뷰는 보통 하루면 끝나요.", "duration", True),
    ],
)
def test_whether_a_sentence_holds_that_kind(sentence: str, kind: str, holds: bool) -> None:
    assert holds_kind(sentence, kind) is holds  # type: ignore[arg-type]


def test_the_words_that_ask_are_not_what_the_question_is_about() -> None:
    assert "몇" not in without_asking("나이틀리 보통 몇시에 뽑혀요?")
    assert "how long" not in without_asking("how long are audit logs kept?")


def test_the_words_between_the_asking_ones_stay_the_subject() -> None:
    """ "what's the *deploy* command" asks about deploys: the words that ask go, the
    subject between them stays for the lead to hold."""
    kept = without_asking("what's the deploy command for staging?")
    assert "deploy" in kept and "command" not in kept and "what" not in kept
    kept = without_asking("which release channel do the builds go to?")
    assert "release" in kept and "channel" not in kept


def unseen_words(*unseen: str) -> TermIds:
    """The keyword vocabulary's ids, as a knowledge base that has never seen ``unseen``."""

    def term_ids(terms: Sequence[str]) -> list[int | None]:
        return [None if t in unseen else 1 for t in terms]

    return term_ids


def test_a_lead_without_the_asked_kind_does_not_answer_whatever_it_shares() -> None:
    """ "몇 시" is not answered by a sentence about nightly builds with no time in it."""
    no_time = judge_lead(
        "나이틀리 보통 몇시에 뽑혀요?",
        "나이틀리는 시작 시점의 main 최신 리비전을 빌드합니다.",
        "빌드 & 릴리스 > 나이틀리",
        0.4,
        same_language=True,
    )
    assert not no_time.answers and not no_time.kind_ok
    with_time = judge_lead(
        "나이틀리 보통 몇시에 뽑혀요?",
        "나이틀리 빌드는 매일 03:00에 시작합니다.",
        "빌드 & 릴리스 > 나이틀리",
        0.4,
        same_language=True,
    )
    assert with_time.answers


@pytest.mark.parametrize(
    ("question", "counter"),
    [
        ("메이저 리그에서 300승 이상 한 투수는 몇 명인가?", "명"),
        ("리패키지 앨범은 총 몇 곡인가?", "곡"),
        ("평창 스페셜 올림픽에 참가한 국가는 몇 개국인가?", "개"),
        ("공판은 몇 차였는가?", "차"),
        # Counted in other units too ("몇 프로": "50%"), or not a count at all.
        ("여론조사에서 몇 프로를 제안하였나?", None),
        ("나이틀리 몇 시에 돌아요?", None),
        # The count is in a clause; the question asks for a year or a name.
        ("몇 개의 상을 수상한 년도는?", None),
        ("몇 명이 뛴 팀은 어디인가?", None),
    ],
)
def test_the_counter_a_korean_count_is_asked_in(question: str, counter: str | None) -> None:
    assert asked_counter(question) == counter


@pytest.mark.parametrize(
    ("sentence", "counter", "holds"),
    [
        ("지금까지 24명의 투수가 이 기록을 달성했다.", "명", True),
        ("서명운동은 5월 4일에 100만 명을 돌파하였다.", "명", True),
        ("4차 공판에서 변호인단은 진술의 신빙성을 문제 삼았다.", "차", True),
        ("주 2회 점검합니다.", "번", True),
        ("세 가지 질문에 답했다.", "개", True),
        # A number, but not of what is counted: the question's own "300승", a date.
        ("300 승 클럽에는 300 승 이상을 올린 투수들이 가입되어 있다.", "명", False),
        ("5월 2일에는 두 번째 리패키지 앨범을 발매했다.", "곡", False),
    ],
)
def test_a_korean_count_is_held_in_its_counter(sentence: str, counter: str, holds: bool) -> None:
    assert holds_kind(sentence, "count", counter) is holds
    assert holds_kind(sentence, "count")  # any number, without the counter


def test_a_korean_lead_answers_a_count_only_in_its_counter() -> None:
    question = "메이저 리그 베이스볼에서 300승 이상 한 투수는 몇 명인가?"
    club = "300 승 클럽에는 300 승 혹은 그 이상을 올린 메이저 리그 베이스볼 투수들이 가입되어 있다."
    assert not judge_lead(question, club, "300승 클럽", 0.5, same_language=True).answers
    counted = "지금까지 24명의 투수가 이 기록을 달성했다."
    context = "300승 클럽 > 메이저 리그 베이스볼 300승 투수"
    assert judge_lead(question, counted, context, 0.5, same_language=True).answers
    # In the other language the count is read as any number: "two approvals".
    two = judge_lead(
        "어프루브 몇 명 받아야 돼요?", "At least 2 approvals.", "", 0.5, same_language=False
    )
    assert two.kind_ok


def test_a_lead_that_shares_only_a_side_word_does_not_answer() -> None:
    """ "스톡옵션 베스팅 기간" is not answered by a sentence about holiday periods: the words
    no document uses are what the question is about."""
    verdict = judge_lead(
        "스톡옵션 베스팅 기간 어떻게 돼요?",
        "설·추석 연휴 기간의 대기는 주말·공휴일 기준을 적용합니다.",
        "온콜 > 수당",
        0.23,
        same_language=True,
        term_ids=unseen_words("스톡옵션", "베스팅"),
    )
    assert not verdict.answers and verdict.support < 0.3


def test_how_far_ahead_asks_for_a_length_of_time() -> None:
    assert asked_kind("열흘 휴가 쓰려면 얼마나 미리 말해야 돼요?") == "duration"
    assert asked_kind("how far in advance do i book the big room") == "duration"
    assert asked_kind("how much notice do contractors give") == "duration"
    assert holds_kind("보름 전까지 알려 주세요", "duration")
    # "한 달" is a month; the 한 of "속한 달" ends a verb
    assert holds_kind("한 달 안에 씁니다", "duration")
    assert not holds_kind("기준일이 속한 달의 급여와 함께 지급됩니다.", "duration")


def test_a_time_or_a_number_in_the_question_is_not_its_subject() -> None:
    """ "일주일" and "5am" are the asker's condition; the documents say it in their own
    numbers ("연속 5일 이상"). A word no document uses weighs as the subject the documents
    lack, but not these."""
    assert is_quantity("열흘") and is_quantity("5am") and is_quantity("2025")
    assert not is_quantity("스톡옵션") and not is_quantity("sketchy")
    verdict = judge_lead(
        "일주일 휴가 가려면 얼마나 미리 말해야 돼요?",
        "연속 5일 이상 휴가는 시작일 기준 3주 전까지 팀장에게 알립니다.",
        "휴가 제도 > 신청",
        0.3,
        same_language=True,
        term_ids=unseen_words("일주일", "가려면"),
    )
    assert verdict.answers, verdict


def test_a_chat_clipping_is_held_by_the_word_it_starts() -> None:
    verdict = judge_lead(
        "How do I get prod access?",
        "Production access is requested through Opal.",
        "FAQ > Accounts",
        0.3,
        same_language=True,
    )
    assert verdict.answers


@pytest.mark.parametrize(
    ("message", "question"),
    [
        ("thanks! also whats the wifi pw", "also whats the wifi pw"),
        ("ok thanks. is there guest parking?", "is there guest parking?"),
        ("안녕하세요~ 혹시 택시비 몇 시부터 돼요?", "혹시 택시비 몇 시부터 돼요?"),
        (
            "lol ok thx. one more q - how long do reviews take?",
            "how long do reviews take?",
        ),
        ("thanks!! super helpful 🙏 also where do i forward it", "also where do i forward it"),
        ("안녕하세요~ 입사 2주차입니다 ㅎㅎ 혹시 택시비 돼요?", "혹시 택시비 돼요?"),
        ("고마워요", "고마워요"),
        ("What is the deploy freeze?", "What is the deploy freeze?"),
    ],
)
def test_the_question_inside_a_pleasantry(message: str, question: str) -> None:
    assert without_pleasantries(message) == question


@pytest.mark.parametrize(
    "text", ["1" * 4000, "a" * 4000, "가" * 4000 + "실", "1," * 2000, "@" * 4000]
)
def test_the_kind_patterns_are_linear(text: str) -> None:
    started = time.process_time()
    asked_kind(text)
    for kind in ("clock", "when", "duration", "amount", "percent", "count", "place", "person"):
        holds_kind(text, kind)
    without_pleasantries(text)
    assert time.process_time() - started < 1.0


def test_the_thing_a_which_question_asks_about_weighs_more() -> None:
    """ "which laptop do I get" is not answered by a line about joining next month."""
    verdict = judge_lead(
        "joining as a backend dev next month, which laptop do i get?",
        "If you join after that month's session, you'll be invited to the next one.",
        "Onboarding > Dalbit 101",
        0.3,
        same_language=True,
    )
    assert focus_terms("어떤 데이터셋 써야 돼요?") == ["데이터셋"]
    assert not verdict.answers


def test_progress_never_shows_raw_search_terms() -> None:
    """ "부족한 내용을 더 찾는 중: 몇일, 받아요" read as nonsense: the step says what it does,
    the terms go to the notes."""
    for language in ("ko", "en"):
        text = message("more", language, what="몇일, 받아요")
        assert "몇일" not in text and "받아요" not in text and text.endswith("…")
