"""Which messages need the thread to be understood ("그건요?", "what about it?") and which
stand alone, by their words alone."""

from __future__ import annotations

import pytest

from agent.routing.intent import is_context_dependent

CONTEXT_DEPENDENT = [
    "그거 어떻게 설정해?",
    "그것도 알려줘",
    "거기 주소가 뭐야?",
    "두 번째 방법은?",
    "그럼 스테이징은?",
    "그건요?",
    "아까 말한 문서 링크 줘",
    "위에서 말한 절차 다시 설명해줘",
    "배포는요?",
    "영어로는?",
    "더 자세히 설명해줘",
    "다른 방법은 없어?",
    "왜?",
    "and the second one?",
    "what about it?",
    "that one",
    "Do they need approval?",
    "same for staging?",
    "also for contractors?",
    "how about prod?",
    "How about the Busan office?",
    "tell me more",
    "Is that still valid?",
    "What does that mean?",
    "which one is faster?",
    "why?",
    "Will it be deployed today?",
    "what about IT?",
    "2번은?",
    "영어로?",
    "ok",
    "네",
    "Are there exceptions?",
    "any exceptions",
    "What are the requirements?",
    "Is there a deadline?",
    "예외가 있나요?",
    "예외 있어",
    "비용은 뭐예요?",
    # A topic, a condition or a thing named by what happened to it, alone.
    "주말은요",
    "p0는요?",
    "해외 출장 갈 때는요?",
    "주말에 출근하면요?",
    "받은 거 어디에 반납해?",
    "그 양식 어디 있어?",
    "그럼 누가 승인해요?",
    "and who covers?",
]

STANDALONE = [
    "Postgres 백업은 며칠 보관돼?",
    "온콜 인수인계는 언제 해?",
    "백업 보관 기간?",
    "그라파나 대시보드 어디 있어?",
    "그룹 권한 요청 방법",
    "로그 거래 내역 어디서 봐?",
    "선거기간 휴가 규정 알려줘",
    "3*(4+5)는?",
    "오늘 며칠이야?",
    "고마워",
    "안녕하세요",
    "How do I request VPN access?",
    "What is the on-call rotation policy?",
    "what time is it?",
    "Is it possible to deploy on Fridays?",
    "Which Slack channel is for incidents?",
    "thanks!",
    "hello",
    "hi there",
    "ㅋㅋㅋ 고마워",
    "오늘의 IT 주요 기사",
    "will it rain in Daejeon tomorrow?",
    "2의 16승은?",
    "현재 금값",
    "하이브리드 검색 설정",
    "Are there exceptions to the year-end freeze?",
    "Is there a VPN for contractors?",
    "예외 처리 방법",
    "배포 예외 승인 절차가 있나요?",
    # A question of its own after a word that only moves the talk on.
    "also, how do I reset my VPN password?",
    "근데 법카 한도 얼마야?",
    "회사에서 지원하는 건 뭐가 있어요?",
    "출장비 정산 기한은?",
]


@pytest.mark.parametrize("text", CONTEXT_DEPENDENT)
def test_context_dependent_with_history(text: str) -> None:
    assert is_context_dependent(text, has_history=True)


@pytest.mark.parametrize("text", STANDALONE)
def test_standalone_with_history(text: str) -> None:
    assert not is_context_dependent(text, has_history=True)


@pytest.mark.parametrize("text", CONTEXT_DEPENDENT)
def test_nothing_is_context_dependent_without_history(text: str) -> None:
    assert not is_context_dependent(text, has_history=False)
