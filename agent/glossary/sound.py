"""How a word sounds, in a form both scripts share: the keys and spellings by which
agent/glossary/loanwords.py matches a Hangul loanword or name with its English word.

- **Consonant key.** Each side reduced to the consonants Korean writes, in classes both
  scripts share (k g q c ㄱ ㅋ; p b f v ㅂ ㅍ; l r ㄹ; "ng" and a final ㅇ are one sound),
  vowels dropped. The English side follows how Korean transliterates: an "r" before no
  vowel is not written ("server" 서버, "card" 카드), nor a silent "gh" ("light" 라이트),
  "tion" is 션 ("inflation" 인플레이션), "tz" is 츠 ("Stiglitz" 스티글리츠). The Hangul
  side drops what only the Hangul writes: the ㄹ of a 르 before another syllable is a
  European "r" before a consonant ("Wittenberg" 비텐베르크, "Marx" 마르크스), which the
  English rule leaves out too.
- **Key distance.** Names come from many languages and are written as they sound there
  (a German "W" is ㅂ, a Serbian "ć" 치), so two keys a letter or two apart still match,
  found through an index of each key with letters deleted (the keys within that
  distance share a deleted form), not by comparing with every word.
- **Spelling.** Both sides in one rough alphabet, vowels kept, for how alike they look.
"""

from __future__ import annotations

import difflib
import functools
import itertools
import re
from collections import defaultdict
from collections.abc import Iterator

_FIRST_SYLLABLE = 0xAC00
_SYLLABLES = 11172
# Consonant classes of a syllable's initial and final, in Unicode's jamo order ("" for
# the silent ㅇ; a final ㅅ sounds t: 로봇 "robot", 셋 "set"; ㅎ is kept only word-first;
# G is "ng", one sound).
_INITIAL = "K K N T T L M P P S S _ J J J K T P H".split()
_FINAL = ("", "K", "K", "KS", "N", "NJ", "N", "T", "L", "LK", "LM", "LP", "LS", "LT", "LP",
          "L", "M", "P", "PS", "T", "T", "G", "T", "T", "K", "T", "P", "T")  # fmt: skip
_RIEUL, _EU = 5, 18  # the jamo of 르
# Revised Romanization, syllable by syllable (enough for names: 판교 pangyo, 달빛 dalbit).
_RR_INITIAL = "g kk n d tt r m b pp s ss _ j jj ch k t p h".split()
_RR_VOWEL = ("a ae ya yae eo e yeo ye o wa wae oe yo u wo we wi yu eu ui i").split()
_RR_FINAL = ("", "k", "k", "k", "n", "n", "n", "t", "l", "k", "m", "p", "l", "l", "p", "l",
             "m", "p", "p", "t", "t", "ng", "t", "t", "k", "t", "p", "t")  # fmt: skip

_VOWELS = frozenset("aeiouyw")
_LETTERS = {"b": "P", "p": "P", "f": "P", "v": "P", "k": "K", "q": "K", "d": "T", "t": "T",
            "s": "S", "z": "J", "j": "J", "l": "L", "m": "M", "n": "N"}  # fmt: skip
# Letter groups read as one sound, longest first where one starts another.
_DIGRAPHS = (("tch", "J"), ("sch", "S"), ("tz", "J"), ("ch", "J"), ("sh", "S"), ("ph", "P"),
             ("th", "T"), ("ck", "K"), ("qu", "K"), ("wh", ""), ("ng", "G"), ("x", "KS"),
             ("kn", "N"))  # fmt: skip
# "ti", "si", "ci" before a vowel say "sh": nation 네이션, version 버전, social 소셜.
_SH = re.compile(r"[tsc]i(?=[aou])")

# Keys remembered across glossaries: the glossary is rebuilt whenever documents change,
# and its vocabulary is mostly the same words.
KEYS_KEPT = 200_000


