"""Markdown, plain text and HTML: text-like files, decoded with encoding detection."""

from __future__ import annotations

import html as html_lib
import re
from pathlib import Path

from agent.retrieval.loaders.base import (
    LoadError,
    decode_text,
    markdown_sections,
    title_from_markdown,
)
from agent.retrieval.types import LoadedDocument, Section


def load_markdown(path: Path, data: bytes) -> LoadedDocument:
    text = decode_text(data, path)
    return LoadedDocument(
        title=title_from_markdown(text, path.stem), sections=markdown_sections(text)
    )


def load_text(path: Path, data: bytes) -> LoadedDocument:
    text = decode_text(data, path)
    return LoadedDocument(title=path.stem, sections=[Section(text=text.strip())])


_CANONICAL = re.compile(
    r"<link[^>]+rel=[\"']canonical[\"'][^>]*href=[\"']([^\"']+)[\"']", re.IGNORECASE
)
_HTML_TITLE = re.compile(r"<title[^>]*>(.*?)</title>", re.IGNORECASE | re.DOTALL)
# <meta charset="euc-kr"> or <meta http-equiv="Content-Type" content="text/html; charset=...">
_META_CHARSET = re.compile(rb"<meta[^>]+charset=[\"']?([A-Za-z0-9_.:-]+)", re.IGNORECASE)


def load_html(path: Path, data: bytes) -> LoadedDocument:
    import trafilatura

    declared = _META_CHARSET.search(data[:4096])
    raw = decode_text(data, path, declared.group(1).decode("ascii") if declared else None)
    # Markdown output keeps the headings, so HTML gets heading paths like Markdown.
    main = trafilatura.extract(
        raw,
        output_format="markdown",
        include_comments=False,
        include_tables=True,
        favor_recall=True,
    )
    if not main or not main.strip():
        raise LoadError("no main text found in the HTML page")
    # Hard-wrapped source lines come out as a newline plus indentation: rejoin them.
    main = re.sub(r"(?<![ \t])[ \t]*\n[ \t]+(?=\S)", " ", main)  # from a run's start only: linear
    title_match = _HTML_TITLE.search(raw)
    title = html_lib.unescape(title_match.group(1)).strip() if title_match else ""
    link_match = _CANONICAL.search(raw)
    return LoadedDocument(
        title=title or title_from_markdown(main, path.stem),
        sections=markdown_sections(main),
        link=web_link(html_lib.unescape(link_match.group(1))) if link_match else None,
    )


def web_link(link: str) -> str | None:
    """``link`` when it is an http(s) address, else None: a page's canonical link becomes
    the source's link in every answer and on the web page, so a ``javascript:`` or
    ``data:`` one would run in the reader's browser when clicked."""
    link = link.strip()
    return link if re.match(r"https?://[^\s]+$", link, re.IGNORECASE) else None
