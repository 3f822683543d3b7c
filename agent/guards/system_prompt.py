"""Rules for requests to reveal the assistant's system prompt or hidden instructions."""

from __future__ import annotations

from agent.guards.rules import EN_ASKING, KO_ASKING, KO_YOU, Rule, rule

__all__ = ["SYSTEM_PROMPT_EN", "SYSTEM_PROMPT_KO"]

# ----- requests for the system prompt

_EN_REVEAL = (
    r"(?:show|print|reveal|repeat|display|output|tell|give|share|dump|leak|expose|disclose|"
    r"list|recite|type|write|copy|paste|spell\s+out|read|send|post|return|echo|quote)"
)
_EN_OWN_PROMPT = (
    r"(?:system\s+(?:prompt|message)|initial\s+(?:prompt|instructions)|"
    r"original\s+(?:prompt|instructions)|hidden\s+(?:prompt|instructions|rules)|"
    r"secret\s+(?:prompt|instructions|rules)|internal\s+(?:prompt|instructions)|"
    r"pre-?prompt|meta-?prompt)"
)
_EN_SETTING = (
    r"^\s*(?:setting|settings|config|configuration|field|option|parameter|param|variable|env|"
    r"template|file|docs|documentation|section|example|key|value|format|syntax|"
    r"(?:in|from)\s+(?:our|the)\s+(?:repo|docs|config|wiki|codebase|runbook|settings|yaml|helm|"
    r"env|code))\b"
)

SYSTEM_PROMPT_EN: tuple[Rule, ...] = (
    rule(
        "en_your_system_prompt",
        r"\byour\s+(?:(?:own|full|entire|complete|exact|original|initial|hidden|secret|internal|"
        rf"underlying|actual|real|current)\s+)*{_EN_OWN_PROMPT}\b",
    ),
    rule(
        "en_reveal_your_instructions",
        rf"\b{_EN_REVEAL}\s+(?:me\s+|us\s+)?(?:out\s+|back\s+)?(?:all\s+)?(?:of\s+)?your\s+"
        r"(?:\S+\s+){0,2}?(?:prompt|instructions|rules|guidelines|directives|programming|"
        r"configuration)\b",
        r"\bwhat\s+(?:are|were|is|was)\s+your\s+(?:\S+\s+){0,2}?"
        r"(?:instructions|rules|guidelines|directives|prompt)\b",
    ),
    rule(
        "en_reveal_system_prompt",
        rf"\b{_EN_REVEAL}\s+(?:me\s+|us\s+)?(?:out\s+|back\s+)?(?:all\s+of\s+)?"
        r"(?:the\s+|this\s+|its\s+|the\s+(?:bot|assistant|ai|model)'s\s+)?"
        rf"(?:(?:full|entire|complete|exact|original|current)\s+)*{_EN_OWN_PROMPT}\b",
        before=EN_ASKING,
        after=_EN_SETTING,
    ),
    rule(
        "en_told_before",
        r"\bwhat\s+(?:were|are|have)\s+you\s+(?:been\s+)?(?:told|instructed|programmed|given|"
        r"prompted|asked)\s+(?:to\s+do\s+)?(?:before|prior\s+to|at\s+the\s+(?:start|beginning)\s+of)"
        r"\s+(?:this|our|the)\s+(?:conversation|chat|session|thread|dialog(?:ue)?)",
        r"\bwhat\s+(?:instructions|rules|directives|prompt)\s+(?:were|have)\s+you\s+(?:been\s+)?"
        r"(?:given|told|provided|fed)\b",
        r"\bwhat\s+(?:did|does)\s+(?:the|your)\s+(?:developers?|creators?|system|operators?)\s+"
        r"(?:tell|instruct|say\s+to)\s+you\b",
    ),
    rule(
        "en_repeat_above",
        r"\b(?:repeat|print|output|echo|recite|copy)\s+(?:back\s+)?(?:everything|all|"
        r"the\s+(?:text|words|content|lines))\s+(?:above|before\s+this|preceding)\b",
        r"\b(?:starting|beginning)\s+with\s+[\"']?you\s+are\b",
    ),
)

_KO_REVEAL = (
    r"(?:알려|보여|출력|말해|공개|읊|복사|적어|써\s*줘|붙여|노출|표시|드러내|유출|덤프|뱉어|"
    r"내놔|공유)"
)
_KO_REVEAL_FILLER = (
    r"\s*(?:(?:을|를|이|가|은|는|좀|전부|전체|다|그대로|원문|원본|있는\s*그대로|정확히|"
    r"한\s*번|한번|먼저|모두|내용을?|전문을?)\s*)*"
)

SYSTEM_PROMPT_KO: tuple[Rule, ...] = (
    rule(
        "ko_reveal_system_prompt",
        r"(?:system\s*prompt|(?:시스템|숨겨진|숨은|비밀|초기|최초)\s*(?:프롬프트|prompt)|시스템\s*(?:메시지|지시\s*사항|지시|지침)"
        rf"|(?:숨겨진|숨은|비밀)\s*(?:지시\s*사항|지시|지침|규칙)){_KO_REVEAL_FILLER}{_KO_REVEAL}",
        before=r"(?:설정|config|yaml|코드|파일|템플릿|변수|랭체인|langchain)\s*(?:의|에서|에\s*있는)\s*$",
        after=KO_ASKING,
    ),
    rule(
        "ko_your_instructions",
        rf"{KO_YOU}\s*(?:의|가|한테|에게)?\s*(?:받은\s*|주어진\s*|설정된\s*|입력된\s*|들어간\s*|가진\s*)?"
        r"(?:(?:시스템|system)\s*(?:프롬프트|prompt)|프롬프트|prompt|지시\s*사항|지시문|지시|지침|초기\s*설정|초기\s*지시|규칙|"
        r"설정값|가이드라인)"
        rf"{_KO_REVEAL_FILLER}(?:{_KO_REVEAL}|뭐야|뭐니|뭔가요|뭐예요|뭐에요|무엇|뭔지|뭐였)",
    ),
    rule(
        "ko_told_before",
        r"(?:대화|채팅|세션)\s*(?:를|을|가|이)?\s*(?:시작\s*(?:하기\s*)?)?(?:전|이전|앞)\s*(?:에)?\s*"
        r"(?:너(?:는|가|한테|에게)?\s*)?(?:받은|들은|입력된|주어진|설정된|지시받은)\s*"
        r"(?:지시\s*사항|지시|명령|내용|프롬프트|지침|메시지|설정)",
        rf"{KO_YOU}\s*(?:는|은)?\s*(?:처음에|원래|맨\s*처음에?)\s*(?:어떤|무슨)\s*"
        r"(?:지시|명령|프롬프트|지침|설정)",
    ),
    rule(
        "ko_repeat_above",
        r"(?:위|앞|이전)\s*(?:의|에\s*있는)?\s*(?:모든\s*)?(?:지시\s*사항|지시|프롬프트|지침)\s*"
        r"(?:을|를)?\s*(?:그대로|전부|모두|토씨\s*하나\s*안\s*틀리고)\s*(?:출력|반복|복사|읊|적어|알려|보여)",
        r"(?:너는|당신은|you\s+are)\s*(?:으로|로)\s*시작하는\s*(?:문장|텍스트|내용|부분|글)",
    ),
)
