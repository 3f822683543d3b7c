"""Question sets: a team's JSONL file, or a SQuAD-format JSON file.

JSONL, one object a line: ``question`` (required), ``answer`` (a string or a list of
acceptable strings, optional; an explicit empty list ``[]`` means the documents do not
answer it, and the right reply says so) and ``source`` (a file name, path, title or URL the
answer should cite, optional). Optional too, as in the team handbook set: ``id``,
``category`` (reported per category) and ``thread`` with ``turn`` (a follow-up: the turns of
one thread are asked in order in one conversation). A ``docs/`` folder beside a JSONL file
is the set's own knowledge base. SQuAD: every question with its answer spans, its source
being the paragraph, which ``teamrag eval`` ingests as one document named after its position.
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
    # The set says the documents do not answer this ("answer": []): right is saying so.
    unanswerable: bool = False
    id: str = ""
    category: str = ""
    thread: str = ""  # follow-ups: one id for every turn of a thread, asked in ``turn`` order
    turn: int = 0


@dataclass(frozen=True)
class QuestionSet:
    questions: list[Question]
    # SQuAD paragraphs to ingest first, by document name; empty for a JSONL set.
    documents: dict[str, str] = field(default_factory=dict)
    # A JSONL set's own documents: the ``docs/`` folder beside it, when there is one.
    docs: Path | None = None


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
        questions.append(_question(path, number, item))
    if not questions:
        raise QuestionSetError(f"{path}: no questions (expected one JSON object per line)")
    docs = path.parent / "docs"
    return QuestionSet(in_asking_order(questions), docs=docs if docs.is_dir() else None)


def _question(path: Path, number: int, item: dict[str, object]) -> Question:
    answer = item.get("answer") or []
    if not isinstance(answer, (str, list)):
        raise QuestionSetError(f"{path}:{number}: 'answer' is a string or a list of strings")
    answers = [answer] if isinstance(answer, str) else [str(a) for a in answer]
    thread = str(item.get("thread") or "")
    turn = item.get("turn") or 0
    if not isinstance(turn, int):
        raise QuestionSetError(f"{path}:{number}: 'turn' is a whole number (1, 2, ...)")
    return Question(
        str(item["question"]).strip(),
        answers,
        str(item.get("source") or ""),
        unanswerable=item.get("answer") == [],
        id=str(item.get("id") or ""),
        category=str(item.get("category") or ""),
        thread=thread,
        turn=turn if thread else 0,
    )


def asking_units(questions: list[Question]) -> list[list[Question]]:
    """What is drawn, split or asked as one: a question, or every turn of a thread (in
    ``turn`` order, where its first turn stands in the file)."""
    units: dict[str, list[Question]] = {}
    for n, q in enumerate(questions):
        units.setdefault(f"thread:{q.thread}" if q.thread else f"#{n}", []).append(q)
    return [sorted(unit, key=lambda q: q.turn) for unit in units.values()]


def in_asking_order(questions: list[Question]) -> list[Question]:
    """Turn 2 of a thread is asked right after turn 1, in the same conversation."""
    return [q for unit in asking_units(questions) for q in unit]


def sample(questions: list[Question], limit: int | None, seed: int) -> list[Question]:
    """``limit`` questions drawn at random with a fixed seed (the same ones every run); a
    thread counts as one and comes whole, its turns in order."""
    units = asking_units(questions)
    if limit is None or limit >= len(units):
        return list(questions)
    return [q for unit in random.Random(seed).sample(units, limit) for q in unit]
