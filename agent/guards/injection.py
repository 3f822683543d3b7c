"""Prompt-injection rules: attempts to override the assistant's instructions or persona."""

from __future__ import annotations

from agent.guards.rules import DEVICE, EN_ASKING, EN_DOC_REF, KO_ASKING, KO_YOU, Rule, rule

__all__ = ["INJECTION_EN", "INJECTION_KO", "INJECTION_MARKERS"]

# ----- prompt injection: English

_EN_DROP = (
    r"(?:ignore|disregard|forget|override|bypass|discard|abandon|drop|skip|neglect|scrap|"
    r"throw\s+(?:away|out)|set\s+aside)"
)
_EN_PRIOR = (
    r"(?:previous|prior|above|preceding|earlier|foregoing|original|initial|former|system|"
    r"given|hidden|built-?in)"
)
_EN_ORDERS = (
    r"(?:instructions?|prompts?|directives?|directions|guidelines|rules|commands|programming|"
    r"constraints|restrictions|guardrails|policies|orders)"
)
_EN_LIMITS = (
    r"(?:restrictions|limits|limitations|rules|filters|guidelines|constraints|boundaries|"
    r"ethics|morals|censorship|guardrails|policies|safeguards)"
)

INJECTION_EN: tuple[Rule, ...] = (
    rule(
        "en_ignore_previous",
        rf"\b{_EN_DROP}\s+(?:(?:all|any|every|each)\s+)?(?:of\s+)?"
        rf"(?:(?:the|your|these|those|its|their)\s+)?(?:{_EN_PRIOR}\s+)+(?:\S+\s+)?{_EN_ORDERS}\b",
        rf"\b{_EN_DROP}\s+(?:all|any|every)\s+(?:of\s+)?(?:(?:the|your|these|those)\s+)?"
        r"(?:instructions|prompts|directives|guidelines|programming)\b",
        before=EN_ASKING,
        after=EN_DOC_REF,
    ),
    rule(
        "en_ignore_everything",
        r"\b(?:ignore|disregard|forget)\s+(?:all\s+of\s+|about\s+)?(?:everything|anything|all)\s+"
        r"(?:you\s+(?:were|have\s+been|'ve\s+been)\s+(?:told|taught|instructed|given|programmed)"
        r"|before\s+this\s+(?:message|line|point)|above\s+this\s+line)",
        before=EN_ASKING,
    ),
    rule(
        "en_break_your_rules",
        r"\b(?:ignore|disregard|forget|override|bypass|break|violate|circumvent|abandon|drop|"
        r"escape|get\s+around|get\s+rid\s+of|turn\s+off|switch\s+off|disable|deactivate|remove|"
        r"lift|suspend)\s+(?:all\s+|any\s+)?(?:of\s+)?your\s+(?:\S+\s+){0,2}?"
        r"(?:instructions?|rules|guidelines|programming|restrictions|limitations|limits|"
        r"constraints|safety|filters?|guardrails|policies|principles|training|directives|"
        r"system\s+prompt|prompt|ethics|morals|safeguards|boundaries|censorship)\b",
    ),
    rule(
        "en_dan",
        r"\b(?:you\s+are|you're|you\s+will\s+be|act\s+as|become|pretend\s+to\s+be|roleplay\s+as)"
        r"\s+(?:now\s+)?(?:a\s+|an\s+|the\s+)?dan\b",
        r"\bdan\s+(?:mode|prompt|jailbreak)\b",
        r"\bdan\s*\(\s*do\s+anything\s+now",
        r"\b(?:you\s+can|you\s+will|you\s+are\s+able\s+to|you\s+now)\s+do\s+anything\s+now\b",
    ),
    rule(
        "en_special_mode",
        r"\b(?:jailbreak|jailbroken|unrestricted|unfiltered|uncensored|god|evil|dan)\s+mode\b",
        r"\b(?:you\s+are|you're|you\s+will\s+be|you\s+have\s+been|act|respond|answer|behave|"
        r"reply)\s+(?:now\s+)?(?:in|with|using|under)\s+(?:the\s+)?"
        r"(?:developer|dev|debug|admin|sudo|root|maintenance)\s+mode\b",
        r"\b(?:enable|activate|enter|switch\s+to|turn\s+on|unlock)\s+your\s+"
        r"(?:developer|dev|debug|admin|sudo|root)\s+mode\b",
        r"\bwith\s+developer\s+mode\s+(?:enabled|activated)\b",
        r"\b(?:simulate|emulate)\s+(?:a\s+|the\s+)?developer\s+mode\b",
    ),
    rule(
        "en_act_unrestricted",
        r"\b(?:act|behave|respond|answer|reply|operate|function|roleplay|role-play|pose|speak|"
        r"write)\s+(?:as|like)\s+(?:if\s+you\s+(?:are|were)\s+)?(?:an?\s+|the\s+)?(?:\S+\s+){0,2}?"
        r"(?:unrestricted|unfiltered|uncensored|unaligned|unlimited|jailbroken|amoral|"
        r"unethical|evil|rogue|unbound|lawless)\b",
    ),
    rule(
        "en_pretend_no_limits",
        r"\b(?:pretend|imagine|suppose|assume|roleplay|role-play|act\s+as\s+if|act\s+like|"
        r"hypothetically|let's\s+say|lets\s+say)\b.{0,40}?\b(?:you\s+(?:have|had|'ve)|"
        rf"there\s+(?:are|were))\s+no\s+(?:\S+\s+)?{_EN_LIMITS}\b",
        r"\b(?:pretend|imagine|suppose|assume|act\s+as\s+if)\b.{0,40}?\byou\s+(?:are|were)\s+"
        r"(?:not\s+bound\s+by|free\s+(?:from|of)|exempt\s+from)\b",
    ),
    rule(
        "en_no_limits",
        rf"\byou\s+(?:now\s+)?(?:have|'ve\s+got|have\s+got)\s+no\s+(?:\S+\s+)?{_EN_LIMITS}\b",
        r"\byou\s+are\s+(?:now\s+)?(?:free|freed|released|liberated|unbound|exempt)\s+(?:from|of)\s+"
        rf"(?:(?:all|any|your|the)\s+)*(?:\S+\s+)?{_EN_LIMITS}\b",
        r"\byou\s+are\s+(?:now\s+)?(?:no\s+longer|not)\s+(?:bound|restricted|limited|constrained)"
        r"\s+by\b",
        r"\b(?:answer|respond|reply|talk|speak|write|tell\s+me)\b.{0,30}?\b(?:without|with\s+no)\s+"
        r"(?:any\s+)?(?:restrictions|filters|filtering|censorship|limitations|"
        r"ethical\s+(?:guidelines|constraints|considerations|limits)|"
        r"safety\s+(?:guidelines|filters|rules))\b",
    ),
    rule(
        "en_no_longer_assistant",
        r"\byou\s+are\s+no\s+longer\s+(?:an?\s+)?(?:ai|assistant|chatbot|bot|language\s+model|"
        r"teamrag|chatgpt|claude)\b",
        r"\byou\s+are\s+not\s+(?:an?\s+)?(?:ai|assistant|chatbot|language\s+model)\s+anymore\b",
    ),
    rule(
        "en_stay_in_character",
        r"\bstay\s+in\s+character\b",
        r"\b(?:never|don't|do\s+not)\s+break\s+character\b",
    ),
    rule(
        "en_new_persona",
        r"\byour\s+(?:new|real|true|actual|updated)\s+(?:instructions|rules|directives|role|"
        r"purpose|task|system\s+prompt|programming|persona|identity)\s+(?:is|are)\b",
        r"\bfrom\s+now\s+on,?\s+(?:you\s+(?:will|must|shall|should)\s+(?:act|behave|respond|"
        r"answer|pretend|reply|roleplay|ignore)|act\s+as|respond\s+as|pretend)\b",
        r"\bfrom\s+now\s+on,?\s+(?:you\s+are|you're)\s+(?:called|named|no\s+longer|not\s+an?\s+|"
        r"free|unrestricted|unfiltered|dan\b|an?\s+(?:ai|assistant|bot|chatbot|model)\s+"
        r"(?:with(?:out)?|that|who))",
    ),
    rule(
        "en_developer_claim",
        r"\b(?:i\s+am|i'm|as|this\s+is)\s+your\s+(?:developer|creator|programmer|maker|owner|"
        r"administrator|operator)s?\b",
    ),
    rule(
        "en_jailbreak",
        r"\bjail\s*br(?:eak|oken|eaking|eaks|eaked)\w*",
        near=DEVICE,
    ),
)

