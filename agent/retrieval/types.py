"""Value types shared by ingestion and search.

They are plain frozen dataclasses so they cross thread boundaries and process
boundaries (JSON) without surprises, and so adapters can render them without
importing anything heavy.
"""

from __future__ import annotations

import itertools
from dataclasses import asdict, dataclass, field
from typing import Any

DEFAULT_SCOPE = "public"


@dataclass(frozen=True)
class Section:
    """A run of text from one place in a source document (a page or a heading)."""

    text: str
    page: int | None = None
    heading: str = ""


@dataclass(frozen=True)
class LoadedDocument:
    """What a loader extracted from one file, before chunking."""

    title: str
    sections: list[Section]
    link: str | None = None
    # What the loader left out and how to get it in (scanned PDF pages without OCR):
    # shown beside the file in the ingest report, the file itself still goes in.
    notes: str = ""


@dataclass(frozen=True)
class Chunk:
    """One searchable passage with everything a citation needs."""

    chunk_id: str
    doc_id: str
    seq: int
    text: str
    source: str
    title: str
    scope: str = DEFAULT_SCOPE
    page: int | None = None
    heading: str = ""
    link: str | None = None
    content_hash: str = ""

    def metadata(self) -> dict[str, Any]:
        data = asdict(self)
        data.pop("text")
        return data

    def locator(self) -> str:
        """Where in the source this passage sits, for a human: ``p. 3``, ``Setup > VPN``,
        ``slide 4 > Title``, ``Sheet1 > rows 2-9``, ``section 2 > 개요`` or ``p. 3 · OCR``."""
        if self.page is not None:
            # A page's heading is a mark about how it was read: "p. 3 · OCR".
            return f"p. {self.page} · {self.heading}" if self.heading else f"p. {self.page}"
        # The top heading is usually the document title, shown already.
        parts = self.heading.split(" > ")
        if parts and parts[0] and self.title.startswith(parts[0]):
            parts = parts[1:]
        return " > ".join(parts)


@dataclass(frozen=True)
class SearchHit:
    """A chunk returned by a search, with the scores that ranked it."""

    chunk: Chunk
    score: float
    keyword_score: float = 0.0
    dense_score: float = 0.0
    neighbours: list[Chunk] = field(default_factory=list)

    def context_text(self) -> str:
        """The hit's text with its expanded neighbours, in document order, each without
        the overlap it repeats from the one before: repeated, an overlap that starts inside
        a sentence garbles it ("(Vol. 1, Vol. 1, Vol. 2)" when a chunk ends at "Vol.")."""
        parts = sorted([self.chunk, *self.neighbours], key=lambda c: c.seq)
        text = self._marked(parts[0])
        for before, part in itertools.pairwise(parts):
            if part.heading == before.heading:
                text += "\n" + _after_overlap(before.text, part.text)
            else:  # sections never share a chunk, nor an overlap
                text += "\n\n" + self._marked(part)
        return text

    @staticmethod
    def _marked(part: Chunk) -> str:
        """A chunk's text, the heading line it opens with marked as a Markdown heading and
        set apart by a blank line: read as text, "3. Events with random items" is a list
        item, and a heading with the text on the next line (an HWPX section) reads as the
        start of its first sentence; the answer quoted both."""
        title = heading_title(part.heading)
        rest = part.text[len(title) :] if title and part.text.startswith(title) else ""
        if not rest.startswith("\n"):  # no heading line: the title goes on as text
            return part.text
        return f"## {title}\n\n{rest.lstrip()}"


def heading_title(path: str) -> str:
    """The last heading of a heading path ("Runbook > 7. Closing" -> "7. Closing"): the
    line a section's text opens with."""
    return path.rsplit(" > ", 1)[-1].strip()


# Chunks overlap by whole pieces of text (agent/retrieval/chunking.py, `chunk_overlap`): a
# shorter match of a text's end with the next one's start is a coincidence.
_SHORTEST_OVERLAP = 5
_LONGEST_OVERLAP = 2000


def _after_overlap(before: str, text: str) -> str:
    """``text`` without the start it shares with the end of ``before``."""
    tail = before[-_LONGEST_OVERLAP:]
    opening = text[:_SHORTEST_OVERLAP]
    start = tail.find(opening)
    while start != -1:  # from the left: the longest overlap first
        if text.startswith(tail[start:]):
            return text[len(tail) - start :].lstrip()
        start = tail.find(opening, start + 1)
    return text


@dataclass(frozen=True)
class TermPair:
    """A Korean term and its English counterpart, with where the pair was found
    ("paren", "slash", "table", "definition", "heading", "aligned", a team's file) and
    how sure that shape is of being a translation (0-1)."""

    ko: str
    en: str
    origin: str
    confidence: float
