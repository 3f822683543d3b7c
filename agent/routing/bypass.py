"""When a message may skip the documents: the rule every router applies before a bypass.

A smalltalk or tools reply to a real question is the worst answer a team bot can give:
the person concludes the documents say nothing. Routers (the LLM's and the local
prototypes) guess from the message alone, and "명성황후의 이름은?" looks a lot like
"이름이 뭐야?". So a bypass is answered only when one of these holds:

- the message is a pleasantry: a greeting, thanks, a farewell, laughter, "how are you",
  "who are you?". These answer in one step whatever the documents contain;
- the documents do not match it, by its words or by its meaning: one pass over the
  keyword index finds no chunk holding a fair share of the message's distinct terms,
  weighted by rarity, and no chunk is close to it for the encoder (a question asked in
  the other language than the documents that answer it shares no word with them: "테무친의
  아내 보르테가 낳은 첫 아들의 이름은?" about an English page was greeted). A short message
  addressed to the bot ("what should I call you?") needs a strong match to count as a
  question for the documents ("너 배포 절차 알아?" has one).

Arithmetic goes to the calculator only when the message asks for a computation (nothing
but an expression and filler words, see :func:`agent.tools.find_expression`), never for
numbers quoted in a question ("973-1048년에 살았던 학자는?").
"""

from __future__ import annotations

import re
from typing import NamedTuple

from agent.retrieval.tokenizer import words as subject_words
from agent.routing.intent import is_acknowledgement
from agent.wording.language import has_hangul

# The IDF-weighted share of a message's distinct terms that one chunk contains
# (``KnowledgeBase.keyword_match``). Measured on KorQuAD dev (964 paragraphs), XQuAD (240)
# and the sample knowledge base: factual questions the prototypes took for smalltalk
# matched 0.51-1.0; chit-chat that is no pleasantry ("재밌는 얘기 해줘", "I'm bored")
# mostly 0-0.5, from words a large wiki happens to contain. Above the line a message is
# searched: a chit-chat message then gets an honest "not in the documents", where a
# question below it would get a greeting, which is far worse.
DOCUMENTS_MATCH = 0.5
# A long message is rarely chit-chat: a weaker match claims it. Korean says in 7 words what
# English says in 13 ("테무친의 아내 보르테가 낳은 첫 아들의 이름은 무엇인가?"), so five
# subject words (tokenizer.words) make a message long too; chit-chat has two or three.
DOCUMENTS_MATCH_LONG = 0.3
_LONG_WORDS = 10
_LONG_TERMS = 5
# A short message that talks to the bot needs a strong match (most of its rare terms in one
# chunk) to be a question for the documents: "너 배포 절차 알아?" has one.
DOCUMENTS_MATCH_TO_THE_BOT = 0.8

# The encoder's best cosine between a message and one chunk. Measured on the mixed
# KorQuAD + XQuAD index and the sample knowledge base: the 25 held-out chit-chat and
# drafting requests of tests/support/intent_heldout.py that are no pleasantry reached 0.14-0.32
# (median 0.21 and 0.19; drafting requests have a route of their own), "what's your
# name?" 0.21; the 300 cross-language questions of benchmarks/data/crosslingual.json
# 0.18-0.65 (median 0.38, 86 % at or above 0.30), the four of them the prototypes took
# for smalltalk 0.32-0.43. A message addressed to the bot needs more ("사람이야 AI야?":
# 0.30).
MEANING_MATCH = 0.30
MEANING_MATCH_TO_THE_BOT = 0.45


class Needed(NamedTuple):
    """How strongly the documents must match a message to claim it: by its words (the
    keyword index's share, see ``DOCUMENTS_MATCH``) or by its meaning (``MEANING_MATCH``)."""

    words: float
    meaning: float


# What claims a message the LLM sent to the calculator without an expression in it.
ANY_QUESTION = Needed(DOCUMENTS_MATCH, MEANING_MATCH)

# Cues of a pleasantry in a short message: greetings, thanks, farewells, laughter, praise,
# "how are you", and questions about the bot itself.
_CUES = re.compile(
    r"^\W*(?:hi|hello|hey|yo|good (?:morning|afternoon|evening|night))\b"
    r"|\b(?:thanks?|thank you|thx|ty|appreciate|cheers|bye|goodbye|see (?:you|ya)|gotta go"
    r"|lol|haha|a joke|great job|good job|long time no see|nice to meet you"
    r"|have a (?:nice|good|great) day"
    r"|how are (?:you|things)|how(?:'s| is) (?:it going|your day|life)|what'?s up"
    r"|who (?:are|made|built|created) you|what are you\b|what(?:'s| is) your name"
    r"|what (?:can|could) you (?:do|help)|what are you able|are you (?:a |an )?(?:bot|human"
    r"|ai|robot|real)|what should i call you|what kind of bot|you'?re (?:\w+ )?"
    r"(?:smart|awesome|great|helpful|funny|the best))\b"
    r"|안녕|반가|고마|고맙|감사(?:합|해|드)|땡큐|수고|잘 ?가|잘 ?자|나중에 ?봐|내일 ?봐|이만 ?갈"
    r"|ㅋㅋ|ㅎㅎ|ㅎㅇ|심심|농담|잘했어|좋은 ?(?:아침|오후|저녁|하루|밤)"
    r"|잘 ?지냈|요즘 ?어때|하루 ?어때|기분 ?(?:어때|좋아|은 ?어때)|밥 ?(?:먹었|은 ?먹)|오랜만"
    r"|누가 ?(?:너|당신)"
    r"|(?<![가-힣])(?:너|넌|당신|봇)(?:는|가|를|의|아)?(?![가-힣]).{0,8}"
    r"(?:누구|봇|사람|ai|뭐 ?하는|뭘 ?도와|뭘 ?할|이름|똑똑|뭐라고 ?부르)"
    # Korean drops "you": these count only as the whole message ("누구야?", "이름이 뭐야?").
    r"|^\W*(?:누구(?:야|세요|니|냐|예요|신가요)?|이름이 ?(?:뭐|무엇|뭔)\S*|뭘 ?할 ?수 ?있\S*"
    r"|뭐라고 ?부르\S*)\W*$",
    re.IGNORECASE,
)
# Words for the bot: "you", "너", "봇". Korean takes a particle; a bare 네 is "yes".
_TO_THE_BOT = re.compile(
    r"\b(?:you|your|yours|yourself|u|bot|ai|teamrag)\b"
    r"|(?<![가-힣])(?:너|넌|니가|네가|당신|봇|챗봇)(?:는|가|를|한테|에게|의|아|님|이|도|랑)?(?![가-힣])",
    re.IGNORECASE,
)
_SHORT_WORDS = 7