def collapse(text: str) -> str:
    return re.sub(r"(.)\1+", r"\1", text)


def jamo(word: str) -> list[tuple[int, int, int]] | None:
    parts = []
    for ch in word:
        offset = ord(ch) - _FIRST_SYLLABLE
        if not 0 <= offset < _SYLLABLES:
            return None
        parts.append((offset // 588, (offset % 588) // 28, offset % 28))
    return parts


@functools.lru_cache(maxsize=KEYS_KEPT)
def korean_key(word: str) -> str | None:
    """The consonant key of a Hangul word ("슬랙" SLK), or None for other text."""
    parts = jamo(word)
    if not parts:
        return None
    key = []
    last = len(parts) - 1
    for position, (initial, vowel, final) in enumerate(parts):
        sound = _INITIAL[initial]
        if (initial, vowel, final) == (_RIEUL, _EU, 0) and position < last:
            sound = "_"  # 베르크 "berg": the r Korean writes and English leaves unsaid
        if sound != "_" and (sound != "H" or position == 0):
            key.append(sound)
        key.append(_FINAL[final])
    return collapse("".join(key))


@functools.lru_cache(maxsize=KEYS_KEPT)
def english_key(word: str) -> str | None:
    """The consonant key of an English word as Korean would write it ("slack" SLK,
    "server" SP: an "r" before no vowel is not written), or None for other text."""
    w = collapse(word.lower())
    if not (w.isascii() and w.isalpha()):
        return None
    w = _SH.sub("S", w)
    key: list[str] = []
    i = 0
    while i < len(w):
        digraph = next(((d, k) for d, k in _DIGRAPHS if w.startswith(d, i)), None)
        if digraph is not None:
            key.append(digraph[1])
            i += len(digraph[0])
            continue
        letter, after = w[i], w[i + 1 : i + 2]
        if letter == "S":  # the "sh" of "tion"
            key.append("S")
        elif letter == "r":
            key.append("L" if after and after in _VOWELS else "")
        elif letter == "h":
            key.append("H" if i == 0 else "")
        elif letter == "g" and after == "h":  # light, though, caught; but ghost, Baghdad
            key.append("" if w[i - 1 : i] in ("i", "u", "e") else "K")
            i += 1
        elif letter in "cg":
            soft = bool(after) and after in "eiy"
            key.append(("S" if letter == "c" else "J") if soft else "K")
        else:
            key.append(_LETTERS.get(letter, ""))
        i += 1
    return collapse("".join(key))


# Korean writes a foreign word with plain and aspirated consonants, never the tense ㄲ ㄸ
# ㅃ ㅆ ㅉ, and ends a syllable with ㄱ ㄴ ㄹ ㅁ ㅂ ㅅ ㅇ only (the loanword orthography):
# 깨달, 받은, 있었, 낳은 are native, whatever their consonants match.
_TENSE = frozenset((1, 4, 8, 10, 13))
_LOANWORD_FINALS = frozenset((0, 1, 4, 8, 16, 17, 19, 21))


def transcribable(word: str) -> bool:
    """Whether a Hangul word is spelled as Korean writes foreign words."""
    parts = jamo(word)
    return bool(parts) and all(i not in _TENSE and f in _LOANWORD_FINALS for i, _, f in parts or ())


def romanized(word: str) -> str | None:
    """The Revised Romanization of a Hangul word ("판교" pangyo), or None."""
    parts = jamo(word)
    if not parts:
        return None
    return "".join(_RR_INITIAL[i].strip("_") + _RR_VOWEL[v] + _RR_FINAL[f] for i, v, f in parts)


_KOREAN_SPELLING = (("eu", ""), ("kk", "k"), ("tt", "t"), ("pp", "p"), ("ss", "s"),
                    ("jj", "j"), ("syeo", "sio"), ("eo", "o"), ("ae", "a"), ("ei", "a"),
                    ("ch", "j"))  # fmt: skip
_ENGLISH_SPELLING = (("ph", "f"), ("ck", "k"), ("qu", "kw"), ("ch", "j"), ("sh", "s"),
                     ("th", "t"), ("gh", "g"), ("x", "ks"), ("tio", "sio"), ("y", "i"))  # fmt: skip
# Letters Korean does not tell apart (b/p, g/k, d/t, f/p, v/b, r/l, q/k, c/k, z/j).
_ONE_SOUND = str.maketrans("bgdfvrqcz", "pktpplkkj")
# An English "r" after a vowel and before no vowel, with that vowel: Korean writes the
# vowel alone, as 어 for "er", "ur", "ir" (server 서버, Luther 루터) and as 아, 오 for
# "ar", "or" (card 카드, port 포트).
_R_COLOURED = (("er", "o"), ("ur", "o"), ("ir", "o"), ("ar", "a"), ("or", "o"))


@functools.lru_cache(maxsize=KEYS_KEPT)
def spelling(word: str) -> str:
    """``word`` in one rough alphabet for both scripts, to compare how a loanword and an
    English word are spelled: 빅쿼리 "pikwoli", "bigquery" "pikweli"."""
    text = romanized(word)
    pairs: tuple[tuple[str, str], ...] = _KOREAN_SPELLING
    if text is None:
        text, pairs = word.lower(), _ENGLISH_SPELLING
        for old, new in _R_COLOURED:
            text = re.sub(old + "(?![aeiouy])", new, text)
    for old, new in pairs:
        text = text.replace(old, new)
    return collapse(text.translate(_ONE_SOUND))


def likeness(korean: str, english: str) -> float:
    """How alike the two are spelled, 0 to 1."""
    return difflib.SequenceMatcher(None, spelling(korean), spelling(english)).ratio()


def key_distance(first: str, second: str) -> int:
    """Levenshtein distance of two keys (a few letters each)."""
    previous = list(range(len(second) + 1))
    for i, a in enumerate(first, 1):
        current = [i]
        for j, b in enumerate(second, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a != b)))
        previous = current
    return previous[-1]


