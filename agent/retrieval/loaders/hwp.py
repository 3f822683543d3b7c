"""Hancom Office documents: HWP 5.0 (an OLE compound file of records) and HWPX (ZIP+XML).

extract-hwp (BSD-3) does the byte-level work with its size limits (decompression,
record framing, paragraph text); its public functions return flat text only, so this
module walks the records itself to keep what a citation needs: the document section
(``section 2``), outline headings (the 개요 1-7 / Outline styles), tables as
``a | b`` rows, and running headers and footers left out. The helpers it uses are
private to extract-hwp, which is why pyproject pins it below 0.3.
"""

from __future__ import annotations

import io
import re
import struct
import zipfile
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

from agent.retrieval.loaders.base import (
    OLE_MAGIC,
    LoadError,
    corrupt,
    markdown_sections,
    table_lines,
    title_from_markdown,
)
from agent.retrieval.types import LoadedDocument, Section

RESAVE_HWP = "; open it in Hancom Office (한글) and save it again"
LOCKED_HWP = (
    "password-protected HWP; open it in Hancom Office (한글), remove the document password "
    "(보안 > 문서 암호), save a copy and ingest that"
)
PROTECTED_HWP = (
    "distribution-only (배포용) or DRM-protected HWP, whose text cannot be read; ask its "
    "author for an ordinary copy"
)
# Hancom's fonts map "한" to a private-use code point in some HWP 5.0 files.
_PRIVATE_USE = str.maketrans({"\uf53a": "한"})
_OUTLINE = re.compile(r"^(?:개요|Outline)\s*(\d+)$")

# HWP 5.0 record tags (Hancom's "HWP 5.0 file format" document, HWPTAG_BEGIN = 16)
_STYLE, _PARA_HEADER, _PARA_TEXT, _CTRL_HEADER, _LIST_HEADER, _TABLE = 26, 66, 67, 71, 72, 77
_RUNNING = {"head", "foot"}  # controls whose text repeats on every page


def _heading_level(style_name: str) -> int:
    match = _OUTLINE.match(style_name.strip())
    return min(int(match.group(1)), 6) if match else 0  # Markdown has six levels


def _document(path: Path, parts: list[list[str]], title: str = "") -> LoadedDocument:
    """Sections from each HWP section's lines (``#`` marks on outline headings)."""
    sections: list[Section] = []
    first = "\n".join(parts[0]) if parts else ""
    for number, lines in enumerate(parts, 1):
        text = "\n".join(lines).translate(_PRIVATE_USE)
        sections.extend(markdown_sections(text, under=f"section {number}"))
    if not sections:
        raise LoadError(f"the {path.suffix.lstrip('.').upper()} file has no text")
    return LoadedDocument(title=title or title_from_markdown(first, path.stem), sections=sections)


# -- HWP 5.0 ------------------------------------------------------------------------------


def load_hwp(path: Path, data: bytes) -> LoadedDocument:
    import olefile
    from extract_hwp import hwp5
    from extract_hwp.errors import HwpReadLimitError

    if data.startswith(b"PK\x03\x04"):
        raise LoadError("this is an HWPX file with an .hwp name; rename it to .hwpx")
    if not data.startswith(OLE_MAGIC):
        raise LoadError(
            "not an HWP 5.0 file (HWP 3 or another format?); open it in Hancom Office (한글) "
            "and save it as .hwp or .hwpx"
        )
    try:
        ole = olefile.OleFileIO(data)
    except Exception as exc:
        raise corrupt("HWP", exc, RESAVE_HWP) from None
    try:
        flags = struct.unpack_from("<I", hwp5._read_hwp_header(ole), 36)[0]
        if flags & hwp5.HWP5_PASSWORD:
            raise LoadError(LOCKED_HWP)
        if flags & hwp5.HWP5_UNSUPPORTED_PROTECTION:
            raise LoadError(PROTECTED_HWP)
        compressed = bool(flags & hwp5.HWP5_COMPRESSED)
        styles = _hwp5_styles(ole, compressed, hwp5)
        count = hwp5._read_declared_section_count(ole, compressed)
        title = _hwp5_title(ole)
        parts = [
            _hwp5_lines(_hwp5_stream(ole, f"BodyText/Section{i}", compressed, hwp5), styles, hwp5)
            for i in range(count)
        ]
    except LoadError:
        raise
    except HwpReadLimitError as exc:
        raise LoadError(f"the HWP expands past the reader's size limit ({exc}); split it") from None
    except Exception as exc:  # struct, zlib, OLE and record-framing errors on damaged files
        raise corrupt("HWP", exc, RESAVE_HWP) from None
    finally:
        ole.close()
    return _document(path, parts, title)


