"""The input guard: refuse empty, oversized or unsafe messages before paying for an LLM call."""

from __future__ import annotations

import re

from agent.guards.harmful import HARMFUL_EN, HARMFUL_KO
from agent.guards.injection import INJECTION_EN, INJECTION_KO, INJECTION_MARKERS
from agent.guards.normalize import normalise, spelled_runs, variants, visible
from agent.guards.rules import Rule
from agent.guards.system_prompt import SYSTEM_PROMPT_EN, SYSTEM_PROMPT_KO
from agent.guards.verdict import GuardReason, InputVerdict
from agent.wording.language import Language, detect_language

__all__ = ["check_input"]

_ALLOWED = InputVerdict(blocked=False, reason=None, message="")

# Letter-by-letter spelling loses the spaces the pattern rules rely on, so joined runs are
# checked against squashed forms of the most common phrases.
_SQUASHED: dict[GuardReason, re.Pattern[str]] = {
    "injection": re.compile(
        r"(?:ignore|disregard|forget|override|bypass)(?:all|any|the|your|my|of|previous|prior|"
        r"above|earlier|system)*(?:instructions?|rules|guidelines|prompts?|directives)|"
        r"developermode|doanythingnow|jailbr(?:eak|oken)|youare(?:now)?dan|"
        r"(?:이전|위의?|앞의|기존|모든|시스템)(?:지시사항|지시|지침|규칙|명령|프롬프트)"
        r"(?:을|를|은|는)?(?:다|전부|모두)?(?:무시|잊어)|탈옥|제한없는"
    ),
    "system_prompt": re.compile(
        r"(?:show|print|reveal|repeat|tell|give|output|display|dump|leak)(?:me|us)?(?:your|the)"
        r"(?:full|entire|initial|hidden|original)?(?:systemprompt|systemmessage|initialprompt|"
        r"initialinstructions|hiddeninstructions)|yoursystemprompt|"
        r"시스템프롬프트(?:를|을)?(?:그대로|전부)?(?:알려|보여|출력|말해|공개)"
    ),
    "harmful": re.compile(
        r"(?:make|build|create)(?:a|an)?(?:pipe)?(?:bomb|explosive)|ransomware|keylogger|"
        r"폭탄제조|폭탄만드|폭발물만드|마약제조|필로폰|랜섬웨어만들"
    ),
}

_FAMILIES: tuple[tuple[GuardReason, tuple[Rule, ...]], ...] = (
    ("injection", INJECTION_EN + INJECTION_MARKERS + INJECTION_KO),
    ("system_prompt", SYSTEM_PROMPT_EN + SYSTEM_PROMPT_KO),
    ("harmful", HARMFUL_EN + HARMFUL_KO),
)

# --------------------------------------------------------------------------- messages

_MESSAGES: dict[str, dict[Language, str]] = {
    "empty": {
        "en": "Your message looks empty. Type your question and I'll look it up in the "
        "team's documents.",
        "ko": "메시지가 비어 있는 것 같아요. 질문을 입력해 주시면 팀 문서에서 찾아 드릴게요.",
    },
    "too_long": {
        "en": "Your message is {length:,} characters long, over the limit of {limit:,}. "
        "Please split it into shorter questions, or attach it as a document and ask about it.",
        "ko": "메시지가 {length:,}자로, 최대 {limit:,}자를 넘었어요. 질문을 나눠서 보내 주시거나, "
        "긴 내용은 문서로 첨부한 뒤 질문해 주세요.",
    },
    "injection": {
        "en": "I can't follow instructions that try to change how I work. Ask your question "
        "about the team's documents and I'll help.",
        "ko": "제 작동 방식을 바꾸려는 지시는 따를 수 없어요. 팀 문서에 대한 질문을 해 주시면 "
        "도와드릴게요.",
    },
    "system_prompt": {
        "en": "I can't share my internal instructions. Ask me about the team's documents and "
        "I'll help.",
        "ko": "제 내부 지시사항은 공유할 수 없어요. 팀 문서에 대한 질문을 해 주시면 도와드릴게요.",
    },
    "harmful": {
        "en": "I can't help with that, because it could cause serious harm. I'm glad to help "
        "with questions about the team's documents.",
        "ko": "심각한 피해로 이어질 수 있는 내용이라 도와드릴 수 없어요. 팀 문서에 대한 질문은 "
        "언제든 도와드릴게요.",
    },
    # Someone asking how to hurt themselves needs a person, not a policy line.
    "self_harm": {
        "en": "I can't help with that. If you're thinking about hurting yourself, please reach "
        "out to someone you trust or a local crisis line. You don't have to go through this "
        "alone.",
        "ko": "그 내용은 도와드릴 수 없어요. 혹시 스스로를 해치려는 생각이 드신다면 믿을 수 있는 "
        "분이나 자살예방상담전화 109에 연락해 주세요. 혼자 견디지 않으셔도 돼요.",
    },
}


def _refuse(
    reason: GuardReason, language: Language, rule: str, *, length: int = 0, limit: int = 0
) -> InputVerdict:
    key = "self_harm" if rule.startswith("self_harm") else reason
    message = _MESSAGES[key][language].format(length=length, limit=limit)
    return InputVerdict(blocked=True, reason=reason, message=message, rule=rule)


# --------------------------------------------------------------------------- input guard


def _first_match(text: str) -> tuple[GuardReason, str] | None:
    forms = variants(text)
    runs = spelled_runs(text)
    for reason, rules in _FAMILIES:
        for rule in rules:
            if any(rule.fires(form) for form in forms):
                return reason, rule.name
        if any(_SQUASHED[reason].search(run) for run in runs):
            return reason, f"spelled_out_{reason}"
    return None


def check_input(
    text: str, *, max_chars: int = 4000, language: Language | None = None
) -> InputVerdict:
    """Decide whether a message may reach the LLM; refusals are in the user's language.

    Checks, in order: empty, too long, prompt injection, a request for the system
    prompt, harmful content. ``language`` defaults to the one detected in ``text``.
    """
    if max_chars < 1:
        raise ValueError(f"max_chars must be positive, got {max_chars}")
    lang: Language = language if language is not None else detect_language(text)
    if not any(ch.isalnum() for ch in visible(text)):
        return _refuse("empty", lang, "empty")
    # Surrounding whitespace is chat-client noise, not the user's words.
    length = len(text.strip())
    if length > max_chars:
        return _refuse("too_long", lang, "too_long", length=length, limit=max_chars)
    found = _first_match(normalise(text))
    if found is None:
        return _ALLOWED
    reason, rule = found
    return _refuse(reason, lang, rule)
