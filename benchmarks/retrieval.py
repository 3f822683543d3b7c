"""Run ``teamrag bench retrieval`` for every data set and mode; print the Markdown table.

    python benchmarks/retrieval.py [--data ../shared/data] [--limit N]

Data sets: KorQuAD 1.0 dev (Korean), XQuAD English, and the cross-language
set in benchmarks/data (Korean questions about English paragraphs and English
questions about Korean paragraphs, over one mixed index of both files). Each
data set is ingested once (the first mode run measures ingestion); the other
modes reuse the index. Results go to benchmarks/results/retrieval.json.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
MODES = ("hybrid", "keyword", "dense")


def bench(args: list[str], data_dir: Path, mode: str) -> dict[str, object]:
    cmd = [
        sys.executable,
        "-m",
        "bots",
        "bench",
        "retrieval",
        *args,
        "--mode",
        mode,
        "--data-dir",
        str(data_dir),
        "--json",
    ]
    out = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, check=True)
    return dict(json.loads(out.stdout))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data")
    parser.add_argument("--limit", type=int, default=None)
    args = parser.parse_args()
    korquad = args.data / "KorQuAD_v1.0_dev.json"
    xquad = args.data / "xquad.en.json"
    limit = ["--limit", str(args.limit)] if args.limit else []

    tmp = Path(tempfile.mkdtemp(prefix="teamrag-retrieval-"))
    cross = json.loads((REPO / "benchmarks" / "data" / "crosslingual.json").read_text("utf-8"))
    sets: dict[str, list[str]] = {
        "KorQuAD dev (ko)": ["--squad", str(korquad), *limit],
        "XQuAD (en)": ["--squad", str(xquad), *limit],
    }
    for lang, label in (("ko", "ko question, en paragraph"), ("en", "en question, ko paragraph")):
        subset = tmp / f"cross-{lang}.json"
        subset.write_text(
            json.dumps(
                {"questions": [q for q in cross["questions"] if q["lang"] == lang]},
                ensure_ascii=False,
            ),
            "utf-8",
        )
        sets[f"mixed index, {label}"] = [
            "--squad",
            str(korquad),
            "--squad",
            str(xquad),
            "--questions",
            str(subset),
            *limit,
        ]

    results: dict[str, dict[str, dict[str, object]]] = {}
    index_dirs = {"KorQuAD dev (ko)": tmp / "korquad", "XQuAD (en)": tmp / "xquad"}
    for name, cli_args in sets.items():
        data_dir = index_dirs.get(name, tmp / "mixed")
        results[name] = {}
        for mode in MODES:
            results[name][mode] = bench(cli_args, data_dir, mode)
            print(f"{name} {mode}: {results[name][mode]}", file=sys.stderr)

    (REPO / "benchmarks" / "results").mkdir(exist_ok=True)
    (REPO / "benchmarks" / "results" / "retrieval.json").write_text(
        json.dumps(results, indent=2, ensure_ascii=False), "utf-8"
    )
    print(
        "| data set | mode | questions | hit@1 | hit@5 | hit@10 | MRR@10 | answer in top 5 "
        "| query p50 / p95 ms |"
    )
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for name, by_mode in results.items():
        for mode, r in by_mode.items():
            print(
                f"| {name} | {mode} | {r['questions']} | {r['hit@1']:.3f} | {r['hit@5']:.3f} | "
                f"{r['hit@10']:.3f} | {r['mrr@10']:.3f} | {r['answer_in_top5']} | "
                f"{r['query_p50_ms']} / {r['query_p95_ms']} |"
            )
    for name, by_mode in results.items():
        speed = by_mode["hybrid"].get("ingest_chunks_per_s")
        print(
            f"ingest {name}: {by_mode['hybrid']['chunks']} chunks, {speed} chunks/s",
            file=sys.stderr,
        )


if __name__ == "__main__":
    main()