def _hwp5_title(ole: Any) -> str:
    """The title in the document's summary (File > Properties), or ""."""
    try:
        found = ole.getproperties("\x05HwpSummaryInformation").get(2)  # PIDSI_TITLE
    except Exception:  # no summary, or one olefile cannot parse: the file name serves
        return ""
    return found.split("\x00")[0].strip() if isinstance(found, str) else ""


def _hwp5_stream(ole: Any, name: str, compressed: bool, hwp5: Any) -> bytes:
    limit = hwp5.MAX_HWP_EXPANDED_BYTES
    if not ole.exists(name):
        raise LoadError(f"the HWP lacks its {name} stream")
    if ole.get_size(name) > limit:  # olefile reads a stream whole on open: check first
        raise hwp5.HwpReadLimitError(f"{name} is over {limit} bytes")
    with ole.openstream(name) as stream:
        data: bytes = stream.read(limit + 1)
    return hwp5._decompress_hwp_section(data, limit, name) if compressed else data


def _hwp5_styles(ole: Any, compressed: bool, hwp5: Any) -> list[str]:
    """Style names in DocInfo order (a paragraph refers to its style by index)."""
    names: list[str] = []
    docinfo = _hwp5_stream(ole, "DocInfo", compressed, hwp5)
    for tag, _, payload in hwp5._iter_hwp_records(docinfo):
        if tag == _STYLE and len(payload) >= 2:
            length = struct.unpack_from("<H", payload)[0]
            names.append(payload[2 : 2 + 2 * length].decode("utf-16-le", "replace"))
    return names


def _hwp5_lines(data: bytes, styles: list[str], hwp5: Any) -> list[str]:
    lines: list[str] = []
    controls: list[tuple[int, str, dict[str, Any]]] = []  # (level, id, table state)
    style = 0
    for tag, level, payload in hwp5._iter_hwp_records(data):
        while controls and level <= controls[-1][0]:  # a record beside a control ends it
            _, kind, state = controls.pop()
            if kind == "tbl ":
                lines.extend(_table_rows(state))
        running = any(kind in _RUNNING for _, kind, _ in controls)
        table = next((s for _, k, s in reversed(controls) if k == "tbl "), None)
        if tag == _CTRL_HEADER:
            controls.append((level, payload[:4][::-1].decode("latin-1"), {"cells": {}}))
        elif tag == _TABLE and table is not None:
            table["started"] = True
        elif tag == _LIST_HEADER and table is not None and len(payload) >= 12:
            # A cell's column and row follow the list header; a caption comes before the
            # TABLE record and sorts first.
            col, row = struct.unpack_from("<HH", payload, 8)
            table["at"] = (row, col) if table.get("started") else (-1, len(table["cells"]))
        elif tag == _PARA_HEADER and len(payload) > 10:
            style = payload[10]
        elif tag == _PARA_TEXT and not running:
            text = hwp5._decode_para_text(payload).strip()
            if not text:
                continue
            if table is not None and "at" in table:
                table["cells"].setdefault(table["at"], []).append(text)
            else:
                name = styles[style] if style < len(styles) else ""
                depth = _heading_level(name) if not controls else 0
                lines.append(f"{'#' * depth} {text}" if depth else text)
    for _, kind, state in reversed(controls):
        if kind == "tbl ":
            lines.extend(_table_rows(state))
    return lines


