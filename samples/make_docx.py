"""Build samples/kb/faq.docx, the sample Word document of the teamrag knowledge base.

Questions are Heading 2 under Heading 1 sections, in Korean and English, plus one table.
The output is byte-for-byte reproducible (fixed dates and zip timestamps).

    python samples/make_docx.py [--out PATH]
"""

from __future__ import annotations

import argparse
import io
import zipfile
from datetime import UTC, datetime
from pathlib import Path

from docx import Document
from docx.oxml.ns import qn

HERE = Path(__file__).resolve().parent
TITLE = "Team FAQ / 팀 FAQ"
FIXED = datetime(2026, 11, 2, tzinfo=UTC)

# (section, [(question, [paragraphs])])
SECTIONS: list[tuple[str, list[tuple[str, list[str]]]]] = [
    (
        "Access and accounts / 계정과 권한",
        [
            (
                "How do I get access to production?",
                [
                    "Ask in #access-requests with the reason and how long you need it. Your team "
                    "lead approves the request. Production access is granted for at most 14 days "
                    "at a time; ask again to renew it. You also need the VPN (see the "
                    "Engineering onboarding page).",
                ],
            ),
            (
                "YubiKey를 잃어버렸어요. 어떻게 하나요?",
                [
                    "바로 #security 채널과 security@example.com에 알리세요. "
                    "보안팀이 잃어버린 키를 모든 계정에서 해제하고, "
                    "24시간 동안 쓸 수 있는 임시 로그인 코드를 보내 줍니다. "
                    "새 키는 다음 영업일에 본관 3층 IT 데스크에서 받을 수 있습니다.",
                ],
            ),
        ],
    ),
    (
        "Time off and on-call / 휴가와 온콜",
        [
            (
                "휴가는 어떻게 신청하나요?",
                [
                    "HR 시스템(Flex)에서 신청하고 팀 캘린더에도 등록하세요. 3일 이상 쉬는 휴가는 "
                    "최소 2주 전에 팀 채널에 공유해 주세요. 반차는 당일 오전 9시 전까지만 신청하면 "
                    "됩니다.",
                ],
            ),
            (
                "I am on call during my vacation. What do I do?",
                [
                    "Find someone to swap weeks with, post the swap in #oncall-handover and "
                    "change the PagerDuty schedule yourself. Settle the swap before the on-call "
                    "handover, which happens every Monday at 10:00 KST.",
                ],
            ),
            (
                "밤에 호출을 받았는데 다음 날도 정상 출근해야 하나요?",
                [
                    "평일 밤 22:00 이후나 주말에 호출을 받아 대응했다면 다음 날 오전 근무는 쉬어도 "
                    "됩니다. 매니저에게 Slack으로 알려 주기만 하면 되고, "
                    "따로 휴가를 쓰지 않습니다.",
                ],
            ),
        ],
    ),
    (
        "Working with teamrag / teamrag 사용하기",
        [
            (
                "Which documents does @teamrag know?",
                [
                    "The onboarding page, the operations handbook, this FAQ and the glossary are "
                    "in the public scope, so the bot can use them in every channel. Engineering "
                    "runbooks are in the eng scope, which the Developer Experience team has "
                    "granted only to the #eng-* channels.",
                ],
            ),
            (
                "문서를 고쳤는데 봇이 예전 내용으로 답해요.",
                [
                    "문서 저장소에 머지된 변경은 매일 02:00 KST에 teamrag ingest --prune으로 "
                    "자동 반영됩니다. 더 빨리 반영해야 하면 #team-devex에 요청하세요.",
                ],
            ),
            (
                "Where do I report a wrong answer?",
                [
                    "Press the thumbs-down button under the answer. The Developer Experience team "
                    "reviews every thumbs-down on Thursday and fixes the document or the bot.",
                ],
            ),
        ],
    ),
]

OWNERS: list[tuple[str, str, str]] = [
    ("api-gateway", "Platform", "#team-platform"),
    ("billing", "Payments", "#team-payments"),
    ("search", "Discovery", "#team-discovery"),
    ("auth", "Identity", "#team-identity"),
    ("data-pipeline", "Data", "#team-data"),
    ("teamrag bot", "Developer Experience", "#team-devex"),
]


def render() -> bytes:
    doc = Document()
    normal = doc.styles["Normal"].element.get_or_add_rPr()
    normal.get_or_add_rFonts().set(qn("w:eastAsia"), "Malgun Gothic")  # Hangul in Word
    props = doc.core_properties
    props.title, props.author, props.last_modified_by = TITLE, "People team", "People team"
    props.created = props.modified = FIXED
    props.revision = 1

    doc.add_paragraph(TITLE, style="Title")
    doc.add_paragraph(
        "자주 묻는 질문을 모았습니다. Answers here are short; the Engineering onboarding page "
        "and the Operations handbook have the details."
    )
    for section, questions in SECTIONS:
        doc.add_heading(section, level=1)
        for question, paragraphs in questions:
            doc.add_heading(question, level=2)
            for text in paragraphs:
                doc.add_paragraph(text)

    doc.add_heading("Service owners / 서비스 담당 팀", level=1)
    doc.add_paragraph(
        "서비스에 대한 질문이나 장애 제보는 담당 팀 채널로 보내 주세요. "
        "Which team owns which service:"
    )
    table = doc.add_table(rows=1, cols=3, style="Table Grid")
    header = ("Service", "Owner team", "Slack channel")
    for cell, text in zip(table.rows[0].cells, header, strict=True):
        cell.text = text
    for row in OWNERS:
        for cell, text in zip(table.add_row().cells, row, strict=True):
            cell.text = text
    doc.add_paragraph("If a service is not listed, ask in #eng-help.")

    raw = io.BytesIO()
    doc.save(raw)
    return raw.getvalue()


def reproducible(data: bytes) -> bytes:
    """Rewrite the zip with fixed timestamps so that rebuilding gives identical bytes."""
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as src, zipfile.ZipFile(out, "w") as dst:
        for item in src.infolist():
            info = zipfile.ZipInfo(item.filename, date_time=(2026, 11, 2, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            dst.writestr(info, src.read(item))
    return out.getvalue()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=HERE / "kb" / "faq.docx")
    args = parser.parse_args()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_bytes(reproducible(render()))
    print(f"wrote {args.out} ({args.out.stat().st_size:,} bytes)")


if __name__ == "__main__":
    main()
