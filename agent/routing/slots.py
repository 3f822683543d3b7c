"""Which word of the previous question a follow-up's focus stands in for.

"what about sev2?" asks the previous question again with sev2 where sev1 was; "주말은요?"
with 주말 where 평일 was. The previous question's words that can be swapped are its
*slots* (not the words that ask, not grammar); a focus word pairs with one, in this order:

1. the same word: an anchor, kept where it is ("해외 출장은요?" after a question about 출장);
2. a label of the same series with another number (sev1 for sev2, P1 for p0);
3. a name for a name (Postgres for Redis): the encoder knows too little of product names
   to compare them by meaning, so the one name, or of several the nearest;
4. the nearest in meaning to the multilingual encoder, when near enough and nearer than
   the next word (평일 for 주말, name for password).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import NamedTuple

import numpy as np

from agent.answers.kind import asked_kind
from agent.retrieval.embeddings import Similarity
from agent.retrieval.tokenizer import words

# Word cosines of the multilingual encoder between a focus and its counterpart. On probes
# of our own (not the benchmark's): weekend/weekday 0.78, 주말/평일 0.56, contractors/employees
# 0.60, 계약직/정규직 0.47, password/name (of the wifi) 0.45; unrelated words of the same
# question 0.15-0.39. The nearest word must also stand out from the next one.
COUNTERPART = 0.42
_MARGIN = 0.03

PUNCT = "?？!！.。,~… "
_I = re.IGNORECASE
# Question words: a follow-up that has one asks its own question.
EN_ASKS = re.compile(
    r"\b(?:who|whom|whose|what|whats|when|where|wheres|which|why|how|hows)\b"
    r"|^(?:is|are|was|were|do|does|did|can|could|will|would|should|shall|may|might|must"
    r"|has|have|had|am)\b",
    _I,
)
KO_ASKS = re.compile(
    r"(?<![가-힣])(?:누구|누가|언제|어디|얼마|몇|무슨|어느|어떤|어떻|어떡|왜|뭐|뭘|무엇|며칠)"
)
_KO_PARTICLE = re.compile(
    r"(?:은|는|이|가|을|를|도|만|에|에는|엔|에서|에서는|에선|으로|로|으로는|로는|와|과|랑|이랑"
    r"|하고|의)$"
)
# The verb after an English subject is no slot: "do I *deploy*", "who *owns*".
_EN_SUBJECT = re.compile(r"i|we|you|they|he|she|who|people|someone|everyone", _I)
_LATIN_WORD = re.compile(r"[A-Za-z][\w.+-]{0,40}")
# A token of a labelled series: sev1, p0, v2, "tier-3".
_SHAPE = re.compile(r"([A-Za-z]{1,12})[-_]?(\d{1,4})")


def has_hangul(text: str) -> bool:
    return any("가" <= c <= "힣" for c in text)


def asks(token: str) -> bool:
    """Whether ``token`` is a question word ("언제", "who", "how")."""
    bare = token.strip(PUNCT)
    return bool(KO_ASKS.match(bare) or EN_ASKS.fullmatch(bare))


class Slot(NamedTuple):
    """A word of the previous question that a focus word can take the place of."""

    at: int  # position among the previous question's tokens
    stem: str  # the word without its particle and punctuation
    rest: str  # what follows the stem in the token ("에", "?")
    name: bool  # written as a name: Latin in a Korean question, capitalised in English


def split_token(token: str) -> tuple[str, str]:
    """A token as its stem and what follows: "평일에" -> ("평일", "에"), "name?" ->
    ("name", "?"), "sev1" -> ("sev1", "")."""
    bare = token.rstrip(PUNCT)
    tail = token[len(bare) :]
    if has_hangul(bare):
        stem = words(bare)
        if stem and bare.lower().startswith(stem[0]) and len(stem[0]) < len(bare):
            return bare[: len(stem[0])], bare[len(stem[0]) :] + tail
        particle = _KO_PARTICLE.search(bare)
        if particle and particle.start() > 0:
            return bare[: particle.start()], particle.group() + tail
    return bare, tail


def slots_of(previous: str) -> list[Slot]:
    """The previous question's words that can be swapped for a new focus: not the words
    that ask ("얼마", "how often"), not grammar words, not the verb after an English
    subject ("do I *deploy*", "who *owns*"): a focus is a thing."""
    out = []
    tokens = previous.split()
    korean = has_hangul(previous)
    for index, token in enumerate(tokens):
        stem, rest = split_token(token)
        if not words(stem) or asks(stem) or asked_kind(token) is not None:
            continue
        if index and _EN_SUBJECT.fullmatch(tokens[index - 1].strip(PUNCT)):
            continue
        out.append(Slot(index, stem, rest, is_name(stem, korean, first=index == 0)))
    return out


def is_name(word: str, korean: bool, *, first: bool) -> bool:
    """Whether ``word`` is written as a name (Postgres, Redis, VPN): Latin letters in a
    Korean sentence, or capitalised inside an English one; not a series label (sev1)."""
    if not _LATIN_WORD.fullmatch(word) or _SHAPE.fullmatch(word):
        return False
    if korean:
        return True
    return (word[0].isupper() and not first and word != "I") or (len(word) > 1 and word.isupper())


_Match = Callable[[str, Sequence[Slot], Similarity | None], Slot | None]


def _same_word(word: str, slots: Sequence[Slot], similarity: Similarity | None) -> Slot | None:
    key = word.lower()
    return next((s for s in slots if s.stem.lower() == key), None)


def _same_series(word: str, slots: Sequence[Slot], similarity: Similarity | None) -> Slot | None:
    """The slot of the same series with another number: sev1 for sev2, P1 for p0."""
    shape = _SHAPE.fullmatch(word)
    if shape is None:
        return None
    for slot in slots:
        other = _SHAPE.fullmatch(slot.stem)
        if (
            other is not None
            and other.group(1).lower() == shape.group(1).lower()
            and other.group(2) != shape.group(2)
        ):
            return slot
    return None


def _same_kind_of_name(korean: bool) -> _Match:
    def match(word: str, slots: Sequence[Slot], similarity: Similarity | None) -> Slot | None:
        """The one name of the previous question, or of several the nearest in meaning:
        the encoder knows too little of product names to compare them with a threshold."""
        if not is_name(word, korean, first=False):
            return None
        names = [s for s in slots if s.name]
        if len(names) <= 1 or similarity is None:
            return names[0] if names else None
        try:
            cosines = similarity([word], [s.stem for s in names])[0]
        except Exception:
            return None
        order = np.argsort(-cosines)
        if cosines[order[0]] - cosines[order[1]] < _MARGIN:
            return None
        return names[int(order[0])]

    return match


def _nearest(
    focus: Sequence[str], slots: Sequence[Slot], similarity: Similarity
) -> list[tuple[int, Slot]]:
    """Each focus word's counterpart among ``slots`` by meaning, one slot per word: the
    nearest, when near enough and nearer than the next one."""
    try:
        cosines = similarity(list(focus), [s.stem for s in slots])
    except Exception:  # the encoder is down: the focus is added instead
        return []
    taken: set[int] = set()
    out = []
    for i in range(len(focus)):
        order = [j for j in np.argsort(-cosines[i]) if int(j) not in taken]
        if not order:
            break
        best = int(order[0])
        second = float(cosines[i][order[1]]) if len(order) > 1 else 0.0
        if cosines[i][best] >= COUNTERPART and cosines[i][best] - second >= _MARGIN:
            taken.add(best)
            out.append((i, slots[best]))
    return out


def pair(
    focus: Sequence[str], slots: Sequence[Slot], korean: bool, similarity: Similarity | None
) -> dict[int, Slot]:
    """Each focus word's counterpart, by the position of the word in ``focus``; a word
    with none is left out."""
    pairs: dict[int, Slot] = {}

    def free() -> list[Slot]:
        return [s for s in slots if s not in pairs.values()]

    for match in (_same_word, _same_series, _same_kind_of_name(korean)):
        for i, word in enumerate(focus):
            if i not in pairs:
                slot = match(word, free(), similarity)
                if slot is not None:
                    pairs[i] = slot
    rest = [i for i in range(len(focus)) if i not in pairs]
    if rest and free() and similarity is not None:
        for i, slot in _nearest([focus[i] for i in rest], free(), similarity):
            pairs[rest[i]] = slot
    return pairs
