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

import difflib
import functools
import logging
import re
from collections import defaultdict
from collections.abc import Iterable
from typing import TYPE_CHECKING

from agent.retrieval.embeddings import EmbeddingError
from agent.retrieval.sino import SINO_SYLLABLES
from agent.retrieval.tokenizer import PREDICATE_ENDINGS

if TYPE_CHECKING:
    from agent.retrieval.embeddings import Similarity

log = logging.getLogger(__name__)

_FIRST_SYLLABLE = 0xAC00
_SYLLABLES = 11172
# Consonant classes of a syllable's initial and final, in Unicode's jamo order ("" for
# the silent ㅇ; a final ㅅ sounds t: 로봇 "robot", 셋 "set"; ㅎ is kept only word-first).
_INITIAL = "K K N T T L M P P S S _ J J J K T P H".split()
_FINAL = ("", "K", "K", "KS", "N", "NJ", "N", "T", "L", "LK", "LM", "LP", "LS", "LT", "LP",
          "L", "M", "P", "PS", "T", "T", "NG", "T", "T", "K", "T", "P", "T")  # fmt: skip
# Revised Romanization, syllable by syllable (enough for names: 판교 pangyo, 달빛 dalbit).
_RR_INITIAL = "g kk n d tt r m b pp s ss _ j jj ch k t p h".split()
_RR_VOWEL = ("a ae ya yae eo e yeo ye o wa wae oe yo u wo we wi yu eu ui i").split()
_RR_FINAL = ("", "k", "k", "k", "n", "n", "n", "t", "l", "k", "m", "p", "l", "l", "p", "l",
             "m", "p", "p", "t", "t", "ng", "t", "t", "k", "t", "p", "t")  # fmt: skip

_DIGRAPHS = (("tch", "J"), ("sch", "S"), ("ch", "J"), ("sh", "S"), ("ph", "P"),
             ("th", "T"), ("ck", "K"), ("gh", ""), ("qu", "K"), ("wh", ""), ("ng", "NG"),
             ("x", "KS"))  # fmt: skip
_LETTERS = {"b": "P", "p": "P", "f": "P", "v": "P", "k": "K", "q": "K", "d": "T", "t": "T",
            "s": "S", "z": "J", "j": "J", "l": "L", "m": "M", "n": "N"}  # fmt: skip
_VOWELS = frozenset("aeiouyw")

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
# Keys remembered across glossaries: the glossary is rebuilt whenever documents change,
# and its vocabulary is mostly the same words (50,000 indexed in 1.1-1.9 s, again in 0.55).
_KEYS_KEPT = 200_000
# Candidates of one key the encoder is asked about, the best spelled first: a large
# vocabulary has dozens of words per short key, and the cosine of a word spelled unlike
# the question's is rarely enough to make up for it.
_ASKED = 8
# The last syllables of Korean verb forms and particles (받아, 얻는, 일까, 팀에, 개를):
# grammar, not a borrowed noun.
_VERB_ENDINGS = PREDICATE_ENDINGS | frozenset("다에를으갔었았였쳐꾸른")
# An English word of two consonants ("need", "tell", "time", "ask") is a chat word of
# every question, and the Korean words of its key are often halves of longer ones (네트 of
# 네트워크): only longer keys go from English to Korean.
_MIN_ENGLISH_KEY = 3


def _collapse(key: str) -> str:
    return re.sub(r"(.)\1+", r"\1", key)


