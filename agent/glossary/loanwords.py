"""Loanwords and romanized names: the counterparts a rule finds without a glossary entry.

A team types many English words in Hangul ("슬랙", "빅쿼리", "롤백", "체크리스트") and
writes its Korean names in Latin letters ("Pangyo" for 판교). The encoder places such pairs
anywhere (빅쿼리 and "bigquery" at cosine 0.34, 온콜 and "oncall" at 0.25), and no
glossary lists every one, so two rules match them against the knowledge base's own
vocabulary:

- **Sound.** Korean writes an English word with the consonants it hears: each side is
  reduced to its consonants, in classes both scripts share (k g q c ㄱ ㅋ; p b f v ㅂ ㅍ;
  l r ㄹ ...), vowels and a vowel-less English "r" dropped ("server" and 서버 are both
  S-P). Words of the same key are candidates.
- **Romanization.** A Korean word whose Revised Romanization is an English word of the
  knowledge base is that word (판교 "pangyo", 달빛 "dalbit").

A consonant key is short, so native words collide with English ones: 사용 and "using" are
both S-NG, 보다 and "better" P-T. Loanwords are written with syllables that no Sino-Korean
word has (슬, 랙, 쿼, 뷰, 트, 드, 스: see :data:`agent.retrieval.sino.SINO_SYLLABLES`),
and native words rarely end a question's noun with them, so a Korean word counts as a
loanword only with such a syllable and without a verb ending. A loanword spelled with
Sino-Korean syllables alone (카나리, 지라) still matches when its romanization spells
most of the English word.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Iterable
from typing import TYPE_CHECKING

from agent.glossary.sound import (
    KeyIndex,
    english_key,
    korean_key,
    likeness,
    romanized,
    spelling,
    transcribable,
)
from agent.retrieval.embeddings import EmbeddingError
from agent.retrieval.sino import SINO_SYLLABLES
from agent.retrieval.tokenizer import PREDICATE_ENDINGS

if TYPE_CHECKING:
    from agent.retrieval.embeddings import Similarity

__all__ = ["Loanwords", "english_key", "korean_key", "likeness", "looks_borrowed",
           "romanized", "spelling"]  # fmt: skip

log = logging.getLogger(__name__)

# A key of one consonant ("오너", "owner": N) matches half the vocabulary.
_MIN_KEY = 2
_MIN_LETTERS = 3
# A candidate of the same key is the counterpart when spelling and meaning together say so:
# the romanized spelling's likeness (difflib's ratio, both sides in one alphabet) plus the
# encoder's cosine. Either alone misleads: 버그 spells "book" exactly (1.0, cosine 0.21)
# and means "bug" (0.67 + 0.78); 빅쿼리 means nothing to the encoder (0.34 with "bigquery")
# but spells it (0.86). Only the best candidate counts, from this sum: below it, 따로 and
# "daily" (0.67 + 0.39), 온콜 and "oncall" (0.80 + 0.25) are left to the glossary.
_LIKENESS = 1.1
# A Sino-looking word (all its syllables are Sino-Korean readings: 사용, 위탁, 카나리)
# must spell the English word almost exactly: 사용 and "using" mean the same (0.88).
_SPELLED = 0.9
# Words whose counterparts are remembered, per glossary.
_MEMO = 10_000
# A candidate whose key is a letter off (a name as another language writes it:
# 비텐베르크 and "Wittenberg") must make up for it in spelling and meaning, per letter.
_PER_LETTER_OFF = 0.15
# Candidates of one key the encoder is asked about, the best spelled first: a large
# vocabulary has dozens of words per short key, and the cosine of a word spelled unlike
# the question's is rarely enough to make up for it.
_ASKED = 8
# The last syllables of Korean verb forms and particles (받아, 얻는, 일까, 팀에, 개를, 칸의):
# grammar, not a borrowed noun.
_VERB_ENDINGS = PREDICATE_ENDINGS | frozenset("다에를으의갔었았였쳐꾸른")
# An English word of two consonants ("need", "tell", "time", "ask") is a chat word of
# every question, and the Korean words of its key are often halves of longer ones (네트 of
# 네트워크): only longer keys go from English to Korean.
_MIN_ENGLISH_KEY = 3


def looks_borrowed(word: str) -> bool:
    """Whether a Hangul word can be a loanword: not a verb form, and written with a
    syllable no Sino-Korean word has."""
    return (
        len(word) >= 2
        and word[-1] not in _VERB_ENDINGS
        and any(ch not in SINO_SYLLABLES for ch in word)
        and transcribable(word)
    )


class Loanwords:
    """The knowledge base's words indexed by sound, to find a question word's loanword or
    romanized counterpart in the other script. Each word's answer is remembered: the
    vocabulary is fixed for this instance (the glossary is rebuilt when documents change)."""

    def __init__(self, vocabulary: Iterable[str], similarity: Similarity | None = None) -> None:
        self._similarity = similarity
        self._by_key: dict[str, list[str]] = defaultdict(list)
        # Per script ("en", "ko"), the keys of its words, findable a letter or two off.
        self._keys = {"en": KeyIndex(), "ko": KeyIndex()}
        self._by_reading: dict[str, str] = {}
        self._english: set[str] = set()
        for term in dict.fromkeys(vocabulary):
            key = korean_key(term) if not term.isascii() else english_key(term)
            if term.isascii():
                if key and len(key) >= _MIN_KEY and len(term) >= _MIN_LETTERS:
                    self._add("en", key, term)
                    self._english.add(term)
            elif key and len(key) >= _MIN_KEY and len(term) >= 2 and term[-1] not in _VERB_ENDINGS:
                self._add("ko", key, term)
                self._by_reading.setdefault(romanized(term) or "", term)
        self._memo: dict[str, tuple[str, ...]] = {}

    def _add(self, script: str, key: str, term: str) -> None:
        words = self._by_key[f"{script}:{key}"]
        if not words:
            self._keys[script].add(key)
        words.append(term)

    def counterparts(self, word: str) -> tuple[str, ...]:
        """The knowledge base's word in the other script that ``word`` (a question's word,
        :func:`agent.retrieval.tokenizer.words`) is a loanword or romanization of, if any.
        An encoder that fails (an embeddings endpoint down) leaves the word without one:
        the answer goes on, and the word is asked about again next time."""
        if word not in self._memo:
            try:
                found = self._find(word)
            except EmbeddingError as exc:
                log.warning("loanword lookup for %r skipped: %s", word, exc)
                return ()
            if len(self._memo) > _MEMO:
                self._memo.clear()
            self._memo[word] = found
        return self._memo[word]

    def _find(self, word: str) -> tuple[str, ...]:
        korean = korean_key(word)
        if korean is not None:
            if len(word) < 2 or word[-1] in _VERB_ENDINGS or len(korean) < _MIN_KEY:
                return ()
            reading = romanized(word) or ""
            if reading in self._english:
                return (reading,)
            return self._best(word, self._near("en", korean), korean_side=True)
        if word in self._by_reading:
            return (self._by_reading[word],)
        key = english_key(word)
        if not key or len(key) < _MIN_ENGLISH_KEY or len(word) < _MIN_LETTERS:
            return ()
        candidates = [(d, k) for d, k in self._near("ko", key) if k[-1] not in _VERB_ENDINGS]
        return self._best(word, candidates, korean_side=False)

    def _near(self, script: str, key: str) -> list[tuple[int, str]]:
        """The other script's words of this key or one near it, with the keys' distance."""
        return [
            (distance, term)
            for distance, near in self._keys[script].near(key)
            for term in self._by_key[f"{script}:{near}"]
        ]

    def _best(
        self, word: str, candidates: list[tuple[int, str]], *, korean_side: bool
    ) -> tuple[str, ...]:
        """The candidate most alike in sound, spelling and meaning, when alike enough."""
        spelled = []
        for distance, candidate in candidates:
            korean, english = (word, candidate) if korean_side else (candidate, word)
            alike = likeness(korean, english)
            # Spelled as foreign words are, whatever else: alike in letters, 따라 is still
            # "follow", not "dalla" (loanword orthography writes no tense consonant).
            if not transcribable(korean):
                continue
            if looks_borrowed(korean) or (alike >= _SPELLED and not distance):
                spelled.append((alike - _PER_LETTER_OFF * distance, candidate))
        spelled = sorted(spelled, reverse=True)
        if not spelled:
            return ()
        # The best spelled, and every one spelled as well as the last of them: cut inside a
        # tie, the order of the alphabet chose (버그 lost "bug" behind "rpg", "pick", "faq").
        last = spelled[min(_ASKED, len(spelled)) - 1][0]
        spelled = [(alike, candidate) for alike, candidate in spelled if alike >= last]
        others = [candidate for _, candidate in spelled]
        cosines = (
            [float(c) for c in self._similarity([word], others)[0]]
            if self._similarity is not None
            else [0.0] * len(others)
        )
        score, best = max((a + c, o) for (a, o), c in zip(spelled, cosines, strict=True))
        return (best,) if score >= _LIKENESS else ()
