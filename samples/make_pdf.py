"""Build samples/kb/ops-handbook.pdf, the sample PDF of the teamrag knowledge base.

Each page holds different facts so that citations by page can be checked. Page 3 is in
Korean, so a TTF font with Hangul is needed (Debian/Ubuntu: ``apt-get install fonts-nanum``).

    python samples/make_pdf.py [--font PATH] [--bold-font PATH] [--out PATH]
"""

from __future__ import annotations

import argparse
import logging
from datetime import UTC, datetime
from pathlib import Path

from fpdf import FPDF

HERE = Path(__file__).resolve().parent
NANUM = Path("/usr/share/fonts/truetype/nanum")
TITLE = "Operations handbook / 운영 핸드북"

# One page per entry: (heading, paragraphs). A paragraph starting with "- " is a bullet.
PAGES: list[tuple[str, list[str]]] = [
    (
        "1. Deploy policy",
        [
            "This handbook is owned by the Platform team (#team-platform). It applies to every "
            "service that runs in production.",
            "Deploys are allowed Tuesday to Thursday, 10:00-16:00 KST. There are no production "
            "deploys on Monday, Friday, weekends, public holidays or the working day before a "
            "public holiday.",
            "- Announce every deploy in #deploys before you start: service, version and the "
            "rollback plan.",
            "- Canary: the new version gets 5% of traffic for 30 minutes. Promote it only if the "
            "error rate stays below 1% and p95 latency grows by less than 20%.",
            "- A rollback must be possible within 15 minutes. Database migrations must stay "
            "backward compatible for one release (expand, then contract).",
            "- Year-end freeze: no deploys from December 20 to January 3, except fixes for a SEV1 "
            "incident.",
            "A deploy outside the window needs the approval of the service owner and of the "
            "current primary on-call engineer, recorded in #deploys.",
        ],
    ),
    (
        "2. Incident severity levels",
        [
            "Anyone can declare an incident. When in doubt, choose the higher severity; it can be "
            "lowered later.",
            "- SEV1 (critical): a core service is down for all users, data is lost, or there is a "
            "security breach. Acknowledge within 5 minutes, assign an incident commander at "
            "once, post status updates every 30 minutes. Postmortem within 5 business days.",
            "- SEV2 (major): a core feature is down or degraded for part of the users, for "
            "example card payments failing for one issuer. Acknowledge within 15 minutes, post "
            "updates every 60 minutes. Postmortem within 10 business days.",
            "- SEV3 (minor): a bug with a workaround, or an internal tool is down, with no "
            "customer impact. Respond within 1 business day and track it as a ticket. No "
            "postmortem is required.",
            "SEV1 and SEV2 page the primary on-call engineer at any hour. SEV3 never pages at "
            "night or on weekends.",
        ],
    ),
    (
        "3. 장애 대응 절차",
        [
            "장애 알림을 받은 온콜 엔지니어는 아래 순서대로 대응한다.",
            "- 호출을 받으면 5분 이내에 PagerDuty에서 확인(ack)한다.",
            "- #incidents 채널에 장애를 선언하고, 전용 채널을 #inc-YYYYMMDD-서비스명 형식으로 "
            "만든다. 예: #inc-20261105-billing",
            "- 인시던트 지휘자(IC)를 정한다. 기본은 1차 온콜(primary)이며, IC는 직접 고치기보다 "
            "조율과 소통을 맡는다.",
            "- 15분 안에 완화되지 않으면 2차 온콜(secondary)과 해당 서비스 담당 팀을 호출한다.",
            "- 고객에게 영향이 있으면 20분 이내에 고객지원팀(#cs-escalation)에 알리고, 상태 "
            "페이지(status.example.com)를 갱신한다.",
            "- 진행 상황은 SEV1이면 30분마다, SEV2이면 60분마다 전용 채널에 공유한다.",
            "- 장애 대응 중 배포는 배포 가능 시간과 관계없이 IC가 승인하면 할 수 있다.",
            "해소 후 24시간 동안 모니터링을 유지한다. 포스트모템은 SEV1은 5영업일, SEV2는 "
            "10영업일 이내에 비난 없는(blameless) 형식으로 작성하고, 후속 작업은 담당자와 "
            "기한을 정해 티켓으로 남긴다.",
        ],
    ),
    (
        "4. Backups and data retention",
        [
            "Postgres: a full backup every night at 03:00 KST plus continuous WAL archiving, so "
            "any moment can be restored. Postgres backups are kept for 35 days. Recovery point "
            "objective (RPO) 5 minutes, recovery time objective (RTO) 4 hours.",
            "- Restore test: on the first Wednesday of every month the Platform team restores the "
            "latest backup into the restore-test environment and posts the time it took in "
            "#team-platform.",
            "- Redis: a snapshot every 6 hours, kept for 7 days. Redis holds only caches and "
            "sessions and can be rebuilt.",
            "- Object storage: versioning is on; old versions are kept for 90 days.",
            "- Application logs: 30 days in Loki, then 1 year in cold storage. Audit logs are "
            "kept for 5 years.",
            "All backups are encrypted and copied to a second region. A customer's request to "
            "delete their data is completed within 30 days; their data leaves the backups when "
            "those expire.",
        ],
    ),
]


class Handbook(FPDF):
    def header(self) -> None:
        self.set_font("nanum", size=8)
        self.set_text_color(120)
        self.cell(0, 6, f"{TITLE}  ·  Sora Labs Platform team  ·  v3.2")
        self.ln(12)
        self.set_text_color(0)

    def footer(self) -> None:
        self.set_y(-15)
        self.set_font("nanum", size=8)
        self.set_text_color(120)
        self.cell(0, 10, f"Page {self.page_no()} / {len(PAGES)}", align="C")


def build(font: Path, bold_font: Path, out: Path) -> None:
    pdf = Handbook(format="A4")
    pdf.set_title(TITLE)
    pdf.set_author("Platform team")
    pdf.set_subject("Deploys, incidents, backups")
    pdf.set_lang("ko")
    pdf.set_creation_date(datetime(2026, 11, 2, tzinfo=UTC))  # fixed: rebuilds are identical
    pdf.add_font("nanum", "", str(font))
    pdf.add_font("nanum", "B", str(bold_font))
    pdf.set_margins(20, 15, 20)
    for heading, paragraphs in PAGES:
        pdf.add_page()
        pdf.set_font("nanum", "B", 16)
        pdf.multi_cell(0, 10, heading, align="L")
        pdf.ln(3)
        pdf.set_font("nanum", size=11)
        for text in paragraphs:
            bullet = text.startswith("- ")
            pdf.set_x(pdf.l_margin + (5 if bullet else 0))
            pdf.multi_cell(0, 6.5, f"• {text[2:]}" if bullet else text, align="L")
            pdf.ln(3)
    out.parent.mkdir(parents=True, exist_ok=True)
    pdf.output(str(out))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--font", type=Path, default=NANUM / "NanumGothic.ttf")
    parser.add_argument("--bold-font", type=Path, default=NANUM / "NanumGothicBold.ttf")
    parser.add_argument("--out", type=Path, default=HERE / "kb" / "ops-handbook.pdf")
    args = parser.parse_args()
    logging.getLogger("fontTools.subset").setLevel(logging.ERROR)  # "TSI0 NOT subset" noise
    build(args.font, args.bold_font, args.out)
    print(f"wrote {args.out} ({args.out.stat().st_size:,} bytes)")


if __name__ == "__main__":
    main()
