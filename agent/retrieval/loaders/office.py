"""Word and PowerPoint: DOCX with its headings and tables, PPTX one slide per section."""

from __future__ import annotations

import io
import re
import zipfile
from pathlib import Path
from typing import Any

from agent.retrieval.loaders.base import (
    RESAVE_DOCX,
    LoadError,
    corrupt,
    markdown_sections,
    refuse_locked_office,
    table_lines,
    title_from_markdown,
)
from agent.retrieval.types import LoadedDocument, Section

RESAVE_PPTX = "; open it in PowerPoint or LibreOffice Impress and save it again as .pptx"


def load_docx(path: Path, data: bytes) -> LoadedDocument:
    import docx

    refuse_locked_office(data, "DOCX", "Word")
    try:
        document = docx.Document(io.BytesIO(data))
    except (zipfile.BadZipFile, KeyError, ValueError) as exc:
        raise LoadError(f"corrupt or unreadable DOCX ({exc}){RESAVE_DOCX}") from None
    except Exception as exc:
        raise corrupt("DOCX", exc, RESAVE_DOCX) from None
    from docx.table import Table

    lines: list[str] = []
    # Body order matters: a table belongs under the heading that precedes it.
    for block in document.iter_inner_content():
        if isinstance(block, Table):
            # Markdown rows, as every loader writes them: "a | b" alone was not told from prose.
            lines.extend(
                table_lines([[cell.text.strip() for cell in row.cells] for row in block.rows])
            )
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
        title=core_title or title_from_markdown(text, path.stem),
        sections=markdown_sections(text),
    )


def load_pptx(path: Path, data: bytes) -> LoadedDocument:
    """One section per slide: its title, its text boxes and tables in order, its notes.
    The citation reads ``slide 3 > Title``."""
    from pptx import Presentation

    refuse_locked_office(data, "PPTX", "PowerPoint")
    try:
        deck = Presentation(io.BytesIO(data))
        sections = [s for n, slide in enumerate(deck.slides, 1) if (s := _slide(n, slide))]
        core_title = (deck.core_properties.title or "").strip()
    except LoadError:
        raise
    except Exception as exc:  # python-pptx raises zip, XML and key errors on damaged files
        raise corrupt("PPTX", exc, RESAVE_PPTX) from None
    if not sections:
        raise LoadError("the PPTX has no text on its slides or in its notes")
    return LoadedDocument(title=core_title or path.stem, sections=sections)


def _slide(number: int, slide: Any) -> Section | None:
    title_shape = slide.shapes.title
    title = title_shape.text_frame.text.strip() if title_shape is not None else ""
    lines = [title] if title else []
    for shape in slide.shapes:
        # python-pptx makes a new proxy per access: compare ids, not objects.
        if title_shape is None or shape.shape_id != title_shape.shape_id:
            lines.extend(_shape_lines(shape))
    if slide.has_notes_slide and slide.notes_slide.notes_text_frame is not None:
        notes = slide.notes_slide.notes_text_frame.text.strip()
        if notes:
            lines.append(f"(notes) {notes}")
    text = "\n".join(line for line in lines if line.strip())
    if not text:
        return None
    heading = f"slide {number}" + (f" > {title}" if title else "")
    return Section(text=text, heading=heading)


def _shape_lines(shape: Any) -> list[str]:
    if shape.shape_type is not None and getattr(shape, "shapes", None) is not None:
        return [line for inner in shape.shapes for line in _shape_lines(inner)]  # a group
    if getattr(shape, "has_table", False) and shape.has_table:
        rows = [[cell.text.strip() for cell in row.cells] for row in shape.table.rows]
        return table_lines(rows)
    if getattr(shape, "has_text_frame", False) and shape.has_text_frame:
        return [p.text.strip() for p in shape.text_frame.paragraphs if p.text.strip()]
    return []
