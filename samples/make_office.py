"""Build samples/kb/office-guide.hwpx and samples/kb/equipment.xlsx: the Hancom Office
and Excel documents of the teamrag sample knowledge base (Sora Labs, a made-up team).

The HWPX has outline headings (개요 1 and 2) and a table; the XLSX has two sheets whose
first row is a header. Both are byte-for-byte reproducible (fixed zip timestamps).

    python samples/make_office.py [--out-dir PATH]
"""

from __future__ import annotations

import argparse
import io
import itertools
import re
import zipfile
from datetime import datetime
from pathlib import Path

from make_docx import reproducible

HERE = Path(__file__).resolve().parent
FIXED = datetime(2026, 11, 2)
NORMAL = 0  # python-hwpx's 바탕글 style: body text, not a heading

DESKS = [
    ("구역 Zone", "층 Floor", "좌석 Desks", "용도 Use"),
    ("A", "5층", "24석", "엔지니어링 고정석 (fixed desks)"),
    ("B", "5층", "16석", "자유석, 당일 선착순 (hot desks)"),
    ("C", "6층", "8석", "집중 근무실, 통화 금지 (quiet room)"),
]

EQUIPMENT = [
    ("장비 Equipment", "대여 일수 Loan days", "신청 채널 Request channel", "비고 Notes"),
    ("MacBook Pro 14 (예비 노트북 spare laptop)", 14, "#it-helpdesk", "반납 시 초기화"),
    ("27인치 모니터 27-inch monitor", 90, "#it-helpdesk", "재택 근무용 work from home"),
    ("USB-C 허브 USB-C hub", 30, "#it-helpdesk", "여분 충전기와 함께 대여"),
    ("휴대용 스피커폰 Portable speakerphone", 3, "#facilities", "6층 안내데스크 비품"),
    ("테스트용 Android 폰 Android test phone", 7, "#mobile-qa", "QA 팀 승인 필요"),
]
BUDGET = [
    ("Role 직무", "Annual training budget (KRW) 연간 교육 예산", "Approver 승인자"),
    ("Engineer 엔지니어", 1_500_000, "Engineering manager"),
    ("Designer 디자이너", 1_200_000, "Design lead"),
    ("Team lead 팀장", 2_000_000, "Head of engineering"),
]


def render_hwpx() -> bytes:
    from hwpx import HwpxDocument

    doc = HwpxDocument.new()
    doc.add_heading("사무실 생활 안내 (Office guide)", 1)
    doc.add_paragraph(
        "Sora Labs 사무실은 판교 테크노밸리 5층과 6층을 씁니다. 출입카드는 입사 첫날 "
        "3층 안내데스크에서 받습니다.",
        style_id_ref=NORMAL,
    )
    doc.add_heading("좌석 (Desks)", 2)
    doc.add_paragraph(
        "자유석은 당일 선착순이고, 퇴근할 때 책상을 비웁니다. Hot desks are first come, "
        "first served; clear the desk when you leave.",
        style_id_ref=NORMAL,
    )
    table = doc.add_table(len(DESKS), len(DESKS[0]))
    for r, row in enumerate(DESKS):
        for c, text in enumerate(row):
            table.set_cell_text(r, c, text)
    doc.add_heading("택배와 야간 출입 (Parcels and late entry)", 2)
    doc.add_paragraph(
        "개인 택배는 1층 무인 택배함으로 받고, 사흘 안에 찾아가야 합니다. 밤 10시 이후에는 "
        "출입카드와 함께 #facilities 채널에 야간 출입을 미리 알립니다. Personal parcels go to "
        "the ground-floor lockers and must be collected within three days.",
        style_id_ref=NORMAL,
    )
    raw = io.BytesIO()
    doc.save_to_stream(raw)
    return raw.getvalue()


def render_xlsx() -> bytes:
    from openpyxl import Workbook

    book = Workbook()
    book.properties.title = "장비 대여와 교육 예산 (Equipment and training budget)"
    book.properties.creator = "Sora Labs"
    book.properties.created = book.properties.modified = FIXED
    loans = book.active
    assert loans is not None
    loans.title = "장비 대여 Equipment"
    for row in EQUIPMENT:
        loans.append(list(row))
    budget = book.create_sheet("교육 예산 Training")
    for row in BUDGET:
        budget.append(list(row))
    raw = io.BytesIO()
    book.save(raw)
    return raw.getvalue()


def reproducible_hwpx(data: bytes) -> bytes:
    """Fixed zip timestamps, and python-hwpx's random paragraph and table ids numbered in
    order; ``mimetype`` stays first and stored, as the HWPX (OCF) package wants it."""
    counter = itertools.count(1)
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as src, zipfile.ZipFile(out, "w") as dst:
        for item in src.infolist():
            body = src.read(item)
            if item.filename.startswith("Contents/section"):
                body = re.sub(rb' id="\d{5,}"', lambda _: b' id="%d"' % next(counter), body)
            info = zipfile.ZipInfo(item.filename, date_time=(2026, 11, 2, 0, 0, 0))
            info.compress_type = item.compress_type
            dst.writestr(info, body)
    return out.getvalue()


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--out-dir", type=Path, default=HERE / "kb")
    args = parser.parse_args()
    args.out_dir.mkdir(parents=True, exist_ok=True)
    built = {
        "office-guide.hwpx": reproducible_hwpx(render_hwpx()),
        "equipment.xlsx": reproducible(render_xlsx()),
    }
    for name, data in built.items():
        out = args.out_dir / name
        out.write_bytes(data)
        print(f"wrote {out} ({out.stat().st_size:,} bytes)")


if __name__ == "__main__":
    main()