# ----- prompt injection: role markers from chat templates (any language)

INJECTION_MARKERS: tuple[Rule, ...] = (
    rule(
        "role_marker",
        r"<\|?\s*im_start\s*\|?>",
        r"<\|\s*(?:system|assistant|im_end|endoftext|start_header_id|eot_id)\s*\|>",
        r"\[/?inst\]",
        r"<</?sys>>",
        r"#{2,}\s*(?:system|instructions?|new\s+instructions|assistant)\s*(?::|#)",
        r"\[(?:system|admin|developer)\s+(?:override|message|prompt|instructions?)\]",
        r"(?:^|\s|\[)(?:system|developer|시스템|관리자|개발자)\s*(?:prompt|message|instructions?|"
        r"메시지|지시|명령|프롬프트)?\s*\]?\s*:\s*(?:you\s+are|you're|from\s+now\s+on,?\s+you|"
        r"ignore\s+(?:all|any|every|the|your|previous|prior|above)|new\s+instructions|"
        r"your\s+(?:new\s+)?(?:role|instructions|task)|"
        r"(?:지금부터|이제부터|이제)?\s*(?:너는|넌|당신은)|이전\s*지시|모든\s*(?:지시|규칙))",
    ),
)

# ----- prompt injection: Korean

_KO_PRIOR = (
    r"(?:이전|앞선|앞의|위의|위|기존|지금까지의?|여태까지의?|원래의?|처음|초기|최초|시스템|모든|"
    r"받은|설정된|주어진|입력된)"
)
_KO_ORDERS = (
    r"(?:지시\s*사항|지시문|지시|지침|명령어?|명령문|규칙|룰|프롬프트|가이드라인|"
    r"제약\s*(?:조건|사항)?|제한\s*(?:사항)?)"
)
_KO_OBJECT = r"\s*(?:들)?\s*(?:을|를|은|는|이|가|도)?\s*"
_KO_ALL = r"(?:(?:다|전부|모두|싹|모조리|깡그리|일단|그냥|완전히|잠시|잠깐)\s*)*"
_KO_NO_LIMIT = r"(?:제한|제약|검열|필터|규칙|윤리|한계|가이드라인)"

