"""Terminal rendering with rich: cited answers, search results and ingest summaries."""

from __future__ import annotations

import json
import time

from rich.console import Console
from rich.markdown import Markdown
from rich.table import Table

from adapters.chat.feedback import FeedbackEntry
from adapters.paths import shown_path
from agent.events import Citation, Final
from agent.retrieval.ingest import IngestReport, Status
from agent.retrieval.types import SearchHit


def citation_line(c: Citation) -> str:
    where = f", {c.locator}" if c.locator else ""
    link = f" <{c.link}>" if c.link and c.link != c.source else ""
    return f"[{c.number}] {c.title} — {shown_path(c.source)}{where}{link}"


def render_sources(console: Console, final: Final) -> None:
    if not final.sources:
        return
    console.print()
    console.print("[bold]출처[/bold]" if final.language == "ko" else "[bold]Sources[/bold]")
    for c in final.sources:
        console.print(citation_line(c), markup=False, highlight=False)


def render_final(console: Console, final: Final, *, show_answer: bool = True) -> None:
    """The answer (unless it was already streamed), its sources, and a dim status line."""
    if show_answer:
        console.print(Markdown(final.answer))
    render_sources(console, final)
    console.print(status_line(final), style="dim", highlight=False)


def status_line(final: Final) -> str:
    parts: list[str] = [final.route]
    if final.cached:
        parts.append("cached")
    if final.degraded:
        parts.append("degraded")
    parts.append(f"{final.llm_calls} LLM calls")
    if final.usage.total_tokens:
        parts.append(f"{final.usage.total_tokens} tokens")
    parts.append(f"{final.timings.get('total', 0) / 1000:.1f} s")
    # The turn's notes (router doubts, fallbacks taken) are the operator's: the runner logs
    # them and --json carries them; under the answer they read as noise.
    return " · ".join(parts)


def final_json(final: Final) -> str:
    return json.dumps(final.to_dict(), ensure_ascii=False)


def feedback_json(entry: FeedbackEntry) -> str:
    record = entry.answer
    return json.dumps(
        {
            "rating": entry.rating,
            "voter": entry.voter,
            "voted_at": entry.voted_at,
            "platform": record.platform,
            "channel": record.channel,
            "thread_id": record.thread_id,
            "asked_by": record.user,
            "question": record.question,
            "answer": record.answer,
            "route": record.route,
            "sources": record.sources,
        },
        ensure_ascii=False,
    )


def render_feedback(console: Console, entries: list[FeedbackEntry]) -> None:
    if not entries:
        console.print("No feedback of that kind yet. / 해당하는 피드백이 아직 없습니다.")
        return
    for entry in entries:
        record = entry.answer
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(entry.voted_at))
        mark = "[red]👎[/red]" if entry.rating == "down" else "[green]👍[/green]"
        console.print(
            f"{mark} [bold]{when}[/bold] · {record.platform} {record.channel} · "
            f"voter {entry.voter} · asked by {record.user} · {record.route}",
            highlight=False,
        )
        console.print(f"[bold]Q:[/bold] {record.question}", highlight=False, markup=False)
        console.print(f"A: {record.answer}", highlight=False, markup=False)
        for source in entry.source_list():
            console.print("   " + citation_line(source), highlight=False, markup=False)
        console.print()


def hit_dict(hit: SearchHit) -> dict[str, object]:
    c = hit.chunk
    return {
        "chunk_id": c.chunk_id,
        "title": c.title,
        "source": c.source,
        "page": c.page,
        "heading": c.heading,
        "link": c.link,
        "scope": c.scope,
        "score": round(hit.score, 4),
        "keyword_score": round(hit.keyword_score, 4),
        "dense_score": round(hit.dense_score, 4),
        "text": c.text,
    }


def render_hits(console: Console, hits: list[SearchHit]) -> None:
    if not hits:
        console.print("No matching passages. / 일치하는 문단이 없습니다.")
        return
    for i, hit in enumerate(hits, 1):
        c = hit.chunk
        where = f", {c.locator()}" if c.locator() else ""
        console.print(
            f"[bold][{i}] {c.title}[/bold] — {shown_path(c.source)}{where}  "
            f"[dim]score {hit.score:.3f} (keyword {hit.keyword_score:.2f}, "
            f"dense {hit.dense_score:.2f})[/dim]",
            highlight=False,
        )
        console.print(c.text.strip(), markup=False, highlight=False)
        console.print()


_STATUS_STYLE = {
    Status.ADDED: "green",
    Status.UPDATED: "cyan",
    Status.UNCHANGED: "dim",
    Status.FAILED: "red",
    Status.REMOVED: "yellow",
    Status.IGNORED: "dim",
}


def render_ingest_report(console: Console, report: IngestReport, *, verbose: bool) -> None:
    problems = [r for r in report.results if r.status in (Status.FAILED, Status.IGNORED)]
    if problems:
        table = Table(title="Not ingested", show_lines=False)
        table.add_column("file")
        table.add_column("status")
        table.add_column("reason")
        for r in problems:
            if r.status is Status.IGNORED and not verbose:
                continue
            style = _STATUS_STYLE[r.status]
            table.add_row(shown_path(r.path), f"[{style}]{r.status.value}[/{style}]", r.reason)
        if table.row_count:
            console.print(table)
    summary = Table(title="Ingest summary")
    for name in (
        "files",
        "chunks",
        "added",
        "updated",
        "unchanged",
        "removed",
        "failed",
        "ignored",
    ):
        summary.add_column(name, justify="right")
    files = sum(1 for r in report.results if r.status is not Status.IGNORED)
    summary.add_row(
        str(files),
        str(report.chunks),
        *(
            str(report.count(s))
            for s in (
                Status.ADDED,
                Status.UPDATED,
                Status.UNCHANGED,
                Status.REMOVED,
                Status.FAILED,
                Status.IGNORED,
            )
        ),
    )
    console.print(summary)
