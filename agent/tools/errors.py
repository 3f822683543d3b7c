"""The one exception every tool raises, in its own module so each tool can import it.

The calculator and the clock both raise it, and the LangChain wrappers turn it into
the text the LLM sees; keeping it apart means neither tool imports the other.
"""

from __future__ import annotations

__all__ = ["ToolError"]


class ToolError(Exception):
    """A tool could not do what was asked; the message says why, in plain words."""
