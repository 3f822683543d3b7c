"""The holdout split: a part of a question set the team keeps aside while it tunes.

Tuning on every question of a benchmark fits the code to those questions; the held-out
part says whether a change helps questions nobody looked at. Each question has a stable
key, its ``id`` (its thread's id for a follow-up, so both turns stay together; its text
when it has no id), and the key's SHA-256 orders the questions of each category: the
first third of each category (rounded) is ``held``, the rest ``dev``. Nothing else enters
(no seed, no file order, no machine), so the split is the same on every run, and every
category, follow-up threads and none-questions included, is in both parts. (A plain
hash-modulo-3 put all 6 threads of the team handbook in dev.) Adding a question moves at
most one other question of its category across the line.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from typing import Literal

from bots.evaluation.sets import Question, asking_units

Part = Literal["dev", "held", "all"]
PARTS: tuple[Part, ...] = ("dev", "held", "all")


def split_key(question: Question) -> str:
    if question.thread:
        return f"thread:{question.thread}"
    return question.id or question.text


def _rank(key: str) -> bytes:
    return hashlib.sha256(key.encode("utf-8")).digest()


def held_keys(questions: list[Question]) -> set[str]:
    """The split keys of the held-out part: per category, the third whose hashes sort first."""
    by_category: dict[str, set[str]] = defaultdict(set)
    for unit in asking_units(questions):
        by_category[unit[0].category].add(split_key(unit[0]))
    held: set[str] = set()
    for keys in by_category.values():
        held.update(sorted(keys, key=_rank)[: round(len(keys) / 3)])
    return held


def select_part(questions: list[Question], part: Part) -> list[Question]:
    """The questions of ``part``, in their order (``all``: every one)."""
    if part == "all":
        return list(questions)
    held = held_keys(questions)
    return [q for q in questions if (split_key(q) in held) == (part == "held")]
