"""Whether the sentence an extractive answer leads with answers the question.

An answer opens as found only when its lead quote answers (DESIGN, "Trust"). The passage
judge reads whole passages and is fooled both ways: a passage about monitors shares
"days" with a sick-leave question, and a passage holding the answer among chat words it
lacks ("법카 긁고 나서") scores low. The lead sentence is what a reader sees first, so it is
judged on its own, with the heading it stands under and its document's title (a section
"2. 법인카드" says what its list items are about), by three general signals:

- the answer kind: a question asking "몇 시" or "how long" is not answered by a sentence
  without a time or a duration (:mod:`agent.answers.kind`);
- term support: the share of the question's words the sentence and its headings hold, a
  word that no document uses weighing more (it is usually what the question is about:
  "referral", "스톡옵션"), except a Korean predicate nobody wrote ("긁고", "올려야");
- meaning: the encoder's cosine, which is all there is when the sentence is in the other
  language than the question.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from agent.answers.kind import (
    STRICT,
    asked_counter,
    asked_kind,
    holds_kind,
    is_quantity,
    without_asking,
)
from agent.retrieval.tokenizer import inflected, tokenize, words

TermIds = Callable[[Sequence[str]], Sequence[int | None]]
# For each of the first words, its best cosine with any of the second (the encoder's).
Nearest = Callable[[Sequence[str], Sequence[str]], Sequence[float]]

# The noun right after "which"/"what" or "어떤/무슨/어느": what the question is about.
_FOCUS = re.compile(
    r"\b(?:which|what)\s+([a-z][\w-]{2,30})|(?:어떤|무슨|어느)\s?([가-힣]{2,12})", re.IGNORECASE
)
_FOCUS_WEIGHT = 2.0

# Shorter English words are not matched by their stem: "form" and "format" stay apart.
_STEM_LETTERS = 5
# A chat clipping ("prod", "repo", "config") is the start of the word it stands for.
_CLIPPING_LETTERS = 4

# A question word that no document uses: the subject the documents lack, in English; in
# Korean only when it is not a predicate (a chat verb form the documents never spell);
# never a time or a number (agent/answers/kind.is_quantity).
_UNSEEN_WEIGHT = 3.0
# Shares of the question's term weight the lead (with its headings) must hold. Calibrated
# on the visible part of the team handbook and 100 KorQuAD and XQuAD questions (seed 7):
# at 0.5 formal questions whose lead held the answer opened as "not found" (10 and 28 of
# 100); at 0.35 chat questions gained confident wrong answers (3 -> 5 of 67); 0.4 between.
_SUPPORT = 0.4
_SUPPORT_WITH_KIND = 0.3
# A Korean compound held only in part ("토요일" beside "수요일") counts for half its share.
_PARTIAL = 0.5
# Meaning and words together: a same-language lead at this cosine needs only this share.
_MEANT = 0.5
_MEANT_SUPPORT = 0.25
# A word held only by the sentences beside the lead in its section, not by the lead or its
# headings, counts for this share: "It takes place on the first Thursday" is about the
# session the sentence before it names, and an FAQ's answer about the question above it.
_NEARBY = 0.5
# A question word the lead does not hold, but a word of it (or of its headings and the
# sentences beside it) means the same in the encoder's eyes ("erase" and "delete" at 0.73,
# "reply" and "respond" at 0.91), counts for this share. Words of one family sit as close
# ("monthly" and "weekly" at 0.71), so a synonym is never as good as the word itself.
_SYNONYM = 0.5
_SYNONYM_COSINE = 0.7
_SYNONYM_LETTERS = 4
# A word held only through its counterpart in the other language (agent/glossary) counts
# for this share of it: a pair says the words translate, not that the sentence answers.
_BRIDGED = 0.5
# The weight, across languages, of a question word neither script nor glossary bridges.
_UNCHECKED = 0.25
# Cosine of question and lead sentence that stands in for shared words, when the lead holds
# the kind of answer asked for: in the same language a paraphrase, in the other language a
# translation (where the encoder's cosine runs lower).
_SAME_LANGUAGE_COSINE = 0.45
_OTHER_LANGUAGE_COSINE = 0.36


@dataclass(frozen=True)
class LeadVerdict:
    answers: bool
    support: float  # share of the question's term weight held
    cosine: float
    kind_ok: bool
    # Whether it would answer if it held the kind of answer asked for: on the question's
    # subject, by its words or its meaning.
    on_subject: bool = False


def judge_lead(
    question: str,
    lead: str,
    context: str,
    cosine: float,
    *,
    same_language: bool,
    term_ids: TermIds | None = None,
    counterparts: Mapping[str, Sequence[str]] | None = None,
    nearby: str = "",
    nearest: Nearest | None = None,
) -> LeadVerdict:
    """Whether ``lead`` (under the headings and title in ``context``, beside the sentences
    in ``nearby``) answers ``question``."""
    kind = asked_kind(question)
    held = kind is not None and holds_kind(lead, kind, asked_counter(question))
    kind_ok = held or kind is None or kind not in STRICT
    support = term_support(
        question,
        lead,
        context,
        term_ids,
        same_language=same_language,
        counterparts=counterparts,
        nearby=nearby,
        nearest=nearest,
    )
    # The kind held lowers the share of words needed: "7일 이내" in a sentence about
    # receipts answers "영수증 며칠 안에", whatever chat words the question adds.
    enough = support >= (_SUPPORT_WITH_KIND if held else _SUPPORT)
    floor = _SAME_LANGUAGE_COSINE if same_language else _OTHER_LANGUAGE_COSINE
    meant = same_language and support >= _MEANT_SUPPORT and cosine >= _MEANT
    on_subject = enough or meant or (held and cosine >= floor)
    return LeadVerdict(kind_ok and on_subject, support, cosine, kind_ok, on_subject)


def term_support(
    question: str,
    lead: str,
    context: str,
    term_ids: TermIds | None,
    *,
    same_language: bool,
    counterparts: Mapping[str, Sequence[str]] | None = None,
    nearby: str = "",
    nearest: Nearest | None = None,
) -> float:
    """The share of the question's term weight that the lead and its headings hold (the
    sentences ``nearby`` at ``_NEARBY``); a word whose counterpart in the other language
    (agent/glossary) they hold counts as held."""
    # A word the lead does not hold may be held in the other script: a mined pair across
    # languages, a loanword even within one ("빅쿼리" in "BigQuery의 ... 데이터셋").
    bridge = counterparts or {}
    terms = [t for t in dict.fromkeys(words(without_asking(question))) if len(t) > 1]
    # Across languages only names, numbers and code read the same in both, and the words
    # the glossary bridges; the rest cannot be checked, and count for part of their weight:
    # one bridged word of six ("서버" in "프로드 서버 접근 권한 요청은 어디에") is not the question.
    unchecked = [t for t in terms if not (t.isascii() or t in bridge)] if not same_language else []
    terms = [t for t in terms if t not in unchecked]
    if not terms:
        return 0.0
    held_in = set(tokenize(lead)) | set(tokenize(context))
    beside = set(tokenize(nearby)) - held_in
    weights = {t: term_weight(t) for t in terms}
    for t in focus_terms(question):
        if t in weights:
            weights[t] *= _FOCUS_WEIGHT
    unseen = term_ids(terms) if term_ids is not None else [0] * len(terms)
    for term, known in zip(terms, unseen, strict=True):
        # "일주일" in "일주일 정도 휴가 가려면" or "5am" is the question's condition, said by
        # the documents in their own numbers ("연속 3일 이상"): no more than any word.
        if known is None and not is_quantity(term):
            if term.isascii() or (len(term) > 2 and not inflected(term)):
                weights[term] *= _UNSEEN_WEIGHT
            elif len(term) == 2 and not inflected(term):
                pass  # a chat clipping ("법카", "인강"): the documents spell it out
            else:
                weights[term] = 0.0
    total = sum(weights.values()) + _UNCHECKED * sum(term_weight(t) for t in unchecked)
    if total == 0:
        return 0.0

    def share(term: str) -> float:
        own = [
            _held(term, held_in),
            *(_BRIDGED * _phrase_held(o, held_in) for o in bridge.get(term, ())),
        ]
        if not beside:
            return max(own)
        bridged = (_BRIDGED * _phrase_held(o, beside) for o in bridge.get(term, ()))
        near = [_held(term, beside), *bridged]
        return max([*own, _NEARBY * max(near)])

    shares = {t: share(t) for t, w in weights.items() if w > 0}
    if nearest is not None and same_language:
        missing = [t for t, held in shares.items() if not held and _synonymous(t)]
        around = [w for w in dict.fromkeys(words(f"{lead}\n{context}\n{nearby}")) if _synonymous(w)]
        if missing and around:
            for term, cosine in zip(missing, nearest(missing, around), strict=True):
                if cosine >= _SYNONYM_COSINE:
                    shares[term] = _SYNONYM
    return sum(weights[t] * held for t, held in shares.items()) / total


def term_weight(term: str) -> float:
    """A question word's weight before what the question does with it: longer words say
    more."""
    return 1.0 + math.log(1 + len(term))


def _synonymous(word: str) -> bool:
    """A word whose synonyms the encoder finds: an English word of some length ("get" and
    "ask" are every sentence's neighbours). Not a Korean one: the tokenizer leaves verb
    forms inflected, and "모여야" sits next to any word of the same ending ("있어야"); nor
    across languages, where the nearest word was as often a near miss ("submit" and
    첨부) as a translation."""
    return word.isascii() and word.isalpha() and len(word) >= _SYNONYM_LETTERS


def focus_terms(question: str) -> list[str]:
    """The thing a "which"/"what" question asks about ("which *laptop* do I get?", "어떤
    *데이터셋* 써야 돼요?"): a sentence that does not name it answers something else."""
    return [t for m in _FOCUS.finditer(question) for t in words(m.group(1) or m.group(2))[:1]]


def _phrase_held(phrase: str, tokens: set[str]) -> float:
    """A glossary counterpart ("Soft launch") is held when each of its words is."""
    parts = words(phrase)
    return min((_held(p, tokens) for p in parts), default=0.0)


def _held(term: str, tokens: set[str]) -> float:
    """1 for a word the text holds, or an English word of the same stem or a chat clipping
    of it ("prod" of production, see :func:`holds_stem`); for a Korean compound the share
    of its syllable pairs it holds ("인수인계" in a sentence that says "인계"), as the
    keyword index matches it."""
    if holds_stem(tokens, term, clippings=True):
        return 1.0
    if term.isascii() or len(term) < 3:
        return 0.0
    pairs = [term[i : i + 2] for i in range(len(term) - 1)]
    return _PARTIAL * sum(p in tokens for p in pairs) / len(pairs)


def holds_stem(found: set[str], term: str, *, clippings: bool = False) -> bool:
    """Whether ``found`` holds ``term``, or an English word it shares a stem with that the
    index's light stemmer keeps apart: "exception" is answered by "except", "deployment"
    by "deploy" (``_STEM_LETTERS`` at least on both sides). With ``clippings``, a chat
    clipping is held by the word it starts ("prod" by "production"), which a passage-level
    judge cannot afford ("form" is not "format") but one sentence, read for a question
    typed in chat, can."""
    if term in found:
        return True
    shortest = _CLIPPING_LETTERS if clippings else _STEM_LETTERS
    if not term.isascii() or not term.isalpha() or len(term) < shortest:
        return False
    return any(
        word.startswith(term) or (len(word) >= _STEM_LETTERS and term.startswith(word))
        for word in found
    )
