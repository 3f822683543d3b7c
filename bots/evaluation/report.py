"""The evaluation as a page a person reads: Markdown or self-contained HTML."""

from __future__ import annotations

import html
from pathlib import Path
from typing import Any

from bots.evaluation.categories import COLUMNS, cell, markdown_table
from bots.evaluation.scoring import Row

_LABELS = {
    "questions": "questions",
    "answer_contains": "answer contains the expected text",
    "cited_expected_source": "cited the expected source",
    "not_covered": "answered 'not covered'",
    "bypassed": "answered as smalltalk/tools (no search)",
    "latency_p50_ms": "latency p50 (ms)",
    "latency_p95_ms": "latency p95 (ms)",
    "llm_calls": "LLM calls",
    "faithfulness": "faithfulness (LLM-judged)",
    "off_point_per_answer": "quoted sentences without the expected text, per answer",
    "lead_off_point": "answers whose first quoted sentence lacks the expected text",
    "answer_chars_p50": "answer length p50 (characters)",
}


def _label(key: str) -> str:
    if key.startswith("hit@"):
        return f"retrieval {key}"
    return _LABELS.get(key, key)


def _mark(flag: bool | None) -> str:
    return "–" if flag is None else ("✓" if flag else "✗")


def _short(text: str, n: int = 160) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 1] + "…"


def _summary_pairs(summary: dict[str, Any]) -> list[tuple[str, str]]:
    pairs = []
    for key, value in summary.items():
        if key == "routes":
            value = ", ".join(f"{r} {n}" for r, n in value.items())
        pairs.append((_label(key), "–" if value is None else str(value)))
    return pairs


Categories = dict[str, dict[str, Any]]


def markdown(
    title: str, summary: dict[str, Any], rows: list[Row], categories: Categories | None = None
) -> str:
    lines = [f"# {title}", "", "| measure | value |", "| --- | --- |"]
    lines += [f"| {k} | {v} |" for k, v in _summary_pairs(summary)]
    if categories:
        lines += ["", markdown_table(categories).rstrip("\n")]
    lines += [
        "",
        "| # | question | route | contains | cited | rank | ms | answer |",
        "| ---: | --- | --- | :---: | :---: | ---: | ---: | --- |",
    ]
    for n, r in enumerate(rows, start=1):
        cells = [
            str(n),
            _short(r.question, 80),
            r.route,
            _mark(r.contains),
            _mark(r.cited),
            str(r.retrieved_rank or "–"),
            f"{r.latency_ms:.0f}",
            _short(r.answer),
        ]
        lines.append("| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
    return "\n".join(lines) + "\n"


_STYLE = """
body{font:14px/1.45 system-ui,sans-serif;margin:2rem;color:#222}
table{border-collapse:collapse;margin:1rem 0}td,th{border:1px solid #ddd;padding:4px 8px;
vertical-align:top}th{background:#f4f4f4;text-align:left}.ok{color:#1a7f37}.bad{color:#c62828;
font-weight:600}tr.miss{background:#fff4f4}td.answer{max-width:48rem;white-space:pre-wrap}
"""


def _cell(flag: bool | None) -> str:
    css = "" if flag is None else ("ok" if flag else "bad")
    return f'<td class="{css}">{_mark(flag)}</td>'


def _category_table(categories: Categories) -> str:
    e = html.escape
    head = "".join(f"<th>{e(h)}</th>" for h in ["category", *(h for _k, h in COLUMNS)])
    body = "".join(
        f"<tr><th>{e(name)}</th>" + "".join(f"<td>{cell(t[k])}</td>" for k, _h in COLUMNS) + "</tr>"
        for name, t in categories.items()
    )
    return f"<table><tr>{head}</tr>{body}</table>"


def html_page(
    title: str, summary: dict[str, Any], rows: list[Row], categories: Categories | None = None
) -> str:
    e = html.escape
    head = "".join(f"<tr><th>{e(k)}</th><td>{e(v)}</td></tr>" for k, v in _summary_pairs(summary))
    by_category = _category_table(categories) if categories else ""
    body = []
    for n, r in enumerate(rows, start=1):
        miss = r.contains is False or r.cited is False or r.route in ("smalltalk", "tools")
        body.append(
            f'<tr class="{"miss" if miss else ""}"><td>{n}</td><td>{e(r.question)}'
            f"<br><small>expected: {e(r.expected)}</small></td><td>{e(r.route)}</td>"
            f"{_cell(r.contains)}{_cell(r.cited)}<td>{r.retrieved_rank or '–'}</td>"
            f'<td>{r.latency_ms:.0f}</td><td class="answer">{e(r.answer)}'
            f"<br><small>{e('; '.join(r.sources))}</small></td></tr>"
        )
    return (
        f'<!doctype html><html lang="en"><meta charset="utf-8"><title>{e(title)}</title>'
        f"<style>{_STYLE}</style><h1>{e(title)}</h1><table>{head}</table>{by_category}"
        "<table><tr><th>#</th><th>question</th><th>route</th><th>contains</th><th>cited</th>"
        f"<th>rank</th><th>ms</th><th>answer</th></tr>{''.join(body)}</table></html>\n"
    )


def write_report(
    path: Path,
    title: str,
    summary: dict[str, Any],
    rows: list[Row],
    categories: Categories | None = None,
) -> None:
    """HTML for ``.html``/``.htm``, Markdown for anything else."""
    if path.suffix.lower() in (".html", ".htm"):
        path.write_text(html_page(title, summary, rows, categories), encoding="utf-8")
    else:
        path.write_text(markdown(title, summary, rows, categories), encoding="utf-8")
