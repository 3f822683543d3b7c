"""The Korean team's formats: HWP 5.0 (a real Hancom file), HWPX, XLSX, PPTX, CSV and
text in CP949/EUC-KR, each with the structure and the locator a citation shows; and
every kind of bad input (locked, corrupt, ambiguous) named with its cause and fix."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import pytest

from agent.retrieval.chunking import chunk_document
from agent.retrieval.loaders import LoadError, load_document
from tests.support.format_files import (
    BROKEN_HWP,
    HWP_FIXTURE,
    hwpx_bytes,
    needs_hwp5,
    pptx_bytes,
    xlsx_bytes,
)


def locators(path: Path, data: bytes) -> dict[str, str]:
    """Each chunk's citation locator -> its text."""
    document = load_document(path, data)
    chunks = chunk_document(document, doc_id="d", source=str(path), content_hash="h" * 64)
    return {c.locator(): c.text for c in chunks}


@needs_hwp5
def test_hwp5_real_document_keeps_title_sections_and_table_rows() -> None:
    document = load_document(HWP_FIXTURE, HWP_FIXTURE.read_bytes())
    assert document.title == "제목입니다."  # the summary's title (File > Properties)
    text = "\n".join(s.text for s in document.sections)
    assert {s.heading for s in document.sections} == {"section 1"}
    # Hancom's private-use "한" (U+F53A) comes out as the real syllable.
    assert "한글 워드 프로세서의 파일 저장 형식" in text and "\uf53a" not in text
    assert "| A0 | B0 |\n| A1 | B10 B11 |" in text  # the 2x2 table, one line per row
    assert "이건 각주이지요." in text  # footnotes are body text


def test_hwpx_outline_headings_tables_sections_without_running_header() -> None:
    found = locators(Path("규정.hwpx"), hwpx_bytes())
    assert "노트북은 전체 디스크 암호화" in found["section 1 > 보안 규정"]
    table = found["section 1 > 보안 규정 > 계정"]
    assert "| 항목 | 기준 |\n| 비밀번호 길이 | 12자 이상 |" in table
    assert "Leavers' accounts are locked" in found["section 2"]
    assert not any("RUNNING-HEADER" in text for text in found.values())
    assert load_document(Path("규정.hwpx"), hwpx_bytes()).title == "보안 규정"


def test_xlsx_one_sheet_per_section_header_repeated_rows_cited() -> None:
    found = locators(Path("servers.xlsx"), xlsx_bytes())
    server_parts = {k: v for k, v in found.items() if k.startswith("서버 > rows ")}
    assert len(server_parts) >= 2  # 40 rows do not fit one passage
    for text in server_parts.values():
        assert text.startswith("| 서버 | 담당 팀 | 백업 보관(일) |\n")  # the header heads each
    # The header is on row 2 (row 1 is blank): data starts on row 3.
    assert next(iter(server_parts)).startswith("서버 > rows 3-")
    row_of_db07 = next(k for k, v in server_parts.items() if "db-07 | 결제 | 21" in v)
    first, last = map(int, row_of_db07.split("rows ")[1].split("-"))
    assert first <= 10 <= last  # db-07 is the 8th data row: row 10
    assert found["Leave > rows 2-3"] == (
        "| Type | Days per year |\n| Annual leave | 15 |\n| Sick leave | 10 |"
    )


