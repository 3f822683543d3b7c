"""An answer's Markdown as safe HTML for the web chat.

The model writes Markdown (bold, lists, quotes, tables, code, links). markdown-it-py
parses it with raw HTML off (a ``<script>`` in an answer or a document stays text), its
link check allows http(s) only, and nh3 (the Rust ammonia sanitizer) then keeps a fixed
set of tags and attributes, so whatever the parser lets through, the page gets no
script, no event handler, no style and no ``javascript:`` address. The page inserts the
result as HTML under a CSP without inline script, a second wall.
"""

from __future__ import annotations

from functools import lru_cache

import nh3
from markdown_it import MarkdownIt

TAGS = {
    "p", "br", "hr", "strong", "em", "del", "s", "code", "pre", "blockquote",
    "ul", "ol", "li", "a", "h1", "h2", "h3", "h4", "h5", "h6",
    "table", "thead", "tbody", "tr", "th", "td",
}  # fmt: skip
ATTRIBUTES = {"a": {"href", "title"}, "ol": {"start"}, "th": {"align"}, "td": {"align"}}
SCHEMES = {"http", "https"}


def _web_only(url: str) -> bool:
    """markdown-it's link check: an address that is not http(s) stays text."""
    return url.strip().lower().startswith(("http://", "https://"))


@lru_cache(maxsize=1)
def _parser() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False, "linkify": False, "breaks": True})
    md.enable(["table", "strikethrough"])
    md.validateLink = _web_only  # type: ignore[method-assign]
    return md


def answer_html(text: str) -> str:
    """``text`` (Markdown) as sanitized HTML; links open in a new tab without the opener."""
    html = _parser().render(text or "")
    return nh3.clean(
        html,
        tags=TAGS,
        attributes=ATTRIBUTES,
        url_schemes=SCHEMES,
        link_rel="noopener noreferrer nofollow",
        set_tag_attribute_values={"a": {"target": "_blank"}},
    )
