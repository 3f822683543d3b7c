"""What kind of answer a question asks for, and whether a sentence holds one.

A question that asks "몇 시" or "how long" is answered by a sentence holding a time or a
duration, whatever words they share: "Nightly builds start at 03:00" answers "나이틀리 몇시에
뽑혀요?", and a sentence about nightly builds with no time in it does not. These are grammar
signals (question words and the shapes of times, amounts, counts, places and people), the
same for every team's documents, so they hold on documents nobody tuned them on.

Every pattern here is a flat alternation of bounded pieces: linear on any input.
"""

from __future__ import annotations

import re
from typing import Literal

from agent.wording.language import detect_language

Kind = Literal[
    "command",
    "clock",
    "when",
    "duration",
    "frequency",
    "amount",
    "percent",
    "count",
    "address",
    "place",
    "person",
]

# Kinds whose absence from the lead quote means it does not answer: a number-shaped answer
# is either in the sentence or not. A place or a person can be named in too many ways
# ("your team lead", "the IT desk") to refuse a quote that lacks the usual shapes.
STRICT: frozenset[Kind] = frozenset(
    {"command", "clock", "when", "duration", "frequency", "amount", "percent", "count", "address"}
)

_I = re.IGNORECASE
# The question side, most specific first: "몇 시" before "몇", "얼마나 오래" before "얼마".
_ASKS: list[tuple[Kind, re.Pattern[str]]] = [
    # A command asked for by name: answered only by one written out (`/incident declare`,
    # `git push --force`), whatever language is around it.
    (
        "command",
        re.compile(
            r"명령어|커맨드|\b(?:which|what)(?:'s| is|s)?(?P<c>(?: [\w-]{1,20}){0,2}) command"
            r"(?:\s(?:to|for|that|i|we|you)\b|\s?[?.!]|$)"
            r"|\bwhat (?:do|should) i (?:type|run)\b",
            _I,
        ),
    ),
    ("percent", re.compile(r"몇\s?퍼|몇\s?%|퍼센트|비율|percent|percentage|what %", _I)),
    ("clock", re.compile(r"몇\s?시(?!간)|what time|몇시", _I)),
    (
        "frequency",
        re.compile(r"얼마나\s?자주|몇\s?번씩|(?<![가-힣])주기|how often|how frequently", _I),
    ),
    (
        "duration",
        re.compile(
            r"얼마나\s?(?:오래|걸|빨리|길|동안|미리|일찍)|며칠|몇\s?일|몇\s?(?:분|시간|주|달|개월|년)"
            r"|how long|how fast|how soon|how quickly|how far (?:in advance|ahead)|how early"
            r"|how much notice"
            r"|how many (?:days|hours|minutes|weeks|months|years)"
            r"|within how",
            _I,
        ),
    ),
    (
        "amount",
        re.compile(
            r"얼마(?!나)|금액|한도|비용|how much|\bamount\b|\bcost\b|\bprice\b"
            r"|what(?:'s| is) the (?:limit|budget)",
            _I,
        ),
    ),
    (
        "count",
        re.compile(r"몇|얼마나|how many|what number|minimum|maximum|\bmin\b|\bmax\b", _I),
    ),
    (
        "when",
        re.compile(
            r"언제|무슨\s?요일|어느\s?요일|날짜|마감|기한"
            # "발매된 해는?", "태어난 연도는?": the question ends on the year it asks for.
            r"|(?:(?<![가-힣])해(?:는|가)|(?:연도|년도|시기|시점|일자)(?:는|은|가|이)?)\s?\??$"
            r"|\bwhen\b|what day|which day|deadline|by when|until when"
            r"|\b(?:what|which) (?:year|date|month|decade|century)\b",
            _I,
        ),
    ),
    # A channel, an e-mail address, a link asked for by name: answered only by one written
    # out ("#it-helpdesk", "security@...", "https://..."), in whatever language around it.
    (
        "address",
        re.compile(
            r"(?:채널|주소|메일|이메일|링크|사이트|url)\s?(?:이|가|은|는|을|를)?\s?(?:좀\s?)?"
            r"(?:뭐|무엇|어디|알려)|어느\s?(?:[가-힣A-Za-z]{1,6}\s)?채널"
            r"|\b(?:which|what)(?:'s| is| are)?(?P<a>(?: [\w-]{1,20}){0,2}) (?:channel|e-?mail"
            r"|address|url|link|website)\b|\bwhat(?:'s| is|s) the (?P<b>(?:[\w-]{1,20} ){0,2})"
            r"(?:channel|e-?mail"
            r"|address|url|link)\b",
            _I,
        ),
    ),
    ("person", re.compile(r"누구|누가|담당자|\bwho\b|\bwhom\b|\bwhose\b", _I)),
    (
        "place",
        re.compile(
            r"어디|어느\s?(?:채널|곳|층|방)|\bwhere\b"
            r"|which (?:\w{1,20} )?(?:channel|room|floor|site|page|form|email|address)",
            _I,
        ),
    ),
]

