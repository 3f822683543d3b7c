"""How the text rules read a message before routing without an LLM.

Each rule scans the whole message (a few hundred ms together on a 100,000-character one),
so the router runs :func:`read_locally` in a thread, off the event loop.
"""

from __future__ import annotations

from typing import NamedTuple

from agent.memory.profile import extract_facts_locally
from agent.routing.bypass import without_pleasantries
from agent.routing.intent import is_context_dependent
from agent.tools import asks_for_datetime, find_expression


def asks_for_tool(question: str) -> bool:
    """A computation or the date asked for outright: "3*(4+5)는?", "오늘 며칠이야?"."""
    return bool(find_expression(question)) or asks_for_datetime(question)


class Reading(NamedTuple):
    facts: list[dict[str, str]]  # what the message states about the user
    needs_history: bool
    tool: bool  # it asks for a computation or the date
    standalone: str  # the question without the pleasantries around it


def read_locally(question: str, history: bool) -> Reading:
    facts = [{"kind": f.kind, "text": f.text} for f in extract_facts_locally(question)]
    return Reading(
        facts,
        is_context_dependent(question, has_history=history),
        asks_for_tool(question),
        without_pleasantries(question),
    )
