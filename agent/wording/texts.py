"""Fixed texts in Korean and English, and the one rule for looking them up.

Three tables use it, each kept beside the code that says its texts: the agent's
replies without an LLM (:data:`agent.wording.replies.TEXTS`), its progress steps
(:data:`agent.wording.progress.MESSAGES`), and the chat adapters' own words around an
answer (``adapters/chat/phrases.py``). Only the rule is shared: English when the
language is not Korean, ``{placeholders}`` filled from the values, and a key the
table does not have is an error that names it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TypedDict, TypeVar


class Text(TypedDict):
    """One text, written in both languages."""

    ko: str
    en: str


K = TypeVar("K", bound=str)

# A table of texts by key; the key type may be a Literal, so a typo is a type error.
Texts = Mapping[K, Text]


def text(table: Texts[K], key: K, language: str, **values: object) -> str:
    """``table[key]`` in ``language`` (Korean, or else English), ``values`` filled in.

    Raises ``KeyError`` naming ``key`` when the table has no such text.
    """
    try:
        written = table[key]
    except KeyError:
        raise KeyError(f"no text named {key!r}") from None
    return (written["ko"] if language == "ko" else written["en"]).format(**values)
