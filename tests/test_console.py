"""The terminal's status line under an answer: what ran, not the operator's notes."""

from __future__ import annotations

from adapters.console import status_line
from agent.events import Final


def test_the_status_line_keeps_the_operators_notes_out_of_the_answer() -> None:
    final = Final(
        answer="x",
        notes=["router unsure (0.40); searched the documents"],
        timings={"total": 400.0},
    )
    line = status_line(final)
    assert "router unsure" not in line and "note" not in line
    assert line == "knowledge · 0 LLM calls · 0.4 s"
