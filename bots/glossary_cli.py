"""`teamrag glossary`: the Korean-English term pairs in use and where each came from."""

from __future__ import annotations

import json
from typing import Annotated

import typer
from rich.console import Console

from bots.common import knowledge_base, settings_or_exit

out = Console()


def glossary(
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the pairs as one JSON object.")
    ] = False,
) -> None:
    """List the Korean-English term pairs in use, and where each came from.

    Pairs are mined from the documents at ingest; TEAMRAG_GLOSSARY adds or overrides."""
    from rich.table import Table

    from agent.glossary.team_file import GlossaryFileError

    settings = settings_or_exit()
    with knowledge_base(settings) as kb:
        try:
            entries = kb.glossaries.get(strict=True).entries
        except GlossaryFileError as exc:
            out.print(f"[red]{exc}[/red]")
            raise typer.Exit(1) from exc
    rows = [
        {"ko": e.pair.ko, "en": e.pair.en, "origin": e.pair.origin,
         "confidence": e.pair.confidence, "source": e.source}
        for e in entries
    ]  # fmt: skip
    if as_json:
        print(json.dumps({"pairs": rows}, ensure_ascii=False))
        return
    table = Table(title=f"{len(rows)} term pairs")
    for name in ("한국어", "English", "origin", "confidence", "source"):
        table.add_column(name)
    for e in entries:
        table.add_row(e.pair.ko, e.pair.en, e.pair.origin, f"{e.pair.confidence:.1f}", e.source)
    out.print(table)
