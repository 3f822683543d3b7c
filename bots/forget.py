"""``teamrag forget PATH... | --scope S``: take documents out of the knowledge base.

The documents leave by the same path as ``teamrag sources remove`` and ``ingest --prune``
(:meth:`agent.sources.sync.SourceSync.remove_documents`): the catalog, the vectors, the
keyword index and the answer caches' entries that cite them. What would go is listed and
confirmed first (``--yes`` skips the question).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import click
import typer
from rich.console import Console

from adapters.paths import shown_path
from bots.common import err, fail, settings_or_exit
from bots.sources_cli import sync_engine

if TYPE_CHECKING:  # imported when the command runs (bots/cli.py)
    from agent.retrieval.catalog import DocumentRecord

out = Console()


def matching(
    documents: Sequence[DocumentRecord], paths: Sequence[str], scope: str | None
) -> list[DocumentRecord]:
    """The documents a file or a folder of ``paths`` names (a folder: everything under
    it; a web address: itself and the pages under it), within ``scope`` when given."""
    keys: list[str] = []
    for path in paths:
        keys.append(path.rstrip("/"))
        if "://" not in path:  # the catalog keeps files by their absolute path
            keys.append(str(Path(path).expanduser().resolve()))
    chosen = []
    for doc in documents:
        named = not paths or any(
            doc.source == key or doc.source.startswith(key.rstrip(os.sep) + "/") for key in keys
        )
        if named and (scope is None or doc.scope == scope):
            chosen.append(doc)
    return chosen


def forget(
    paths: Annotated[
        list[str] | None,
        typer.Argument(help="Files or folders (everything under them), or web addresses."),
    ] = None,
    scope: Annotated[
        str | None, typer.Option(help="Every document of this scope (with PATHs: of those).")
    ] = None,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Remove without asking.")] = False,
) -> None:
    """Remove documents (passages, keyword entries, cached answers), after asking.

    Lists what it would remove and asks first; --yes skips the question."""
    from agent.retrieval.ingest import validate_scope

    if not paths and scope is None:
        raise fail("name what to forget: files or folders, or --scope SCOPE", 2)
    try:
        scope = validate_scope(scope) if scope is not None else None
    except ValueError as exc:
        raise fail(str(exc), 2) from None
    settings = settings_or_exit()
    with sync_engine(settings) as sync:
        chosen = matching(sync.kb.catalog.documents(), paths or [], scope)
        if not chosen:
            named = ", ".join(paths or []) + (f" in scope {scope!r}" if scope else "")
            raise fail(
                f"no document matches {named or repr(scope)}; `teamrag status` shows the "
                "documents and where they came from",
                1,
            )
        for doc in chosen:
            out.print(f"  {shown_path(doc.source)}  [{doc.scope}]  {doc.n_chunks} passages",
                      highlight=False, markup=False)  # fmt: skip
        if not yes:
            try:
                agreed = typer.confirm(f"Remove {len(chosen)} documents?", default=False)
            except click.exceptions.Abort:  # no answer (end of input): as a no
                agreed = False
            if not agreed:
                err.print("Nothing removed.")
                raise typer.Exit(1)
        report = sync.remove_documents([doc.source for doc in chosen])
    out.print(f"Removed {len(report.results)} documents.", highlight=False)
