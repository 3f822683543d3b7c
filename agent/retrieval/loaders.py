"""Turn files into text sections: Markdown, plain text, PDF, HTML and DOCX.

Every failure is a :class:`LoadError` whose message names the cause and, where
there is one, the fix. The ingestor reports it next to the file name and moves
on, so one bad file never stops a batch.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from agent.retrieval.types import LoadedDocument, Section

MAX_FILE_BYTES = 50 * 1024 * 1024


# The fix for a damaged file: the program that made it can usually write it again.
_RESAVE_PDF = "; open it and save or export it again as PDF"
_RESAVE_DOCX = "; open it in Word or LibreOffice and save it again as .docx"


class LoadError(Exception):
    """A file could not be read; the message is meant for the user."""


def _decode_text(data: bytes, path: Path) -> str:
    if b"\x00" in data[:8192]:
        raise LoadError("binary content, not text (is the extension right?)")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise LoadError(
            f"not UTF-8 text (byte {exc.start}); convert it first, e.g. "
            f"`iconv -f CP949 -t UTF-8 {path.name}`"
        ) from None
    return text


_MD_HEADING = re.compile(r"^(#{1,6})\s+(.+?)\s*#*\s*$")


def markdown_sections(text: str) -> list[Section]:
    """Split Markdown at headings, keeping the heading path (``A > B``) of each part.

    Code fences are respected so a ``#`` comment inside one is not a heading.
    """
    sections: list[Section] = []
    path: list[tuple[int, str]] = []
    buf: list[str] = []
    in_fence = False

    def flush() -> None:
        body = "\n".join(buf).strip()
        # A heading with no text of its own (a chapter title right before a subsection)
        # lives on in its subsections' heading paths; alone it would be an empty chunk.
        if body and not (path and body == path[-1][1]):
            sections.append(Section(text=body, heading=" > ".join(h for _, h in path)))
        buf.clear()

    for line in text.splitlines():
        if line.lstrip().startswith(("```", "~~~")):
            in_fence = not in_fence
        match = None if in_fence else _MD_HEADING.match(line)
        if match:
            flush()
            level, title = len(match.group(1)), match.group(2).strip()
            path = [(lvl, h) for lvl, h in path if lvl < level] + [(level, title)]
            # The heading stays in the text: it is often the best keyword match.
            buf.append(title)
        else:
            buf.append(line)
    flush()
    return sections


def _title_from_markdown(text: str, fallback: str) -> str:
    for line in text.splitlines():
        match = _MD_HEADING.match(line)
        if match and len(match.group(1)) == 1:
            return match.group(2).strip()
    return fallback


def load_markdown(path: Path, data: bytes) -> LoadedDocument:
    text = _decode_text(data, path)
    return LoadedDocument(
        title=_title_from_markdown(text, path.stem), sections=markdown_sections(text)
    )


def load_text(path: Path, data: bytes) -> LoadedDocument:
    text = _decode_text(data, path)
    return LoadedDocument(title=path.stem, sections=[Section(text=text.strip())])


def load_pdf(path: Path, data: bytes) -> LoadedDocument:
    import io

    from pypdf import PdfReader
    from pypdf.errors import PdfReadError

    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted and not reader.decrypt(""):
            raise LoadError("encrypted PDF; save an unprotected copy and ingest that")
        pages = [page.extract_text() or "" for page in reader.pages]
        meta_title = (reader.metadata.title if reader.metadata else None) or ""
    except LoadError:
        raise
    except (PdfReadError, ValueError, KeyError, TypeError, OSError) as exc:
        raise LoadError(f"corrupt or unreadable PDF ({exc}){_RESAVE_PDF}") from None
    except Exception as exc:  # pypdf raises many internal types on damaged files
        if "crypt" in str(exc).lower() or "password" in str(exc).lower():
            raise LoadError("encrypted PDF; save an unprotected copy and ingest that") from None
        raise LoadError(
            f"corrupt or unreadable PDF ({type(exc).__name__}: {exc}){_RESAVE_PDF}"
        ) from None
    pages = _strip_running_lines(pages)
    sections = [Section(text=t.strip(), page=i) for i, t in enumerate(pages, 1) if t.strip()]
    if not sections:
        raise LoadError("the PDF has no extractable text (a scan? run OCR on it first)")
    return LoadedDocument(title=str(meta_title).strip() or path.stem, sections=sections)


def _strip_running_lines(pages: list[str]) -> list[str]:
    """Drop headers and footers ("Page 3 / 4") that repeat on most pages.

    They would otherwise sit in every chunk and match every query that names
    the document.
    """
    if len(pages) < 3:
        return pages

    def key(line: str) -> str:
        return re.sub(r"\d+", "#", line.strip().lower())

    counts: dict[str, int] = {}
    for page in pages:
        for k in {key(line) for line in page.splitlines() if line.strip()}:
            counts[k] = counts.get(k, 0) + 1
    running = {k for k, n in counts.items() if n >= max(3, 0.6 * len(pages))}
    return [
        "\n".join(line for line in page.splitlines() if key(line) not in running) for page in pages
    ]


_CANONICAL = re.compile(
    r"<link[^>]+rel=[\"']canonical[\"'][^>]*href=[\"']([^\"']+)[\"']", re.IGNORECASE
)
_HTML_TITLE = re.compile(r"<title[^>]*>(.*?)</title>", re.IGNORECASE | re.DOTALL)


def load_html(path: Path, data: bytes) -> LoadedDocument:
    import html as html_lib

    import trafilatura

    raw = _decode_text(data, path)
    # Markdown output keeps the headings, so HTML gets heading paths like Markdown.
    main = trafilatura.extract(
        raw,
        output_format="markdown",
        include_comments=False,
        include_tables=True,
        favor_recall=True,
    )
    if not main or not main.strip():
        raise LoadError("no main text found in the HTML page")
    # Hard-wrapped source lines come out as a newline plus indentation: rejoin them.
    main = re.sub(r"(?<![ \t])[ \t]*\n[ \t]+(?=\S)", " ", main)  # from a run's start only: linear
    title_match = _HTML_TITLE.search(raw)
    title = html_lib.unescape(title_match.group(1)).strip() if title_match else ""
    link_match = _CANONICAL.search(raw)
    return LoadedDocument(
        title=title or _title_from_markdown(main, path.stem),
        sections=markdown_sections(main),
        link=web_link(html_lib.unescape(link_match.group(1))) if link_match else None,
    )


def web_link(link: str) -> str | None:
    """``link`` when it is an http(s) address, else None: a page's canonical link becomes
    the source's link in every answer and on the web page, so a ``javascript:`` or
    ``data:`` one would run in the reader's browser when clicked."""
    link = link.strip()
    return link if re.match(r"https?://[^\s]+$", link, re.IGNORECASE) else None


