"""Text normalisation, so disguised keywords (look-alikes, hidden or spelled-out letters) match."""

from __future__ import annotations

import re
import unicodedata

__all__ = ["APOSTROPHES", "SPACE", "normalise", "spelled_runs", "variants", "visible"]

# Zero-width, bidi, variation selectors, Hangul fillers, soft hyphen: all invisible to a
# reader, all usable to split a keyword so a naive matcher misses it.
_INVISIBLE = re.compile(
    "[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f"
    "\u202a-\u202e\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\U000e0000-\U000e007f]"
)
# Unicode tag characters mirror ASCII and render as nothing; models still read them, so
# hidden instructions smuggled this way are decoded and matched like visible text.
_TAG_RUN = re.compile("[\U000e0020-\U000e007e]+")
SPACE = re.compile(r"\s+")
APOSTROPHES = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201b": "'", "\u2032": "'"})
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


def visible(text: str) -> str:
    """What a reader sees: compatibility forms folded, invisible characters gone."""
    return _INVISIBLE.sub("", unicodedata.normalize("NFKC", text))


def normalise(text: str) -> str:
    decoded = _TAG_RUN.sub(lambda m: " " + "".join(chr(ord(c) - 0xE0000) for c in m[0]) + " ", text)
    folded = visible(decoded).casefold().translate(APOSTROPHES).translate(_LOOKALIKES)
    return SPACE.sub(" ", folded).strip()


def spelled_runs(text: str) -> list[str]:
    return [_SPELL_SEPARATORS.sub("", m[0]) for m in _SPELLED_OUT.finditer(text)]


def variants(text: str) -> list[str]:
    joined = _SPELLED_OUT.sub(lambda m: _SPELL_SEPARATORS.sub("", m[0]), text)
    return [text] if joined == text else [text, joined]
