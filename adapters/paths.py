"""How a document's path is shown to people, on every door that shows it."""

from __future__ import annotations

import os
from pathlib import Path


def shown_path(source: str) -> str:
    """A source path relative to the working folder when it is inside it, else as stored.

    The catalog keeps absolute paths (ingest resolves them, so a document is one document
    whatever folder it was named from). Shown whole, they tell a web or API user where the
    server keeps its files; relative, they read as the team named them ("samples/kb/faq.docx").
    A web address is not a path and stays as it is.
    """
    if "://" in source:
        return source
    try:
        return os.path.relpath(source) if Path(source).is_relative_to(Path.cwd()) else source
    except ValueError:  # another drive (Windows)
        return source
