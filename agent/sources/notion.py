"""The ``notion`` kind: the pages of a Notion database, or a page and its sub-pages.

A database is queried for its pages and their ``last_edited_time``; a page's blocks
are read only when that moved. A page tree has to read each page's blocks to find its
sub-pages, so there every page is read; unchanged pages still cost no embedding (the
content hash matches). Blocks become Markdown (headings, lists, to-dos, quotes, code).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from agent.sources.base import Item, KindContext, SourceError, SourceSpec, item
from agent.sources.listed import Entry, ListedSource

NOTION_VERSION = "2022-06-28"
_PREFIX = {
    "heading_1": "# ", "heading_2": "## ", "heading_3": "### ", "bulleted_list_item": "- ",
    "numbered_list_item": "1. ", "quote": "> ", "callout": "> ", "toggle": "- ",
}  # fmt: skip


def rich_text(parts: list[dict[str, Any]]) -> str:
    return "".join(str(p.get("plain_text", "")) for p in parts)


def block_markdown(block: dict[str, Any]) -> str | None:
    kind = block.get("type", "")
    body = block.get(kind, {})
    if not isinstance(body, dict) or "rich_text" not in body:
        return None
    text = rich_text(body["rich_text"])
    if kind == "to_do":
        return f"- [{'x' if body.get('checked') else ' '}] {text}"
    if kind == "code":
        return f"```{body.get('language', '')}\n{text}\n```"
    return _PREFIX.get(kind, "") + text


def page_title(page: dict[str, Any]) -> str:
    for value in page.get("properties", {}).values():
        if value.get("type") == "title":
            return rich_text(value.get("title", [])) or "Untitled"
    return "Untitled"


class NotionSource(ListedSource):
    service = "Notion"

    def __init__(self, spec: SourceSpec, ctx: KindContext) -> None:
        token = ctx.secret(spec, "token_env", "Notion integration token")
        super().__init__(
            spec, ctx, {"Authorization": f"Bearer {token}", "Notion-Version": NOTION_VERSION}
        )
        self.base = str(spec.option("api_url", "https://api.notion.com")).rstrip("/")
        self.root = spec.target.replace("-", "")
        self._blocks: dict[str, list[dict[str, Any]]] = {}

    def entries(self) -> Iterator[Entry]:
        try:
            self.api("GET", f"{self.base}/v1/databases/{self.root}")
        except SourceError as exc:
            if "HTTP 404" not in str(exc) and "HTTP 400" not in str(exc):
                raise
            yield from self._tree(self.root)
            return
        cursor: str | None = None
        while True:
            body: dict[str, Any] = {
                "page_size": 100,
                **({"start_cursor": cursor} if cursor else {}),
            }
            found = self.api("POST", f"{self.base}/v1/databases/{self.root}/query", json=body)
            for page in found.get("results", []):
                yield self._entry(
                    page["id"], page.get("last_edited_time", ""), page_title(page), page.get("url")
                )
            cursor = found.get("next_cursor")
            if not found.get("has_more") or not cursor:
                return

    def _tree(self, page_id: str) -> Iterator[Entry]:
        page = self.api("GET", f"{self.base}/v1/pages/{page_id}")
        yield self._entry(
            page_id, page.get("last_edited_time", ""), page_title(page), page.get("url")
        )
        for block in self._children(page_id):
            if block.get("type") == "child_page":
                yield from self._tree(str(block["id"]).replace("-", ""))

    def _entry(self, page_id: str, edited: str, title: str, url: str | None) -> Entry:
        clean = page_id.replace("-", "")
        return Entry(clean, edited, url or f"https://www.notion.so/{clean}", title)

    def _children(self, block_id: str) -> list[dict[str, Any]]:
        if block_id not in self._blocks:
            blocks: list[dict[str, Any]] = []
            cursor: str | None = None
            while True:
                params: dict[str, Any] = {
                    "page_size": 100,
                    **({"start_cursor": cursor} if cursor else {}),
                }
                found = self.api("GET", f"{self.base}/v1/blocks/{block_id}/children", params=params)
                blocks += found.get("results", [])
                cursor = found.get("next_cursor")
                if not found.get("has_more") or not cursor:
                    break
            self._blocks[block_id] = blocks
        return self._blocks[block_id]

    def fetch(self, entry: Entry) -> Item:
        lines = [f"# {entry.title}"]
        lines += [text for b in self._children(entry.id) if (text := block_markdown(b))]
        return item(
            entry.key, "page.md", "\n\n".join(lines).encode(), link=entry.key, title=entry.title
        )
