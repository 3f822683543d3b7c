"""Which route a message takes when no LLM is there to decide: embedding prototypes.

The multilingual encoder puts Korean and English in one space, so one set of
example messages per route, in both languages, classifies either language by
nearest neighbours. On smalltalk-versus-search this scored 10/10 where tiny
local LLMs scored 4-5/10, and it costs one embedding (a few milliseconds).
The example messages themselves are in :mod:`agent.routing.prototypes`.

Two text heuristics sit beside it, because embeddings are weak exactly there:
``memory_command`` (whether a message is about the bot's memory of the user
turns on a few words such as "about me", which barely move a sentence vector)
and ``is_context_dependent`` (anaphora and ellipsis are a property of the
words, not of the topic). ``classify`` also nudges its scores with a few
surface cues the encoder blurs: comparison words, arithmetic, a first-person
word for memory, and lone words that are not greetings.
"""

from __future__ import annotations

import math
import re
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt

from agent.retrieval.embeddings import Embedder
from agent.retrieval.tokenizer import words

# The tables live in their own module; Route, ROUTES and PROTOTYPES stay importable
# from here, where callers and tests have always found them.
from agent.routing.prototypes import PROTOTYPES, ROUTES, Route

__all__ = [
    "PROTOTYPES",
    "ROUTES",
    "IntentGuess",
    "PrototypeRouter",
    "Route",
    "is_acknowledgement",
    "is_context_dependent",
    "memory_command",
]


@dataclass(frozen=True)
class IntentGuess:
    route: Route
    confidence: float  # 0..1; below 0.5 means "unsure"
    scores: dict[str, float]  # per route: mean cosine of its nearest prototypes


_Matrix = npt.NDArray[np.float32]

# Mean of the two nearest prototypes: one stray neighbour (a knowledge question
# that happens to echo a tools example) weighs less than with the single best.
_TOP_K = 2
# Added to knowledge before comparing. Retrieval for a greeting costs a pointless
# search; a chit-chat reply to a real question loses the answer.
_KNOWLEDGE_BIAS = 0.02
# Confidence is a logistic of the margin between the top two routes. On the
# held-out set, guesses under 0.5 were right about half the time, those above
# about 97%: below 0.5 is "ask the LLM if there is one, else search".
_MARGIN_AT_HALF = 0.03
_MARGIN_SCALE = 0.02

# Comparison words are near-certain analysis cues, but the encoder dilutes them
# into the topic: "compare the security review with the code review" is nearer
# the review-process questions than the comparisons. Bare "better" is left out:
# "how do I get better search results?" is a how-to.
_COMPARISON = re.compile(
    r"\b(?:compare|comparing|comparison|contrast|vs\.?|versus|differences?|differ|pros and cons"
    r"|trade-?offs?|advantages?|disadvantages?|drawbacks?|(?:better|worse) than"
    r"|which (?:is|one is|would be|should we|do you recommend))\b"
    r"|\bor\b.*\b(?:better|worse|faster|cheaper|safer)\b"
    r"|비교|차이|장단점|장점|단점|트레이드오프|대조|나을까|나아\b|낫|중\s*(?:뭐|뭘|무엇|어느|어떤)"
    r"|(?:어떻게|뭐가|무엇이|어디가) 달라|다른가요|다른지",
    re.IGNORECASE,
)
_COMPARISON_BONUS = 0.1
# An arithmetic expression is a calculator question whatever the words around
# it, and the encoder reads digits and operators poorly.
_ARITHMETIC = re.compile(r"\d\s*[-+*/×÷^]\s*\(?\s*-?\d|\(\s*\d[^)]*[-+*/×÷^][^)]*\)")
_ARITHMETIC_BONUS = 0.1
# One word that is not close to a greeting ("Jenkins", "온콜") is a topic to search
# for; lone words still sit nearer the short greetings than anything else. On
# probes, greetings and thanks scored 0.40 and up, work terms 0.38 and below.
_LONE_WORD_SMALLTALK_FLOOR = 0.39
# Memory is about the user. Without a word for the user or for remembering,
# "로그 저장 방안" (log storage) would land there. Korean pronouns must stand
# alone (with a particle at most): a bare 저 or 나 also starts 저장 and 나누기.
_ABOUT_THE_USER = re.compile(
    r"\b(?:i|me|my|mine|myself|i'm|i've|remember|forget|memory|memories)\b"
    r"|(?<![가-힣])(?:나|저)(?:는|를|에|의|한테|에게|도|랑)?(?![가-힣])"
    r"|(?<![가-힣])(?:내|제)가?(?![가-힣])"
    r"|기억|잊",
    re.IGNORECASE,
)


