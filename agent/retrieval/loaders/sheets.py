"""Spreadsheets: XLSX (one sheet after another) and CSV/TSV.

Rows go into sections of a few hundred characters, each starting with the header row
(the sheet's first non-empty row), so every passage says what its columns mean and its
citation names the rows exactly: ``Sheet1 > rows 2-9``. XLSX is read in openpyxl's
read-only mode, which streams rows instead of building the workbook in memory.
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import zipfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from agent.retrieval.loaders.base import (
    LoadError,
    corrupt,
    decode_text,
    refuse_locked_office,
    row_line,
)
from agent.retrieval.types import LoadedDocument, Section

RESAVE_XLSX = "; open it in Excel or LibreOffice Calc and save it again as .xlsx"
# Under the default chunk size (500): a section stays one passage, header included.
SECTION_CHARS = 420
# Past this many rows a file is bulk data, not a document: 300,000 rows make about 100,000
# passages (seven minutes of embedding on 2 cores), and a 50 MB workbook of 1.7 million rows
# took the process to 1.3 GB (benchmarks/formats.py rss). Refused with the fix instead.
MAX_ROWS = 300_000


def capped(
    rows: Iterable[tuple[int, list[str]]], kind: str, counted: list[int]
) -> Iterator[tuple[int, list[str]]]:
    """``rows``, refusing the file once all its sheets together pass :data:`MAX_ROWS`
    (``counted`` carries the count from one sheet to the next)."""
    for row in rows:
        counted[0] += 1
        if counted[0] > MAX_ROWS:
            raise LoadError(
                f"the {kind} has more than {MAX_ROWS:,} rows: that is bulk data, not a document; "
                f"export the rows people ask about (or split the file) and ingest that"
            )
        yield row


def cell_text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, dt.datetime) and value.time() == dt.time(0):
        return value.date().isoformat()
    return str(value).strip().replace("\n", " ")


def row_sections(rows: Iterable[tuple[int, list[str]]], under: str = "") -> Iterator[Section]:
    """Sections of ``(row number, cells)``: the header row, then as many rows as fit."""
    header = ""
    group: list[str] = []
    first = last = 0
    prefix = f"{under} > " if under else ""

    def section() -> Section:
        span = f"row {first}" if first == last else f"rows {first}-{last}"
        return Section(text="\n".join([header, *group]), heading=prefix + span)

    for number, cells in rows:
        while cells and not cells[-1]:
            cells.pop()
        if not cells:
            continue
        line = row_line(cells)
        if not header:
            header = line
            continue
        if group and len(header) + sum(map(len, group)) + len(line) > SECTION_CHARS:
            yield section()
            group = []
        if not group:
            first = number
        group.append(line)
        last = number
    if group:
        yield section()
    elif header:  # a sheet of one row: still searchable
        yield Section(text=header, heading=prefix + "row 1")


def load_xlsx(path: Path, data: bytes) -> LoadedDocument:
    from openpyxl import load_workbook

    refuse_locked_office(data, "XLSX", "Excel")
    try:
        book = load_workbook(io.BytesIO(data), read_only=True, data_only=True)
    except (zipfile.BadZipFile, KeyError, ValueError, OSError) as exc:
        raise corrupt("XLSX", exc, RESAVE_XLSX) from None
    except Exception as exc:  # openpyxl's InvalidFileException and XML errors
        raise corrupt("XLSX", exc, RESAVE_XLSX) from None
    try:
        sections: list[Section] = []
        counted = [0]
        for sheet in book.worksheets:
            rows = (
                (n, [cell_text(v) for v in values])
                for n, values in enumerate(sheet.iter_rows(values_only=True), 1)
            )
            sections.extend(row_sections(capped(rows, "XLSX", counted), sheet.title))
        title = (book.properties.title or "").strip()
    except LoadError:
        raise
    except Exception as exc:  # a damaged sheet part shows only when its rows are read
        raise corrupt("XLSX", exc, RESAVE_XLSX) from None
    finally:
        book.close()
    if not sections:
        raise LoadError("the XLSX has no cells with text")
    return LoadedDocument(title=title or path.stem, sections=sections)


def load_csv(path: Path, data: bytes) -> LoadedDocument:
    text = decode_text(data, path)
    if path.suffix.lower() == ".tsv":
        delimiter = "\t"
    else:
        try:
            delimiter = csv.Sniffer().sniff(text[:4096], delimiters=",;\t|").delimiter
        except csv.Error:
            delimiter = ","
    try:
        reader = csv.reader(io.StringIO(text), delimiter=delimiter)
        rows = ((n, [c.strip() for c in cells]) for n, cells in enumerate(reader, 1))
        sections = list(row_sections(capped(rows, "CSV", [0])))
    except csv.Error as exc:
        raise LoadError(f"malformed CSV ({exc}); save it again as CSV (UTF-8)") from None
    return LoadedDocument(title=path.stem, sections=sections)
