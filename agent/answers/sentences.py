"""A passage's sentences, list items, table rows and headings: what an extractive answer
quotes one by one, and what the evaluation counts.

PDF and Markdown text break lines mid-sentence and put headings on lines of their own;
the rules below tell a heading from a sentence and keep list items and table rows whole.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from agent.retrieval.chunking import is_row

# A Korean sentence ends at "다." or "요." without a space, but not inside a quotation
# ("이긴다.”라고 했다").
_SENTENCE_END = re.compile(r"(?<=[.!?。])\s+|(?<=[다요]\.)(?![”\x22'’」』)\]])")
# A part that ends with an initial ("Michael E.", "U.S.") or an abbreviation a sentence goes
# on after ("e.g.", "Dr.", "approx.", "c. 1455"): split there, a quote held half a name.
_GOES_ON = re.compile(
    r"(?:(?:^|[\s(.])[A-Z]|\b(?:e\.g|i\.e|Mrs?|Ms|Dr|St|Mt|Jr|Sr|Inc|Co|Ltd|Gen|Gov|Sen|Rep"
    r"|Lt|Col|Prof|Fig|No|Vol|vol|pp|al|vs|approx|ca|c))\.$"
)
_CODE_BLOCK = re.compile(r"```.*?(?:```|$)", re.DOTALL)
# A line that starts a block of its own: a list item or a table row.
_ITEM = re.compile(r"\s*(?:\||[-*•] |\d+\. )")
# A numbered heading as PDF text has it ("4. Backups and data retention"): the line break
# after it is all that parts it from the section's first sentence.
_NUMBERED_HEADING = re.compile(r"(?:\d+\.)+\d*\s+\S.{0,78}")
# How a sentence (not a heading, a name or a label) ends.
_ENDS_SENTENCE = re.compile(r"""[.!?。:：;,"'”’다요]$""")


@dataclass(frozen=True)
class Block:
    """A paragraph, list item or table row of a passage, or a heading between them."""

    text: str
    heading: bool


def _is_heading_line(lines: list[str], i: int) -> bool:
    """A heading on a line of its own after the end of a sentence, where only a single line
    break parts it from that sentence (PDF text; a passage joined to its neighbours): a
    numbered heading followed by prose ("4. Backups and data retention"), or a short
    unpunctuated line or question before a blank line."""
    line = lines[i].strip()
    if not _heading_shaped(line):
        return False
    before = lines[i - 1].strip() if i else ""
    if before and not _ENDS_SENTENCE.search(before):
        return False  # the line goes on with a sentence broken before it
    after = lines[i + 1] if i + 1 < len(lines) else ""
    if _NUMBERED_HEADING.fullmatch(line):
        # Not the next item of a numbered list ("1. Install\n2. Run"), nor a list item
        # whose text goes on on an indented line.
        return bool(after.strip()) and not after[0].isspace() and not _ITEM.match(after)
    return not _ITEM.match(lines[i]) and not after.strip()


def blocks(text: str) -> list[Block]:
    # A fenced code block is not a sentence: quoted, it reads as noise glued to the
    # next heading. The prose around it says what the code does.
    lines = _CODE_BLOCK.sub("\n\n", text).split("\n")
    blocks: list[Block] = []
    current: list[str] = []

    def close() -> None:
        if current:
            joined = " ".join(current)
            blocks.append(Block(joined, _looks_like_heading(joined)))
            current.clear()

    for i, line in enumerate(lines):
        if not line.strip():  # a blank line ends a paragraph
            close()
        elif _is_heading_line(lines, i):
            close()
            blocks.append(Block(line.strip(), True))
        else:
            # PDF text breaks lines mid-sentence: a single newline is a space. List items
            # and table rows stay blocks of their own.
            if _ITEM.match(line):
                close()
            current.append(line.strip())
            if line.lstrip().startswith("|"):
                close()  # a table row ends with its line: what follows is not its cell
    close()
    return blocks


def _heading_shaped(text: str) -> bool:
    """A short line that does not end like a sentence ("On-call rotation (온콜 로테이션)"),
    or a short question (an FAQ's "How do I get access to production?"); not a table row."""
    if len(text) > 80 or is_row(text):
        return False
    return not _ENDS_SENTENCE.search(text) or text.endswith(("?", "？"))


def _looks_like_heading(block: str) -> bool:
    """A paragraph that is a heading: heading-shaped, and not a list item."""
    return _heading_shaped(block) and not _ITEM.match(block)


def split_block(block: str) -> list[str]:
    parts: list[str] = []
    for part in _SENTENCE_END.split(block):
        if parts and _GOES_ON.search(parts[-1]):
            parts[-1] = f"{parts[-1]} {part}"
        else:
            parts.append(part)
    joined = (" ".join(p.split()) for p in parts)
    return [p for p in joined if len(p) >= 8]


# A definition: a list item that opens with its term and a colon ("- **Soft launch (소프트
# 런칭)**: ...", "- Application logs: ...").
_DEFINITION = re.compile(r"\s*[-*•]\s+(?:\*\*([^*\n]{1,80})\*\*|([^:：\n*]{1,40}))\s?[:：]\s")


def defined_term(block: str) -> str | None:
    """The term a definition item defines: what each of its sentences is about, although
    only the first names it ("달빛게임즈는 보통 캐나다와 필리핀에서 진행합니다." is about the
    soft launch the item defines)."""
    found = definition(block)
    return found[0] if found is not None else None


def definition(block: str) -> tuple[str, str] | None:
    """A definition item's term and what it says of it (the text after the colon)."""
    match = _DEFINITION.match(block)
    if match is None:
        return None
    term = (match.group(1) or match.group(2)).strip()
    # "- 배포는 화요일에 합니다: 예외 없이" opens with a sentence, not a term.
    return None if _ENDS_SENTENCE.search(term) else (term, block[match.end() :])


def split_sentences(text: str) -> list[str]:
    """The sentences, list items, table rows and headings of a text, in order."""
    return [s for block in blocks(text) for s in split_block(block.text)]
