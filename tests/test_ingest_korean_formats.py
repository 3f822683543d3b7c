"""The new formats through ingestion and search on the real knowledge base: a question
in Korean and in English answered from each format with the right locator, scanned PDF
pages read by OCR (or named with the install line without it), and a batch with locked
and corrupt files where the rest goes in and nothing of the bad ones does."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from fpdf import FPDF

from agent.retrieval.ingest import Ingestor, Status
from agent.retrieval.knowledge_base import KnowledgeBase, SearchOptions
from agent.retrieval.loaders import LoadError, load_document
from agent.retrieval.loaders.ocr import INSTALL, ocr_status
from tests.support.format_files import (
    BROKEN_HWP,
    HWP_FIXTURE,
    hwpx_bytes,
    image_page,
    korean_font,
    pptx_bytes,
    text_pdf_page,
    xlsx_bytes,
)

SCANNED = ["백업은 35일 동안 보관합니다.", "Backups are kept for 35 days.", "KESTREL"]


def _files(folder: Path) -> Path:
    folder.mkdir()
    (folder / "규정.hwpx").write_bytes(hwpx_bytes())
    (folder / "servers.xlsx").write_bytes(xlsx_bytes())
    (folder / "review.pptx").write_bytes(pptx_bytes())
    if HWP_FIXTURE.is_file():
        (folder / "sample.hwp").write_bytes(HWP_FIXTURE.read_bytes())
    (folder / "연락처.csv").write_bytes("이름,부서,내선\n김민수,인프라,1234\n".encode("cp949"))
    return folder


QUESTIONS = [
    # (Korean question, English question, file, locator)
    ("비밀번호 길이 기준은?", "What is the password length rule?", "규정.hwpx",
     "section 1 > 보안 규정 > 계정"),
    ("db-07 백업 보관 기간", "db-07 backup retention days", "servers.xlsx", "서버 > rows 3-"),
    ("3분기 매출은 얼마나 늘었나요?", "How much did third quarter revenue grow?", "review.pptx",
     "slide 1 > 분기 실적"),
    ("KESTREL 출시는 언제인가요?", "When is the KESTREL launch?", "review.pptx",
     "slide 2 > Roadmap"),
    ("한글 문서 파일 형식 5.0", "HWP document file format 5.0 Hancom", "sample.hwp", "section 1"),
    ("김민수 내선 번호", "Kim Minsu extension number", "연락처.csv", "row 2"),
]  # fmt: skip


def test_a_question_from_each_format_cites_the_right_place(
    kb: KnowledgeBase, tmp_path: Path
) -> None:
    report = Ingestor(kb).run([_files(tmp_path / "drive")])
    assert not report.failed, report.failed
    for korean, english, name, locator in QUESTIONS:
        if name == "sample.hwp" and not HWP_FIXTURE.is_file():
            continue  # no HWP 5.0 sample here (tests/support/format_files.py says why)
        for question in (korean, english):
            hits = kb.search(question, SearchOptions(k=3))
            cited = [(Path(h.chunk.source).name, h.chunk.locator()) for h in hits]
            assert any(n == name and where.startswith(locator) for n, where in cited), (
                question,
                cited,
            )


def _scanned_pdf(all_scanned: bool = False) -> bytes:
    font = korean_font()
    if font is None:
        pytest.skip("no Korean TrueType font (Debian fonts-nanum) to draw a scanned page")
    pdf = FPDF()
    if not all_scanned:
        text_pdf_page(pdf, "Deploys happen on Tuesday.")
    image_page(pdf, SCANNED, font)
    return bytes(pdf.output())


def test_scanned_page_is_read_by_ocr_and_cited_as_ocr(kb: KnowledgeBase, tmp_path: Path) -> None:
    available, why_not = ocr_status()
    if not available:
        pytest.skip(f"OCR is not available on this machine: {why_not}")
    (tmp_path / "handbook.pdf").write_bytes(_scanned_pdf())
    report = Ingestor(kb).run([tmp_path / "handbook.pdf"])
    assert [r.status for r in report.results] == [Status.ADDED] and not report.results[0].reason
    for question in ("백업은 며칠 동안 보관하나요?", "How long are backups kept?"):
        top = kb.search(question, SearchOptions(k=1))[0].chunk
        assert top.locator() == "p. 2 · OCR" and "35" in top.text


@pytest.fixture
def no_tesseract(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A machine without tesseract: nothing on the PATH provides it."""
    empty = tmp_path / "bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))


def test_without_ocr_text_pages_go_in_and_scanned_pages_are_named(
    kb: KnowledgeBase, tmp_path: Path, no_tesseract: None
) -> None:
    (tmp_path / "handbook.pdf").write_bytes(_scanned_pdf())
    (tmp_path / "scan-only.pdf").write_bytes(_scanned_pdf(all_scanned=True))
    report = Ingestor(kb).run([tmp_path])
    by_name = {Path(r.path).name: r for r in report.results}
    handbook, scan_only = by_name["handbook.pdf"], by_name["scan-only.pdf"]
    assert handbook.status is Status.ADDED
    assert "page 2 is a scan without a text layer, left out" in handbook.reason
    assert INSTALL in handbook.reason
    assert scan_only.status is Status.FAILED
    assert "no text layer" in scan_only.reason and INSTALL in scan_only.reason
    with pytest.raises(LoadError, match="tesseract is not installed"):
        load_document(Path("scan-only.pdf"), _scanned_pdf(all_scanned=True))


def test_a_batch_with_locked_and_corrupt_files_loads_the_rest_and_nothing_of_them(
    kb: KnowledgeBase, tmp_path: Path
) -> None:
    from msoffcrypto.format.ooxml import OOXMLFile

    folder = _files(tmp_path / "drive")
    locked = io.BytesIO()
    OOXMLFile(io.BytesIO(xlsx_bytes())).encrypt("secret", locked)
    (folder / "급여.xlsx").write_bytes(locked.getvalue())
    (folder / "broken.hwp").write_bytes(BROKEN_HWP)
    report = Ingestor(kb).run([folder])
    failed = {Path(r.path).name: r.reason for r in report.failed}
    assert set(failed) == {"급여.xlsx", "broken.hwp"}
    assert "password-protected (encrypted) XLSX" in failed["급여.xlsx"]
    assert "Hancom Office" in failed["broken.hwp"]
    good = {"규정.hwpx", "servers.xlsx", "review.pptx", "연락처.csv"}
    good |= {"sample.hwp"} if HWP_FIXTURE.is_file() else set()
    assert report.count(Status.ADDED) == len(good)
    sources = {Path(d.source).name for d in kb.catalog.documents()}
    assert sources == good
