"""Split a long answer into pieces that each fit a platform limit, losing nothing.

Cuts fall at the most natural place that fits: a blank line, then a line end,
then a sentence end (Korean ``다.`` included), then a space, and only as a last
resort inside a word. A cut inside a fenced code block closes the fence at the
end of one piece and reopens it (with its language) at the start of the next, so
both pieces still render as code.
"""

from __future__ import annotations

import re
from typing import NamedTuple

_FENCE = re.compile(r"^\s*(```+|~~~+)(\S*)", re.MULTILINE)
_SENTENCE_END = re.compile(r"[.!?。！？](?:[\"')\]]*)\s")
_BREAKS: tuple[re.Pattern[str], ...] = (re.compile(r"\n\s*\n"), re.compile(r"\n"))


class Piece(NamedTuple):
    """A piece of the text (``body``) with the fence lines added around it, if any."""

    head: str
    body: str
    tail: str

    def __str__(self) -> str:
        return self.head + self.body + self.tail


def split_text(text: str, limit: int) -> list[str]:
    """Pieces of at most ``limit`` characters that together say all of ``text``."""
    return [str(p) for p in split_pieces(text, limit)]


def split_pieces(text: str, limit: int) -> list[Piece]:
    """The pieces with their added fences apart: ``"".join(p.body ...)`` is ``text``."""
    if limit < 32:
        raise ValueError(f"limit {limit} is too small to split text sensibly")
    pieces: list[Piece] = []
    rest, head = text, ""
    while True:
        if len(head) + len(rest) <= limit:
            pieces.append(Piece(head, rest, ""))
            return pieces
        # Room for the reopened fence in front and a closing fence ("\n```") behind.
        cut = _best_cut(rest, limit - len(head) - 8)
        body, rest = rest[:cut], rest[cut:]
        opened = _open_fence(head + body)
        if opened is not None and rest.startswith(opened[0]):
            # The cut fell just before the closing fence: take it along (it fits the room
            # kept for a closing fence) rather than open an empty block in the next piece.
            closing = rest.split("\n", 1)[0] + ("\n" if "\n" in rest else "")
            if len(closing) <= 8:
                body, rest, opened = body + closing, rest[len(closing) :], None
        tail = ""
        next_head = ""
        if opened is not None:
            marker, language = opened
            tail = ("" if body.endswith("\n") else "\n") + marker
            next_head = f"{marker}{language}\n"
        pieces.append(Piece(head, body, tail))
        head = next_head


def _best_cut(text: str, limit: int) -> int:
    window = text[:limit]
    floor = limit // 2  # never make a piece shorter than half the limit to find a nicer cut
    for pattern in _BREAKS:
        ends = [m.end() for m in pattern.finditer(window) if m.end() >= floor]
        if ends:
            return ends[-1]
    ends = [m.end() for m in _SENTENCE_END.finditer(window) if m.end() >= floor]
    if ends:
        return ends[-1]
    space = window.rfind(" ", floor)
    if space > 0:
        return space + 1
    return limit


def _open_fence(text: str) -> tuple[str, str] | None:
    """The fence (marker, language) left open at the end of ``text``, if any."""
    open_fence: tuple[str, str] | None = None
    for match in _FENCE.finditer(text):
        marker, language = match.group(1), match.group(2)
        if open_fence is None:
            open_fence = (marker, language)
        elif marker.startswith(open_fence[0][0]) and len(marker) >= len(open_fence[0]):
            open_fence = None
    return open_fence