_DIGIT = r"\d"
# Korean number words start a word: the 한 of "속한 달" ends a verb, it is not "one".
_NUMBER_WORD = (
    r"(?<![가-힣])(?:한|두|세|네|다섯|여섯|일곱|여덟|아홉|열)\s?"
    r"(?:명|개|번|회|대|건|장|시간|달|주|곳|가지)"
    r"|\b(?:one|two|three|four|five|six|seven|eight|nine|ten|twelve|once|twice)\b"
)
_CLOCK = (
    r"\d{1,2}:\d{2}|\d{1,2}\s?시|(?:오전|오후|새벽|정오|자정|아침|저녁)"
    r"|\d{1,2}\s?(?:am|pm|a\.m\.|p\.m\.)|\bnoon\b|\bmidnight\b"
)
_UNIT = (
    r"\d[\d,.]{0,20}\s?(?:분|시간|일|주|개월|달|년|영업일|초)"
    r"|(?<![가-힣])(?:한|두|세|네)\s?(?:시간|달)|하루|이틀|사흘|나흘|닷새|엿새|이레|여드레|아흐레|열흘|보름|일주일"
    r"|\b(?:an?|one|two|three|four|five|six|seven|eight|nine|ten|twelve)\s"
    r"(?:business |working )?(?:minutes?|hours?|days?|weeks?|months?|years?)\b"
    r"|\d[\d,.]{0,20}\s?(?:business |working |calendar )?"
    r"(?:minutes?|mins?|hours?|hrs?|days?|weeks?|months?|years?|seconds?)\b"
    r"|D-\d{1,6}"
)
_WEEKDAY = (
    r"[월화수목금토일]요일|\b(?:mon|tues|wednes|thurs|fri|satur|sun)day"
    r"|\b(?:january|february|march|april|may|june|july|august|september|october|november|december)\b"
    r"|\b(?:1[5-9]|20)\d{2}s?\b|\d[\d,.]{0,20}\s?(?:BP|BCE?|AD|CE)\b|\bcentury\b|세기|\d{4}-\d{2}-\d{2}|\d{1,2}\s?월\s?\d{1,2}\s?일|\d{1,2}/\d{1,2}|\d{1,6}\s?(?:일|월)|분기|quarter"
)
_FREQUENCY = (
    r"매(?:일|주|월|달|년|분기|시간|일\s?밤)|마다|주\s?\d\s?회|\d\s?회|격주"
    r"|\bevery\b|\bdaily\b|\bweekly\b|\bmonthly\b|\bnightly\b|\bbiweekly\b|\byearly\b|\bannually\b"
    r"|\bper (?:day|week|month|year|quarter)\b|times a"
)
_MONEY = (
    r"\d[\d,.]{0,20}\s?(?:원|만\s?원|천\s?원|억|달러|dollars?|usd|krw|won)|[$₩€£]\s?\d"
    r"|\d[\d,.]{0,20}\s?만\b"
)
_PERCENT = r"\d[\d.]{0,12}\s?(?:%|퍼센트|percent)"
_PLACE = (
    r"#[\w-]{2,80}|https?://|[\w.+-]{1,64}@\w|\d{1,6}\s?층|\d{1,6}(?:st|nd|rd|th) floor"
    r"|\bfloor\b|\broom\b|\bdesk\b"
    r"|회의실|라운지|로비|[가-힣]{1,6}실\b|공원|센터|\bportal\b|포털|위키|\bwiki\b|채널|\bchannel\b"
    r"|\b(?:in|on|at|via|through) [A-Z][\w-]{1,40}"
)
_PERSON = (
    r"@[\w.-]{2,64}|[A-Z][a-z]{1,20} [A-Z][a-z]{1,20}|\([가-힣]{2,4}\)|[가-힣]{2,4}\s?(?:님|씨)"
    r"|팀장|리드|매니저|담당|오너|대표|이사|책임자|\blead\b|\bmanager\b|\bowner\b|\bteam\b|팀\b"
    r"|\bCEO\b|\bCTO\b|\bhead of\b"
)

# Code written out: in backticks, or a slash command at the start of a word.
_COMMAND = r"`[^`\n]{1,80}`|(?<![\w/.])/[a-z][\w-]{1,30}\b(?!/)"

_ADDRESS = (
    r"#[\w-]{2,80}|[\w.+-]{1,64}@[\w-]{1,63}\.\w|https?://\S"
    r"|\b[\w-]{1,63}\.(?:example|com|net|org|io|kr|co|dev|app)\b"
)