INJECTION_KO: tuple[Rule, ...] = (
    rule(
        "ko_ignore_previous",
        rf"{_KO_PRIOR}\s*(?:의\s*)?(?:모든\s*)?{_KO_ORDERS}{_KO_OBJECT}{_KO_ALL}"
        r"(?:무시|잊어|잊고|잊으|지워|지우|무효|폐기|따르지\s*(?:마|말))",
        after=KO_ASKING,
    ),
    rule(
        "ko_break_your_rules",
        rf"{KO_YOU}\s*(?:의|가\s*가진|한테\s*있는|에게\s*주어진)?\s*(?:모든\s*)?"
        r"(?:규칙|지시\s*사항|지시|지침|제한|제약|필터|안전\s*장치|검열|가이드라인|"
        r"윤리\s*(?:규정|기준|강령)?|프로그래밍|원칙)"
        rf"{_KO_OBJECT}{_KO_ALL}(?:무시|어기|어겨|깨|위반|우회|해제|풀어|풀고|없애|끄|꺼|잊어|잊고|벗어나)",
        after=KO_ASKING,
    ),
    rule(
        "ko_from_now_unrestricted",
        r"(?:지금부터|이제부터|이제|앞으로|오늘부터|이\s*대화에서)\s*(?:는\s*)?"
        r"(?:너는|넌|너|당신은|당신|니가|네가).{0,40}?"
        rf"(?:{_KO_NO_LIMIT}\s*(?:이|가)?\s*(?:전혀\s*|하나도\s*|아무\s*)?없|무제한|자유로운\s*(?:ai|인공지능)|"
        r"(?:무엇이든|뭐든지?)\s*(?:할|말할|대답할|답할)\s*수|dan\b|탈옥|개발자\s*모드|해방)",
    ),
    rule(
        "ko_unrestricted_ai",
        rf"{_KO_NO_LIMIT}\s*(?:이|가)?\s*(?:전혀\s*|하나도\s*|아무것도\s*)?없는\s*"
        r"(?:ai|인공지능|챗봇|봇|어시스턴트|비서|모델|존재|상태|모드|gpt)",
        r"무제한\s*(?:모드|ai|인공지능|챗봇)",
        r"(?:검열|필터)\s*(?:해제|없는)\s*(?:모드|버전)",
    ),
    rule(
        "ko_pretend_no_limits",
        rf"(?:{_KO_NO_LIMIT}|안전\s*장치)\s*(?:이|가|은|는)?\s*"
        r"(?:전혀\s*|하나도\s*|아무것도\s*|더\s*이상\s*)?"
        r"(?:(?:없는|풀린|해제된|사라진)\s*(?:척|것처럼|것\s*처럼|듯이?|상태(?:라고|인\s*척|로))"
        r"|없다고\s*(?:가정|생각|상상|치))",
    ),
    rule(
        "ko_jailbreak",
        r"탈옥",
        near=DEVICE,
    ),
    rule(
        "ko_special_mode",
        r"(?:dan|탈옥|무제한|검열\s*해제)\s*모드",
        rf"{KO_YOU}\s*(?:는|은)?\s*(?:이제|지금부터|이제부터)?\s*(?:개발자|관리자|디버그|루트|dan)"
        r"\s*모드",
        r"개발자\s*모드\s*(?:로|에서)\s*(?:대답|응답|답변|답|말|행동)",
    ),
    rule(
        "ko_no_longer_assistant",
        r"(?<!\w)(?:너|넌|당신)\s*(?:은|는)?\s*(?:이제\s*)?더\s*이상\s*"
        r"(?:ai|인공지능|어시스턴트|챗봇|봇|비서|언어\s*모델)\s*(?:가|이)?\s*아니",
    ),
    rule(
        "ko_new_persona",
        rf"{KO_YOU}\s*(?:의)?\s*(?:새로운|새|진짜|실제|진정한)\s*"
        r"(?:역할|지시\s*사항|지시|규칙|임무|명령|정체|목적|프롬프트)\s*(?:은|는|이|가|:)",
    ),
    rule(
        "ko_developer_claim",
        r"(?<!\w)(?:나는|난|저는|전|내가|제가)\s*(?:너|당신|네|니)\s*(?:의|를|을)?\s*"
        r"(?:개발자|제작자|창조자|창시자|주인|만든\s*사람|관리자|운영자)",
    ),
    rule(
        "ko_ethics_off",
        r"(?:검열|윤리(?:적)?\s*(?:제약|기준|규칙|고려|판단)?|도덕(?:적)?\s*(?:기준|판단)?)\s*"
        r"(?:은|는|을|를|같은\s*건)?\s*(?:무시하고|무시해|없이|따위|신경\s*(?:쓰지|끄고)|끄고|"
        r"해제하고|해제해|빼고|버리고|접어\s*두고)",
    ),
    rule(
        "ko_answer_without_limits",
        r"(?:제한|제약|검열|필터링?|규칙)\s*(?:없이|을\s*무시하고|를\s*무시하고|을\s*풀고|를\s*풀고)\s*"
        r"(?:대답|답변|답|응답|말)\s*(?:을\s*)?(?:해|하세요|하라|해라|해\s*줘|해줘)",
    ),
    rule(
        "ko_roleplay_override",
        rf"(?:역할극|롤플레이|롤\s*플레이)\s*(?:을|를|으로|로|이니까|이니|일\s*뿐)?.{{0,30}}?"
        rf"{_KO_NO_LIMIT}\s*(?:이|가|은|는)?\s*(?:없|무시|적용\s*(?:되지|안))",
    ),
)
