"""Turn files into text sections: Markdown, reStructuredText, text, CSV, PDF, HTML, DOCX,
XLSX, PPTX, HWP and HWPX. One module per family beside this one; this one is the registry.

Every failure is a :class:`LoadError` whose message names the cause and, where
there is one, the fix. The ingestor reports it next to the file name and moves
on, so one bad file never stops a batch.

:data:`FILE_TYPES` is the one list of what teamrag reads: the loaders, the Git
source's default file patterns, the web and Drive sources' content types and the
Slack file-share reply all come from it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from agent.retrieval.loaders.base import LoadError, decode_text, markdown_sections
from agent.retrieval.loaders.hwp import load_hwp, load_hwpx
from agent.retrieval.loaders.office import load_docx, load_pptx
from agent.retrieval.loaders.pdf import load_pdf
from agent.retrieval.loaders.rst import load_rst
from agent.retrieval.loaders.sheets import load_csv, load_xlsx
from agent.retrieval.loaders.text import load_html, load_markdown, load_text, web_link
from agent.retrieval.types import LoadedDocument

MAX_FILE_BYTES = 50 * 1024 * 1024

Loader = Callable[[Path, bytes], LoadedDocument]


LOADERS_VERSION = "3"
"""Part of every document's pipeline id, as the tokenizer's version is: a loader that
reads a format differently (2: reStructuredText parsed, not read as plain text; 3: Word
tables as Markdown rows) reads every document again on the next ingest, or a file
ingested before keeps its old text."""


@dataclass(frozen=True)
class FileType:
    suffix: str
    loader: Loader
    content_types: tuple[str, ...] = ()  # MIME types a web server or Drive labels it with
    prose: bool = True  # read by default from a Git repository (documentation, not data)


_XLSX = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"
_PPTX = "application/vnd.openxmlformats-officedocument.presentationml.presentation"
_DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"

FILE_TYPES: tuple[FileType, ...] = (
    FileType(".md", load_markdown, ("text/markdown", "text/x-markdown")),
    FileType(".markdown", load_markdown),
    FileType(".txt", load_text, ("text/plain",)),
    FileType(".text", load_text),
    FileType(".rst", load_rst, ("text/x-rst", "text/prs.fallenstein.rst")),
    FileType(".csv", load_csv, ("text/csv",), prose=False),
    FileType(".tsv", load_csv, ("text/tab-separated-values",), prose=False),
    FileType(".pdf", load_pdf, ("application/pdf",)),
    FileType(".html", load_html, ("text/html", "application/xhtml+xml"), prose=False),
    FileType(".htm", load_html, prose=False),
    FileType(".docx", load_docx, (_DOCX,)),
    FileType(".xlsx", load_xlsx, (_XLSX,)),
    FileType(".pptx", load_pptx, (_PPTX,)),
    FileType(".hwp", load_hwp, ("application/x-hwp", "application/haansofthwp")),
    FileType(".hwpx", load_hwpx, ("application/hwp+zip", "application/haansofthwpx")),
)

LOADERS: dict[str, Loader] = {t.suffix: t.loader for t in FILE_TYPES}


def is_supported(path: Path) -> bool:
    return path.suffix.lower() in LOADERS


def loader_name(content_type: str) -> str | None:
    """A file name whose extension picks the loader for a Content-Type, None when we
    cannot read it (HTTP pages, Drive files without an extension)."""
    wanted = content_type.split(";")[0].strip().lower()
    for file_type in FILE_TYPES:
        if wanted in file_type.content_types:
            return "file" + file_type.suffix
    return None


def git_globs() -> tuple[str, ...]:
    """The file patterns a Git source reads by default: every documentation format
    (HTML and data files are usually generated or fixtures there; ``--include`` adds them)."""
    return tuple(f"*{t.suffix}" for t in FILE_TYPES if t.prose)


def supported_names() -> str:
    """``csv, docx, ...``: for messages that say what teamrag reads."""
    return ", ".join(sorted(t.suffix.lstrip(".") for t in FILE_TYPES))


def load_document(path: Path, data: bytes) -> LoadedDocument:
    """Load ``data`` (the bytes of ``path``) with the loader for its extension."""
    loader = LOADERS.get(path.suffix.lower())
    if loader is None:
        supported = ", ".join(sorted(LOADERS))
        raise LoadError(
            f"unsupported file type '{path.suffix or '(none)'}' (supported: {supported})"
        )
    if not data.strip():
        raise LoadError("the file is empty; add its text, or leave it out")
    if len(data) > MAX_FILE_BYTES:
        raise LoadError(f"larger than {MAX_FILE_BYTES // (1024 * 1024)} MB; split it first")
    document = loader(path, data)
    if not any(s.text.strip() for s in document.sections):
        raise LoadError("no text found in the file")
    return document


__all__ = [
    "FILE_TYPES",
    "LOADERS",
    "MAX_FILE_BYTES",
    "FileType",
    "LoadError",
    "decode_text",
    "git_globs",
    "is_supported",
    "load_document",
    "loader_name",
    "markdown_sections",
    "supported_names",
    "web_link",
]
