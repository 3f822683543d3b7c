"""How the fake OpenAI server files a chat request: the task its script is keyed by
(:func:`task_of`), the call it logs (:class:`Call`), and how many LLM round trips a list
of calls took (:func:`round_trips`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Call:
    """One chat request as the server saw it; times are ``time.monotonic()`` seconds."""

    task: str
    model: str
    start: float
    end: float
    stream: bool
    status: int = 200
    body: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)


def task_of(body: dict[str, Any]) -> str:
    """The script key for a chat request body.

    Structured output is keyed by the json_schema name, which for a pydantic class is the
    class name (the openai client sends ``{"name": cls.__name__, "strict": true, ...}``).
    A request offering tools is "tools" unless it is already carrying tool results back,
    in which case the model is expected to answer in text.
    """
    response_format = body.get("response_format")
    if isinstance(response_format, dict) and response_format.get("type") == "json_schema":
        name = (response_format.get("json_schema") or {}).get("name")
        if name:
            return str(name)
    messages = body.get("messages") or []
    last_role = messages[-1].get("role") if messages else None
    if body.get("tools") and last_role != "tool":
        return "tools"
    return "text"


def round_trips(calls: Sequence[Call]) -> int:
    """Number of waves of calls, where calls whose time intervals overlap share a wave."""
    waves = 0
    wave_end = float("-inf")
    for call in sorted(calls, key=lambda c: c.start):
        # Strictly later: a call that starts the instant another ends still waited for it.
        if call.start > wave_end:
            waves += 1
            wave_end = call.end
        else:
            wave_end = max(wave_end, call.end)
    return waves
