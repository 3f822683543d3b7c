"""Fixed replies, in Korean and English: what the bot says without an LLM."""

from __future__ import annotations

import re
from typing import Any

from agent.wording import texts

TEXTS: texts.Texts[str] = {
    "greeting": {
        "ko": "안녕하세요! 팀 문서에서 답을 찾아 출처와 함께 알려드리는 teamrag예요. 무엇이든 물어보세요.",
        "en": "Hi! I'm teamrag: I answer questions from the team's documents and cite my "
        "sources. What would you like to know?",
    },
    "thanks": {
        "ko": "천만에요! 더 궁금한 게 있으면 언제든 물어보세요.",
        "en": "You're welcome! Ask me anything else any time.",
    },
    "identity": {
        "ko": "저는 teamrag예요. 팀 문서(가이드, 핸드북, FAQ 등)를 검색해 한국어와 영어로 답하고, "
        "답마다 출처를 붙여요.",
        "en": "I'm teamrag. I search the team's documents (guides, handbooks, FAQs...) and "
        "answer in Korean or English, citing the sources of every answer.",
    },
    "general_needs_llm": {
        "ko": "일반 질문에는 답할 수 있는 언어 모델이 설정되어 있지 않아, 팀 문서에서 찾아볼게요.",
        "en": "No language model is configured for general questions, so I searched the "
        "team's documents instead.",
    },
    "blocked_unsupported": {
        "ko": "자료로 뒷받침되는 답을 만들지 못해 답변을 보류했어요. 질문을 더 구체적으로 바꿔 "
        "보시거나, 관련 문서가 수집되었는지 확인해 주세요.",
        "en": "I couldn't write an answer the sources support, so I'm holding it back. Try a "
        "more specific question, or check that the relevant documents were ingested.",
    },
    "unsupported_warning": {
        "ko": "⚠️ 주의: 이 답변은 자료와의 대조 검사를 통과하지 못했어요. 출처를 직접 확인해 주세요.",
        "en": "⚠️ Warning: this answer did not pass the check against its sources. Verify it "
        "in the cited sources.",
    },
    "creative_needs_llm": {
        "ko": "초안 작성에는 언어 모델이 필요한데 설정되어 있지 않아요(OPENAI_API_KEY 또는 "
        "OPENAI_BASE_URL). 대신 참고할 만한 팀 문서를 찾아 드릴게요:",
        "en": "Drafting needs a language model and none is configured (OPENAI_API_KEY or "
        "OPENAI_BASE_URL). Here are the team documents that may help you write it:",
    },
    "creative_nothing": {
        "ko": "초안 작성에는 언어 모델이 필요한데 설정되어 있지 않아요(OPENAI_API_KEY 또는 "
        "OPENAI_BASE_URL). 관련된 팀 문서도 찾지 못했어요.",
        "en": "Drafting needs a language model and none is configured (OPENAI_API_KEY or "
        "OPENAI_BASE_URL), and no team document matched the request.",
    },
    "creative_failed": {
        "ko": "언어 모델이 응답하지 않아 초안을 쓰지 못했어요. 잠시 후 다시 요청해 주세요.",
        "en": "The language model did not answer, so I couldn't write the draft. Please ask "
        "again in a moment.",
    },
    "no_web": {
        "ko": "웹 검색이 설정되어 있지 않아 팀 문서에서만 찾았어요.",
        "en": "Web search is not configured, so I only searched the team's documents.",
    },
    "fallback_intro": {
        "ko": "자료로 충분히 뒷받침되는 답을 만들지 못했어요. 가장 관련 있는 자료의 내용을 그대로 "
        "보여드릴게요.",
        "en": "I couldn't write an answer I can fully support from the sources. Here is what "
        "the most relevant sources say.",
    },
    "nothing_found": {
        "ko": "질문에 답할 수 있는 내용을 문서에서 찾지 못했어요. 질문을 바꿔 보시거나, 관련 문서가 "
        "수집되었는지 확인해 주세요.",
        "en": "I couldn't find anything in the documents that answers this. Try rephrasing, "
        "or check that the relevant documents were ingested.",
    },
    "not_covered": {
        "ko": "문서에서 이 질문에 대한 답을 찾지 못했어요. 가장 가까운 내용은 다음과 같아요.",
        "en": "I couldn't find an answer to this in the documents. The closest passages say:",
    },
    "memory_empty": {
        "ko": "아직 기억하고 있는 내용이 없어요. 팀이나 역할을 알려주시면 답변에 참고할게요.",
        "en": "I don't remember anything about you yet. Tell me your team or role and I'll "
        "take it into account.",
    },
    "memory_saved": {
        "ko": "알겠어요. 기억해 둘게요: {facts}",
        "en": "Got it, I'll remember: {facts}",
    },
    "memory_list": {"ko": "기억하고 있는 내용이에요:", "en": "Here is what I remember about you:"},
    "memory_forgot": {
        "ko": "알겠어요. 기억하던 내용 {n}건을 지웠어요.",
        "en": "Done: I forgot {n} thing(s) I remembered about you.",
    },
    "memory_off": {
        "ko": "사용자 기억 기능이 꺼져 있어요. 저는 대화 내용 외에는 아무것도 기억하지 않아요.",
        "en": "Per-user memory is switched off: I keep nothing about you beyond this thread.",
    },
    "tool_failed": {
        "ko": "계산하지 못했어요: {reason}",
        "en": "I couldn't work that out: {reason}",
    },
    "error": {
        "ko": "답변을 만드는 중 문제가 생겼어요 ({reason}). 잠시 후 다시 시도해 주세요.",
        "en": "Something went wrong while answering ({reason}). Please try again shortly.",
    },
}

_THANKS = re.compile(r"(고마워|감사|땡큐|thank|thx|ty\b|cheers)", re.IGNORECASE)
_IDENTITY = re.compile(
    r"(누구|뭘 할 수|무엇을 할 수|what can you|who are you|what are you|your name|이름이)",
    re.IGNORECASE,
)


def text(key: str, language: str, **values: Any) -> str:
    return texts.text(TEXTS, key, language, **values)


def smalltalk(message: str, language: str) -> str:
    """A canned smalltalk reply: thanks, identity, or a greeting."""
    if _THANKS.search(message):
        return text("thanks", language)
    if _IDENTITY.search(message):
        return text("identity", language)
    return text("greeting", language)
