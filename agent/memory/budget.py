"""The prompt's token plan (the seed's ``token_plan``) and an offline token count.

No tokenizer runs offline here (tiktoken downloads its tables on first use), so
`count_tokens` approximates the BPE tokenizers of current chat models:

- each Hangul syllable or jamo, CJK ideograph and kana counts 1 token (o200k-style
  tokenizers spend about one per syllable; older cl100k ones up to twice that,
  which the plan's generation buffer absorbs);
- every other run of non-space characters counts ceil(len / 4), OpenAI's
  "4 characters per token" rule applied per word, so short words cost 1 and a
  number or an identifier is not undercounted;
- whitespace is free.

The rule overcounts ordinary English a little rather than undercounting it (the
pangram "The quick brown fox jumps over the lazy dog." counts 12 against a real
tokenizer's 10), the safe side for a budget.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["TokenPlan", "count_tokens", "fit_texts"]

_WIDE = (
    "\u1100-\u11ff"  # Hangul jamo
    "\u3040-\u30ff"  # kana
    "\u3130-\u318f"  # Hangul compatibility jamo
    "\u3400-\u4dbf"  # CJK extension A
    "\u4e00-\u9fff"  # CJK ideographs
    "\uac00-\ud7a3"  # Hangul syllables
    "\uf900-\ufaff"  # CJK compatibility ideographs
)
_WIDE_CHAR = re.compile(f"[{_WIDE}]")
_NARROW_RUN = re.compile(f"[^\\s{_WIDE}]+")
# Where a cut reads naturally: after a sentence end, then after a space.
_SENTENCE_END = re.compile(r"[.!?。！？…](?=[\s\"')\]]|$)|\n")
_MIN_KEPT_SHARE = 0.5  # a boundary cut may give up at most half of what would fit

# The seed's plan, out of 12,800 tokens; `TokenPlan.for_context` scales it.
_SEED_TOTAL = 12800
_SEED_PLAN = {
    "system_prompt": 640,
    "profile": 1280,
    "evidence": 6400,
    "history": 1920,
    "query": 640,
    "generation_buffer": 1920,
}


def count_tokens(text: str) -> int:
    """About how many tokens ``text`` costs a chat model (see the module doc)."""
    wide = len(_WIDE_CHAR.findall(text))
    return wide + sum((len(run) + 3) // 4 for run in _NARROW_RUN.findall(text))


@dataclass(frozen=True)
class TokenPlan:
    """Tokens reserved for each part of the answer prompt, and for the answer."""

    system_prompt: int
    profile: int
    evidence: int
    history: int
    query: int
    generation_buffer: int

    @property
    def total(self) -> int:
        return (
            self.system_prompt
            + self.profile
            + self.evidence
            + self.history
            + self.query
            + self.generation_buffer
        )

    @classmethod
    def for_context(cls, context_tokens: int = 8000) -> TokenPlan:
        """The seed's proportions (5/10/50/15/5/15%) of ``context_tokens``.

        Rounding leftovers go to the evidence, so the parts add up to exactly
        ``context_tokens``.
        """
        if context_tokens <= 0:
            raise ValueError(f"context_tokens must be positive, got {context_tokens}")
        parts = {name: context_tokens * n // _SEED_TOTAL for name, n in _SEED_PLAN.items()}
        parts["evidence"] += context_tokens - sum(parts.values())
        return cls(**parts)


def fit_texts(texts: Sequence[str], budget: int) -> list[str]:
    """The leading ``texts`` that fit in ``budget`` tokens, in order.

    The first text that does not fit whole is cut to what is left, at a sentence
    end when that keeps at least half of it, else at a space, else mid-word; the
    texts after it are dropped. Empty results are left out.
    """
    kept: list[str] = []
    left = budget
    for text in texts:
        if left <= 0:
            break
        cost = count_tokens(text)
        if cost <= left:
            if text:
                kept.append(text)
            left -= cost
            continue
        cut = _truncate(text, left)
        if cut:
            kept.append(cut)
        break
    return kept


def _truncate(text: str, budget: int) -> str:
    """The longest natural-looking prefix of ``text`` within ``budget`` tokens."""
    # count_tokens never decreases as a prefix grows, so a binary search finds
    # the longest prefix that fits.
    lo, hi = 0, len(text)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if count_tokens(text[:mid]) <= budget:
            lo = mid
        else:
            hi = mid - 1
    prefix = text[:lo]
    if lo == len(text):
        return prefix.rstrip()
    floor = int(lo * _MIN_KEPT_SHARE)
    sentence_ends = [m.end() for m in _SENTENCE_END.finditer(prefix)]
    if sentence_ends and sentence_ends[-1] >= floor:
        return prefix[: sentence_ends[-1]].rstrip()
    # Cutting at the last space only helps when the prefix ends inside a word.
    if not text[lo].isspace():
        space = prefix.rfind(" ")
        if space >= floor:
            return prefix[:space].rstrip()
    return prefix.rstrip()
