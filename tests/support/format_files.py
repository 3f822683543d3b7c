"""Small real files of the formats teamrag reads, built by the maintained writers
(python-hwpx, openpyxl, python-pptx, fpdf2), for the loader and source tests."""

from __future__ import annotations

import io
import os
import warnings
from pathlib import Path

import pytest
from fpdf import FPDF

# A real HWP 5.0 file: nothing on PyPI writes one, and the public samples we know of carry
# licences (AGPL) a test fixture here cannot take. A developer with a .hwp file points
# TEAMRAG_HWP5_SAMPLE at it; without one these tests skip and say why.
_HWP5 = os.environ.get("TEAMRAG_HWP5_SAMPLE", "")
HWP_FIXTURE = Path(_HWP5)
needs_hwp5 = pytest.mark.skipif(
    not _HWP5 or not HWP_FIXTURE.is_file(),
    reason="no HWP 5.0 sample: set TEAMRAG_HWP5_SAMPLE to a .hwp file (none can be built here)",
)
# An OLE compound file's signature with nothing valid after it: a damaged .hwp.
BROKEN_HWP = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + bytes(504) + b"\xff" * 1024
NORMAL = 0  # python-hwpx's "바탕글" style: a paragraph that is not a heading


def hwpx_bytes() -> bytes:
    """Two sections: an outline heading with a paragraph, a sub-heading with a table,
    a running header (left out), and a paragraph in the second section."""
    from hwpx import HwpxDocument

    doc = HwpxDocument.new()
    doc.add_heading("보안 규정", 1)
    doc.add_paragraph("노트북은 전체 디스크 암호화를 사용해야 합니다.", style_id_ref=NORMAL)
    doc.add_heading("계정", 2)
    table = doc.add_table(3, 2)
    for row, (item, rule) in enumerate(
        [("항목", "기준"), ("비밀번호 길이", "12자 이상"), ("Password rotation", "every 90 days")]
    ):
        table.set_cell_text(row, 0, item)
        table.set_cell_text(row, 1, rule)
    with warnings.catch_warnings():  # the old name still works in python-hwpx 6.x
        warnings.simplefilter("ignore", DeprecationWarning)
        doc.set_header_text("사내 대외비 RUNNING-HEADER")
    second = doc.add_section()
    doc.add_paragraph(
        "퇴사자의 계정은 마지막 근무일에 잠급니다. Leavers' accounts are locked on their last day.",
        section=second,
        style_id_ref=NORMAL,
    )
    buf = io.BytesIO()
    doc.save_to_stream(buf)
    return buf.getvalue()


def xlsx_bytes(rows: int = 40) -> bytes:
    """A sheet of servers (a blank first row, the header on row 2) and a leave sheet."""
    from openpyxl import Workbook

    book = Workbook()
    servers = book.active
    assert servers is not None
    servers.title = "서버"
    servers.append([])
    servers.append(["서버", "담당 팀", "백업 보관(일)"])
    for i in range(rows):
        servers.append([f"db-{i:02d}", ["인프라", "결제", "검색"][i % 3], 14 + i])
    leave = book.create_sheet("Leave")
    leave.append(["Type", "Days per year"])
    leave.append(["Annual leave", 15])
    leave.append(["Sick leave", 10.0])
    buf = io.BytesIO()
    book.save(buf)
    return buf.getvalue()


def pptx_bytes() -> bytes:
    from pptx import Presentation
    from pptx.util import Inches

    deck = Presentation()
    first = deck.slides.add_slide(deck.slide_layouts[1])
    assert first.shapes.title is not None
    first.shapes.title.text = "분기 실적"
    first.placeholders[1].text = "3분기 매출은 전 분기보다 20% 늘었습니다."
    first.notes_slide.notes_text_frame.text = "발표자 메모: 환율 효과를 포함한 수치입니다."
    second = deck.slides.add_slide(deck.slide_layouts[5])
    assert second.shapes.title is not None
    second.shapes.title.text = "Roadmap"
    grid = second.shapes.add_table(2, 2, Inches(1), Inches(2), Inches(6), Inches(1)).table
    for (r, c), text in {(0, 0): "Quarter", (0, 1): "Goal", (1, 0): "Q3",
                         (1, 1): "Launch the KESTREL search service"}.items():  # fmt: skip
        grid.cell(r, c).text = text
    buf = io.BytesIO()
    deck.save(buf)
    return buf.getvalue()


def text_pdf_page(pdf: FPDF, text: str) -> None:
    pdf.add_page()
    pdf.set_font("helvetica", size=12)
    pdf.multi_cell(0, 8, text)


def image_page(pdf: FPDF, lines: list[str], font: Path) -> None:
    """A page that is only a picture of text, as a scanner makes it: no text layer."""
    from PIL import Image, ImageDraw, ImageFont

    image = Image.new("L", (1600, 140 + 90 * len(lines)), 255)
    draw = ImageDraw.Draw(image)
    face = ImageFont.truetype(str(font), 56)
    for n, line in enumerate(lines):
        draw.text((60, 60 + 90 * n), line, fill=0, font=face)
    pdf.add_page()
    pdf.image(image, x=10, y=10, w=190)


def korean_font() -> Path | None:
    """A TrueType font with Hangul (Debian fonts-nanum), for drawing a scanned page."""
    for name in ("NanumGothic.ttf", "NanumGothicCoding.ttf", "NanumSquareRoundR.ttf"):
        for found in Path("/usr/share/fonts").rglob(name):
            return found
    return None
