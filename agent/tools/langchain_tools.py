"""The tools as the LLM sees them: LangChain wrappers around the plain functions.

Their docstrings are the descriptions the LLM reads when deciding to call them, so
they are written for the model. A :class:`ToolError` becomes the tool's answer, so
the model can read what went wrong and correct its call.
"""

from __future__ import annotations

from langchain_core.tools import BaseTool, ToolException, tool

from agent.tools.calculator import calculate
from agent.tools.clock import current_datetime
from agent.tools.errors import ToolError

__all__ = ["TOOLS"]


@tool("calculator", parse_docstring=True)
def _calculator_tool(expression: str) -> str:
    """Evaluate arithmetic exactly. Use it for every calculation instead of doing maths yourself.

    Handles + - * / // % ** and parentheses, decimals, thousands separators (1,200),
    percentages ("15% of 240", "240의 15%"), sqrt, log, ln, exp, sin, cos, tan (radians),
    round, abs, floor, ceil, pi and e. Returns the result as text, or an error message.

    Args:
        expression: The arithmetic to evaluate, e.g. "1200 * 3", "(4 + 5) / 2" or "15% of 240".
    """
    try:
        return calculate(expression)
    except ToolError as exc:
        raise ToolException(f"calculator: {exc}") from exc


@tool("current_datetime", parse_docstring=True)
def _current_datetime_tool(timezone: str = "Asia/Seoul") -> str:
    """Get today's date, the current time and the weekday. Use it whenever a question
    depends on the current date or time ("오늘 며칠이야?", "what time is it?", "is the
    deadline past?"); your own knowledge of the date is out of date.

    Args:
        timezone: An IANA time zone such as "Asia/Seoul" (the default), "UTC" or
            "America/New_York", or an offset such as "UTC+9".
    """
    try:
        return current_datetime(timezone)
    except ToolError as exc:
        raise ToolException(f"current_datetime: {exc}") from exc


# The LLM sees a ToolError's message as the tool's answer and can correct its call.
_calculator_tool.handle_tool_error = True
_current_datetime_tool.handle_tool_error = True

TOOLS: list[BaseTool] = [_calculator_tool, _current_datetime_tool]
