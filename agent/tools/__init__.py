"""Small, exact tools: a calculator and the current date and time.

The LLM reaches them through tool calling (:data:`TOOLS`); without an LLM the
agent spots a calculation or a date question itself (:func:`find_expression`,
:func:`asks_for_datetime`) and calls the plain functions.

Arithmetic goes through :mod:`ast` with an allow-list of nodes, never
``eval``: chat text is untrusted, and an LLM's tool arguments are too.

The package is split by job: :mod:`.calculator` (safe evaluation),
:mod:`.expressions` (finding a calculation in a message), :mod:`.clock` (date and
time), :mod:`.langchain_tools` (the wrappers the LLM calls) and :mod:`.errors`.
Everything callers use is re-exported here, so ``from agent.tools import ...``
works as it did when this was one module.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from agent.tools.calculator import MAX_DIGITS, MAX_EXPONENT, MAX_EXPRESSION_CHARS, calculate
from agent.tools.clock import asks_for_datetime, current_datetime
from agent.tools.errors import ToolError
from agent.tools.expressions import find_expression

if TYPE_CHECKING:
    from agent.tools.langchain_tools import TOOLS

__all__ = [
    "MAX_DIGITS",
    "MAX_EXPONENT",
    "MAX_EXPRESSION_CHARS",
    "TOOLS",
    "ToolError",
    "asks_for_datetime",
    "calculate",
    "current_datetime",
    "find_expression",
]


def __getattr__(name: str) -> Any:
    """``TOOLS`` on first use: the wrappers load LangChain, which the settings (and with
    them every ``teamrag`` command) must not wait for just to read the clock's time zone."""
    if name == "TOOLS":
        from agent.tools.langchain_tools import TOOLS

        return TOOLS
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
