"""The team glossary in use: which words of a question stand for which words in the
other language.

Built from, in order of precedence: the team's file (``TEAMRAG_GLOSSARY``) and the pairs
mined from the documents (kept in the catalog). A word neither lists may still be a
loanword or a romanized name of a word in the knowledge base (agent/glossary/loanwords.py:
빅쿼리 for "bigquery", "pangyo" for 판교). Lookups are dictionary reads on a question's few
words.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from agent.glossary.loanwords import Loanwords
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


@dataclass(frozen=True)
class Named:
    """A pair a text names, and through which side ("ko" or "en")."""

    pair: TermPair
    side: str


class Glossary:
    def __init__(
        self,
        mined: Iterable[tuple[str, TermPair]] = (),
        team: Sequence[TermPair] = (),
        loanwords: Loanwords | None = None,
    ) -> None:
        self.loanwords = loanwords
        overridden = {p.ko for p in team}
        self.entries: list[Entry] = [Entry(p, TEAM_ORIGIN) for p in team] + [
            Entry(p, source) for source, p in mined if p.ko not in overridden
        ]
        self._by_word: dict[str, list[_Side]] = defaultdict(list)
        # Word -> (the words a side needs, its entry, which side): built on the first
        # :meth:`named_in`, which only prompts for an LLM use, so a search pays nothing.
        self._named: dict[str, list[tuple[frozenset[str], int, str]]] | None = None
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

    def counterpart_phrases(self, terms: Sequence[str]) -> dict[str, tuple[str, ...]]:
        """:meth:`counterparts` as whole phrases ("soft launch", not "soft" and "launch"):
        what a sentence must hold, all of it, to say the term in the other language."""
        present = set(terms)
        found: dict[str, tuple[str, ...]] = {}
        for term in dict.fromkeys(terms):
            phrases = [" ".join(side.gives) for side in self._sides(term, present)]
            unique = tuple(p for p in dict.fromkeys(phrases) if p and p != term)
            unique = unique or self._sounded(term)
            if unique:
                found[term] = unique
        return found

    def counterparts(
        self, terms: Sequence[str], *, sounded: bool = False
    ) -> dict[str, tuple[str, ...]]:
        """For each of ``terms`` (a question's words, :func:`words`) the words that stand
        for it in the other language: a pair's other side, when the question holds every
        word of that pair's term. With ``sounded``, also a Hangul word's loanword or name
        no pair lists (루터 "luther"), for the keyword query: an English page names a
        foreign name in Latin letters only. Not an English word's: a loanword found by rule
        ("incident" and 인시던트) drew the Korean glossary ahead of the English page that
        answers an English question; it counts in the sentences quoted
        (:meth:`counterpart_phrases`)."""
        present = set(terms)
        found: dict[str, tuple[str, ...]] = {}
        for term in dict.fromkeys(terms):
            others = [word for side in self._sides(term, present) for word in side.gives]
            unique = tuple(w for w in dict.fromkeys(others) if w != term)
            if not unique and sounded and not term.isascii():
                unique = self._sounded(term)
            if unique:
                found[term] = unique
        return found

    def _sides(self, term: str, present: set[str]) -> list[_Side]:
        """The pairs' sides naming ``term`` whose every word the question holds."""
        return [side for side in self._by_word.get(term, ()) if side.needs <= present]

    def respelled(self, text: str) -> str | None:
        """``text``'s words with each one the glossary or a loanword rule gives in the
        other language written that way ("빌드 파이프라인 담당자" -> "build pipeline
        담당자"), or None when no word has a counterpart. A search for what the passages
        found so far lack: a word the knowledge base writes only in the other script
        matches no keyword of its own, however it is weighted."""
        terms = words(text)
        found = self.counterpart_phrases(terms)
        if not found:
            return None
        return " ".join(found[term][0] if term in found else term for term in terms)

    def _sounded(self, term: str) -> tuple[str, ...]:
        """A word no pair lists: its loanword or romanized counterpart, if the knowledge
        base has one (a pair, written down, says more than a rule)."""
        return self.loanwords.counterparts(term) if self.loanwords is not None else ()

    def named_in(self, terms: Sequence[str]) -> list[Named]:
        """The pairs whose Korean or English term ``terms`` (a text's words, :func:`words`)
        hold in full, in the order the text first names them, each pair once."""
        index = self._named if self._named is not None else self._index_named()
        present = set(terms)
        seen: set[int] = set()
        found: list[Named] = []
        for term in dict.fromkeys(terms):
            for needs, number, side in index.get(term, ()):
                if number not in seen and needs <= present:
                    seen.add(number)
                    found.append(Named(self.entries[number].pair, side))
        return found

    def _index_named(self) -> dict[str, list[tuple[frozenset[str], int, str]]]:
        index: dict[str, list[tuple[frozenset[str], int, str]]] = defaultdict(list)
        for number, entry in enumerate(self.entries):
            sides = {"ko": frozenset(words(entry.pair.ko)), "en": frozenset(words(entry.pair.en))}
            if not (sides["ko"] and sides["en"]):  # as :meth:`counterparts`: no bridge
                continue
            for side, needs in sides.items():
                for word in needs:
                    index[word].append((needs, number, side))
        self._named = dict(index)  # one assignment: a thread racing here builds the same
        return self._named