class PrototypeRouter:
    """Nearest-prototype routing; thread-safe, embeds its prototypes on first use."""

    def __init__(
        self, embedder: Embedder, extra_prototypes: Mapping[str, Sequence[str]] | None = None
    ) -> None:
        self._embedder = embedder
        self._texts: dict[Route, list[str]] = {r: list(PROTOTYPES[r]) for r in ROUTES}
        for name, texts in (extra_prototypes or {}).items():
            route = _as_route(name)
            if isinstance(texts, str):
                # A bare string is a Sequence[str] too, and would add one prototype per letter.
                raise TypeError(f"extra_prototypes[{name!r}] must be a list of strings")
            self._texts[route].extend(texts)
        self._matrices: dict[Route, _Matrix] | None = None
        self._lock = threading.Lock()

    def _prototype_vectors(self) -> dict[Route, _Matrix]:
        # Lazy: a bot that routes with an LLM never pays for the ~200 embeddings.
        if self._matrices is None:
            with self._lock:
                if self._matrices is None:
                    texts = [t for r in ROUTES for t in self._texts[r]]
                    rows = self._embedder.embed_documents(texts)
                    matrices: dict[Route, _Matrix] = {}
                    start = 0
                    for route in ROUTES:
                        end = start + len(self._texts[route])
                        matrices[route] = rows[start:end]
                        start = end
                    self._matrices = matrices
        return self._matrices

    def warm(self) -> None:
        """Embed the prototypes now, so the first message does not wait for them."""
        self._prototype_vectors()

    def classify(self, text: str) -> IntentGuess:
        matrices = self._prototype_vectors()
        query = self._embedder.embed_query(text.strip() or "?")
        scores: dict[str, float] = {}
        for route in ROUTES:
            nearest = np.sort(matrices[route] @ query)[::-1][:_TOP_K]
            scores[route] = round(float(nearest.mean()), 4)
        if memory_command(text) is not None:
            return IntentGuess("memory", 1.0, scores)

        adjusted = dict(scores)
        adjusted["knowledge"] += _KNOWLEDGE_BIAS
        if _COMPARISON.search(text):
            adjusted["analysis"] += _COMPARISON_BONUS
        if _ARITHMETIC.search(text):
            adjusted["tools"] += _ARITHMETIC_BONUS
        if not _ABOUT_THE_USER.search(text):
            del adjusted["memory"]
        if len(text.split()) == 1 and scores["smalltalk"] < _LONE_WORD_SMALLTALK_FLOOR:
            del adjusted["smalltalk"]
        first, second = sorted(adjusted, key=adjusted.__getitem__, reverse=True)[:2]
        margin = adjusted[first] - adjusted[second]
        confidence = 1.0 / (1.0 + math.exp(-(margin - _MARGIN_AT_HALF) / _MARGIN_SCALE))
        return IntentGuess(_as_route(first), round(confidence, 3), scores)


def _as_route(name: str) -> Route:
    for route in ROUTES:
        if route == name:
            return route
    raise ValueError(f"unknown route {name!r}; routes are {', '.join(ROUTES)}")


# --- memory commands ---------------------------------------------------------

