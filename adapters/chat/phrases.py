"""The few fixed sentences a chat reply needs, in Korean and English.

The agent writes the answers and progress steps in the user's language; these are
the adapters' own words around them (headers, buttons, reasons for not answering).
"""

from __future__ import annotations

from typing import Literal

from agent.events import Final
from agent.wording import texts
from agent.wording.language import detect_language

Phrase = Literal[
    "thinking",
    "sources",
    "not_covered",
    "helpful",
    "thanks_up",
    "thanks_down",
    "empty_question",
    "not_allowed",
    "delivery_failed",
    "continued",
    "feedback_expired",
    "is_thinking",
    "ask_usage",
    "turn_failed",
    "gave_up",
    "role_not_allowed",
    "rate_limited",
]

_PHRASES: texts.Texts[Phrase] = {
    "thinking": {"ko": "생각하는 중…", "en": "Thinking…"},
    "sources": {"ko": "출처", "en": "Sources"},
    # Over the closest passages of an answer the documents do not cover (Final.covered).
    "not_covered": {
        "ko": "문서에 없는 내용이에요 · 가장 가까운 부분",
        "en": "Not covered by the documents · the closest passages",
    },
    "helpful": {"ko": "도움이 되었나요?", "en": "Was this helpful?"},
    "thanks_up": {"ko": "의견 감사합니다!", "en": "Thanks for the feedback!"},
    "thanks_down": {
        "ko": "의견 감사합니다. 답변을 개선하는 데 쓰겠습니다.",
        "en": "Thanks. We will use this to improve the answers.",
    },
    "empty_question": {
        "ko": "무엇을 도와드릴까요? 멘션과 함께 질문을 적어 주세요.",
        "en": "How can I help? Write your question along with the mention.",
    },
    "not_allowed": {
        "ko": "이 채널에서는 답변하지 않도록 설정되어 있습니다. 관리자에게 문의해 주세요.",
        "en": "I am not set up to answer in this channel. Please ask an admin.",
    },
    "delivery_failed": {
        "ko": "답변을 만들었지만 이 메시지 형식으로 보내지 못해 간단히 보냅니다.",
        "en": "I had an answer but could not send it in full format, so here it is plainly.",
    },
    "continued": {"ko": "(계속)", "en": "(continued)"},
    "feedback_expired": {
        "ko": "이 답변의 기록을 찾을 수 없어 의견을 저장하지 못했습니다.",
        "en": "I could not find this answer any more, so the feedback was not saved.",
    },
    # Slack shows a thread status after the app's name: "teamrag is thinking…".
    "is_thinking": {"ko": "답변을 준비하는 중…", "en": "is thinking…"},
    "ask_usage": {
        "ko": "질문을 함께 적어 주세요. 예: `/ask 배포는 언제 하나요?` (나만 보기: `/ask -p 질문`)",
        "en": "Add your question, e.g. `/ask When can we deploy?` (private: `/ask -p question`)",
    },
    "turn_failed": {
        "ko": "죄송합니다. 답변을 만드는 중에 문제가 생겼습니다. 잠시 후 다시 물어봐 주세요.",
        "en": "Sorry, something went wrong while answering. Please ask again in a moment.",
    },
    # {attempts}: how many workers took the question and stopped (died, or hung) before
    # answering; the queue then drops it rather than let it stall its thread.
    "gave_up": {
        "ko": (
            "이 메시지는 {attempts}번 시도했지만 답하지 못했어요. "
            "질문을 바꿔 보시거나 운영자에게 알려 주세요."
        ),
        "en": (
            "I tried {attempts} times and could not answer this message; "
            "rephrase it, or tell the operator."
        ),
    },
    # Discord: only members with certain roles may ask (TEAMRAG_DISCORD_ALLOWED_ROLES).
    "role_not_allowed": {
        "ko": (
            "지정된 역할이 있는 멤버의 질문에만 답하도록 설정되어 있습니다. "
            "관리자에게 문의해 주세요."
        ),
        "en": "I only answer members with certain roles. Please ask an admin.",
    },
    # {seconds}: whole seconds until the user's oldest question leaves the minute's window.
    "rate_limited": {
        "ko": "짧은 시간에 질문을 너무 많이 하셨습니다. {seconds}초 후에 다시 물어봐 주세요.",
        "en": "You have asked too many questions in a short time. Please ask again in {seconds} s.",
    },
}


def phrase(name: Phrase, language: str, **values: object) -> str:
    """The phrase in ``language`` (Korean or else English), with ``values`` filled in
    (``{seconds}``)."""
    return texts.text(_PHRASES, name, language, **values)


def sources_heading(final: Final) -> str:
    """What the sources are: the answer's, or only the closest passages when the
    documents do not cover the question."""
    return phrase("not_covered" if final.covered is False else "sources", final.language)


def language_of(text: str) -> str:
    """The language to use before the agent has said which (its Final carries it)."""
    return detect_language(text)
