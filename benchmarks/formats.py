"""Ingest throughput per file format, and the peak memory of the largest files.

``throughput``: builds one file per format (XLSX and CSV of 20,000 rows, PPTX of 200
slides, HWPX of 300 pages' text with tables, a PDF of 50 text pages and of 5 scanned
pages read by OCR, a real HWP 5.0 file named by TEAMRAG_HWP5_SAMPLE), loads and chunks
each in this process and reports pages, slides or rows per second beside the embedding
cost of the chunks they make (the default USE encoder on a sample of them).

``rss``: loads and chunks one large file in a fresh child process and reports its peak
resident memory (``ru_maxrss``): a 50 MB spreadsheet (the loader's size limit; 1.7 million
rows, refused at the row limit), one of exactly the row limit, and a 300-page HWPX.
No assertion: the figures go in benchmarks/README.md.

    python benchmarks/formats.py throughput
    python benchmarks/formats.py rss [--xlsx-mb 48]

Prints JSON and writes benchmarks/results/formats-<mode>.json.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from agent.retrieval.chunking import chunk_document  # noqa: E402
from agent.retrieval.loaders import LoadError, load_document  # noqa: E402
from agent.retrieval.loaders.ocr import ocr_status  # noqa: E402
from agent.retrieval.loaders.sheets import MAX_ROWS  # noqa: E402

KO = "백업은 매일 새벽 2시에 만들고 35일 동안 보관하며, 복구 훈련은 분기마다 한 번 합니다."
EN = "Deploys run through the TANAGER pipeline and need one approval from the owning team."


def build_xlsx(path: Path, rows: int) -> None:
    from openpyxl import Workbook

    book = Workbook(write_only=True)  # streams rows to disk: builds a 50 MB file in bounded memory
    sheet = book.create_sheet("Inventory")
    sheet.append(["id", "server", "team", "note", "retention_days"])
    for i in range(rows):
        sheet.append(
            [
                i,
                f"db-{i:07d}",
                ["인프라", "payments", "검색"][i % 3],
                f"{KO if i % 2 else EN} #{i}",
                i % 90,
            ]
        )
    book.save(path)


def build_csv(path: Path, rows: int) -> None:
    with path.open("w", encoding="utf-8") as out:
        out.write("id,server,team,note\n")
        for i in range(rows):
            out.write(f'{i},db-{i:07d},{["인프라", "payments"][i % 2]},"{KO if i % 2 else EN}"\n')


def build_pptx(path: Path, slides: int) -> None:
    from pptx import Presentation

    deck = Presentation()
    for n in range(slides):
        slide = deck.slides.add_slide(deck.slide_layouts[1])
        assert slide.shapes.title is not None
        slide.shapes.title.text = f"Slide {n} 분기 리뷰"
        slide.placeholders[1].text = f"{KO}\n{EN}"
        slide.notes_slide.notes_text_frame.text = KO
    deck.save(str(path))


def build_hwpx(path: Path, pages: int) -> None:
    """About a page each: a heading, four paragraphs (~600 characters) and every fifth
    page a 5x3 table."""
    from hwpx import HwpxDocument

    doc = HwpxDocument.new()
    for page in range(pages):
        doc.add_heading(f"{page + 1}. 운영 절차", 2)
        for _ in range(4):
            doc.add_paragraph(f"{KO} {EN}", style_id_ref=0)
        if page % 5 == 0:
            table = doc.add_table(5, 3)
            for r in range(5):
                for c in range(3):
                    table.set_cell_text(r, c, f"r{r}c{c} 항목")
    doc.save_to_path(str(path))


def build_pdf(path: Path, pages: int, scanned: bool) -> None:
    from fpdf import FPDF

    from tests.support.format_files import image_page, korean_font, text_pdf_page

    pdf = FPDF()
    font = korean_font()
    words = EN.split()
    for n in range(pages):
        if scanned and font is not None:
            image_page(pdf, [KO[:30], EN[:40], f"TANAGER {n}"], font)
        else:  # each page's lines differ: identical lines would be dropped as running headers
            text_pdf_page(pdf, " ".join(f"{w}{n * 31 + i}" for i, w in enumerate(words * 12)))
    pdf.output(str(path))


def measure(path: Path, units: int, unit: str, embedder: Any) -> dict[str, Any]:
    data = path.read_bytes()
    started = time.perf_counter()
    document = load_document(path, data)
    chunks = chunk_document(document, doc_id="d", source=str(path), content_hash="0" * 64)
    seconds = time.perf_counter() - started
    sample = [c.text for c in chunks[:300]]
    t0 = time.perf_counter()
    embedder.embed_documents(sample)
    per_chunk = (time.perf_counter() - t0) / max(1, len(sample))
    return {
        "file": path.name, "bytes": len(data), unit: units, "chunks": len(chunks),
        "load_and_chunk_s": round(seconds, 3),
        f"{unit}_per_s": round(units / seconds, 1),
        "embedding_s_for_its_chunks": round(per_chunk * len(chunks), 2),
    }  # fmt: skip


def throughput(work: Path) -> dict[str, Any]:
    from agent.retrieval.embeddings import UniversalSentenceEncoder

    embedder = UniversalSentenceEncoder()
    embedder.embed_documents(["warm up"])
    files = [
        ("sheet.xlsx", 20_000, "rows", lambda p: build_xlsx(p, 20_000)),
        ("sheet.csv", 20_000, "rows", lambda p: build_csv(p, 20_000)),
        ("deck.pptx", 200, "slides", lambda p: build_pptx(p, 200)),
        ("manual.hwpx", 300, "pages", lambda p: build_hwpx(p, 300)),
        ("text.pdf", 50, "pages", lambda p: build_pdf(p, 50, scanned=False)),
    ]
    if ocr_status()[0]:
        files.append(("scan.pdf", 5, "pages", lambda p: build_pdf(p, 5, scanned=True)))
    results = []
    for name, units, unit, build in files:
        path = work / name
        build(path)
        results.append(measure(path, units, unit, embedder))
    # A real HWP 5.0 file (TEAMRAG_HWP5_SAMPLE; none can be built here): 50 loads for a rate.
    sample = os.environ.get("TEAMRAG_HWP5_SAMPLE", "")
    if sample and Path(sample).is_file():
        fixture = Path(sample)
        started = time.perf_counter()
        for _ in range(50):
            load_document(fixture, fixture.read_bytes())
        elapsed = time.perf_counter() - started
        results.append({"file": fixture.name, "pages": 50, "load_and_chunk_s":
                        round(elapsed, 3), "pages_per_s": round(50 / elapsed, 1)})  # fmt: skip
    return {"mode": "throughput", "ocr": ocr_status()[1], "results": results}


def _child(path: str) -> None:
    """In a fresh process: load and chunk one file, print its peak RSS."""
    file = Path(path)
    started = time.perf_counter()
    try:
        document = load_document(file, file.read_bytes())
    except LoadError as exc:  # the row limit: how far it got before saying so
        peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(json.dumps({"file": file.name, "bytes": file.stat().st_size, "refused": str(exc),
                          "seconds": round(time.perf_counter() - started, 1),
                          "peak_rss_mb": round(peak_mb)}))  # fmt: skip
        return
    chunks = chunk_document(document, doc_id="d", source=path, content_hash="0" * 64)
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"file": file.name, "bytes": file.stat().st_size,
                      "sections": len(document.sections), "chunks": len(chunks),
                      "seconds": round(time.perf_counter() - started, 1),
                      "peak_rss_mb": round(peak_mb)}))  # fmt: skip


def rss(work: Path, xlsx_mb: float) -> dict[str, Any]:
    sheet = work / "big.xlsx"
    rows = int(xlsx_mb * 1024 * 1024 / 30)  # about 30 bytes a row, measured on this generator
    build_xlsx(sheet, rows)
    at_limit = work / "at-limit.xlsx"
    build_xlsx(at_limit, MAX_ROWS - 1)  # plus the header row: exactly the limit
    manual = work / "manual.hwpx"
    build_hwpx(manual, 300)
    sizes = {sheet: {"rows": rows}, at_limit: {"rows": MAX_ROWS}, manual: {"pages": 300}}
    results = []
    for path in (sheet, at_limit, manual):
        done = subprocess.run(
            [sys.executable, __file__, "child", str(path)],
            capture_output=True, text=True, check=True, cwd=REPO,
        )  # fmt: skip
        found = json.loads(done.stdout.strip().splitlines()[-1])
        results.append(found | sizes[path])
    return {"mode": "rss", "limit_mb": 1024, "results": results}


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("mode", choices=["throughput", "rss", "child"])
    parser.add_argument("path", nargs="?")
    parser.add_argument("--xlsx-mb", type=float, default=48.0)
    args = parser.parse_args()
    if args.mode == "child":
        _child(args.path)
        return
    with tempfile.TemporaryDirectory() as folder:
        result = (
            throughput(Path(folder))
            if args.mode == "throughput"
            else rss(Path(folder), args.xlsx_mb)
        )
    text = json.dumps(result, ensure_ascii=False, indent=2)
    print(text)
    out = REPO / "benchmarks" / "results" / f"formats-{args.mode}.json"
    out.write_text(text + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
