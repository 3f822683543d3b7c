"""Right and wrong per category, the way a team reads a benchmark like its own chat.

Each judged question (``Row.right`` is not None) lands in exactly one outcome:

- ``right``: see :func:`bots.evaluation.scoring.is_right`;
- ``bypassed``: answered as smalltalk, by the tools or memory, or blocked, without a search;
- ``confident_wrong``: searched, opened as found, and not right (a none-question answered
  as if the documents said, or the wrong fact said with confidence);
- ``hidden``: opened as "not found" over a right answer: the reply holds and cites the fact,
  but a reader stops at its first line;
- ``not_found``: searched and opened as "not found" although the documents answer it, and
  the reply does not hold the fact either.

``found_right`` is the share of searched answers opened as found that are right: how far
a user can trust an answer that says it found something. ``lead_right`` is, of the right
answers that quote, the share whose first quoted sentence holds the answer.
"""

from __future__ import annotations

from typing import Any

from bots.evaluation.scoring import BYPASS_ROUTES, Row

OUTCOMES = ("right", "confident_wrong", "hidden", "not_found", "bypassed")
TOTAL = "all"


def outcome(row: Row) -> str:
    if row.right:
        return "right"
    if row.route in BYPASS_ROUTES:
        return "bypassed"
    if row.covered:
        return "confident_wrong"
    return "hidden" if row.hidden else "not_found"


def _ratio(part: int, whole: int) -> float | None:
    return round(part / whole, 2) if whole else None


def tally(rows: list[Row]) -> dict[str, Any]:
    counts = dict.fromkeys(OUTCOMES, 0)
    for row in rows:
        counts[outcome(row)] += 1
    found = [r for r in rows if r.covered and r.route not in BYPASS_ROUTES]
    quoting = [r for r in rows if r.right and r.lead_on_point is not None]
    return {
        "questions": len(rows),
        **counts,
        "found": len(found),
        "found_right": _ratio(sum(1 for r in found if r.right), len(found)),
        "lead_right": _ratio(sum(1 for r in quoting if r.lead_on_point), len(quoting)),
    }


def by_category(rows: list[Row]) -> dict[str, dict[str, Any]]:
    """The tally of each category in the order first met, then of all of them; empty when
    no question can be judged right or wrong."""
    judged = [r for r in rows if r.right is not None]
    if not judged:
        return {}
    names = list(dict.fromkeys(r.category or "-" for r in judged))
    table = {name: tally([r for r in judged if (r.category or "-") == name]) for name in names}
    table[TOTAL] = tally(judged)
    return table


# The table's columns after the category's name: (key in a tally, heading).
COLUMNS = (
    ("questions", "questions"),
    ("right", "right"),
    ("confident_wrong", "confident wrong"),
    ("hidden", '"not found" over a right answer'),
    ("not_found", "not found (has answer)"),
    ("bypassed", "no search"),
    ("found_right", "found → right"),
    ("lead_right", "first quote holds it"),
)


def cell(value: object) -> str:
    return "–" if value is None else str(value)


def markdown_table(table: dict[str, dict[str, Any]]) -> str:
    lines = ["| category | " + " | ".join(h for _k, h in COLUMNS) + " |"]
    lines.append("| --- " + "| ---: " * len(COLUMNS) + "|")
    for name, t in table.items():
        label = f"**{name}**" if name == TOTAL else name
        lines.append(f"| {label} | " + " | ".join(cell(t[k]) for k, _h in COLUMNS) + " |")
    return "\n".join(lines) + "\n"
