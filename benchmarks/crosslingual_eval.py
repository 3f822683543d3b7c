"""`teamrag eval` on questions asked in the other language than their documents.

The 300 questions of benchmarks/data/crosslingual.json (150 Korean questions about
English XQuAD paragraphs, 150 English questions about Korean KorQuAD paragraphs) go
through the real agent, as `teamrag eval` runs any question set, against one mixed index
of every paragraph of both files: the case where no word of a question is in the
passage that answers it. Prints eval's summary, and the share of answers that contain
the gold answer and of questions answered as smalltalk in each direction.

    .venv/bin/python benchmarks/crosslingual_eval.py [--data-dir DIR] [--json-out FILE]
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from benchmarks.mixed_index import (  # noqa: E402
    command_line,
    cross_questions,
    squad_sets,
    write_paragraphs,
)


def _teamrag(args: list[str], data_dir: Path) -> str:
    env = os.environ | {"TEAMRAG_DATA_DIR": str(data_dir), "COLUMNS": "200"}
    command = [sys.executable, "-m", "bots", *args]
    return subprocess.run(
        command, env=env, cwd=REPO, check=True, capture_output=True, text=True
    ).stdout


def measure(folder: Path) -> dict[str, object]:
    docs = write_paragraphs(folder, squad_sets())
    index = folder / "index"
    _teamrag(["ingest", str(docs)], index)  # unchanged documents are skipped on a re-run
    questions = cross_questions()
    lines = folder / "crosslingual.jsonl"
    with lines.open("w", encoding="utf-8") as out:
        for q in questions:
            row = {"question": q.text, "answer": [q.answer], "source": q.paragraph}
            out.write(json.dumps(row, ensure_ascii=False) + "\n")
    report = json.loads(_teamrag(["eval", str(lines), "--json"], index))
    korean_asked = {q.text for q in questions if q.file == "xquad.en.json"}
    by_direction: dict[str, dict[str, float]] = {}
    for label, korean in (
        ("ko question, en paragraph", True),
        ("en question, ko paragraph", False),
    ):
        rows = [r for r in report["rows"] if (r["question"] in korean_asked) == korean]
        by_direction[label] = {
            "questions": len(rows),
            "answer_contains": round(sum(bool(r["contains"]) for r in rows) / len(rows), 3),
            "smalltalk": sum(r["route"] == "smalltalk" for r in rows),
        }
    return {"summary": report["summary"], "by_direction": by_direction}


def main() -> None:
    command_line(__doc__.splitlines()[0], measure)


if __name__ == "__main__":
    main()