def _table_rows(state: dict[str, Any]) -> list[str]:
    cells: dict[tuple[int, int], list[str]] = state["cells"]
    rows: dict[int, list[str]] = {}
    for (row, _), texts in sorted(cells.items()):
        rows.setdefault(row, []).append(" ".join(texts))
    return table_lines([rows[r] for r in sorted(rows)])


# -- HWPX ---------------------------------------------------------------------------------


def _local(element: ElementTree.Element) -> str:
    return element.tag.rsplit("}", 1)[-1]


def load_hwpx(path: Path, data: bytes) -> LoadedDocument:
    from extract_hwp import hwpx
    from extract_hwp.errors import HwpReadLimitError

    if data.startswith(OLE_MAGIC):
        raise LoadError("this is an HWP 5.0 file with an .hwpx name; rename it to .hwp")
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            names = archive.namelist()
            if "META-INF/manifest.xml" in names:
                manifest = hwpx._read_hwpx_xml(archive, "META-INF/manifest.xml")
                if b"encryption-data" in manifest:
                    raise LoadError(LOCKED_HWP.replace("HWP", "HWPX", 1))
            package = (
                hwpx._read_hwpx_xml(archive, "Contents/content.hpf")
                if "Contents/content.hpf" in names
                else None
            )
            styles = _hwpx_styles(archive, names, hwpx)
            remaining = hwpx.MAX_HWPX_TOTAL_XML_BYTES
            parts: list[list[str]] = []
            for name in hwpx._hwpx_section_paths(names, package):
                xml = hwpx._read_hwpx_xml(archive, name, remaining)
                remaining -= len(xml)
                parts.append(_hwpx_lines(ElementTree.fromstring(xml), styles, hwpx))
    except LoadError:
        raise
    except HwpReadLimitError as exc:
        raise LoadError(f"the HWPX expands past the reader's limit ({exc}); split it") from None
    except Exception as exc:  # zip, XML and missing-part errors on damaged files
        raise corrupt("HWPX", exc, RESAVE_HWP) from None
    if not parts:
        raise LoadError(f"the HWPX has no body sections{RESAVE_HWP}")
    return _document(path, parts)


def _hwpx_styles(archive: zipfile.ZipFile, names: list[str], hwpx: Any) -> dict[str, str]:
    if "Contents/header.xml" not in names:
        return {}
    root = ElementTree.fromstring(hwpx._read_hwpx_xml(archive, "Contents/header.xml"))
    return {
        str(el.get("id")): str(el.get("name") or el.get("engName") or "")
        for el in root.iter()
        if _local(el) == "style"
    }


def _hwpx_lines(root: ElementTree.Element, styles: dict[str, str], hwpx: Any) -> list[str]:
    lines: list[str] = []
    for paragraph in (el for el in root if _local(el) == "p"):
        parts: list[str] = []
        tables: list[ElementTree.Element] = []
        _hwpx_collect(paragraph, parts, tables, hwpx)
        text = "".join(parts).strip()
        if text:
            depth = _heading_level(styles.get(str(paragraph.get("styleIDRef")), ""))
            lines.append(f"{'#' * depth} {text}" if depth else text)
        for table in tables:
            rows = [
                [_hwpx_cell(cell, hwpx) for cell in row if _local(cell) == "tc"]
                for row in table
                if _local(row) == "tr"
            ]
            lines.extend(table_lines(rows))
    return lines


def _hwpx_collect(
    element: ElementTree.Element, parts: list[str], tables: list[ElementTree.Element], hwpx: Any
) -> None:
    for child in element:
        tag = _local(child)
        if tag == "tbl":
            tables.append(child)
        elif tag in ("header", "footer"):
            continue  # running lines, on every page
        elif tag == "t":
            parts.append(hwpx._hwpx_inline_text(child))
        elif tag == "p":  # a paragraph inside a text box
            parts.append("\n")
            _hwpx_collect(child, parts, tables, hwpx)
        else:
            _hwpx_collect(child, parts, tables, hwpx)


def _hwpx_cell(cell: ElementTree.Element, hwpx: Any) -> str:
    texts = (hwpx._hwpx_inline_text(t) for t in cell.iter() if _local(t) == "t")
    return " ".join(t.strip() for t in texts if t.strip())