# A command is addressed to the bot, so it opens the message, after at most a
# polite lead-in: "How do I delete my profile in Jira?" is not one.
_EN_LEAD = (
    r"^\W*(?:(?:hey|ok|okay|now|so|and|please|pls|plz|kindly|just)\W+)*"
    r"(?:(?:can|could|would|will) you\W+)?(?:please\W+)?"
)
_EN_SHOW = re.compile(
    r"\bwhat (?:else )?(?:do|did|have) you (?:know|remember|remembered|stored?|saved?|learned"
    r"|kept|got) (?:about|of|on) (?:me|myself)\b"
    # "my preferences" is about the user; "my team's deploy schedule" is a document question.
    r"|\bwhat (?:else )?(?:do|did|have) you (?:know|remember|remembered|stored?|saved?) "
    r"(?:about|of|on) my (?:preferences|settings|profile|details|info|information|role|team"
    r"|timezone|location|name)\b(?!'s)"
    r"|\bwhat (?:else )?(?:do|did|have) you (?:remember|remembered|stored?|saved?)\s*[?.!]*$"
    r"|\bwhat (?:info|information|data|details|facts) (?:do|did|have) you (?:have |got |kept )?"
    r"(?:on|about) me\b"
    r"|\bwhat (?:did|have) i (?:told|tell) you\b(?: about (?:me|myself)| before| so far)?\s*[?.!]*$"
    r"|\bdo you (?:still )?remember me\b"
    r"|" + _EN_LEAD + r"(?:show|list|tell|give|display)(?: me)? (?:all )?(?:of )?"
    r"(?:my (?:memory|memories|saved|stored|profile)|what you(?:'ve| have)? (?:know|remember|"
    r"stored|saved)(?: about me)?\b|your memor(?:y|ies) (?:of|about) me)",
    re.IGNORECASE,
)
_EN_FORGET = re.compile(
    _EN_LEAD + r"(?:forget (?:what i (?:told|said|shared|mentioned)|everything|all (?:about|of)"
    r"|about me|me\b|my\b|that i\b|what you know)"
    r"|(?:delete|erase|clear|wipe|remove|reset|drop) (?:all )?(?:of )?"
    r"(?:my (?:stored |saved )?(?:memory|memories"
    r"|data|info|information|profile|preferences|details)|what you (?:know|remember|have stored"
    r"|stored|saved) about me|your memor(?:y|ies)(?: of me| about me)?|(?:everything|all)"
    r" (?:you know )?about me)"
    r"|stop remembering|(?:do not|don't) remember (?:my|that i|me)\b)",
    re.IGNORECASE,
)
# Korean drops the subject, so the bot's memory (기억, 메모리) or the user (나에
# 대해, 내 정보) must be named, and the verb must be a request (잊어줘, 지워), not a
# report (잊어버렸어요) or a how-to (기억하는 방법).
_KO_SELF = (
    r"(?:(?<![가-힣])(?:나|저)(?:에 ?(?:대해|대한|관해|관한)|한테|를|의)"
    r"|(?<![가-힣])(?:내|제)(?![가-힣]))"
)
_KO_SHOW = re.compile(
    r"(?:뭘|뭐|무엇을?|뭐를|어떤 ?(?:것|거|걸|정보)|얼마나)\s*(?:\S+\s*)?"
    r"기억(?!해야|하려|하는 ?(?:법|방법))"
    r"|" + _KO_SELF + r".*(?:뭘|뭐|무엇|어떤|얼마나)\s*(?:\S+\s*)?(?:알고|알아|알지|기억|저장)"
    r"|(?:" + _KO_SELF + r"|저장된|기억하는|기억하고 있는).*(?:기억|정보|메모리|프로필)\S*\s*"
    r"(?:좀\s*)?(?:보여|알려|말해)"
    r"|" + _KO_SELF + r".*(?:기억|알고 있|알고있|아는|저장)\S* (?:거|것|내용)\S*\s*(?:좀\s*)?"
    r"(?:보여|알려|말해)",
)
_KO_FORGET = re.compile(
    r"잊어\s*(?:줘|주세요|줄래|주실래|주라|버려|버리세요|라)|잊으세요|잊도록"
    r"|(?:기억|메모리|" + _KO_SELF + r".*(?:정보|데이터|기록))\S*.*"
    r"(?:지워|삭제해|삭제하세요|초기화|리셋|없애)"
    r"|기억하지\s*(?:마|말아|말고)",
)


def memory_command(text: str) -> Literal["show", "forget"] | None:
    """``show`` or ``forget`` when the message is about what the bot remembers of the user."""
    if _EN_FORGET.search(text) or _KO_FORGET.search(text):
        return "forget"
    if _EN_SHOW.search(text) or _KO_SHOW.search(text):
        return "show"
    return None


# --- context dependence ------------------------------------------------------

