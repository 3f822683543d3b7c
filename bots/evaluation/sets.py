"""Question sets: a team's JSONL file, or a SQuAD-format JSON file.

JSONL, one object a line: ``question`` (required), ``answer`` (a string or a list of
acceptable strings, optional) and ``source`` (a file name, path, title or URL the answer
should cite, optional). SQuAD: every question with its answer spans, its source being the
paragraph, which ``teamrag eval`` ingests as one document named after its position.
"""

from __future__ import annotations

import json
import random
import re
from dataclasses import dataclass, field
from pathlib import Path


class QuestionSetError(ValueError):
    """The file cannot be read as a question set; the message says where and why."""


@dataclass(frozen=True)
class Question:
    text: str
    answers: list[str] = field(default_factory=list)
    source: str = ""  # what a citation of the right document contains (file stem, path, URL)


@dataclass(frozen=True)
class QuestionSet:
    questions: list[Question]
    # SQuAD paragraphs to ingest first, by document name; empty for a JSONL set.
    documents: dict[str, str] = field(default_factory=dict)


def paragraph_name(file: Path, index: int) -> str:
    """The document name of a SQuAD paragraph (also used by ``teamrag bench retrieval``)."""
    stem = re.sub(r"[^A-Za-z0-9]+", "-", file.stem).strip("-").lower()
    return f"{stem}-p{index:05d}"


def load_question_set(path: Path) -> QuestionSet:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise QuestionSetError(f"cannot read {path}: {exc}") from None
    stripped = text.lstrip()
    if stripped.startswith("{") and '"data"' in stripped[:2000]:
        try:
            return _squad(path, json.loads(text))
        except json.JSONDecodeError:
            pass  # one JSON object per line that happens to mention "data"
    return _jsonl(path, text)


def _squad(path: Path, data: object) -> QuestionSet:
    if not isinstance(data, dict) or not isinstance(data.get("data"), list):
        raise QuestionSetError(f"{path}: a SQuAD file has a top-level 'data' list")
    documents: dict[str, str] = {}
    questions: list[Question] = []
    for article in data["data"]:
        for para in article.get("paragraphs", []):
            name = paragraph_name(path, len(documents))
            documents[name] = para["context"]
            for qa in para.get("qas", []):
                answers = [a["text"] for a in qa.get("answers", []) if a.get("text")]
                questions.append(Question(qa["question"], answers, name))
    if not questions:
        raise QuestionSetError(f"{path}: the SQuAD file has no questions")
    return QuestionSet(questions, documents)


def _jsonl(path: Path, text: str) -> QuestionSet:
    questions: list[Question] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        try:
            item = json.loads(line)
        except json.JSONDecodeError as exc:
            raise QuestionSetError(
                f"{path}:{number}: not JSON ({exc.msg}); each line is one object such as "
                '{"question": "...", "answer": "...", "source": "..."}'
            ) from None
        if not isinstance(item, dict) or not str(item.get("question", "")).strip():
            raise QuestionSetError(f"{path}:{number}: the object has no 'question'")
        answer = item.get("answer") or []
        answers = [answer] if isinstance(answer, str) else [str(a) for a in answer]
        questions.append(
            Question(str(item["question"]).strip(), answers, str(item.get("source") or ""))
        )
    if not questions:
        raise QuestionSetError(f"{path}: no questions (expected one JSON object per line)")
    return QuestionSet(questions)


def sample(questions: list[Question], limit: int | None, seed: int) -> list[Question]:
    """``limit`` questions drawn at random with a fixed seed (the same ones every run)."""
    if limit is None or limit >= len(questions):
        return list(questions)
    return random.Random(seed).sample(questions, limit)
