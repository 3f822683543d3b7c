"""Split loaded documents into passages that respect headings, paragraphs and sentences.

Sections never share a chunk, so every chunk has exactly one page or heading
to cite. Inside a section, langchain's recursive splitter breaks at paragraphs
first, then at sentence ends (Korean ``다.`` and ``요.`` included), then words.
"""

from __future__ import annotations

from dataclasses import dataclass

from langchain_text_splitters import RecursiveCharacterTextSplitter

from agent.retrieval.types import DEFAULT_SCOPE, Chunk, LoadedDocument

SEPARATORS = ["\n\n", "\n", ". ", "다. ", "요. ", "? ", "! ", "。", "; ", ", ", " ", ""]


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
        for piece in splitter.split_text(section.text):
            text = piece.strip()
            if not text:
                continue
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
