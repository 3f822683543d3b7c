"""Memory commands told from questions by their words alone: "what do you remember about
me?" shows, "forget my team" forgets, "I forgot my password" is neither."""

from __future__ import annotations

import pytest

from agent.routing.intent import memory_command


@pytest.mark.parametrize(
    "text",
    [
        "what do you remember about me?",
        "What do you know about me?",
        "what have you saved about me?",
        "show me my memories",
        "what info do you have on me?",
        "what do you remember?",
        "what do you know of my preferences?",
        "뭘 기억하고 있어?",
        "내 정보 뭐 알고 있어?",
        "나에 대해 뭘 알고 있어?",
        "나에 대해 저장한 거 보여줘",
        "저에 대해 아는 거 말해줘",
    ],
)
def test_memory_show(text: str) -> None:
    assert memory_command(text) == "show"


@pytest.mark.parametrize(
    "text",
    [
        "forget what I told you",
        "forget my team",
        "Please forget everything about me",
        "can you forget my location?",
        "delete my stored preferences",
        "clear everything you know about me",
        "내 정보 잊어줘",
        "기억 지워줘",
        "나에 대한 기억 전부 삭제해줘",
        "내 위치는 기억하지 마",
        "내 역할에 대해 말한 거 잊어줘",
    ],
)
def test_memory_forget(text: str) -> None:
    assert memory_command(text) == "forget"


@pytest.mark.parametrize(
    "text",
    [
        "How do I remember the on-call rotation?",
        "I forgot my password",
        "How do I delete my profile in Jira?",
        "What do you know about the backup policy?",
        "What did I tell you about the deploy?",
        "What do you know about my team's deploy schedule?",
        "What do you know?",
        "remember that I work on the search team",  # a fact to store, not show/forget
        "Is there a forget-password link on the login page?",
        "비밀번호를 잊어버렸어요",
        "비밀번호를 잊어버리면 어떻게 해?",
        "온콜 순서를 어떻게 기억해?",
        "뭘 기억해야 돼?",
        "DB 데이터 삭제해줘",
        "로그 지워줘",
        "내 정보 수정은 어디서 해?",
        "제 휴가 며칠 남았어요?",
    ],
)
def test_not_a_memory_command(text: str) -> None:
    assert memory_command(text) is None
