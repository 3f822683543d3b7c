"""Loaders: each format's text and citation metadata, and every kind of bad input."""

from __future__ import annotations

import io
from pathlib import Path

import docx
import pytest
from fpdf import FPDF
from pypdf import PdfReader, PdfWriter

from agent.retrieval.loaders import LoadError, load_document, markdown_sections


def make_pdf(pages: list[str], title: str = "Handbook") -> bytes:
    pdf = FPDF()
    pdf.set_title(title)
    pdf.set_font("helvetica", size=12)
    for text in pages:
        pdf.add_page()
        pdf.multi_cell(0, 8, text)
    return bytes(pdf.output())


def test_markdown_keeps_heading_paths_and_ignores_hashes_in_code() -> None:
    text = (
        "# Guide\nintro\n## Setup\n### VPN\nuse wireguard\n"
        "```\n# not a heading\n```\n## Usage\nrun it"
    )
    sections = markdown_sections(text)
    headings = [s.heading for s in sections]
    # "Setup" has no text of its own: it lives on in "Guide > Setup > VPN" only.
    assert headings == ["Guide", "Guide > Setup > VPN", "Guide > Usage"]
    assert "# not a heading" in sections[1].text


def test_markdown_title_from_first_h1(tmp_path: Path) -> None:
    doc = load_document(tmp_path / "a.md", "# 사용 가이드\n\n본문입니다.".encode())
    assert doc.title == "사용 가이드"


def test_pdf_pages_are_numbered_from_one(tmp_path: Path) -> None:
    data = make_pdf(["Deploys happen on Tuesday.", "Backups are kept for 35 days."])
    doc = load_document(tmp_path / "h.pdf", data)
    assert doc.title == "Handbook"
    assert [s.page for s in doc.sections] == [1, 2]
    assert "35 days" in doc.sections[1].text


def test_html_keeps_main_text_and_drops_navigation(tmp_path: Path) -> None:
    html = """<html><head><title>Onboarding</title>
    <link rel="canonical" href="https://wiki.example.com/onboarding"></head><body>
    <nav><a href="/">Home</a> <a href="/x">NAVIGATION-MENU-ITEM</a></nav>
    <article><h1>Onboarding</h1><h2>VPN</h2>
    <p>Install the VPN client on your first day and ask the platform team for a profile.</p>
    <p>The on-call handover happens every Monday at 10:00 KST in the ops channel.</p></article>
    <footer>FOOTER-COPYRIGHT-2026</footer></body></html>"""
    doc = load_document(tmp_path / "o.html", html.encode())
    text = "\n".join(s.text for s in doc.sections)
    assert "Monday at 10:00 KST" in text
    assert "NAVIGATION-MENU-ITEM" not in text and "FOOTER-COPYRIGHT" not in text
    assert doc.title == "Onboarding"
    assert doc.link == "https://wiki.example.com/onboarding"
    assert any(s.heading.endswith("VPN") for s in doc.sections)


@pytest.mark.parametrize(
    "href",
    [
        "javascript:alert(document.domain)",
        " JavaScript:alert(1)",
        "javascript&colon;alert(1)",
        "data:text/html,<b>x</b>",
        "//evil.example/x",
        "/relative/page",
    ],
)
def test_html_canonical_link_that_is_not_http_is_dropped(tmp_path: Path, href: str) -> None:
    # The link becomes the source's href in the web chat: only http(s) may reach it.
    html = f"""<html><head><title>Policy</title><link rel="canonical" href="{href}"></head>
    <body><article><h1>Policy</h1><p>Expense reports are due on the fifth working day of
    the month, with receipts attached for every item over 30,000 won.</p></article></body></html>"""
    doc = load_document(tmp_path / "p.html", html.encode())
    assert doc.link is None
    assert "fifth working day" in "\n".join(s.text for s in doc.sections)


def test_docx_headings_and_tables(tmp_path: Path) -> None:
    d = docx.Document()
    d.add_heading("팀 FAQ", level=1)
    d.add_paragraph("휴가는 최소 2주 전에 신청합니다.")
    table = d.add_table(rows=1, cols=2)
    table.rows[0].cells[0].text = "payments"
    table.rows[0].cells[1].text = "#team-pay"
    buf = io.BytesIO()
    d.save(buf)
    doc = load_document(tmp_path / "faq.docx", buf.getvalue())
    text = "\n".join(s.text for s in doc.sections)
    assert "2주 전에" in text and "payments | #team-pay" in text
    assert doc.sections[0].heading == "팀 FAQ"


def _encrypted_pdf() -> bytes:
    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(make_pdf(["secret"]))))
    writer.encrypt(user_password="pw", owner_password="owner")
    buf = io.BytesIO()
    writer.write(buf)
    return buf.getvalue()


@pytest.mark.parametrize(
    ("name", "data", "reason"),
    [
        ("empty.md", b"   \n", "empty; add its text, or leave it out"),
        ("blob.txt", b"\x00\x01\x02binary\x00", "binary"),
        ("latin1.txt", "crème brûlée à la carte".encode("latin-1"), "its encoding is unclear"),
        ("image.png", b"\x89PNG....", "unsupported file type '.png'"),
        ("broken.pdf", b"%PDF-1.4 this is not really a pdf", "save or export it again as PDF"),
        ("broken.docx", b"PK\x03\x04 not a zip really", "save it again as .docx"),
        ("locked.pdf", _encrypted_pdf(), "encrypted PDF"),
    ],
)
def test_bad_input_names_the_cause_and_the_fix(
    tmp_path: Path, name: str, data: bytes, reason: str
) -> None:
    with pytest.raises(LoadError) as info:
        load_document(tmp_path / name, data)
    assert reason in str(info.value)


def test_scanned_pdf_without_text_says_to_ocr(tmp_path: Path) -> None:
    pdf = FPDF()
    pdf.add_page()
    with pytest.raises(LoadError, match="OCR"):
        load_document(tmp_path / "scan.pdf", bytes(pdf.output()))