def reach(key: str) -> int:
    """How many letters two keys may differ by and still be one name's: none for a key of
    two letters (every short word would match), one up to four, two from five."""
    return 0 if len(key) <= 2 else 1 if len(key) <= 4 else 2


def deletions(key: str, most: int) -> Iterator[str]:
    """``key`` with up to ``most`` of its letters deleted, each form once."""
    seen = {key}
    yield key
    for count in range(1, min(most, len(key) - 1) + 1):
        for kept in itertools.combinations(range(len(key)), len(key) - count):
            form = "".join(key[i] for i in kept)
            if form not in seen:
                seen.add(form)
                yield form


class KeyIndex:
    """Keys findable by a key a few letters off (a symmetric-deletion index): two keys
    within distance d share a form with at most d letters deleted from each."""

    def __init__(self) -> None:
        self._keys: set[str] = set()
        self._forms: dict[str, list[str]] | None = None

    def add(self, key: str) -> None:
        self._keys.add(key)
        self._forms = None

    def near(self, key: str) -> list[tuple[int, str]]:
        """The keys within :func:`reach` of ``key`` (and of theirs), with their distance."""
        forms = self._forms if self._forms is not None else self._build()
        found: dict[str, int] = {}
        for form in deletions(key, reach(key)):
            for other in forms.get(form, ()):
                if other not in found:
                    found[other] = key_distance(key, other)
        most = reach(key)
        return sorted((d, k) for k, d in found.items() if d <= min(most, reach(k)))

    def _build(self) -> dict[str, list[str]]:
        forms: dict[str, list[str]] = defaultdict(list)
        for key in self._keys:
            for form in deletions(key, reach(key)):
                forms[form].append(key)
        self._forms = dict(forms)  # one assignment: a thread racing here builds the same
        return self._forms
