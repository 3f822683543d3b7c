"""`make bench-answers`: every question set through `teamrag eval`, one Markdown table.

The team handbook (`../shared/data/handbook`, its `docs/` ingested fresh), 300 questions
each of KorQuAD dev and XQuAD English (`--limit 300`, seed 1, as in benchmarks/README.md)
and the two sample sets against `samples/kb`. No LLM: the OpenAI variables are dropped,
so the numbers measure the extractive answers (`--llm` keeps them). The handbook is asked
once; its dev and held-out parts (`teamrag eval --part`) are read from that run's rows.
Writes benchmarks/results/answers.md and answers.json. About 10 minutes on 2 cores.

    .venv/bin/python benchmarks/answers.py [--only handbook] [--out benchmarks/results]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bots.evaluation.categories import (  # noqa: E402
    COLUMNS,
    TOTAL,
    by_category,
    cell,
    markdown_table,
)
from bots.evaluation.scoring import Row  # noqa: E402
from bots.evaluation.sets import load_question_set  # noqa: E402
from bots.evaluation.split import select_part  # noqa: E402

DATA = REPO.parent / "shared" / "data"
HANDBOOK = DATA / "handbook" / "questions.jsonl"
SAMPLE_KB = ["--docs", str(REPO / "samples" / "kb")]
# name: (question file, extra `teamrag eval` arguments)
SETS: dict[str, tuple[Path, list[str]]] = {
    "handbook": (HANDBOOK, []),
    "korquad": (DATA / "KorQuAD_v1.0_dev.json", ["--limit", "300", "--seed", "1"]),
    "xquad": (DATA / "xquad.en.json", ["--limit", "300", "--seed", "1"]),
    "samples": (REPO / "samples" / "questions.jsonl", SAMPLE_KB),
    "samples-chat": (REPO / "samples" / "questions.chat.jsonl", SAMPLE_KB),
}
_LLM = ("OPENAI_API_KEY", "OPENAI_BASE_URL")


def missing(names: list[str]) -> list[str]:
    return [f"{name}: {SETS[name][0]}" for name in names if not SETS[name][0].exists()]


def run_eval(name: str, folder: Path, llm: bool) -> dict[str, Any]:
    file, extra = SETS[name]
    env = {k: v for k, v in os.environ.items() if llm or k not in _LLM}
    env |= {"TEAMRAG_DATA_DIR": str(folder / "unused"), "COLUMNS": "200"}
    command = [sys.executable, "-m", "bots", "eval", str(file), *extra, "--json"]
    command += ["--data-dir", str(folder / name)]
    print(f"{name}: {' '.join(command[2:])}", file=sys.stderr, flush=True)
    done = subprocess.run(command, env=env, cwd=REPO, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"teamrag eval failed on {name} ({done.returncode}):\n{done.stderr}")
    result: dict[str, Any] = json.loads(done.stdout)
    return result


def handbook_parts(result: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The handbook's categories for each part, from the one run of all of it."""
    rows = [Row(**r) for r in result["rows"]]
    questions = load_question_set(HANDBOOK).questions
    parts = {"all": by_category(rows)}
    for part in ("dev", "held"):
        ids = {q.id for q in select_part(questions, part)}
        parts[part] = by_category([r for r in rows if r.id in ids])
    return parts


def markdown(results: dict[str, dict[str, Any]]) -> str:
    lines = ["# Answers: every question set through `teamrag eval`", ""]
    head = "| set | mode | " + " | ".join(h for _k, h in COLUMNS)
    lines += [head + " | p50 / p95 ms |", "| --- | --- " + "| ---: " * (len(COLUMNS) + 1) + "|"]
    for name, result in results.items():
        total = result["categories"].get(TOTAL, {})
        summary = result["summary"]
        cells = [cell(total.get(k)) for k, _h in COLUMNS]
        ms = f"{summary['latency_p50_ms']:.0f} / {summary['latency_p95_ms']:.0f}"
        lines.append(f"| {name} | {summary['mode']} | " + " | ".join(cells) + f" | {ms} |")
    if "handbook" in results:
        for part, table in handbook_parts(results["handbook"]).items():
            lines += ["", f"## Team handbook, part {part}", "", markdown_table(table).rstrip()]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", action="append", choices=list(SETS), help="repeatable")
    parser.add_argument("--out", type=Path, default=REPO / "benchmarks" / "results")
    parser.add_argument("--llm", action="store_true", help="keep OPENAI_API_KEY if set")
    args = parser.parse_args()
    names = args.only or list(SETS)
    problems = missing(names)
    if problems:
        sys.exit(
            "missing question sets:\n  " + "\n  ".join(problems) + "\nThe handbook, KorQuAD "
            "and XQuAD live in ../shared/data beside the repository (see benchmarks/README.md, "
            "Data and licences); run the others with --only samples --only samples-chat."
        )
    with tempfile.TemporaryDirectory(prefix="teamrag-answers-") as tmp:
        results = {name: run_eval(name, Path(tmp), args.llm) for name in names}
    args.out.mkdir(parents=True, exist_ok=True)
    page = markdown(results)
    (args.out / "answers.md").write_text(page, encoding="utf-8")
    kept = {n: {"summary": r["summary"], "categories": r["categories"]} for n, r in results.items()}
    (args.out / "answers.json").write_text(json.dumps(kept, ensure_ascii=False, indent=2) + "\n")
    print(page)


if __name__ == "__main__":
    main()
