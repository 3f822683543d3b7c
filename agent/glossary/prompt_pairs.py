"""The glossary pairs a prompt carries, so that a model writes a team's term the way the
team spells it: in the planner's translated search query and in the answer.

Only the pairs a question or its passages name, and few of them (:data:`MAX_PAIRS`,
:data:`MAX_CHARS`): a prompt stays small, and one that names no term is sent exactly as
before, so a provider's prompt cache still matches it.
"""

from __future__ import annotations

from collections.abc import Sequence

from agent.glossary.glossary import Glossary
from agent.retrieval.tokenizer import words
from agent.retrieval.types import TermPair

MAX_PAIRS = 12
# The pairs' lines ("- 인수인계 = handover") together: about a hundred tokens at most.
MAX_CHARS = 400


def line(pair: TermPair) -> str:
    return f"- {pair.ko} = {pair.en}"


def prompt_pairs(
    glossary: Glossary,
    question: str,
    passages: Sequence[str] = (),
    *,
    language: str = "",
) -> list[TermPair]:
    """The pairs for a prompt: first those the question names (in either language), then
    those the passages name through the side that is not the answer's ``language`` (a
    Korean answer from an English passage needs the team's Korean term; an English term
    an English answer copies needs no pair). Without ``language`` only the question's."""
    named = [n.pair for n in glossary.named_in(words(question))]
    if language:
        other = "en" if language == "ko" else "ko"
        for text in passages:
            named += [n.pair for n in glossary.named_in(words(text)) if n.side == other]
    chosen: list[TermPair] = []
    seen: set[tuple[str, str]] = set()
    size = 0
    for pair in named:
        key = (pair.ko.casefold(), pair.en.casefold())
        cost = len(line(pair)) + 1
        if key in seen or size + cost > MAX_CHARS:
            continue  # a long pair left out leaves room for a shorter one after it
        seen.add(key)
        chosen.append(pair)
        size += cost
        if len(chosen) == MAX_PAIRS:
            break
    return chosen
