"""The team glossary in use: which words of a question stand for which words in the
other language.

Built from, in order of precedence: the team's file (``TEAMRAG_GLOSSARY``) and the pairs
mined from the documents (kept in the catalog). Lookups are dictionary reads on a
question's few words.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from agent.glossary.team_file import ORIGIN as TEAM_ORIGIN
from agent.retrieval.tokenizer import words
from agent.retrieval.types import TermPair


@dataclass(frozen=True)
class Entry:
    """A pair in use and where it came from (a document's source, or the team's file)."""

    pair: TermPair
    source: str


@dataclass(frozen=True)
class _Side:
    needs: frozenset[str]  # every word of this side's term, as the tokenizer reads them
    gives: tuple[str, ...]  # the other side's words


class Glossary:
    def __init__(
        self,
        mined: Iterable[tuple[str, TermPair]] = (),
        team: Sequence[TermPair] = (),
    ) -> None:
        overridden = {p.ko for p in team}
        self.entries: list[Entry] = [Entry(p, TEAM_ORIGIN) for p in team] + [
            Entry(p, source) for source, p in mined if p.ko not in overridden
        ]
        self._by_word: dict[str, list[_Side]] = defaultdict(list)
        for entry in self.entries:
            ko, en = words(entry.pair.ko), words(entry.pair.en)
            if ko and en:
                self._add(ko, en)
                self._add(en, ko)

    def _add(self, side: list[str], other: list[str]) -> None:
        entry = _Side(frozenset(side), tuple(dict.fromkeys(other)))
        for word in dict.fromkeys(side):
            if entry not in self._by_word[word]:
                self._by_word[word].append(entry)

    def __len__(self) -> int:
        return len(self.entries)

    def counterparts(self, terms: Sequence[str]) -> dict[str, tuple[str, ...]]:
        """For each of ``terms`` (a question's words, :func:`words`) the words that stand
        for it in the other language: a pair's other side, when the question holds every
        word of that pair's term."""
        present = set(terms)
        found: dict[str, tuple[str, ...]] = {}
        for term in dict.fromkeys(terms):
            others = [
                word
                for side in self._by_word.get(term, ())
                if side.needs <= present
                for word in side.gives
            ]
            unique = tuple(w for w in dict.fromkeys(others) if w != term)
            if unique:
                found[term] = unique
        return found
