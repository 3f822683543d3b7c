"""The sentences of the retrieved passages that an answer without an LLM can quote.

Each candidate is one sentence, list item or table row (a row with its header cells), with
where it stands: its passage, its section, its block, and the heading path it is under. A
sentence of a definition after its first carries the defined term in its heading: it is
about that term although it does not name it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from agent.answers.sentences import blocks, defined_term, split_block
from agent.retrieval.chunking import is_row
from agent.retrieval.types import Chunk


@dataclass(frozen=True)
class Candidate:
    rank: int  # the passage's place among the hits
    section: int  # which part of the passage: a heading inside it starts the next
    position: int  # order in the passage
    text: str
    # The passage's heading path, and the term of the definition it is part of: what the
    # sentence is about.
    heading: str = ""
    block: int = 0  # which paragraph, list item or row of the passage
    defines: bool = False  # a sentence of a definition after its first: its term is above

    @property
    def group(self) -> tuple[int, int]:
        """Sentences quoted together: one section of one passage."""
        return (self.rank, self.section)


_Place = tuple[int, str, int, bool]

# An FAQ's question inside a paragraph (PDF text keeps "Q. ...? A. ..." in one block): it
# asks, so it answers nothing, and it says what the sentences after it are about. Only one
# marked as a question: a sentence ending in "?" may be quoted speech in a story. PDF text
# can glue the document's title lines to the first one ("... 대상: 전 구성원 Q. ...?").
_FAQ_QUESTION = re.compile(r"(?:Q\d{0,3}|질문)\s?[.:)]\s.*|.*\s(?:Q|질문)\s?[.:)]\s.*[?？]")


def _with_headers(places: list[_Place], sentences: list[str]) -> list[tuple[_Place, str]]:
    """Table rows carry their header ("Service | Owner | Channel → billing | Payments | ...");
    a header row alone answers nothing, and a row alone does not say what its cells are."""
    out: list[tuple[_Place, str]] = []
    header: str | None = None
    for place, sentence in zip(places, sentences, strict=True):
        if not is_row(sentence):
            header = None
            out.append((place, sentence))
        elif re.fullmatch(r"[|\s:-]+", sentence):
            continue  # a Markdown separator row
        elif header is None:
            header = sentence
        else:
            out.append((place, f"{header} → {sentence}"))
    return out


def quotable(rank: int, chunk: Chunk) -> list[Candidate]:
    """Sentences that can answer, each with the section of the passage it stands in: not a
    heading (a passage with its neighbours can hold several; an FAQ's question is one, on
    a line of its own or inside a paragraph), not a lead-in ("...:"). A sentence of a
    definition after its first is about the term it defines, and an FAQ's answer about its
    question: the term or the question joins its heading."""
    named = {s for h in (*chunk.heading.split(" > "), chunk.title) for s in split_block(h)}
    places: list[_Place] = []  # (section, heading, block, defines)
    sentences: list[str] = []
    asking: set[str] = set()
    section = 0
    asked = ""  # the FAQ question the sentences since it answer
    for number, block in enumerate(blocks(chunk.text)):
        if block.heading:
            section += 1
            asked = ""
            continue
        split = split_block(block.text)
        term = defined_term(block.text)
        for n, sentence in enumerate(split):
            if _FAQ_QUESTION.fullmatch(sentence):
                if sentences or n:  # the next question of an FAQ starts a section
                    section += 1
                asked = sentence
                asking.add(sentence)
            heading = _under(chunk.heading, asked)
            later = bool(term) and n > 0
            places.append((section, _under(heading, term) if later else heading, number, later))
        sentences.extend(split)
    everything = [
        Candidate(rank, section, position, sentence, heading, number, defines)
        for position, ((section, heading, number, defines), sentence) in enumerate(
            _with_headers(places, sentences)
        )
    ]
    quotable = [
        c
        for c in everything
        if c.text not in named and c.text not in asking and not c.text.endswith((":", "："))
    ]
    return quotable or everything or [Candidate(rank, 0, 0, " ".join(chunk.text.split()))]


def _under(heading: str, more: str | None) -> str:
    """A heading path with ``more`` (a defined term, an FAQ question) below it."""
    if not more:
        return heading
    return f"{heading} > {more}" if heading else more


def beside(candidates: list[Candidate], i: int) -> str:
    """The sentences next to candidate ``i`` in its section of its passage: what its "it"
    and "this" stand for, or the FAQ question it answers."""
    me = candidates[i]
    return " ".join(
        c.text
        for c in candidates[max(0, i - 1) : i + 2]
        if c is not me and c.group == me.group and abs(c.position - me.position) == 1
    )
