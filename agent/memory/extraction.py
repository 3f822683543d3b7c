"""Deterministic fact extraction: what a user says about themselves, without an LLM.

`extract_facts_locally` is the no-LLM stand-in for fact extraction: a handful of
anchored Korean and English patterns for statements about the speaker. It prefers
missing a fact to inventing one: questions, other people and hypotheticals yield
nothing. It lives apart from :mod:`agent.memory.profile` because the patterns are
most of the code and change for reasons of their own (a new phrasing), while the
profile's storage and rendering rarely do.
"""

from __future__ import annotations

import re

from agent.memory.facts import Fact, FactKind

__all__ = ["extract_facts_locally"]

_EN_SKIP_START = re.compile(
    r"^(?:what|which|who|whom|whose|where|when|why|how|do|does|did|is|are|am|was|were|can|"
    r"could|should|would|will|shall|may|might|have|has|if|whether|suppose|assuming|unless|"
    r"maybe|perhaps)\b"
)
_EN_FILLER = re.compile(
    r"^(?:(?:hi|hello|hey|ok|okay|so|well|also|btw|by the way|fyi|actually|just so you know|"
    r"for context|oh|and|but)\b[\s,:!-]*)+"
)
_NAME = r"[\w&/+\-]+(?:\s+[\w&/+\-]+){0,3}?"
_EN_TAIL = r"(?:\s+(?:here|now|these days|at\s+[\w&.\- ]+))?"
_DETERMINERS = frozenset({"the", "a", "an", "this", "that", "my", "our", "your", "same", "new"})
_EN_TEAM = [
    re.compile(
        r"^i(?:'m| am|m)\s+(?:currently\s+|now\s+)?(?:on|in|with|part of|a member of)\s+"
        rf"(?:the\s+)?(?P<x>{_NAME})\s+team{_EN_TAIL}$"
    ),
    re.compile(
        r"^i\s+(?:currently\s+)?(?:work|belong)\s+(?:on|in|for|with|to)\s+"
        rf"(?:the\s+)?(?P<x>{_NAME})\s+team{_EN_TAIL}$"
    ),
    re.compile(rf"^my\s+team\s+is\s+(?:the\s+)?(?P<x>{_NAME})\s+team{_EN_TAIL}$"),
    re.compile(rf"^i(?:'m| am|m)\s+(?:on|in|part of)\s+team\s+(?P<x>{_NAME}){_EN_TAIL}$"),
]
# "My team is Payments" names a team only when capitalised: "my team is small" does not.
_EN_MY_TEAM_BARE = re.compile(rf"^my\s+team\s+is\s+(?P<x>{_NAME})$")
_ROLE_NOUNS = (
    r"engineer|developer|dev|programmer|manager|designer|analyst|scientist|architect|"
    r"researcher|lead|director|intern|consultant|administrator|admin|sre|tester|qa|pm|"
    r"product owner|owner|writer|marketer|recruiter|accountant|specialist|officer|"
    r"head of [\w ]+"
)
_EN_ROLE = [
    re.compile(
        r"^my\s+(?:role|job|job title|title|position)\s+is\s+(?:a\s+|an\s+|the\s+)?"
        r"(?P<x>[\w&/+#.\- ]{2,50})$"
    ),
    re.compile(
        r"^i(?:'m| am|m)\s+(?:a|an|the)\s+"
        rf"(?P<x>(?:[\w/+#.\-]+\s+){{0,3}}?(?:{_ROLE_NOUNS})(?:\s+(?:for|on|in|at|of)\s+{_NAME})?)$"
    ),
    re.compile(r"^i\s+work\s+as\s+(?:a|an|the)\s+(?P<x>[\w&/+#.\- ]{2,50})$"),
]
_EN_PRODUCT = re.compile(
    r"^i\s+(?:mainly\s+|mostly\s+|currently\s+)?(?:work on|maintain|own|am responsible for)\s+"
    r"(?P<x>[\w&/+#.'\- ]{2,60})$"
)
_EN_WORKPLACE = re.compile(r"^i\s+work\s+(?:at|for)\s+(?P<x>[\w&/+#.'\- ]{2,60})$")
# "I work on weekends" is about a schedule, "I work on it" about nothing nameable.
_NOT_A_PRODUCT = frozenset(
    "it this that these those something stuff things them a an call site remote holidays "
    "weekends weekdays mondays tuesdays wednesdays thursdays fridays saturdays sundays".split()
)
_EN_PREFER = re.compile(r"^i(?:'d| would)?\s+prefer\s+(?P<x>[^\n]{2,80})$")
_EN_ANSWER_VERB = r"(?:please\s+)?(?:always\s+)?(?:answer|reply|respond|write|talk)(?:\s+to\s+me)?"
_EN_LANGUAGE = re.compile(rf"^{_EN_ANSWER_VERB}\s+in\s+(?P<x>korean|english)(?:\s+please)?$")
_EN_BRIEF = re.compile(
    rf"^(?:{_EN_ANSWER_VERB}\s+(?:briefly|concisely|in short|shortly|short)|"
    r"(?:please\s+)?(?:be\s+brief|keep\s+(?:it|(?:your\s+|the\s+)?answers?)\s+(?:short|brief)))"
    r"(?:\s+please)?$"
)
_EN_DETAIL = re.compile(rf"^{_EN_ANSWER_VERB}\s+in\s+(?:more\s+)?detail(?:\s+please)?$")

