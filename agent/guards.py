"""Cheap checks around the LLM: refuse bad input before paying for a call, flag useless answers.

Everything here is a pure function over strings: no LLM, no I/O. The input guard
is a first line of defence, not the only one; retrieval only ever answers from
the team's documents and the LLM has its own safety training. So every pattern
prefers precision: a team asking work questions ("how do I ignore a file in
git?", "폭탄 세일 일정") must never be refused, and a rare clever attack that
slips through still meets the other layers.

Matching runs on a normalised copy of the text (NFKC, casefolded, invisible
characters removed, look-alike Cyrillic and Greek letters folded to Latin,
whitespace collapsed), plus a copy in which letter-by-letter spelling such as
"i g n o r e" is joined back up.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import Literal

from agent.language import Language, detect_language

GuardReason = Literal["empty", "too_long", "injection", "harmful", "system_prompt"]
OutputQuality = Literal["pass", "empty", "apology_only"]

__all__ = [
    "GuardReason",
    "InputVerdict",
    "OutputQuality",
    "check_input",
    "check_output",
]


@dataclass(frozen=True)
class InputVerdict:
    blocked: bool
    reason: GuardReason | None
    # A polite refusal in the user's language that says why; "" when not blocked.
    message: str
    # Which pattern fired, for logs: refused users ask "why?" and false positives get tuned.
    rule: str = ""


_ALLOWED = InputVerdict(blocked=False, reason=None, message="")

# --------------------------------------------------------------------------- normalisation

# Zero-width, bidi, variation selectors, Hangul fillers, soft hyphen: all invisible to a
# reader, all usable to split a keyword so a naive matcher misses it.
_INVISIBLE = re.compile(
    "[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f"
    "\u202a-\u202e\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\U000e0000-\U000e007f]"
)
# Unicode tag characters mirror ASCII and render as nothing; models still read them, so
# hidden instructions smuggled this way are decoded and matched like visible text.
_TAG_RUN = re.compile("[\U000e0020-\U000e007e]+")
_SPACE = re.compile(r"\s+")
_APOSTROPHES = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201b": "'", "\u2032": "'"})
# NFKC leaves these alone, yet "ignоre" with a Cyrillic "о" reads exactly like "ignore".
_LOOKALIKES = str.maketrans(
    {
        "а": "a", "е": "e", "ё": "e", "і": "i", "ј": "j", "к": "k", "м": "m", "н": "h",
        "о": "o", "р": "p", "с": "c", "т": "t", "у": "y", "х": "x", "ѕ": "s", "ԁ": "d",
        "ɡ": "g", "ı": "i", "α": "a", "ε": "e", "ι": "i", "κ": "k", "ν": "v", "ο": "o",
        "ρ": "p", "τ": "t", "υ": "u", "χ": "x",
    }
)  # fmt: skip
# Three or more single letters or syllables, each followed by one space, dot, dash or star:
# "i g n o r e", "i.g.n.o.r.e".
_SPELLED_OUT = re.compile(r"(?<![^\W_])[^\W_](?:[ .\-_*·][^\W_]){2,}(?![^\W_])")
_SPELL_SEPARATORS = re.compile(r"[ .\-_*·]")


def _visible(text: str) -> str:
    """What a reader sees: compatibility forms folded, invisible characters gone."""
    return _INVISIBLE.sub("", unicodedata.normalize("NFKC", text))


def _normalise(text: str) -> str:
    decoded = _TAG_RUN.sub(lambda m: " " + "".join(chr(ord(c) - 0xE0000) for c in m[0]) + " ", text)
    folded = _visible(decoded).casefold().translate(_APOSTROPHES).translate(_LOOKALIKES)
    return _SPACE.sub(" ", folded).strip()


def _spelled_runs(text: str) -> list[str]:
    return [_SPELL_SEPARATORS.sub("", m[0]) for m in _SPELLED_OUT.finditer(text)]


def _variants(text: str) -> list[str]:
    joined = _SPELLED_OUT.sub(lambda m: _SPELL_SEPARATORS.sub("", m[0]), text)
    return [text] if joined == text else [text, joined]


# --------------------------------------------------------------------------- rules

_WINDOW = 60


@dataclass(frozen=True)
class _Rule:
    """A pattern plus the context that turns a hit back into an innocent question."""

    name: str
    pattern: re.Pattern[str]
    before: re.Pattern[str] | None = None  # searched in the text just before a hit
    after: re.Pattern[str] | None = None  # searched in the text just after a hit
    near: re.Pattern[str] | None = None  # searched in the text around a hit

    def fires(self, text: str) -> bool:
        for m in self.pattern.finditer(text):
            start, end = m.start(), m.end()
            if self.before and self.before.search(text[max(0, start - _WINDOW) : start]):
                continue
            if self.after and self.after.search(text[end : end + _WINDOW]):
                continue
            if self.near and self.near.search(text[max(0, start - _WINDOW) : end + _WINDOW]):
                continue
            return True
        return False


def _rule(
    name: str,
    *patterns: str,
    before: str | None = None,
    after: str | None = None,
    near: str | None = None,
) -> _Rule:
    return _Rule(
        name=name,
        pattern=re.compile("|".join(f"(?:{p})" for p in patterns)),
        before=re.compile(before) if before else None,
        after=re.compile(after) if after else None,
        near=re.compile(near) if near else None,
    )


# Context shared by several rules. English: the speaker is asking whether *they* should
# do it, or quoting a document; Korean: a question or quotative ending, not a command.
_EN_ASKING = (
    r"(?:\b(?:should|do|can|could|may|must|shall|did|would|will|if)\s+"
    r"(?:i|we|they|people|users|everyone|the\s+team)"
    r"|\b(?:i|we|they|people|users|everyone)(?:\s+(?:can|could|should|may|must|will|would|"
    r"often|usually|always|just|did|do|need\s+to|have\s+to))?"
    r"|\bhow\s+(?:(?:do|can|should|could|would)\s+(?:i|we)|to)"
    r"|\b(?:when|why|whether|where)\s+to"
    r"|\b(?:okay|ok|fine|safe|allowed|right|wise|possible|way)\s+(?:for\s+(?:me|us)\s+)?to"
    r"|\b(?:says?|said|told\s+(?:me|us)|tells\s+(?:me|us)|asks?\s+(?:me|us)|means?|supposed)\s+to"
    r"|\b(?:want|need|have|had|going|is\s+there\s+a\s+way)\s+to)"
    r"\s+(?:just\s+|still\s+|simply\s+|really\s+|safely\s+|now\s+)?$"
)
_EN_DOC_REF = (
    r"^\s+(?:in|from|of|on|for)\s+(?:the|our|this|that|my|a|an)\s+(?:\S+\s+){0,2}?"
    r"(?:runbook|wiki|docs?|documents?|documentation|guide|readme|manual|page|ticket|e-?mail|"
    r"mail|confluence|notion|jira|handbook|polic(?:y|ies)|sop|playbook|checklist|spec|memo|"
    r"article|file|repo|repository|template|onboarding|announcement|procedure|process)s?\b"
)
_KO_ASKING = (
    r"^\S*?(?:라고|라는|래요|랬|해도|해야|하려면|려면|(?:하는|는)\s*(?:방법|법|게|것|경우|지)|"
    r"할\s*(?:수|까|지|때)|하나요|나요|되|될|돼|된|하면\s*(?:되|안)|합니까)"
    r"|^(?:도|야)(?:\s|$)"
    r"|^.{0,40}(?:맞나요|맞아요\?|맞는지|맞죠|맞을까요|되나요|될까요)"
)
_DEVICE = (
    r"phone|iphone|ipad|\bios\b|android|device|handset|tablet|mobile|console|playstation|"
    r"kindle|firestick|router|\bmdm\b|폰|기기|단말|아이폰|아이패드|갤럭시|태블릿"
)

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

_INJECTION_EN: tuple[_Rule, ...] = (
    _rule(
        "en_ignore_previous",
        rf"\b{_EN_DROP}\s+(?:(?:all|any|every|each)\s+)?(?:of\s+)?"
        rf"(?:(?:the|your|these|those|its|their)\s+)?(?:{_EN_PRIOR}\s+)+(?:\S+\s+)?{_EN_ORDERS}\b",
        rf"\b{_EN_DROP}\s+(?:all|any|every)\s+(?:of\s+)?(?:(?:the|your|these|those)\s+)?"
        r"(?:instructions|prompts|directives|guidelines|programming)\b",
        before=_EN_ASKING,
        after=_EN_DOC_REF,
    ),
    _rule(
        "en_ignore_everything",
        r"\b(?:ignore|disregard|forget)\s+(?:all\s+of\s+|about\s+)?(?:everything|anything|all)\s+"
        r"(?:you\s+(?:were|have\s+been|'ve\s+been)\s+(?:told|taught|instructed|given|programmed)"
        r"|before\s+this\s+(?:message|line|point)|above\s+this\s+line)",
        before=_EN_ASKING,
    ),
    _rule(
        "en_break_your_rules",
        r"\b(?:ignore|disregard|forget|override|bypass|break|violate|circumvent|abandon|drop|"
        r"escape|get\s+around|get\s+rid\s+of|turn\s+off|switch\s+off|disable|deactivate|remove|"
        r"lift|suspend)\s+(?:all\s+|any\s+)?(?:of\s+)?your\s+(?:\S+\s+){0,2}?"
        r"(?:instructions?|rules|guidelines|programming|restrictions|limitations|limits|"
        r"constraints|safety|filters?|guardrails|policies|principles|training|directives|"
        r"system\s+prompt|prompt|ethics|morals|safeguards|boundaries|censorship)\b",
    ),
    _rule(
        "en_dan",
        r"\b(?:you\s+are|you're|you\s+will\s+be|act\s+as|become|pretend\s+to\s+be|roleplay\s+as)"
        r"\s+(?:now\s+)?(?:a\s+|an\s+|the\s+)?dan\b",
        r"\bdan\s+(?:mode|prompt|jailbreak)\b",
        r"\bdan\s*\(\s*do\s+anything\s+now",
        r"\b(?:you\s+can|you\s+will|you\s+are\s+able\s+to|you\s+now)\s+do\s+anything\s+now\b",
    ),
    _rule(
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
    _rule(
        "en_act_unrestricted",
        r"\b(?:act|behave|respond|answer|reply|operate|function|roleplay|role-play|pose|speak|"
        r"write)\s+(?:as|like)\s+(?:if\s+you\s+(?:are|were)\s+)?(?:an?\s+|the\s+)?(?:\S+\s+){0,2}?"
        r"(?:unrestricted|unfiltered|uncensored|unaligned|unlimited|jailbroken|amoral|"
        r"unethical|evil|rogue|unbound|lawless)\b",
    ),
    _rule(
        "en_pretend_no_limits",
        r"\b(?:pretend|imagine|suppose|assume|roleplay|role-play|act\s+as\s+if|act\s+like|"
        r"hypothetically|let's\s+say|lets\s+say)\b.{0,40}?\b(?:you\s+(?:have|had|'ve)|"
        rf"there\s+(?:are|were))\s+no\s+(?:\S+\s+)?{_EN_LIMITS}\b",
        r"\b(?:pretend|imagine|suppose|assume|act\s+as\s+if)\b.{0,40}?\byou\s+(?:are|were)\s+"
        r"(?:not\s+bound\s+by|free\s+(?:from|of)|exempt\s+from)\b",
    ),
    _rule(
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
    _rule(
        "en_no_longer_assistant",
        r"\byou\s+are\s+no\s+longer\s+(?:an?\s+)?(?:ai|assistant|chatbot|bot|language\s+model|"
        r"teamrag|chatgpt|claude)\b",
        r"\byou\s+are\s+not\s+(?:an?\s+)?(?:ai|assistant|chatbot|language\s+model)\s+anymore\b",
    ),
    _rule(
        "en_stay_in_character",
        r"\bstay\s+in\s+character\b",
        r"\b(?:never|don't|do\s+not)\s+break\s+character\b",
    ),
    _rule(
        "en_new_persona",
        r"\byour\s+(?:new|real|true|actual|updated)\s+(?:instructions|rules|directives|role|"
        r"purpose|task|system\s+prompt|programming|persona|identity)\s+(?:is|are)\b",
        r"\bfrom\s+now\s+on,?\s+(?:you\s+(?:will|must|shall|should)\s+(?:act|behave|respond|"
        r"answer|pretend|reply|roleplay|ignore)|act\s+as|respond\s+as|pretend)\b",
        r"\bfrom\s+now\s+on,?\s+(?:you\s+are|you're)\s+(?:called|named|no\s+longer|not\s+an?\s+|"
        r"free|unrestricted|unfiltered|dan\b|an?\s+(?:ai|assistant|bot|chatbot|model)\s+"
        r"(?:with(?:out)?|that|who))",
    ),
    _rule(
        "en_developer_claim",
        r"\b(?:i\s+am|i'm|as|this\s+is)\s+your\s+(?:developer|creator|programmer|maker|owner|"
        r"administrator|operator)s?\b",
    ),
    _rule(
        "en_jailbreak",
        r"\bjail\s*br(?:eak|oken|eaking|eaks|eaked)\w*",
        near=_DEVICE,
    ),
)

# ----- prompt injection: role markers from chat templates (any language)

_INJECTION_MARKERS: tuple[_Rule, ...] = (
    _rule(
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
_KO_YOU = r"(?<!\w)(?:너|네|니|당신|너희|네가|니가)"
_KO_NO_LIMIT = r"(?:제한|제약|검열|필터|규칙|윤리|한계|가이드라인)"

_INJECTION_KO: tuple[_Rule, ...] = (
    _rule(
        "ko_ignore_previous",
        rf"{_KO_PRIOR}\s*(?:의\s*)?(?:모든\s*)?{_KO_ORDERS}{_KO_OBJECT}{_KO_ALL}"
        r"(?:무시|잊어|잊고|잊으|지워|지우|무효|폐기|따르지\s*(?:마|말))",
        after=_KO_ASKING,
    ),
    _rule(
        "ko_break_your_rules",
        rf"{_KO_YOU}\s*(?:의|가\s*가진|한테\s*있는|에게\s*주어진)?\s*(?:모든\s*)?"
        r"(?:규칙|지시\s*사항|지시|지침|제한|제약|필터|안전\s*장치|검열|가이드라인|"
        r"윤리\s*(?:규정|기준|강령)?|프로그래밍|원칙)"
        rf"{_KO_OBJECT}{_KO_ALL}(?:무시|어기|어겨|깨|위반|우회|해제|풀어|풀고|없애|끄|꺼|잊어|잊고|벗어나)",
        after=_KO_ASKING,
    ),
    _rule(
        "ko_from_now_unrestricted",
        r"(?:지금부터|이제부터|이제|앞으로|오늘부터|이\s*대화에서)\s*(?:는\s*)?"
        r"(?:너는|넌|너|당신은|당신|니가|네가).{0,40}?"
        rf"(?:{_KO_NO_LIMIT}\s*(?:이|가)?\s*(?:전혀\s*|하나도\s*|아무\s*)?없|무제한|자유로운\s*(?:ai|인공지능)|"
        r"(?:무엇이든|뭐든지?)\s*(?:할|말할|대답할|답할)\s*수|dan\b|탈옥|개발자\s*모드|해방)",
    ),
    _rule(
        "ko_unrestricted_ai",
        rf"{_KO_NO_LIMIT}\s*(?:이|가)?\s*(?:전혀\s*|하나도\s*|아무것도\s*)?없는\s*"
        r"(?:ai|인공지능|챗봇|봇|어시스턴트|비서|모델|존재|상태|모드|gpt)",
        r"무제한\s*(?:모드|ai|인공지능|챗봇)",
        r"(?:검열|필터)\s*(?:해제|없는)\s*(?:모드|버전)",
    ),
    _rule(
        "ko_pretend_no_limits",
        rf"(?:{_KO_NO_LIMIT}|안전\s*장치)\s*(?:이|가|은|는)?\s*"
        r"(?:전혀\s*|하나도\s*|아무것도\s*|더\s*이상\s*)?"
        r"(?:(?:없는|풀린|해제된|사라진)\s*(?:척|것처럼|것\s*처럼|듯이?|상태(?:라고|인\s*척|로))"
        r"|없다고\s*(?:가정|생각|상상|치))",
    ),
    _rule(
        "ko_jailbreak",
        r"탈옥",
        near=_DEVICE,
    ),
    _rule(
        "ko_special_mode",
        r"(?:dan|탈옥|무제한|검열\s*해제)\s*모드",
        rf"{_KO_YOU}\s*(?:는|은)?\s*(?:이제|지금부터|이제부터)?\s*(?:개발자|관리자|디버그|루트|dan)"
        r"\s*모드",
        r"개발자\s*모드\s*(?:로|에서)\s*(?:대답|응답|답변|답|말|행동)",
    ),
    _rule(
        "ko_no_longer_assistant",
        r"(?<!\w)(?:너|넌|당신)\s*(?:은|는)?\s*(?:이제\s*)?더\s*이상\s*"
        r"(?:ai|인공지능|어시스턴트|챗봇|봇|비서|언어\s*모델)\s*(?:가|이)?\s*아니",
    ),
    _rule(
        "ko_new_persona",
        rf"{_KO_YOU}\s*(?:의)?\s*(?:새로운|새|진짜|실제|진정한)\s*"
        r"(?:역할|지시\s*사항|지시|규칙|임무|명령|정체|목적|프롬프트)\s*(?:은|는|이|가|:)",
    ),
    _rule(
        "ko_developer_claim",
        r"(?<!\w)(?:나는|난|저는|전|내가|제가)\s*(?:너|당신|네|니)\s*(?:의|를|을)?\s*"
        r"(?:개발자|제작자|창조자|창시자|주인|만든\s*사람|관리자|운영자)",
    ),
    _rule(
        "ko_ethics_off",
        r"(?:검열|윤리(?:적)?\s*(?:제약|기준|규칙|고려|판단)?|도덕(?:적)?\s*(?:기준|판단)?)\s*"
        r"(?:은|는|을|를|같은\s*건)?\s*(?:무시하고|무시해|없이|따위|신경\s*(?:쓰지|끄고)|끄고|"
        r"해제하고|해제해|빼고|버리고|접어\s*두고)",
    ),
    _rule(
        "ko_answer_without_limits",
        r"(?:제한|제약|검열|필터링?|규칙)\s*(?:없이|을\s*무시하고|를\s*무시하고|을\s*풀고|를\s*풀고)\s*"
        r"(?:대답|답변|답|응답|말)\s*(?:을\s*)?(?:해|하세요|하라|해라|해\s*줘|해줘)",
    ),
    _rule(
        "ko_roleplay_override",
        rf"(?:역할극|롤플레이|롤\s*플레이)\s*(?:을|를|으로|로|이니까|이니|일\s*뿐)?.{{0,30}}?"
        rf"{_KO_NO_LIMIT}\s*(?:이|가|은|는)?\s*(?:없|무시|적용\s*(?:되지|안))",
    ),
)

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

_SYSTEM_PROMPT_EN: tuple[_Rule, ...] = (
    _rule(
        "en_your_system_prompt",
        r"\byour\s+(?:(?:own|full|entire|complete|exact|original|initial|hidden|secret|internal|"
        rf"underlying|actual|real|current)\s+)*{_EN_OWN_PROMPT}\b",
    ),
    _rule(
        "en_reveal_your_instructions",
        rf"\b{_EN_REVEAL}\s+(?:me\s+|us\s+)?(?:out\s+|back\s+)?(?:all\s+)?(?:of\s+)?your\s+"
        r"(?:\S+\s+){0,2}?(?:prompt|instructions|rules|guidelines|directives|programming|"
        r"configuration)\b",
        r"\bwhat\s+(?:are|were|is|was)\s+your\s+(?:\S+\s+){0,2}?"
        r"(?:instructions|rules|guidelines|directives|prompt)\b",
    ),
    _rule(
        "en_reveal_system_prompt",
        rf"\b{_EN_REVEAL}\s+(?:me\s+|us\s+)?(?:out\s+|back\s+)?(?:all\s+of\s+)?"
        r"(?:the\s+|this\s+|its\s+|the\s+(?:bot|assistant|ai|model)'s\s+)?"
        rf"(?:(?:full|entire|complete|exact|original|current)\s+)*{_EN_OWN_PROMPT}\b",
        before=_EN_ASKING,
        after=_EN_SETTING,
    ),
    _rule(
        "en_told_before",
        r"\bwhat\s+(?:were|are|have)\s+you\s+(?:been\s+)?(?:told|instructed|programmed|given|"
        r"prompted|asked)\s+(?:to\s+do\s+)?(?:before|prior\s+to|at\s+the\s+(?:start|beginning)\s+of)"
        r"\s+(?:this|our|the)\s+(?:conversation|chat|session|thread|dialog(?:ue)?)",
        r"\bwhat\s+(?:instructions|rules|directives|prompt)\s+(?:were|have)\s+you\s+(?:been\s+)?"
        r"(?:given|told|provided|fed)\b",
        r"\bwhat\s+(?:did|does)\s+(?:the|your)\s+(?:developers?|creators?|system|operators?)\s+"
        r"(?:tell|instruct|say\s+to)\s+you\b",
    ),
    _rule(
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

_SYSTEM_PROMPT_KO: tuple[_Rule, ...] = (
    _rule(
        "ko_reveal_system_prompt",
        r"(?:system\s*prompt|(?:시스템|숨겨진|숨은|비밀|초기|최초)\s*(?:프롬프트|prompt)|시스템\s*(?:메시지|지시\s*사항|지시|지침)"
        rf"|(?:숨겨진|숨은|비밀)\s*(?:지시\s*사항|지시|지침|규칙)){_KO_REVEAL_FILLER}{_KO_REVEAL}",
        before=r"(?:설정|config|yaml|코드|파일|템플릿|변수|랭체인|langchain)\s*(?:의|에서|에\s*있는)\s*$",
        after=_KO_ASKING,
    ),
    _rule(
        "ko_your_instructions",
        rf"{_KO_YOU}\s*(?:의|가|한테|에게)?\s*(?:받은\s*|주어진\s*|설정된\s*|입력된\s*|들어간\s*|가진\s*)?"
        r"(?:(?:시스템|system)\s*(?:프롬프트|prompt)|프롬프트|prompt|지시\s*사항|지시문|지시|지침|초기\s*설정|초기\s*지시|규칙|"
        r"설정값|가이드라인)"
        rf"{_KO_REVEAL_FILLER}(?:{_KO_REVEAL}|뭐야|뭐니|뭔가요|뭐예요|뭐에요|무엇|뭔지|뭐였)",
    ),
    _rule(
        "ko_told_before",
        r"(?:대화|채팅|세션)\s*(?:를|을|가|이)?\s*(?:시작\s*(?:하기\s*)?)?(?:전|이전|앞)\s*(?:에)?\s*"
        r"(?:너(?:는|가|한테|에게)?\s*)?(?:받은|들은|입력된|주어진|설정된|지시받은)\s*"
        r"(?:지시\s*사항|지시|명령|내용|프롬프트|지침|메시지|설정)",
        rf"{_KO_YOU}\s*(?:는|은)?\s*(?:처음에|원래|맨\s*처음에?)\s*(?:어떤|무슨)\s*"
        r"(?:지시|명령|프롬프트|지침|설정)",
    ),
    _rule(
        "ko_repeat_above",
        r"(?:위|앞|이전)\s*(?:의|에\s*있는)?\s*(?:모든\s*)?(?:지시\s*사항|지시|프롬프트|지침)\s*"
        r"(?:을|를)?\s*(?:그대로|전부|모두|토씨\s*하나\s*안\s*틀리고)\s*(?:출력|반복|복사|읊|적어|알려|보여)",
        r"(?:너는|당신은|you\s+are)\s*(?:으로|로)\s*시작하는\s*(?:문장|텍스트|내용|부분|글)",
    ),
)

# ----- harmful requests

_EN_MAKE = (
    r"(?:make|making|build|building|construct|assemble|create|manufacture|synthesi[sz]e|"
    r"cook|produce|3d[\s-]?print|craft|rig)"
)
_DEFENSIVE_EN = (
    r"^\s*(?:detection|detector|scanner|protection|defen[cs]e|response|playbook|runbook|policy|"
    r"simulation|training|awareness|removal|signatures?|rules?|analysis|report|tabletop|drill|"
    r"incident|exercise|roth)\b"
)

_HARMFUL_EN: tuple[_Rule, ...] = (
    _rule(
        "weapons",
        rf"\b{_EN_MAKE}\s+(?:me\s+)?(?:(?:a|an|some|my\s+own|the|homemade|improvised|diy|simple|"
        r"working|powerful|small|real)\s+)*(?:pipe\s+)?(?:bombs?|explosives|"
        r"explosive\s+(?:device|charge|vest)s?|ieds?|grenades?|molotov(?:\s+cocktails?)?|"
        r"detonators?|napalm|thermite|nerve\s+(?:agent|gas)|sarin|vx\s+gas|ricin|anthrax|"
        r"bio-?weapons?|chemical\s+weapons?|dirty\s+bombs?|ghost\s+guns?|"
        r"untraceable\s+(?:guns?|firearms?)|poison\s+gas|mustard\s+gas|chlorine\s+gas|"
        r"car\s+bombs?|letter\s+bombs?|land\s*mines?|tnt|c-?4|tatp|semtex)\b"
        r"(?![-\s]?(?:proof|sale|squad|threat|drill|shelter|disposal|detection|detector))",
        r"\b(?:bomb|explosive|ied|pipe\s+bomb|molotov|nerve\s+agent|bioweapon|chemical\s+weapon)s?"
        r"\s+(?:recipe|tutorial|blueprint|schematic|making|construction|formula|assembly)\b",
    ),
    _rule(
        "violence",
        r"\b(?:how\s+(?:do|can|could|would|should)\s+i|how\s+to|best\s+way\s+to|ways?\s+to|"
        r"help\s+me|teach\s+me\s+(?:how\s+)?to|i\s+want\s+to)\s+(?:kill|murder|poison|strangle|"
        r"stab|shoot|assassinate|kidnap)\s+(?:someone|somebody|a\s+(?:person|human|child|kid|"
        r"coworker|colleague)|people|him|her|them|my\s+(?:\S+\s+)?(?:boss|coworker|co-worker|"
        r"colleague|manager|wife|husband|partner|neighbou?r|ex|teacher|family|mom|dad|mother|"
        r"father|brother|sister))\b",
    ),
    _rule(
        "drugs",
        r"\b(?:make|making|cook|cooking|synthesi[sz]e|synthesizing|synthesising|manufacture|"
        r"produce|extract|brew)\s+(?:(?:some|my\s+own|homemade|pure)\s+)?(?:crystal\s+)?"
        r"(?:meth|methamphetamine|heroin|fentanyl|cocaine|crack\s+cocaine|lsd|mdma|ecstasy|ghb|"
        r"dmt|pcp|street\s+drugs|illegal\s+drugs)\b",
        r"\b(?:meth|methamphetamine|heroin|fentanyl|cocaine|lsd|mdma)\s+(?:recipe|synthesis|"
        r"cook|lab\s+setup|production\s+(?:steps|method|guide))\b",
        after=r"^\s*(?:patch|patches|tablets?|gmp|sop|batch|under\s+licen[cs]e)\b",
    ),
    _rule(
        "malware",
        r"\b(?:write|writing|create|creating|make|making|build|building|code|coding|develop|"
        r"developing|program|generate|craft|design)\s+(?:me\s+)?(?:\S+\s+){0,3}?"
        r"(?:ransomware|malware|keyloggers?|trojans?|rootkits?|botnets?|spyware|"
        r"info-?stealers?|password\s+stealers?|remote\s+access\s+trojans?|cryptolockers?|"
        r"computer\s+virus(?:es)?|viruses|computer\s+worms?|network\s+worms?|"
        r"self-propagating\s+worms?|logic\s+bombs?|backdoors?|crypters?)\b",
        r"\bencrypts?\s+(?:all\s+)?(?:the\s+|their\s+|victims?'?\s+|someone's\s+)?files\b.{0,60}?"
        r"\b(?:ransom|bitcoin|pay\s+to\s+decrypt)",
        after=_DEFENSIVE_EN,
    ),
    _rule(
        "self_harm",
        r"\b(?:how\s+(?:do|can|could|should|would)\s+i|how\s+to|best\s+way\s+to|easiest\s+way\s+to|"
        r"quickest\s+way\s+to|painless(?:ly)?\s+(?:way\s+)?to|ways?\s+to|methods?\s+(?:of|for|to)|"
        r"help\s+me|teach\s+me\s+to)\s+(?:\S+\s+){0,2}?(?:kill\s+myself|commit\s+suicide|"
        r"end\s+my\s+(?:own\s+)?life|take\s+my\s+(?:own\s+)?life|hurt\s+myself|harm\s+myself|"
        r"cut\s+myself|hang\s+myself|overdose|die\s+painlessly|die\s+quickly)\b",
        r"\b(?:suicide|self[\s-]?harm)\s+(?:methods?|techniques?|instructions|guide|tips)\b",
        r"\b(?:lethal|fatal|deadly)\s+(?:dose|amount)\s+of\b.{0,40}?\b(?:to\s+die|"
        r"to\s+kill\s+myself|for\s+suicide|myself)\b",
        r"\bhow\s+many\s+(?:\S+\s+){0,3}?(?:pills|tablets)\b.{0,40}?\b(?:to\s+die|"
        r"kill\s+(?:me|myself)|lethal|fatal)\b",
    ),
    _rule(
        "credential_theft",
        r"\b(?:steal|stealing|harvest|harvesting|phish|phishing|exfiltrate|sniff)\s+(?:\S+\s+){0,2}?"
        r"(?:passwords?|credentials|logins?|login\s+details|session\s+(?:cookies|tokens)|"
        r"cookies|2fa\s+codes|otp\s+codes|mfa\s+codes|credit\s+card\s+(?:numbers|details)|"
        r"bank\s+details)\b",
        r"\bcrack\s+(?:someone|somebody|another\s+person|my\s+\S+)(?:'s)?\s+(?:\S+\s+)?passwords?\b",
        r"\b(?:hack|hacking|break)\s+into\s+(?:someone(?:'s)?|somebody(?:'s)?|"
        r"another\s+person's|other\s+people's|his|her|their|my\s+(?:\S+\s+)?(?:ex|boss|coworker|"
        r"colleague|manager|wife|husband|partner|girlfriend|boyfriend|neighbou?r)(?:'s)?)\s+"
        r"(?:\S+\s+)?(?:account|email|e-mail|phone|instagram|facebook|gmail|slack|computer|laptop|"
        r"icloud|wifi|kakao(?:talk)?)",
        before=r"\b(?:attackers?|hackers?|criminals?|scammers?|they|malware|phishers?|"
        r"bad\s+actors?)\s+(?:\S+\s+){0,2}$",
        after=r"^.{0,40}\b(?:prevent|protect|detect|defend|stop|mitigate|avoid)",
    ),
    _rule(
        "phishing_kit",
        r"\b(?:make|create|build|set\s+up|setup|host|write|code|develop|clone|design|generate|"
        r"give\s+me|send\s+me|(?:where|how)\s+(?:can|do)\s+i\s+(?:buy|get|find|download))\s+"
        r"(?:me\s+)?(?:(?:a|an|some|the|convincing|realistic|working)\s+)*"
        r"(?:phishing|credential[\s-]?harvesting)\s+(?:kits?|pages?|sites?|websites?|panels?|"
        r"emails?|campaigns?)\b",
        after=r"^.{0,40}\b(?:training|awareness|simulation|simulated|drill|exercise|tabletop)\b",
    ),
)

_KO_PARTICLE = r"\s*(?:을|를|은|는|이|가|의|좀|하나)?\s*"
_KO_HOW = r"(?:(?:직접|집에서|쉽게|간단하게|간단히|몰래|새로|빨리)\s*)*"
_KO_MAKE = r"(?:제조|만드|만들|조립|제작|합성|설계도|레시피|제조법)"

_HARMFUL_KO: tuple[_Rule, ...] = (
    _rule(
        "ko_weapons",
        r"(?:(?:사제|파이프)\s*)?(?:폭탄(?!\s*(?:주|세일|할인|특가|이벤트|행사|가격|배송|문자|메일|"
        r"발언|선언|고백|머리|급|맞|돌리|처리|쿠폰|혜택|딜|매출|드립|같은|처럼))|폭발물|화염병|수류탄|"
        r"뇌관|기폭\s*장치|기폭제|급조\s*폭발물|독가스|신경\s*가스|신경\s*작용제|사린|리신|탄저균|"
        r"생화학\s*무기|화학\s*무기|생물\s*무기|사제\s*총기?|다이너마이트|지뢰)"
        rf"{_KO_PARTICLE}{_KO_HOW}{_KO_MAKE}",
        before=r"(?:업무|일|메일|문자|질문|과제|숙제|댓글|스팸|요청|선물|칭찬|사랑|애교|데이터|로그|"
        r"알림|트래픽|버그)\s*$",
    ),
    _rule(
        "ko_drugs",
        r"(?:마약|필로폰|메스암페타민|히로뽕|코카인|헤로인|펜타닐|엑스터시|mdma|lsd|ghb|대마초?|아편|"
        rf"물뽕)(?!류){_KO_PARTICLE}{_KO_HOW}(?:{_KO_MAKE}|재배|추출|정제|키우)",
        after=r"^\S*\s*(?:단속|적발|혐의|사건|뉴스|기사|처벌|형량|예방|신고|통계)",
    ),
    _rule(
        "ko_malware",
        r"(?:랜섬\s*웨어|악성\s*코드|악성\s*프로그램|멀웨어|말웨어|키\s*로거|트로이\s*목마|루트킷|봇넷|"
        r"스파이웨어|백도어|웜\s*바이러스|컴퓨터\s*바이러스|바이러스|"
        r"정보\s*탈취\s*(?:툴|프로그램|코드)|해킹\s*툴|크립터)"
        r"(?:\s*(?:코드|프로그램|툴|소스\s*코드|소스|파일))?"
        rf"{_KO_PARTICLE}{_KO_HOW}(?:만들|만드|제작|작성|개발|짜|코딩|생성|구현)",
        r"(?:파일|데이터)\s*(?:을|를)?\s*(?:몰래\s*)?암호화\s*(?:하고|해서|한\s*뒤|한\s*다음).{0,30}?"
        r"(?:돈|비트코인|몸값)",
    ),
    _rule(
        "self_harm_ko",
        r"(?:자살|자해|극단적\s*선택|스스로\s*목숨을\s*끊|목숨을\s*끊|생을\s*마감)\s*"
        r"(?:하는|할|을\s*하는|을\s*할|을|를|는)?\s*(?:수\s*있는\s*)?"
        r"(?:(?:쉬운|확실한|고통\s*없는|편한|빠른|좋은)\s*)?(?:방법|법|도구|수단)",
        r"(?:고통\s*없이|편하게|조용히|확실하게|쉽게|빨리|아프지\s*않게)\s*"
        r"(?:죽는|죽을\s*수\s*있는|죽으려면|목숨을\s*끊는|생을\s*마감하는)",
        r"(?:손목|동맥)\s*(?:을|를)?\s*(?:긋|그어|자르)",
        r"(?:수면제|진통제|약|타이레놀)\s*(?:을|를)?\s*(?:몇\s*(?:알|개|통)|얼마나).{0,20}?(?:죽|치사)",
        r"치사량.{0,20}?(?:죽|자살)|(?:죽|자살).{0,20}?치사량",
    ),
    _rule(
        "ko_credential_theft",
        r"(?:남의|남|타인의?|다른\s*사람(?:의|들의)?|동료(?:의)?|상사(?:의)?|팀장(?:님)?(?:의)?|"
        r"친구(?:의)?|전\s*(?:여친|남친|애인|배우자)(?:의)?|여친(?:의)?|남친(?:의)?|옆\s*사람(?:의)?|"
        r"직원들?(?:의)?)\s*(?:비밀\s*번호|비번|패스워드|계정|인증\s*번호|otp|카톡|카카오톡|이메일|"
        r"메일|메일함|sns|인스타(?:그램)?|페이스북|공인\s*인증서|쿠키|세션)\s*(?:을|를|좀)?\s*"
        r"(?:몰래\s*)?(?:훔치|훔쳐|탈취|빼내|빼돌|해킹|털|엿보|몰래\s*보|뚫)",
        r"(?:남의|타인의?|다른\s*사람(?:의)?|동료(?:의)?|상사(?:의)?)\s*(?:\S+\s*)?"
        r"(?:비밀\s*번호|비번|패스워드)\s*(?:을|를)?\s*(?:몰래\s*)?(?:알아내|알아낼|크랙)",
        r"(?:계정|비밀\s*번호|비번|패스워드|인증\s*정보|세션|쿠키|개인\s*정보)\s*(?:을|를)?\s*"
        r"(?:탈취|훔치|훔쳐|빼내|빼돌리|털)(?:는|하는|할|해|려면|기)",
        after=r"^.{0,20}?(?:공격|대응|방어|예방|막|탐지|차단|사고|사례|피해|유형)",
    ),
    _rule(
        "ko_phishing_kit",
        r"(?:피싱|스미싱|파밍)\s*(?:사이트|페이지|키트|메일|문자|링크|툴|도구)\s*(?:을|를|좀|하나)?\s*"
        r"(?:만들|만드|제작|생성|구축|개발|짜|구해|구하|구매|사)",
        before=r"(?:모의|훈련용|교육용|테스트용|보안\s*훈련|훈련)\s*$",
    ),
)

# Letter-by-letter spelling loses the spaces the rules above rely on, so joined runs are
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

_FAMILIES: tuple[tuple[GuardReason, tuple[_Rule, ...]], ...] = (
    ("injection", _INJECTION_EN + _INJECTION_MARKERS + _INJECTION_KO),
    ("system_prompt", _SYSTEM_PROMPT_EN + _SYSTEM_PROMPT_KO),
    ("harmful", _HARMFUL_EN + _HARMFUL_KO),
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
    variants = _variants(text)
    runs = _spelled_runs(text)
    for reason, rules in _FAMILIES:
        for rule in rules:
            if any(rule.fires(variant) for variant in variants):
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
    if not any(ch.isalnum() for ch in _visible(text)):
        return _refuse("empty", lang, "empty")
    # Surrounding whitespace is chat-client noise, not the user's words.
    length = len(text.strip())
    if length > max_chars:
        return _refuse("too_long", lang, "too_long", length=length, limit=max_chars)
    found = _first_match(_normalise(text))
    if found is None:
        return _ALLOWED
    reason, rule = found
    return _refuse(reason, lang, rule)


# --------------------------------------------------------------------------- output guard

_CITATION = re.compile(r"\[\s*\d+(?:\s*[,\-–~]\s*\d+)*\s*\]|【\s*\d+\s*】")
_MIN_VISIBLE = 5
# Fewer content characters than this after dropping apology and "not found" wording means
# the answer says nothing; a Hangul syllable counts as three Latin letters.
_MIN_SUBSTANCE = 15
_DENSE_WEIGHT = 3

_APOLOGY_MARKERS = re.compile(
    r"\b(?:sorry|apolog(?:y|ies|ise|ize|ised|ized)|unfortunately|regrettably|i'?m\s+afraid|"
    r"i\s+am\s+afraid|(?:don'?t|do\s+not|didn'?t|did\s+not)\s+know|not\s+sure|no\s+idea|"
    r"(?:can'?t|cannot|can\s+not|couldn'?t|could\s+not|unable\s+to|not\s+able\s+to|"
    r"won'?t\s+be\s+able\s+to)\s+(?:help|assist|answer|find|provide|say|tell|determine|locate|"
    r"share|support|do)|(?:no|not\s+(?:find|locate)\s+any|(?:don'?t|do\s+not|doesn'?t|"
    r"does\s+not)\s+(?:have|contain|include|mention))\s+(?:\S+\s+){0,2}?(?:information|info|"
    r"details|data|answer|mention|record|documentation)|(?:beyond|outside)\s+(?:my|the)\s+"
    r"(?:scope|knowledge|capabilities))"
    r"|죄송|미안|유감스럽|안타깝|아쉽게도|모르겠|모릅니다|알\s*수\s*(?:가\s*)?없"
    r"|(?:도와|도움|답변|대답|안내|확인|제공|말씀|답)\S*\s*(?:수\s*(?:가\s*)?없|어렵|어려|힘들|곤란)"
    r"|찾(?:을|지)\s*(?:수\s*(?:가\s*)?없|못)|정보(?:가|는)?\s*(?:없|부족)"
    r"|(?:문서|자료|컨텍스트)\S*\s*(?:(?:관련|해당)\s*)?(?:(?:내용|정보|언급)\S*\s*)?없"
)
_WORD = re.compile(r"[^\W_]+")
_EN_FILLER = frozenset(
    """
    i im me my we our you your the a an to of in on at about for with from by that this these
    those it its there here is are was were be been being am any anything some but however so
    and or unfortunately regrettably sorry apologies apology apologize apologise afraid
    information info answer answers answered answering question questions help assist
    assistance relevant specific details detail provided provide documents document docs
    sources source context knowledge base available not no nothing do does did don t s m ll
    ve re d can cannot could couldn would wouldn will won should shouldn have has had haven
    hasn didn doesn isn wasn aren weren able unable find found locate know knew sure idea
    regarding related please try rephrasing rephrase again more enough data request say tell
    determine share support mention mentioned cover covered contain contains include includes
    check ingested ingest specifically currently such matter topic scope beyond outside
    capabilities record records documentation if what which who how where when why
    """.split()
)
_KO_PARTICLES = tuple(
    sorted(
        """
        에서는 에게서 으로는 으로서 으로써 에서도 이라는 이라고 라는 라고 에서 에는 에게 께서 으로
        까지 부터 처럼 보다 마다 이나 이랑 과는 와는 은 는 이 가 을 를 의 에 로 와 과 도 만 나 요
        """.split(),
        key=len,
        reverse=True,
    )
)
_KO_FILLER = frozenset(
    """
    수 것 점 등 저 제가 저는 저도 그건 그것 그거 이건 팀 요청 정보 내용 대한 대해
    대해서 있는 있습니다 다만 하지만 그러나 그런데 따라서 그래서 이 그 해 할 한 하는
    알 답 및 또는 더 좀 잘 해당 관련 현재 혹시
    드릴 드리기 주세요 부분 사항 경우 문의 질문 답변 대답 문서 자료 검색 결과 판단 판단하기
    """.split()
)
_KO_FILLER_PREFIXES = tuple(
    """
    죄송 미안 양해 부탁 없습 없어 없네 없는 없다 없으 않습 않아 않네 못했 못합 못하 못해 못찾
    어렵 모르 드릴 드리 드립 도와 도움 찾을 찾지 찾아 찾기 찾는 알수 알려 답변 답할 답하 대답
    문의 질문 문서 자료 해당 관련 제공 주어진 다시 시도 바꿔 바꾸 수집 검색 포함 언급 나와 나오
    기재 명시 확실 정확 현재 혹시 아쉽 안타깝 유감 곤란 힘들 가능 불가 주시 보시 확인해 확인이
    확인할 확인되 확인하 따르면 말씀 안내드 정보
    """.split()
)


def _weight(token: str) -> int:
    return sum(_DENSE_WEIGHT if ord(ch) >= 0x2E80 else 1 for ch in token)


def _korean_stem(token: str) -> str:
    for particle in _KO_PARTICLES:
        if token.endswith(particle) and len(token) > len(particle):
            return token[: -len(particle)]
    return token


def _drop_apologies(text: str) -> str:
    """Remove every word an apology marker touches, in single-space-separated ``text``.

    Korean verbs conjugate around the marker ("죄송합니다"), so whole words go. Done by
    hand because a regex with ``\\S*`` on both sides backtracks quadratically on long tokens.
    """
    kept: list[str] = []
    last = 0
    for m in _APOLOGY_MARKERS.finditer(text):
        if m.start() < last:
            continue
        start = max(last, text.rfind(" ", 0, m.start()) + 1)
        end = text.find(" ", m.end())
        kept.append(text[last:start])
        last = len(text) if end < 0 else end
    kept.append(text[last:])
    return " ".join(kept)


def _substance(text: str) -> int:
    """Content left once apology, "not found" and stock advice wording are dropped."""
    score = 0
    for token in _WORD.findall(_drop_apologies(text)):
        if token in _EN_FILLER or token in _KO_FILLER or token in _KO_PARTICLES:
            continue
        stem = _korean_stem(token)
        if stem in _KO_FILLER or stem.startswith(_KO_FILLER_PREFIXES):
            continue
        score += _weight(stem)
    return score


def check_output(answer: str) -> OutputQuality:
    """Flag an answer with nothing in it, or one that only apologises or says it doesn't know.

    An apology followed by real content passes, and so does an honest "the documents
    do not cover X" that names X or lists sources: only near-empty apologies fail.
    """
    text = _CITATION.sub(" ", _visible(answer))
    visible = [ch for ch in text if not ch.isspace()]
    if len(visible) < _MIN_VISIBLE or not any(ch.isalnum() for ch in visible):
        return "empty"
    lowered = _SPACE.sub(" ", text.casefold().translate(_APOSTROPHES))
    if not _APOLOGY_MARKERS.search(lowered):
        return "pass"
    return "apology_only" if _substance(lowered) < _MIN_SUBSTANCE else "pass"