# Words that presuppose what they belong to: alone in a thread they ask about its topic.
_NEEDS_A_TOPIC_EN = (
    "exceptions?|exemptions?|caveats?|limits?|limitations?|requirements?|prerequisites?"
    "|conditions?|alternatives?|downsides?|risks?|deadlines?|costs?|fees?|steps?|examples?"
    "|rules?|penalt(?:y|ies)"
)
_NEEDS_A_TOPIC_KO = "예외|조건|제한|요건|기한|마감|비용|대안|예시|단계|절차|규칙|위험|벌칙"
# Syllables ending in ㄴ, as in 넘긴, 받은, 말한 (a past form before a noun); 는 is left out:
# "지원하는 건" is any that is supported, not one that was talked about.
_PAST_N = "".join(chr(0xAC00 + 28 * i + 4) for i in range(399) if chr(0xAC00 + 28 * i + 4) != "는")
# Demonstratives must start a word: 그거 hides in 로그 거래, 거기 in 선거기간, 이거 in 모이거나.
_KO_CONTEXT = re.compile(
    r"(?<![가-힣])(?:그거|그것|그건|그게|그걸|그 거|그쪽|거기|그때|그분|그 ?사람|그 ?중|그 ?다음"
    r"|그 ?문서|이거|이것|이건|이게|이걸|저거|저것|걔|그럼|그러면|그렇다면|아까|방금)"
    r"|위에서|위의|위에 ?(?:말|나온|쓴|있는)|앞에서|앞의|말씀하신|(?:네가|니가|너가) ?말한"
    r"|(?<![가-힣])(?:첫|두|세|네|다섯) ?번째|마지막 ?(?:거|것|꺼|항목|방법)|^\d+ ?번"
    r"|다른 ?(?:건|거|것|방법|쪽)|더 ?자세히|자세히 좀|^계속(?:해|해줘)?\s*[?？]?$"
    r"|^(?:그리고|그런데|근데|그래서|또|아니면|그 ?외에?)(?![가-힣])"
    # "그" alone before a word is "that": "그 리뷰 미팅", "그 양식은 어디 있어?".
    r"|(?<![가-힣])그\s(?=[가-힣A-Za-z])"
    # Ellipsis: a topic and a particle alone, "배포는요?", "스테이징도?", "p0는요". Digits
    # make it a calculation instead ("2의 16승은?"), unless they number a label (p0, v2).
    r"|^(?:[^\d\s]|(?<=[A-Za-z])\d)+(?:\s(?:[^\d\s]|(?<=[A-Za-z])\d)+)?"
    r"(?:은|는|도|엔|에는|으로는|로는)(?:요[\s?？]*|\s*[?？][\s?？]*)$"
    # A condition alone asks what changes under it: "토요일에 출근해서 일하면요?",
    # "해외 출장 갈 때는요?".
    r"|(?:면|(?<![가-힣])(?:때|경우)(?:에|엔|에는|는|은|도)?)요[\s?？]*$"
    # What was just talked about, named by what happened to it: "넘긴 건 언제까지 써야
    # 돼요?", "받은 거 어디에 반납해?" (a past form in -ㄴ before 건/거/것).
    rf"|^(?:\S+\s)?[가-힣]*[{_PAST_N}] (?:건|거|게|걸|것은|것도)(?![가-힣])"
    # A word that needs a topic, asked alone: "예외가 있나요?" (to what was said).
    rf"|^(?:{_NEEDS_A_TOPIC_KO})(?:이|가|은|는|도)?\s*(?:있나요|있어요|있어|있습니까|있을까요|있나"
    r"|뭐야|뭔가요|뭐예요|무엇인가요|어떻게 ?되나요|어떻게 ?돼요?)?\s*[?？]*\s*$"
)
# "it" is a dummy subject in "what time is it" or "is it possible": no reference.
_EN_DUMMY_IT = re.compile(
    r"\b(?:what (?:time|day|date|year|month)|how (?:late|early)) is it\b"
    r"|\bis it (?:possible|ok|okay|true|safe|allowed|necessary|required|normal|going to"
    r"|raining|snowing|sunny|cold|hot|warm)\b"
    r"|\bit(?:'s| is) (?:raining|snowing|sunny|cold|hot|warm|possible|ok|okay)\b"
    r"|\bwill it (?:rain|snow|be (?:sunny|cloudy|rainy|windy|cold|hot|warm))\b"
    r"|\b(?:how (?:hot|cold|warm|late)|what (?:time|day|date)) will it be\b",
    re.IGNORECASE,
)
_EN_CONTEXT = re.compile(
    r"^\W*(?:and|or|but|also|so|then|what about|how about|what if)\b"
    r"|(?-i:\b[Ii]t\b)|\b(?:they|them|those|these|he|she|him)\b"  # not "IT" the department
    r"|\b(?:that|this|which|the other|another) one\b|\bones\b"
    r"|\bthe (?:first|second|third|fourth|fifth|last|former|latter|previous|next|other) "
    r"(?:one|option|source|link|result|answer|item|point|doc|document)s?\b"
    r"|\b(?:same|also) (?:for|with|in|about|on)\b|\b(?:too|as well)\s*[?.!]*$"
    r"|^\W*(?:is|was|does|did|why|what does|what is|what's|how is) (?:that|this)\b"
    r"|\b(?:about|for|with|do|does|did|is|by|mean) (?:that|this)\s*[?.!]*$"
    r"|^\W*that(?:'s| is| was)\b"
    r"|\btell me more\b|\bmore (?:details?|about that)\b|\belaborate\b|\bwhat else\b"
    r"|\babove\b|\bearlier\b|\byou (?:said|mentioned)\b"
    # A word that needs a topic, asked alone: "Are there exceptions?" (to what was said).
    rf"|^\W*(?:are there|is there|any|what are the|what's the|what is the)\s+(?:any\s+|an?\s+)?"
    rf"(?:{_NEEDS_A_TOPIC_EN})\s*[?.!]*$",
    re.IGNORECASE,
)
# Greetings, thanks and laughter are short but complete. "ok", "yes" and "네" are
# not on the list: they answer the bot's last question and mean nothing without it.
_ACKNOWLEDGEMENT = re.compile(
    r"^(?:\W*(?:(?:hi|hey|hello) there|hi|hiya|hey|hello|yo|sup|morning|thanks?|thank you"
    r"|thx|ty|cheers|bye|see ya"
    r"|ha(?:ha)+|lol|good (?:morning|afternoon|evening|night)|안녕(?:하세요)?|하이|ㅎㅇ|반가워요?"
    r"|고마워요?|고맙습니다|감사(?:합니다|해요)?|ㄱㅅ|땡큐|굿모닝|잘 ?자|수고(?:하셨습니다|했어)?"
    r"|(?:ㅎㅇ)+|ㅋ+|ㅎ+)(?![\w가-힣]))+\W*$",
    re.IGNORECASE,
)
_HANGUL_SYLLABLE = re.compile(r"[가-힣]")
# Below this a message is too short to stand alone ("why?", "영어로?"). A Hangul
# syllable counts three times, about its length in romanisation: "현재 금값" is
# a full question in five characters.
_SHORT = 12


