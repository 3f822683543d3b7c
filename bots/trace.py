"""``teamrag trace ID``: a finished turn's way through the graph, as a tree.

Each node run leaves one step on the state's ``path`` (agent/nodes/common.py ``timed``);
the runner writes the state to the thread's checkpoint at the end of the turn, so the
last turn of any thread can be read back here, from any process that shares the store.
Searches (``retrieve``, ``prefetch``) run in parallel under the node that sent them,
so they are drawn as its children.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agent.memory.backends import open_checkpointer

_CHILDREN = ("retrieve", "prefetch")


def thread_of(ident: str) -> str:
    """A full thread id as given, or a ``teamrag ask --thread`` id made into one."""
    return ident if ident.count(":") >= 3 else f"cli:local:terminal:{ident}"


async def load_path(database_url: str | None, memory_file: Path, thread_id: str) -> list[Any]:
    async with open_checkpointer(database_url, memory_file) as checkpointer:
        config = {"configurable": {"thread_id": thread_id, "checkpoint_ns": ""}}
        saved = await checkpointer.aget_tuple(config)  # type: ignore[arg-type]
    if saved is None:
        return []
    return list(saved.checkpoint.get("channel_values", {}).get("path") or [])


def _label(step: dict[str, Any]) -> str:
    details = " ".join(f"{k}={v}" for k, v in step.items() if k not in ("node", "ms"))
    text = f"{step.get('node', '?')}  {float(step.get('ms', 0)):.1f} ms"
    return f"{text}  {details}" if details else text


def render(thread_id: str, path: list[dict[str, Any]]) -> str:
    """The path as a tree: nodes in order, their parallel searches beneath them."""
    groups: list[tuple[dict[str, Any], list[dict[str, Any]]]] = []
    for step in path:
        if step.get("node") in _CHILDREN and groups:
            groups[-1][1].append(step)
        else:
            groups.append((step, []))
    lines = [f"turn {thread_id}"]
    for i, (step, children) in enumerate(groups):
        last = i == len(groups) - 1
        lines.append(("└─ " if last else "├─ ") + _label(step))
        for j, child in enumerate(children):
            stem = "   " if last else "│  "
            lines.append(stem + ("└─ " if j == len(children) - 1 else "├─ ") + _label(child))
    return "\n".join(lines)