def _jamo(word: str) -> list[tuple[int, int, int]] | None:
    parts = []
    for ch in word:
        offset = ord(ch) - _FIRST_SYLLABLE
        if not 0 <= offset < _SYLLABLES:
            return None
        parts.append((offset // 588, (offset % 588) // 28, offset % 28))
    return parts


@functools.lru_cache(maxsize=_KEYS_KEPT)
def korean_key(word: str) -> str | None:
    """The consonant key of a Hangul word ("슬랙" SLK), or None for other text."""
    parts = _jamo(word)
    if not parts:
        return None
    key = []
    for position, (initial, _, final) in enumerate(parts):
        sound = _INITIAL[initial]
        if sound != "_" and (sound != "H" or position == 0):
            key.append(sound)
        key.append(_FINAL[final])
    return _collapse("".join(key))


@functools.lru_cache(maxsize=_KEYS_KEPT)
def english_key(word: str) -> str | None:
    """The consonant key of an English word as Korean would write it ("slack" SLK,
    "server" SP: an "r" before no vowel is not written), or None for other text."""
    w = word.lower()
    if not (w.isascii() and w.isalpha()):
        return None
    key: list[str] = []
    i = 0
    while i < len(w):
        digraph = next(((d, k) for d, k in _DIGRAPHS if w.startswith(d, i)), None)
        if digraph is not None:
            key.append(digraph[1])
            i += len(digraph[0])
            continue
        letter, after = w[i], w[i + 1 : i + 2]
        if letter == "r":
            key.append("L" if after and after in _VOWELS else "")
        elif letter == "h":
            key.append("H" if i == 0 else "")
        elif letter in "cg":
            soft = bool(after) and after in ("eiy" if letter == "c" else "ei")
            key.append(("S" if letter == "c" else "J") if soft else "K")
        else:
            key.append(_LETTERS.get(letter, ""))
        i += 1
    return _collapse("".join(key))


def romanized(word: str) -> str | None:
    """The Revised Romanization of a Hangul word ("판교" pangyo), or None."""
    parts = _jamo(word)
    if not parts:
        return None
    return "".join(_RR_INITIAL[i].strip("_") + _RR_VOWEL[v] + _RR_FINAL[f] for i, v, f in parts)


def looks_borrowed(word: str) -> bool:
    """Whether a Hangul word can be a loanword: not a verb form, and written with a
    syllable no Sino-Korean word has."""
    return (
        len(word) >= 2
        and word[-1] not in _VERB_ENDINGS
        and any(ch not in SINO_SYLLABLES for ch in word)
    )


_KOREAN_SPELLING = (("eu", ""), ("kk", "k"), ("tt", "t"), ("pp", "p"), ("ss", "s"),
                    ("jj", "j"), ("eo", "o"), ("ae", "a"), ("ch", "j"))  # fmt: skip
_ENGLISH_SPELLING = (("ph", "f"), ("ck", "k"), ("qu", "kw"), ("ch", "j"), ("sh", "s"),
                     ("th", "t"), ("x", "ks"), ("y", "i"))  # fmt: skip
# Letters Korean does not tell apart (b/p, g/k, d/t, f/p, v/b, r/l, q/k, c/k, z/j).
_ONE_SOUND = str.maketrans("bgdfvrqcz", "pktpplkkj")


def spelling(word: str) -> str:
    """``word`` in one rough alphabet for both scripts, to compare how a loanword and an
    English word are spelled: 빅쿼리 "pikwoli", "bigquery" "pikweli"."""
    text = romanized(word)
    pairs: tuple[tuple[str, str], ...] = _KOREAN_SPELLING
    if text is None:
        text, pairs = word.lower(), _ENGLISH_SPELLING
    for old, new in pairs:
        text = text.replace(old, new)
    return _collapse(text.translate(_ONE_SOUND))


def likeness(korean: str, english: str) -> float:
    """How alike the two are spelled, 0 to 1."""
    return difflib.SequenceMatcher(None, spelling(korean), spelling(english)).ratio()


class Loanwords:
    """The knowledge base's words indexed by sound, to find a question word's loanword or
    romanized counterpart in the other script. Each word's answer is remembered: the
    vocabulary is fixed for this instance (the glossary is rebuilt when documents change)."""

    def __init__(self, vocabulary: Iterable[str], similarity: Similarity | None = None) -> None:
        self._similarity = similarity
        self._by_key: dict[str, list[str]] = defaultdict(list)
        self._by_reading: dict[str, str] = {}
        self._english: set[str] = set()
        for term in dict.fromkeys(vocabulary):
            key = korean_key(term) if not term.isascii() else english_key(term)
            if term.isascii():
                if key and len(key) >= _MIN_KEY and len(term) >= _MIN_LETTERS:
                    self._by_key["en:" + key].append(term)
                    self._english.add(term)
            elif key and len(key) >= _MIN_KEY and len(term) >= 2 and term[-1] not in _VERB_ENDINGS:
                self._by_key["ko:" + key].append(term)
                self._by_reading.setdefault(romanized(term) or "", term)
        self._memo: dict[str, tuple[str, ...]] = {}

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
            if len(word) < 2 or word[-1] in _VERB_ENDINGS:
                return ()
            reading = romanized(word) or ""
            if reading in self._english:
                return (reading,)
            return self._best(word, self._by_key.get("en:" + korean, []), korean_side=True)
        if word in self._by_reading:
            return (self._by_reading[word],)
        key = english_key(word)
        if not key or len(key) < _MIN_ENGLISH_KEY or len(word) < _MIN_LETTERS:
            return ()
        candidates = [k for k in self._by_key.get("ko:" + key, []) if k[-1] not in _VERB_ENDINGS]
        return self._best(word, candidates, korean_side=False)

    def _best(self, word: str, candidates: list[str], *, korean_side: bool) -> tuple[str, ...]:
        """The candidate most alike in spelling and meaning, when alike enough."""
        spelled = []
        for candidate in candidates:
            korean, english = (word, candidate) if korean_side else (candidate, word)
            alike = likeness(korean, english)
            if looks_borrowed(korean) or alike >= _SPELLED:
                spelled.append((alike, candidate))
        spelled = sorted(spelled, reverse=True)[:_ASKED]
        if not spelled:
            return ()
        others = [candidate for _, candidate in spelled]
        cosines = (
            [float(c) for c in self._similarity([word], others)[0]]
            if self._similarity is not None
            else [0.0] * len(others)
        )
        score, best = max((a + c, o) for (a, o), c in zip(spelled, cosines, strict=True))
        return (best,) if score >= _LIKENESS else ()