def load_docx(path: Path, data: bytes) -> LoadedDocument:
    import io
    import zipfile

    import docx

    try:
        document = docx.Document(io.BytesIO(data))
    except (zipfile.BadZipFile, KeyError, ValueError) as exc:
        raise LoadError(f"corrupt or unreadable DOCX ({exc}){_RESAVE_DOCX}") from None
    except Exception as exc:
        raise LoadError(
            f"corrupt or unreadable DOCX ({type(exc).__name__}: {exc}){_RESAVE_DOCX}"
        ) from None
    from docx.table import Table

    lines: list[str] = []
    # Body order matters: a table belongs under the heading that precedes it.
    for block in document.iter_inner_content():
        if isinstance(block, Table):
            lines.extend(" | ".join(cell.text.strip() for cell in row.cells) for row in block.rows)
            continue
        style = (block.style.name if block.style is not None else "") or ""
        text = block.text.strip()
        if not text:
            continue
        level = re.match(r"Heading (\d)", style)
        if style == "Title":
            lines.append(f"# {text}")
        elif level:
            lines.append(f"{'#' * min(int(level.group(1)) + 1, 6)} {text}")
        else:
            lines.append(text)
    text = "\n\n".join(lines)
    if not text.strip():
        raise LoadError("the DOCX has no text")
    core_title = (document.core_properties.title or "").strip()
    return LoadedDocument(
        title=core_title or _title_from_markdown(text, path.stem),
        sections=markdown_sections(text),
    )


Loader = Callable[[Path, bytes], LoadedDocument]

LOADERS: dict[str, Loader] = {
    ".md": load_markdown,
    ".markdown": load_markdown,
    ".txt": load_text,
    ".text": load_text,
    ".rst": load_text,
    ".pdf": load_pdf,
    ".html": load_html,
    ".htm": load_html,
    ".docx": load_docx,
}


def is_supported(path: Path) -> bool:
    return path.suffix.lower() in LOADERS


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
