"""What real Slack refuses in a message, checked by the fake Slack so tests prove the limits.

Blocks: at most 50; a section's text at most 3,000 characters (a context element's too);
markdown blocks at most 12,000 characters together; about 13,200 characters of text in
all blocks (the limit Slack enforces in practice); feedback buttons with a value and a
label of at most 75 characters. Stream chunks: markdown at most 12,000 characters, task
updates with an id, a title and a known status.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

MAX_BLOCKS = 50
SECTION_TEXT = 3_000
MARKDOWN_TOTAL = 12_000
BLOCK_TEXT_TOTAL = 13_200
_TASK_STATUSES = {"pending", "in_progress", "complete", "error"}


def texts(value: Any) -> Iterator[str]:
    if isinstance(value, dict):
        for key, item in value.items():
            if key == "text" and isinstance(item, str):
                yield item
            else:
                yield from texts(item)
    elif isinstance(value, list):
        for item in value:
            yield from texts(item)


def block_problems(blocks: Any) -> list[str]:
    """Why Slack would reject these blocks (empty when it would take them)."""
    if not isinstance(blocks, list):
        return ["blocks must be a list"]
    problems = []
    if len(blocks) > MAX_BLOCKS:
        problems.append(f"{len(blocks)} blocks (at most {MAX_BLOCKS})")
    markdown = 0
    for i, block in enumerate(blocks):
        kind = block.get("type")
        if kind == "markdown":
            if not block.get("text"):
                problems.append(f"block {i}: empty markdown")
            markdown += len(block.get("text", ""))
        elif kind == "section":
            if len(block.get("text", {}).get("text", "")) > SECTION_TEXT:
                problems.append(f"block {i}: section text over {SECTION_TEXT}")
        elif kind == "context":
            elements = block.get("elements", [])
            if not 1 <= len(elements) <= 10:
                problems.append(f"block {i}: context needs 1-10 elements")
            if any(len(e.get("text", "")) > SECTION_TEXT for e in elements):
                problems.append(f"block {i}: context text over {SECTION_TEXT}")
        elif kind == "context_actions":
            for element in block.get("elements", []):
                for side in ("positive_button", "negative_button"):
                    button = element.get(side) or {}
                    if not button.get("value") or len(button.get("text", {}).get("text", "")) > 75:
                        problems.append(f"block {i}: bad {side}")
        elif kind not in ("divider", "header", "actions", "rich_text", "image"):
            problems.append(f"block {i}: unknown type {kind!r}")
    if markdown > MARKDOWN_TOTAL:
        problems.append(f"markdown blocks total {markdown} characters (at most {MARKDOWN_TOTAL})")
    total = sum(len(t) for t in texts(blocks))
    if total > BLOCK_TEXT_TOTAL:
        problems.append(f"{total} characters of block text (at most {BLOCK_TEXT_TOTAL})")
    return problems


def chunk_problems(chunks: Any) -> list[str]:
    if chunks is None:
        return []
    if not isinstance(chunks, list):
        return ["chunks must be a list"]
    problems = []
    for chunk in chunks:
        kind = chunk.get("type")
        if kind == "markdown_text":
            if len(chunk.get("text", "")) > MARKDOWN_TOTAL:
                problems.append("markdown_text chunk over 12,000 characters")
        elif kind == "task_update":
            if not chunk.get("id") or not chunk.get("title"):
                problems.append("task_update needs id and title")
            if chunk.get("status") not in _TASK_STATUSES:
                problems.append(f"task_update status {chunk.get('status')!r}")
        elif kind not in ("plan_update", "blocks"):
            problems.append(f"unknown chunk {kind!r}")
    return problems
