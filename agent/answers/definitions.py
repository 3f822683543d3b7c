"""The names a team's own definitions give to what a question describes.

A chat question often describes what the documents name: "what time is the monthly
all-hands?" is asked of a handbook that says "전사 타운홀은 매월 마지막 금요일 16:30에 ...",
and its glossary says "- **Town hall (타운홀)**: The monthly all-hands meeting." The
definition is the team's own thesaurus: when its body says what the question says, the
question is about the term it defines, and a sentence that names that term (in either of
the spellings the definition gives) holds the question's words. The glossary of term pairs
(agent/glossary) bridges a word to its translation; this bridges a description to its name.

One such name every team shares: a day of the weekend is named by the weekend ("토요일에
출근하면요?" is answered by the rule for "주말·공휴일 근무", "working on a Sunday" by the
one for weekend work).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from agent.answers.kind import without_asking
from agent.answers.lead import term_weight
from agent.answers.sentences import definition
from agent.retrieval.tokenizer import inflected, tokenize, words

# The share of the question's word weight a definition's body must hold, and how many of
# its words at least: one shared word ("meeting") says the definition is near the
# question, not that it names what the question describes.
_DESCRIBED = 2 / 3
_FEWEST = 2
_WEEKEND = {
    **dict.fromkeys(("토요일", "일요일", "토욜", "일욜"), ("주말",)),
    **dict.fromkeys(("saturday", "sunday"), ("weekend",)),
}
# The names in a term: "Town hall (타운홀)", "MR, Merge Request (머지 리퀘스트)", "DAU / MAU".
_NAMES = re.compile(r"\s*[(),/]\s*|\s*\)\s*$")


def defined_names(question: str, sentences: Sequence[str]) -> dict[str, tuple[str, ...]]:
    """For each word of ``question`` that a definition among ``sentences`` describes with
    the rest of the question, the names that definition gives ("all-hands" -> "Town hall",
    "타운홀"): none when no definition's body holds two thirds of what the question asks
    about, or the question names the term already. A day of the weekend is named by the
    weekend ("토요일" -> "주말")."""
    asked = [
        t for t in dict.fromkeys(words(without_asking(question))) if len(t) > 1 and not inflected(t)
    ]
    found: dict[str, list[str]] = {t: list(_WEEKEND[t]) for t in asked if t in _WEEKEND}
    if len(asked) < _FEWEST:
        return _unique(found)
    total = sum(term_weight(t) for t in asked)
    for sentence in sentences:
        found_definition = definition(sentence)
        if found_definition is None:
            continue
        term, meaning = found_definition
        names = [name for name in _NAMES.split(term) if name]
        named = {w for name in names for w in words(name)}
        if named & set(asked):
            continue  # the question names the term: nothing to bridge
        body = set(tokenize(meaning))
        held = [t for t in asked if t in body]
        if len(held) < _FEWEST or sum(map(term_weight, held)) < _DESCRIBED * total:
            continue
        for t in held:
            found.setdefault(t, []).extend(names)
    return _unique(found)


def _unique(found: dict[str, list[str]]) -> dict[str, tuple[str, ...]]:
    return {t: tuple(dict.fromkeys(names)) for t, names in found.items()}
