"""The mixed Korean + English knowledge base of the cross-language benchmarks.

Every paragraph of KorQuAD 1.0 dev and XQuAD-en (``../shared/data``) becomes one document,
named as ``teamrag bench retrieval`` and ``teamrag eval`` name SQuAD paragraphs, and the
cross-language questions (``benchmarks/data/crosslingual.json``) point at them.
"""

from __future__ import annotations

import json
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
