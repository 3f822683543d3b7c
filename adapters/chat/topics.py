"""What a question is about, to group the questions the documents did not answer so a team
sees which documents to write.

Two rules, both plain so an admin can predict them:

- A question with passages shown (the closest ones, when not covered) is about the
  document most of those passages came from; a tie goes to the closest (the first cited).
- A question with no passages is grouped by a word it shares with other such questions
  (the word most of them share); a question that shares no word stands alone.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from typing import Literal, TypeVar

from adapters.paths import shown_path
from agent.events import Citation
from agent.retrieval.tokenizer import words

T = TypeVar("T")
TopicKind = Literal["document", "keyword", "other"]


def source_title(source: Citation) -> str:
    return source.title or shown_path(source.source)


def topic_of(titles: Iterable[str]) -> str:
    """The most cited title among ``titles`` (in the order shown); "" when there are none."""
    shown = [t for t in titles if t]
    if not shown:
        return ""
    counts = Counter(shown)
    return max(counts, key=lambda t: (counts[t], -shown.index(t)))


def group(
    items: Sequence[T], topic: Callable[[T], str], text: Callable[[T], str]
) -> list[tuple[str, TopicKind, list[T]]]:
    """``items`` in groups of (topic, kind, items), the largest group first, each keeping
    the items' order; the items with no shared topic come last under ("", "other")."""
    groups: dict[tuple[str, TopicKind], list[T]] = {}
    loose = [item for item in items if not topic(item)]
    for item in items:
        if topic(item):
            groups.setdefault((topic(item), "document"), []).append(item)
    terms = {id(item): set(words(text(item))) for item in loose}
    shared = Counter(term for item in loose for term in terms[id(item)])
    for item in loose:
        # The word most of these questions share (then the longer, then the first in
        # order) names the group; a word only this question has names nothing.
        best = max(
            (t for t in terms[id(item)] if shared[t] > 1),
            key=lambda t: (shared[t], len(t), t),
            default="",
        )
        key: tuple[str, TopicKind] = (best, "keyword") if best else ("", "other")
        groups.setdefault(key, []).append(item)
    ordered = sorted(groups.items(), key=lambda kv: (kv[0][1] == "other", -len(kv[1])))
    return [(name, kind, members) for (name, kind), members in ordered]
