"""Split loaded documents into passages that respect headings, paragraphs and sentences.

Sections never share a chunk, so every chunk has exactly one page or heading
to cite. Inside a section, langchain's recursive splitter breaks at paragraphs
first, then at sentence ends (Korean ``다.`` and ``요.`` included), then words.
A table cut across chunks keeps its header row in each: without it, the rows of the
second chunk read as a table whose first row is its header ("Server / backend engineer |
MacBook Pro 16-inch" was quoted as the column names of the rows below it).
"""

from __future__ import annotations

from dataclasses import dataclass

from langchain_text_splitters import RecursiveCharacterTextSplitter

from agent.retrieval.types import DEFAULT_SCOPE, Chunk, LoadedDocument, heading_title

SEPARATORS = ["\n\n", "\n", ". ", "다. ", "요. ", "? ", "! ", "。", "; ", ", ", " ", ""]
CHUNKER_VERSION = "3"
"""Part of every document's pipeline id: changing how text is cut re-ingests documents."""


def is_row(line: str) -> bool:
    """A table row, as the loaders write one ("| a | b |" or "a | b | c")."""
    return line.count("|") >= 2


@dataclass(frozen=True)
class ChunkingConfig:
    """Chunk size in characters. The default suits the USE encoder, which is
    tuned for sentences and loses precision on long passages."""

    size: int = 500
    overlap: int = 60


def chunk_document(
    document: LoadedDocument,
    *,
    doc_id: str,
    source: str,
    content_hash: str,
    scope: str = DEFAULT_SCOPE,
    config: ChunkingConfig | None = None,
) -> list[Chunk]:
    cfg = config or ChunkingConfig()
    splitter = RecursiveCharacterTextSplitter(
        chunk_size=cfg.size,
        chunk_overlap=cfg.overlap,
        separators=SEPARATORS,
        keep_separator="end",
        strip_whitespace=True,
    )
    chunks: list[Chunk] = []
    for section in document.sections:
        pieces = [piece.strip() for piece in splitter.split_text(section.text)]
        pieces = _heading_with_text([piece for piece in pieces if piece], section.heading)
        for text in _with_table_headers(pieces):
            seq = len(chunks)
            chunks.append(
                Chunk(
                    chunk_id=f"{doc_id}:{content_hash[:12]}:{seq}",
                    doc_id=doc_id,
                    seq=seq,
                    text=text,
                    source=source,
                    title=document.title,
                    scope=scope,
                    page=section.page,
                    heading=section.heading,
                    link=document.link,
                    content_hash=content_hash,
                )
            )
    return chunks


def _heading_with_text(pieces: list[str], heading: str) -> list[str]:
    """``pieces`` of one section, its heading line not a piece of its own: cut off by a
    long first paragraph, a chunk of nothing but "7. Closing and postmortems" was found as
    a neighbour and quoted as if it said something."""
    title = heading_title(heading)
    if len(pieces) > 1 and title and pieces[0] == title:
        return [f"{pieces[0]}\n\n{pieces[1]}", *pieces[2:]]
    return pieces


def _with_table_headers(pieces: list[str]) -> list[str]:
    """``pieces`` of one section, each that goes on with a table the piece before it left
    open starting with that table's header row."""
    out: list[str] = []
    header: str | None = None  # the header of the table open at the end of the last piece
    for piece in pieces:
        lines = [line for line in piece.splitlines() if line.strip()]
        if header is not None and is_row(lines[0]) and lines[0] != header:
            piece = f"{header}\n\n{piece}"  # a row of its own, whatever joins the rows
            lines = [header, *lines]
        header = _open_table(lines)
        out.append(piece)
    return out


def _open_table(lines: list[str]) -> str | None:
    """The header row of the table ``lines`` end in, if they end in one: the first row of
    its run of rows (blank lines between rows, as a Word table's, do not end it)."""
    header: str | None = None
    for line in lines:
        if not is_row(line):
            header = None
        elif header is None:
            header = line
    return header