def test_a_spreadsheet_past_the_row_limit_is_refused_as_bulk_data(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A 50 MB workbook (1.7 million rows) took the process to 1.3 GB; past the limit
    (300,000 rows, all sheets together) the file is refused with the fix."""
    monkeypatch.setattr("agent.retrieval.loaders.sheets.MAX_ROWS", 40)
    assert load_document(Path("ok.xlsx"), xlsx_bytes(rows=30))  # 30 + 2 + 3 rows: fits
    with pytest.raises(LoadError, match="more than 40 rows: that is bulk data"):
        load_document(Path("big.xlsx"), xlsx_bytes(rows=45))
    big_csv = "a,b\n" + "".join(f"{i},x\n" for i in range(60))
    with pytest.raises(LoadError, match="export the rows people ask about"):
        load_document(Path("big.csv"), big_csv.encode())


def test_pptx_one_slide_per_section_with_title_table_and_notes() -> None:
    found = locators(Path("review.pptx"), pptx_bytes())
    assert found["slide 1 > 분기 실적"] == (
        "분기 실적\n3분기 매출은 전 분기보다 20% 늘었습니다.\n"
        "(notes) 발표자 메모: 환율 효과를 포함한 수치입니다."
    )
    assert (
        "| Quarter | Goal |\n| Q3 | Launch the KESTREL search service |"
        in found["slide 2 > Roadmap"]
    )


@pytest.mark.parametrize(
    ("name", "data"),
    [
        ("연락처.csv", "이름,부서,내선\n김민수,인프라,1234\n이영희,보안,5678\n".encode("cp949")),
        ("연락처.txt", "서울특별시 강남구 테헤란로 연락처 목록".encode("euc-kr")),
        # 똠 and 펲 exist in CP949 only, not in EUC-KR
        ("연락처.md", "# 연락처\n\n똠방각하 펲 담당자에게 문의하세요.".encode("cp949")),
    ],
)
def test_korean_legacy_encodings_are_detected(name: str, data: bytes) -> None:
    document = load_document(Path(name), data)
    text = "\n".join(s.text for s in document.sections)
    assert ("김민수 | 인프라 | 1234" in text) or ("강남구" in text) or ("똠방각하" in text)
    if name.endswith(".csv"):
        assert document.sections[0].heading == "rows 2-3"


def test_html_declared_charset_and_ambiguous_text_refused_naming_encodings() -> None:
    page = (
        '<html><head><meta charset="euc-kr"><title>공지</title></head><body><article>'
        "<h1>공지</h1><p>사내 와이파이 비밀번호는 매달 첫째 월요일에 바뀝니다.</p>"
        "</article></body></html>"
    ).encode("euc-kr")
    assert "와이파이" in load_document(Path("notice.html"), page).sections[0].text
    latin = "Café crème brûlée à la carte, naïve façade".encode("latin-1")
    with pytest.raises(LoadError) as info:
        load_document(Path("menu.txt"), latin)
    message = str(info.value)
    assert "tried UTF-8, CP949/EUC-KR, cp1250, cp1252" in message and "iconv" in message


def _encrypted(data: bytes) -> bytes:
    from msoffcrypto.format.ooxml import OOXMLFile

    out = io.BytesIO()
    OOXMLFile(io.BytesIO(data)).encrypt("secret", out)
    return out.getvalue()


def _password_hwp() -> bytes:
    """The real HWP with its header's password flag set, as Hancom writes a locked file."""
    import olefile

    data = bytearray(HWP_FIXTURE.read_bytes())
    ole = olefile.OleFileIO(bytes(data))
    header = bytearray(ole.openstream("FileHeader").read())
    header[36] |= 0b10
    buf = io.BytesIO(bytes(data))
    with olefile.OleFileIO(buf, write_mode=True) as writable:
        writable.write_stream("FileHeader", bytes(header))
    return buf.getvalue()


# What Hancom Office writes for a password-protected HWPX: each part's encryption in
# the manifest (the parts themselves are then ciphertext).
_LOCKED_MANIFEST = (
    b'<?xml version="1.0" encoding="UTF-8"?><odf:manifest '
    b'xmlns:odf="urn:oasis:names:tc:opendocument:xmlns:manifest:1.0"><odf:file-entry '
    b'odf:full-path="Contents/section0.xml" odf:media-type="application/xml">'
    b'<odf:encryption-data odf:checksum-type="urn:oasis:names:tc:opendocument:xmlns:'
    b'manifest:1.0#sha256-1k" odf:checksum="AAAA"><odf:algorithm odf:algorithm-name='
    b'"http://www.w3.org/2001/04/xmlenc#aes256-cbc" odf:initialisation-vector="AAAA"/>'
    b"</odf:encryption-data></odf:file-entry></odf:manifest>"
)


def _encrypted_hwpx() -> bytes:
    source = zipfile.ZipFile(io.BytesIO(hwpx_bytes()))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as target:
        for info in source.infolist():
            body = source.read(info)
            if info.filename == "META-INF/manifest.xml":
                body = _LOCKED_MANIFEST
            target.writestr(info, body)
    return out.getvalue()


@pytest.mark.parametrize(
    ("name", "make", "reason"),
    [
        ("locked.xlsx", lambda: _encrypted(xlsx_bytes()), "password-protected (encrypted) XLSX"),
        ("locked.pptx", lambda: _encrypted(pptx_bytes()), "remove the password"),
        pytest.param(
            "locked.hwp",
            _password_hwp,
            "password-protected HWP; open it in Hancom Office",
            marks=needs_hwp5,
        ),
        ("locked.hwpx", _encrypted_hwpx, "password-protected HWPX"),
        ("broken.xlsx", lambda: xlsx_bytes()[:3000], "save it again as .xlsx"),
        ("broken.pptx", lambda: b"PK\x03\x04 not a deck", "save it again as .pptx"),
        ("broken.hwp", lambda: BROKEN_HWP, "corrupt or unreadable HWP"),
        ("broken.hwpx", lambda: hwpx_bytes()[:2000], "save it again"),
        ("old.hwp", lambda: b"HWP Document File V3.00 \x1a\x01\x02\x03\x04\x05", "HWP 3"),
        ("renamed.hwp", hwpx_bytes, "rename it to .hwpx"),
    ],
)
def test_locked_and_corrupt_office_files_name_the_cause_and_the_fix(
    name: str, make: object, reason: str
) -> None:
    assert callable(make)
    with pytest.raises(LoadError) as info:
        load_document(Path(name), make())
    assert reason in str(info.value)
