"""The mixed Korean + English knowledge base of the cross-language benchmarks.

Every paragraph of KorQuAD 1.0 dev and XQuAD-en (``../shared/data``) becomes one document,
named as ``teamrag bench retrieval`` and ``teamrag eval`` name SQuAD paragraphs, and the
cross-language questions (``benchmarks/data/crosslingual.json``) point at them.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from bots.evaluation.sets import QuestionSet, load_question_set, paragraph_name

REPO = Path(__file__).resolve().parent.parent
DATA = REPO.parent / "shared" / "data"
FILES = ("KorQuAD_v1.0_dev.json", "xquad.en.json")


@dataclass(frozen=True)
class CrossQuestion:
    text: str
    answer: str
    paragraph: str  # the gold paragraph's document name
    file: str  # the SQuAD file it comes from


def missing_data() -> str | None:
    """Why the benchmark cannot run here, or None."""
    if all((DATA / name).exists() for name in FILES):
        return None
    return f"needs {', '.join(FILES)} in {DATA} (see benchmarks/README.md, Data and licences)"


def squad_sets() -> dict[str, QuestionSet]:
    return {name: load_question_set(DATA / name) for name in FILES}


def write_paragraphs(folder: Path, sets: dict[str, QuestionSet]) -> Path:
    """Each paragraph as a text file under ``folder/docs`` (kept between runs)."""
    docs = folder / "docs"
    docs.mkdir(parents=True, exist_ok=True)
    for questions in sets.values():
        for name, text in questions.documents.items():
            target = docs / f"{name}.txt"
            if not target.exists():
                target.write_text(text, encoding="utf-8")
    return docs


def cross_questions() -> list[CrossQuestion]:
    """The 300 questions asked in the other language than their paragraph."""
    items = json.loads((REPO / "benchmarks/data/crosslingual.json").read_text())["questions"]
    return [
        CrossQuestion(
            item["question"],
            item["answer"],
            paragraph_name(DATA / item["file"], int(item["paragraph"])),
            item["file"],
        )
        for item in items
    ]


def command_line(description: str, measure: Callable[[Path], dict[str, object]]) -> None:
    """What both cross-language benchmarks take and print: ``measure`` builds or reuses
    the index in ``--data-dir`` (a temporary folder without it) and returns the result,
    printed as JSON and kept in ``--json-out``."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--data-dir", type=Path, help="keep the index here (re-runs reuse it)")
    parser.add_argument("--json-out", type=Path)
    args = parser.parse_args()
    problem = missing_data()
    if problem:
        sys.exit(problem)
    with tempfile.TemporaryDirectory(prefix="teamrag-mixed-") as tmp:
        result = measure(args.data_dir or Path(tmp))
    print(json.dumps(result, ensure_ascii=False, indent=2))
    if args.json_out:
        args.json_out.parent.mkdir(parents=True, exist_ok=True)
        args.json_out.write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n")
