"""Prompts keep the thread within its share of the token plan, newest messages first."""

from __future__ import annotations

from langchain_core.messages import AIMessage, HumanMessage

from agent.memory.budget import count_tokens
from agent.prompts import analysis_messages, answer_messages


def _thread(turns: int) -> list[HumanMessage | AIMessage]:
    messages: list[HumanMessage | AIMessage] = []
    for i in range(turns):
        messages.append(HumanMessage(f"question number {i} " + "word " * 100))
        messages.append(AIMessage(f"answer number {i} " + "단어 " * 100))
    return messages


def test_history_is_cut_to_its_budget_keeping_the_newest_messages() -> None:
    history = _thread(6)
    wide = analysis_messages("and now?", history, "", "", "2026-11-22", history_budget=10_000)
    narrow = analysis_messages("and now?", history, "", "", "2026-11-22", history_budget=200)
    narrow_text = str(narrow[1].content)
    assert "answer number 5" in narrow_text  # the newest message always fits first
    assert "question number 2" not in narrow_text
    assert "question number 2" in str(wide[1].content)
    assert count_tokens(narrow_text) < count_tokens(str(wide[1].content)) / 2


def test_the_summary_of_older_turns_comes_when_there_is_room() -> None:
    roomy = answer_messages(
        "q",
        [],
        language="ko",
        style="short",
        history=_thread(1),
        summary="Q: backups / A: 35",
        profile="",
        feedback="",
        history_budget=5_000,
    )
    text = str(roomy[1].content)
    assert text.index("summary") < text.index("question number 0")  # oldest first on the page
    assert "한국어로 답하세요" in str(roomy[0].content)