_KO_SELF_START = re.compile(r"^(?:저는|전|나는|난|제가|저도|나도)\s+")
_KO_QUESTION_WORDS = re.compile(r"누가|누구|어디|어느|무슨|무엇|뭐|뭘|언제|왜|어떻게|어떤|몇")
# Question endings, and hearsay ("-래요": someone else said so).
_KO_QUESTION_END = re.compile(r"(?:나요|까요|니까|인가요|는지|냐|래요|을까)[\s.~]*$")
_KO_COPULA = r"(?:이에요|이예요|예요|에요|입니다|이고|이며|인데|이야|야|이다|임)"
_KO_COPULA_END = re.compile(rf"{_KO_COPULA}[\s.~!]*$")
_KO_WORKS = (
    r"(?:일해요|일합니다|일하고\s*있어요|일하고\s*있습니다|근무해요|근무합니다|"
    r"근무하고\s*있어요|근무하고\s*있습니다)"
)
_KO_NAME = r"[\w&/+\-]+(?:\s+[\w&/+\-]+){0,2}?"
_KO_TEAM_WORKS = re.compile(
    rf"^(?P<x>{_KO_NAME})\s*팀\s*(?:소속(?:{_KO_COPULA})?|에서\s*{_KO_WORKS})"
)
_KO_TEAM_SELF = re.compile(
    rf"^(?P<x>{_KO_NAME})\s*팀\s*(?:소속)?\s*(?:{_KO_COPULA}|에\s*있어요|에\s*있습니다)"
)
_KO_ROLE_NOUNS = (
    r"엔지니어|개발자|매니저|디자이너|기획자|분석가|연구원|과학자|사이언티스트|아키텍트|리드|"
    r"팀장|인턴|PM|PO|QA|SRE|데브옵스|관리자|운영자|컨설턴트|마케터|리서처"
)
_KO_ROLE_SLOT = re.compile(
    r"^(?:제|내)\s*(?:역할|직무|직책|직군|포지션|직업)(?:은|는)\s*(?P<x>.{1,40}?)\s*"
    rf"{_KO_COPULA}?[\s.~!]*$"
)
# Up to three words before the role noun, the last of them possibly glued to it
# ("백엔드 개발자", "백엔드개발자"). Words end at whitespace, so a long run of word
# characters splits one way only: ``(?:[\w...]+\s*){0,3}`` split it every way, and
# backtracked cubically on a pasted hash or token (800 characters took 3 s).
_KO_ROLE_WORD = r"[\w/+#.\-]"
_KO_ROLE = (
    rf"(?:{_KO_ROLE_WORD}+\s+){{0,2}}?(?:{_KO_ROLE_WORD}+\s+|{_KO_ROLE_WORD}+?)??"
    rf"(?:{_KO_ROLE_NOUNS})"
)
_KO_ROLE_WORKS = re.compile(rf"^(?P<x>{_KO_ROLE})\s*(?:으로|로)\s*{_KO_WORKS}")
_KO_ROLE_SELF = re.compile(rf"^(?P<x>{_KO_ROLE})\s*{_KO_COPULA}")
_KO_PRODUCT_WORKS = re.compile(
    r"^(?P<x>.{1,40}?)\s*(?:(?:을|를)\s*)?(?:담당하고\s*있어요|담당하고\s*있습니다|담당해요|담당합니다|"
    r"맡고\s*있어요|맡고\s*있습니다|개발하고\s*있어요|개발하고\s*있습니다|개발해요|개발합니다)"
)
_KO_PRODUCT_SELF = re.compile(rf"^(?P<x>.{{1,40}}?)\s*담당\s*{_KO_COPULA}")
_KO_PREFERENCE = re.compile(
    r"(?:(?:답변|대답|답|응답)(?:은|는|을|를)?\s*(?:항상\s*)?"
    r"(?P<x>짧고\s*간단하게|짧게|간단히|간단하게|간결하게|자세히|자세하게|길게|한국어로|영어로|한글로)"
    r"\s*(?:해\s*주세요|해\s*줘요?|해\s*주시면|해\s*주십시오|부탁|주세요|해요)|"
    r"(?:항상\s*)?"
    r"(?P<y>짧고\s*간단하게|짧게|간단히|간단하게|간결하게|자세히|자세하게|길게|한국어로|영어로|한글로)"
    r"\s*(?:답변|대답|답|응답)\s*(?:을|를)?\s*(?:해\s*주세요|해\s*줘요?|해\s*주시면|해\s*주십시오|부탁))"
)
_KO_HOW_TEXT = {
    "짧": "짧게 답변",
    "간": "짧게 답변",
    "자": "자세히 답변",
    "길": "자세히 답변",
    "한": "한국어로 답변",
    "영": "영어로 답변",
}
_KO_PREFER = re.compile(
    r"^(?P<x>.{1,40}?)\s*(?:을|를)\s*선호(?:해요|합니다|하는\s*편이에요|하는\s*편입니다)"
)
# "(?<!\s)": a conjunction is looked for from the start of a run of spaces only; tried
# from each space of a long run, the run was rescanned every time (quadratic).
_CLAUSE_BREAK = re.compile(
    r"[,;]\s*|(?<!\s)\s+(?:and|but|so)\s+(?=(?:i|i'm|i’m|my|please)\b)|(?<=이고|이며|인데)\s+",
    re.IGNORECASE,
)
_SENTENCE_BREAK = re.compile(r"(?<=[.!?。！？])\s+|\n+")
_KO_DEMONSTRATIVE = frozenset("그건 이건 저건 그거 이거 저거 거기 여기 그".split())


