"""Which language to answer in: Korean when the text is mostly Hangul, else English."""

from __future__ import annotations

import re
from typing import Literal

Language = Literal["ko", "en"]

_HANGUL = re.compile(r"[\uac00-\ud7a3\u3131-\u318e]")
_LETTER = re.compile(r"[^\W\d_]", re.UNICODE)


def has_hangul(text: str) -> bool:
    """Whether any Hangul syllable or letter is in ``text`` (a Korean word, say)."""
    return _HANGUL.search(text) is not None


def detect_language(text: str) -> Language:
    letters = len(_LETTER.findall(text))
    if letters == 0:
        return "en"
    # Korean questions often carry English product names; a third of Hangul is enough.
    if len(_HANGUL.findall(text)) / letters >= 0.3:
        return "ko"
    # Korean grammar comes last: the particle or predicate on the final word makes
    # "PagerDuty란?" and "teamrag ingest --prune 옵션은 뭐야?" Korean, however many Latin
    # letters the names hold; "What does 온콜 mean?" ends in English.
    worded = [w for w in text.split() if _LETTER.search(w)]
    return "ko" if worded and has_hangul(worded[-1]) else "en"
