"""What every command shares: the error console and clean failures for settings and stores.

A user should see one line that names the cause and the fix, never a traceback,
for the failures we can foresee: a bad setting, an unreachable server, a data
folder that cannot be written.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from typing import cast, get_args

import typer
from rich.console import Console

from agent.retrieval.catalog import CatalogError
from agent.retrieval.embeddings import EmbeddingError
from agent.retrieval.knowledge_base import KnowledgeBase, SearchMode
from agent.retrieval.vectors import VectorStoreError
from bots.settings import Settings, SettingsError, load_settings
from bots.wiring import build_knowledge_base

err = Console(stderr=True)


def fail(message: str, code: int = 1) -> typer.Exit:
    # One line even in a log file or CI, where the console would wrap at 80 columns.
    err.print(f"[red]error:[/red] {message}", highlight=False, soft_wrap=True)
    return typer.Exit(code)


def search_mode_or_exit(mode: str) -> SearchMode:
    if mode not in get_args(SearchMode):
        raise fail(f"--mode must be one of {', '.join(get_args(SearchMode))}, not {mode!r}", 2)
    return cast(SearchMode, mode)


def settings_or_exit() -> Settings:
    try:
        return load_settings()
    except SettingsError as exc:
        raise fail(str(exc), 2) from None


@contextmanager
def knowledge_base(settings: Settings) -> Iterator[KnowledgeBase]:
    """Open the configured knowledge base; turn known failures into one clear line."""
    try:
        kb = build_knowledge_base(settings)
    except (VectorStoreError, EmbeddingError, CatalogError) as exc:
        raise fail(str(exc)) from None
    except (OSError, sqlite3.Error) as exc:
        raise fail(
            f"cannot open the data folder {settings.data_dir}: {exc}; "
            "set TEAMRAG_DATA_DIR to a folder you can write to"
        ) from None
    try:
        yield kb
    except (VectorStoreError, EmbeddingError) as exc:
        raise fail(str(exc)) from None
    finally:
        kb.close()
