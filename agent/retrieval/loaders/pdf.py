"""PDF: one section per page, running headers dropped, scanned pages read by OCR."""

from __future__ import annotations

import io
import re
from pathlib import Path
from typing import Any

from agent.retrieval.loaders.base import RESAVE_PDF, LoadError, corrupt
from agent.retrieval.loaders.ocr import ocr_images, ocr_status
from agent.retrieval.types import LoadedDocument, Section

OCR_MARK = "OCR"  # the heading of an OCR'd page: its citation reads "p. 3 · OCR"


def load_pdf(path: Path, data: bytes) -> LoadedDocument:
    from pypdf import PdfReader
    from pypdf.errors import PdfReadError

    locked = LoadError("encrypted PDF; save an unprotected copy and ingest that")
    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted and not reader.decrypt(""):
            raise locked
        pages = [page.extract_text() or "" for page in reader.pages]
        meta_title = (reader.metadata.title if reader.metadata else None) or ""
        # A page with no text but with images is a scan; a page with neither is blank.
        scanned = [i for i, t in enumerate(pages, 1) if not t.strip() and _images(reader, i)]
    except LoadError:
        raise
    except (PdfReadError, ValueError, KeyError, TypeError, OSError) as exc:
        raise corrupt("PDF", exc, RESAVE_PDF) from None
    except Exception as exc:  # pypdf raises many internal types on damaged files
        if "crypt" in str(exc).lower() or "password" in str(exc).lower():
            raise locked from None
        raise corrupt("PDF", exc, RESAVE_PDF) from None
    pages = _strip_running_lines(pages)
    sections = [Section(text=t.strip(), page=i) for i, t in enumerate(pages, 1) if t.strip()]
    notes = ""
    if scanned:
        can_ocr, why_not = ocr_status()
        if can_ocr:
            sections = sorted(sections + _ocr(reader, scanned), key=lambda s: s.page or 0)
        else:
            notes = (
                f"{_pages(scanned)} {'is a scan' if len(scanned) == 1 else 'are scans'} without "
                f"a text layer, left out: {why_not}"
            )
    if not sections:
        if notes:
            raise LoadError(f"the PDF has no text layer: {notes}")
        raise LoadError("the PDF has no extractable text (a scan? run OCR on it first)")
    title = str(meta_title).strip() or path.stem
    return LoadedDocument(title=title, sections=sections, notes=notes)


def _images(reader: Any, number: int) -> list[Any]:
    try:
        return list(reader.pages[number - 1].images)
    except Exception:  # an image pypdf cannot decode: treat the page as not readable
        return []


def _ocr(reader: Any, scanned: list[int]) -> list[Section]:
    sections: list[Section] = []
    for number in scanned:
        try:
            images = [image.image for image in _images(reader, number)]
        except Exception:  # an image format PIL cannot decode: the page stays out
            continue
        text = ocr_images([i for i in images if i is not None]).strip()
        if text:
            sections.append(Section(text=text, page=number, heading=OCR_MARK))
    return sections


def _pages(numbers: list[int]) -> str:
    shown = ", ".join(str(n) for n in numbers[:20]) + (", ..." if len(numbers) > 20 else "")
    return f"page {shown}" if len(numbers) == 1 else f"pages {shown}"


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