# A request to write something: a draft, a notice, a message, a translation. The creative
# path then stands whatever the documents contain (it searches them with a tool anyway);
# without such a verb a "creative" guess meets the same document check as smalltalk.
_CREATIVE = re.compile(
    r"\b(?:write|draft|compose|rewrite|rephrase|translate|summari[sz]e)\b"
    r"|(?:초안|작성해|작성 ?부탁|써 ?줘|써 ?주세요|써줄래|적어 ?줘|번역해|다듬어|만들어 ?줘)",
    re.IGNORECASE,
)


def is_creative_request(text: str) -> bool:
    """The message asks for writing ("슬랙 공지문 초안 써줘", "draft a welcome message")."""
    return bool(_CREATIVE.search(text))


def _words(text: str) -> int:
    return len(text.split())


# A question with a subject of its own: not addressed to the bot, two subject words or more,
# and in the asking form: in English a question mark or a question word; in Korean, which
# drops "you" ("사람이야 AI야?" asks the bot), a possessive or a question word.
# "명성황후의 이름은?" and "What is the name of the CEO's dog?" read like "what's your name?"
# to the prototypes; with no document about them they were greeted ("Hi! I'm teamrag"),
# where "not in the documents" is the true answer. "뭐 해?", "점심 뭐 먹을까?" and "how's the
# weather?" stay chit-chat.
_ASKING_EN = re.compile(r"\?|^\W*(?:who|whose|what|when|where|which|why|how)\b", re.IGNORECASE)
_ASKING_KO = re.compile(r"[가-힣A-Za-z0-9]의\s|누구|무엇|어디|언제|몇|얼마|어느|왜")
_SUBJECT_WORDS = 2


def asks_about_something(text: str) -> bool:
    """The message asks about something other than the bot: a question for the documents
    even when they hold nothing on it (the answer is then "not found", never a greeting)."""
    asking = _ASKING_KO if has_hangul(text) else _ASKING_EN
    return (
        bool(asking.search(text))
        and not _TO_THE_BOT.search(text)
        and len(subject_words(text)) >= _SUBJECT_WORDS
    )


def is_pleasantry(text: str) -> bool:
    """Greetings, thanks, farewells and "who are you": answered without a search."""
    stripped = text.strip()
    if not stripped:
        return False
    if is_acknowledgement(stripped):
        return True
    return _words(stripped) <= _SHORT_WORDS and bool(_CUES.search(stripped))


# Where a chat message parts a pleasantry from what it asks: sentence ends, a dash, emoji,
# laughter ("ㅎㅎ"), line breaks.
_CLAUSE = re.compile(
    r"(?<=[.!?~…])\s+|\s+-+\s+|\n+|[\U0001F300-\U0001FAFF\u2600-\u27BF]+\s*|[ㅋㅎ]{2,}\s*"
)


# A clause that asks: a question mark, or a question word anywhere in it.
_ASKS_HERE = re.compile(
    r"[?？]|\b(?:who|whose|what|whats|when|where|which|why|how|is there|are there|can i|do i)\b"
    r"|누구|누가|무엇|뭐|어디|언제|몇|얼마|어느|어떻게|왜|혹시|나요|까요|돼요|되나요",
    re.IGNORECASE,
)


def without_pleasantries(text: str) -> str:
    """The question inside "thanks! also whats the wifi pw" or "안녕하세요~ 혹시 ...": the
    clauses that are pleasantries dropped, so search and the answer's lead judge weigh what
    is asked, not the thanks around it. A message that is all pleasantry stays whole."""
    parts = [p.strip() for p in _CLAUSE.split(text) if p and p.strip()]
    kept = [p for p in parts if not is_pleasantry(p)]
    if not kept or len(kept) == len(parts):
        return text
    # What comes before the first clause that asks is more of the wrapping ("입사 2주차
    # 뉴비입니다", "super helpful"), when a later clause asks.
    first = next((i for i, p in enumerate(kept) if _ASKS_HERE.search(p)), 0)
    return " ".join(kept[first:])


def match_needed(text: str) -> Needed | None:
    """The match at which the documents claim this message, or None when it may bypass
    them whatever they contain (a pleasantry)."""
    if is_pleasantry(text):
        return None
    words = _words(text.strip())
    if words > _LONG_WORDS or len(subject_words(text)) >= _LONG_TERMS:
        return Needed(DOCUMENTS_MATCH_LONG, MEANING_MATCH)
    if words <= _SHORT_WORDS and _TO_THE_BOT.search(text):
        return Needed(DOCUMENTS_MATCH_TO_THE_BOT, MEANING_MATCH_TO_THE_BOT)
    return ANY_QUESTION