def extract_facts_locally(text: str) -> list[Fact]:
    """Facts the speaker states about themselves in ``text`` (Korean or English)."""
    facts: list[Fact] = []
    for sentence in _SENTENCE_BREAK.split(text):
        sentence = sentence.strip()
        if not sentence or sentence.endswith(("?", "？")):
            continue
        # "저는 결제팀이고 백엔드 개발자예요": the second clause is about 저 too.
        about_self = False
        for clause in _clauses(sentence):
            about_self = about_self or bool(_KO_SELF_START.match(clause))
            fact = _english_fact(clause) or _korean_fact(clause, about_self)
            if fact is not None and fact not in facts:
                facts.append(fact)
    return facts


def _clauses(sentence: str) -> list[str]:
    parts = _CLAUSE_BREAK.split(sentence)
    return [clause for p in parts if (clause := p.strip(" \t.!。！~"))]


def _english_fact(clause: str) -> Fact | None:
    original = clause.replace("’", "'")
    lowered = original.casefold()
    if len(lowered) != len(original):
        original = lowered  # casefold changed lengths: no safe way back to the capitals
    text = _EN_FILLER.sub("", lowered)
    original = original[len(original) - len(text) :]
    if not text or _EN_SKIP_START.match(text):
        return None
    for pattern in _EN_TEAM:
        if (match := pattern.match(text)) and (name := _name(original, match)):
            return Fact("team", f"works on the {name} team")
    if (
        (match := _EN_MY_TEAM_BARE.match(text))
        and (name := _name(original, match))
        and (not name[0].isascii() or name[0].isupper())
    ):
        return Fact("team", f"works on the {name} team")
    for pattern in _EN_ROLE:
        if (match := pattern.match(text)) and (name := _name(original, match)):
            return Fact("role", name)
    if match := _EN_PRODUCT.match(text):
        name = _name(original, match, keep_determiner=True)
        if name.split()[0].casefold() not in _NOT_A_PRODUCT:
            return Fact("product", f"works on {name}")
    if match := _EN_WORKPLACE.match(text):
        name = _name(original, match, keep_determiner=True)
        if name.split()[0].casefold() not in _NOT_A_PRODUCT:
            return Fact("other", f"works at {name}")
    if match := _EN_LANGUAGE.match(text):
        return Fact("preference", f"answer in {match.group('x').capitalize()}")
    if _EN_BRIEF.match(text):
        return Fact("preference", "answer briefly")
    if _EN_DETAIL.match(text):
        return Fact("preference", "answer in detail")
    if match := _EN_PREFER.match(text):
        return Fact("preference", f"prefers {_name(original, match, keep_determiner=True)}")
    return None


