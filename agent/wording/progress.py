"""Progress sentences shown in the chat while a turn runs, in the user's language.

Nodes call :func:`report`; the runner turns the custom stream event into a
:class:`~agent.events.Progress`. Outside a graph run (unit tests of a node)
reporting is a no-op.
"""

from __future__ import annotations

from typing import Any

from langgraph.config import get_stream_writer

from agent.wording.texts import Texts, text

MESSAGES: Texts[str] = {
    "analyze": {"ko": "질문을 분석하는 중…", "en": "Analyzing the question…"},
    # What the follow-up was read as, in its own words: the person sees at once whether
    # "주말은요?" was taken for the weekend rate of what they asked before.
    "rewrite": {
        "ko": "앞 질문에 이어서 읽었어요: “{question}”",
        "en": "Reading this as a follow-up: “{question}”",
    },
    "search": {"ko": "{n}개의 검색어로 문서를 찾는 중…", "en": "Searching {n} queries…"},
    "search_one": {"ko": "문서를 찾는 중…", "en": "Searching the documents…"},
    "found": {"ko": "자료 {n}건을 찾았어요", "en": "Found {n} sources"},
    "judge": {
        "ko": "자료가 충분한지 확인하는 중…",
        "en": "Checking whether the sources are enough…",
    },
    # What is missing stays out: raw search terms ("몇일, 받아요") read as nonsense to people;
    # the terms go to the turn's notes (the log and --json).
    "more": {"ko": "부족한 내용을 더 찾아보는 중…", "en": "Looking further for what is missing…"},
    "web": {"ko": "웹에서 찾아보는 중…", "en": "Searching the web…"},
    "write": {"ko": "답변을 작성하는 중…", "en": "Writing the answer…"},
    "check": {"ko": "답변을 자료와 대조하는 중…", "en": "Checking the answer against the sources…"},
    "rewrite_answer": {
        "ko": "근거가 부족한 부분을 고쳐 다시 쓰는 중…",
        "en": "Rewriting the parts the sources do not support…",
    },
    "tools": {"ko": "계산하는 중…", "en": "Working it out…"},
    "draft": {"ko": "초안을 쓰는 중…", "en": "Drafting…"},
    "tool_call": {"ko": "도구 사용 중: {name}", "en": "Using a tool: {name}"},
    "tool_error": {
        "ko": "도구 오류({name}), 계속 진행해요",
        "en": "Tool error ({name}); carrying on",
    },
    "memory": {"ko": "기억을 확인하는 중…", "en": "Checking what I remember…"},
    "cache": {"ko": "이전에 답한 질문이에요", "en": "Answered before: using the saved answer"},
}


# A progress line is one line: a long rewrite is cut there.
_SHOWN_CHARS = 120


def shown(text: str) -> str:
    """``text`` on one line, cut to what a progress line shows."""
    line = " ".join(text.split())
    return line if len(line) <= _SHOWN_CHARS else line[: _SHOWN_CHARS - 1].rstrip() + "…"


def message(stage: str, language: str, **values: Any) -> str:
    return text(MESSAGES, stage, language, **values)


def emit(event: dict[str, Any]) -> None:
    """Write a custom stream event; a no-op when not running inside a graph."""
    try:
        writer = get_stream_writer()
    except RuntimeError:
        return
    writer(event)


def report(stage: str, language: str, **values: Any) -> None:
    emit({"type": "progress", "stage": stage, "text": message(stage, language, **values)})