_HOLDS: dict[Kind, re.Pattern[str]] = {
    "command": re.compile(_COMMAND, _I),
    "address": re.compile(_ADDRESS, _I),
    "clock": re.compile(_CLOCK, _I),
    "when": re.compile(f"{_CLOCK}|{_UNIT}|{_WEEKDAY}|{_FREQUENCY}", _I),
    "duration": re.compile(_UNIT, _I),
    "frequency": re.compile(f"{_FREQUENCY}|{_WEEKDAY}", _I),
    # "얼마의 주파수" is as much an amount as "얼마의 비용": any number answers it.
    "amount": re.compile(f"{_MONEY}|{_PERCENT}|{_DIGIT}", _I),
    "percent": re.compile(_PERCENT, _I),
    "count": re.compile(f"{_DIGIT}|{_NUMBER_WORD}", _I),
    "place": re.compile(_PLACE),
    "person": re.compile(_PERSON),
}


# An English question word; after one, a later "when" or "where" joins a clause ("what's
# the daily allowance when you fly out?", "who do I call when the build breaks?"): it
# does not ask.
_WH = re.compile(r"\b(?:what|which|who|whom|whose|how|when|where|why)\b", _I)
_JOINING = frozenset({"when", "where"})


def asked_kind(question: str) -> Kind | None:
    """The kind of answer ``question`` asks for, or None when it asks for an explanation."""
    for kind, pattern in _ASKS:
        if any(not _joins(question, m) for m in pattern.finditer(question)):
            return kind
    return None


def _joins(question: str, match: re.Match[str]) -> bool:
    """Whether ``match`` is a bare "when" or "where" after another question word."""
    if match.group().lower() not in _JOINING:
        return False
    first = _WH.search(question)
    return first is not None and first.start() < match.start()


def without_asking(question: str) -> str:
    """``question`` without the words that ask for the kind ("몇 시", "how long"): they say
    what shape the answer has, not what it is about."""
    for _, pattern in _ASKS:
        question = pattern.sub(_what_it_is_about, question)
    return question


def _what_it_is_about(match: re.Match[str]) -> str:
    """The words between the asking ones ("what's the *slack* command"): the subject."""
    kept = (words for words in match.groupdict().values() if words)
    return f" {' '.join(kept)} "


# A word that is itself a time, a length of time, a date or a number ("일주일", "5am",
# "2024"): the shape of a condition or an answer, never the subject of a question.
_QUANTITY = re.compile(f"(?:{_CLOCK}|{_UNIT}|{_WEEKDAY}|{_MONEY}|{_PERCENT}|{_DIGIT})", _I)


def is_quantity(word: str) -> bool:
    """Whether ``word`` (one word of a question) is a time, a duration, a date or a number."""
    return _QUANTITY.match(word) is not None


def holds_kind(text: str, kind: Kind, counter: str | None = None) -> bool:
    """Whether ``text`` holds an answer of that kind (a time, an amount, a channel, ...);
    for a count asked with a Korean ``counter`` (:func:`asked_counter`), a Korean text holds
    a number of it (a text in English, any number: "two approvals" for "몇 명")."""
    if kind == "count" and counter is not None and detect_language(text) == "ko":
        return _COUNTED[counter].search(text) is not None
    return _HOLDS[kind].search(text) is not None


# The counter a Korean count is asked in ("몇 명", "몇 곡", "몇 번"), with the counters that
# count the same things: a Korean sentence answers it with a number of one ("24명", "세
# 차례"), not with any number ("300승 이상 한 투수는 몇 명": "300 승 클럽에는 ..."). Only
# these: a count asked in another ("몇 프로", "몇 미터") is answered in other units too.
_SAME_COUNT: dict[str, str] = {
    "명": "명|인(?![가-힣])|사람",
    "곡": "곡",
    "개": "개|가지|건",
    "가": "가지|개|건",
    "건": "건|개",
    "번": "번|회|차례",
    "회": "회|번|차례",
    "차": "차례|차|번|회",
}
# A number in digits, with the units Korean writes after them ("100만", "3천"), or in words.
_COUNT_NUMBER = (
    r"(?:\d[\d,.]{0,20}\s?[십백천만억]{0,3}"
    r"|한|두|세|네|다섯|여섯|일곱|여덟|아홉|열|스무|스물|수십|수백|수천|여러)"
)
_COUNTED = {
    counter: re.compile(rf"{_COUNT_NUMBER}\s?(?:{same})") for counter, same in _SAME_COUNT.items()
}
_ASKED_COUNTER = re.compile(r"몇\s?([가-힣])")
# A question word after the count: the count is in a clause and the question asks for
# something else ("몇 개의 상을 수상한 년도는?", "몇 명이 뛴 팀은 어디인가?").
_ASKS_AFTER = re.compile(r"년도|연도|언제|날짜|누구|누가|어디|무엇|뭐|무슨|어느|어떤|이름")


def asked_counter(question: str) -> str | None:
    """The counter of a Korean count question ("몇 명이에요?": "명"), when it is one whose
    answer must be counted in it and the count is what the question asks."""
    match = _ASKED_COUNTER.search(question)
    if match is None or match.group(1) not in _SAME_COUNT:
        return None
    return None if _ASKS_AFTER.search(question, match.end()) else match.group(1)