def _name(original: str, match: re.Match[str], *, keep_determiner: bool = False) -> str:
    """The captured name in the user's own capitals ("Android app", "SRE")."""
    words = original[match.start("x") : match.end("x")].strip(" .").split()
    while not keep_determiner and words and words[0].casefold() in _DETERMINERS:
        words.pop(0)
    return " ".join(words)


def _korean_fact(clause: str, about_self: bool) -> Fact | None:
    if _KO_QUESTION_WORDS.search(clause) or _KO_QUESTION_END.search(clause):
        return None
    if match := _KO_PREFERENCE.search(clause):
        how = match.group("x") or match.group("y")
        return Fact("preference", _KO_HOW_TEXT[how[0]])
    if (match := _KO_ROLE_SLOT.match(clause)) and (
        name := _korean_name(match.group("x"), strict=False)
    ):
        return Fact("role", name)
    body = _KO_SELF_START.sub("", clause).strip()
    # Patterns that say who they are about ("...에서 일해요") work without "저는";
    # "X팀이에요" or "X 담당이에요" may be about anything ("백업은 결제팀 담당이에요").
    candidates: list[tuple[re.Pattern[str], FactKind]] = [
        (_KO_TEAM_WORKS, "team"),
        (_KO_ROLE_WORKS, "role"),
        (_KO_PRODUCT_WORKS, "product"),
    ]
    if about_self:
        candidates += [
            (_KO_TEAM_SELF, "team"),
            (_KO_ROLE_SELF, "role"),
            (_KO_PRODUCT_SELF, "product"),
            (_KO_PREFER, "preference"),
        ]
    for pattern, kind in candidates:
        if (match := pattern.match(body)) and (name := _korean_name(match.group("x"))):
            return Fact(kind, _korean_text(kind, name))
    return None


def _korean_text(kind: FactKind, name: str) -> str:
    if kind == "team":
        # "결제팀", but "payments 팀": a Latin name glued to 팀 reads as a typo.
        return f"{name}{' ' if name[-1].isascii() else ''}팀 소속"
    if kind == "product":
        return f"{name} 담당"
    if kind == "preference":
        return f"{name} 선호"
    return name


def _korean_name(raw: str, *, strict: bool = True) -> str:
    """``raw`` as a name, or "" when it carries a subject of its own: "김 대리가",
    "백업은", "그건" mean the sentence is about someone or something else."""
    words = raw.split()
    if not words:
        return ""
    if strict and (words[0] in _KO_DEMONSTRATIVE or any(map(_ends_in_subject, words))):
        return ""
    return " ".join(words)


def _ends_in_subject(word: str) -> bool:
    """Whether ``word`` ends in a topic or subject particle (은/는/이/가).

    The particle's form follows the syllable before it: 은 and 이 after a final
    consonant (팀은, 팀이), 는 and 가 after a vowel (서버는, 서버가). That keeps
    names that merely end in those syllables (카카오페이, 요가) out of it.
    """
    if len(word) < 2 or not ("가" <= word[-2] <= "힣"):
        return False
    has_final = (ord(word[-2]) - ord("가")) % 28 != 0
    return word[-1] in ("은", "이") if has_final else word[-1] in ("는", "가")