# Words that move the talk on without saying what about ("also", "근데").
_LEAD = re.compile(
    r"^\W*(?:(?:and|or|but|also|so|then|ok|okay|oh)\b|(?:그리고|그런데|근데|그래서|또|아니면|그럼"
    r"|그러면|그렇다면)(?![가-힣]))[\s,.!]*",
    re.IGNORECASE,
)
_ASKING_WORD = re.compile(
    r"\b(?:who|whom|whose|what|whats|when|where|which|why|how)\b"
    r"|^\W*(?:is|are|was|were|do|does|did|can|could|will|would|should|may|must|has|have)\b"
    r"|(?<![가-힣])(?:누구|누가|언제|어디|얼마|몇|무슨|어느|어떤|어떻|왜|뭐|뭘|무엇|며칠)",
    re.IGNORECASE,
)
# Subject words a question needs to stand on its own: "how do I reset my VPN password?" has
# three, "who's the backup?" one (the backup of what was said).
_OWN_SUBJECT_WORDS = 2


def _asks_in_full(text: str) -> bool:
    return bool(_ASKING_WORD.search(text)) and len(words(text)) >= _OWN_SUBJECT_WORDS


def is_acknowledgement(text: str) -> bool:
    """Greetings, thanks and laughter alone: "안녕하세요", "thanks!", "ㅋㅋ"."""
    return bool(_ACKNOWLEDGEMENT.match(text.strip()))


def is_context_dependent(text: str, *, has_history: bool) -> bool:
    """Whether the message only makes sense with the thread before it.

    Always False without history: there is nothing to resolve it against, so
    it has to be taken as it stands.
    """
    if not has_history:
        return False
    stripped = text.strip()
    if not stripped or _ACKNOWLEDGEMENT.match(stripped) or _ARITHMETIC.search(stripped):
        return False
    lead = _LEAD.match(stripped)
    if lead and _asks_in_full(stripped[lead.end() :]):
        # "also, how do I reset my VPN password?", "근데 법카 한도 얼마야?": a question of its
        # own after a word that only moves the talk on; its other words still decide.
        stripped = stripped[lead.end() :]
    if _KO_CONTEXT.search(stripped) or _EN_CONTEXT.search(_EN_DUMMY_IT.sub(" ", stripped)):
        return True
    weight = len(stripped) + 2 * len(_HANGUL_SYLLABLE.findall(stripped))
    return weight < _SHORT
