"""Cheap checks around the LLM: refuse bad input before paying for a call, flag useless answers.

Everything here is a pure function over strings: no LLM, no I/O. The input guard
is a first line of defence, not the only one; retrieval only ever answers from
the team's documents and the LLM has its own safety training. So every pattern
prefers precision: a team asking work questions ("how do I ignore a file in
git?", "폭탄 세일 일정") must never be refused, and a rare clever attack that
slips through still meets the other layers.

Matching runs on a normalised copy of the text (NFKC, casefolded, invisible
characters removed, look-alike Cyrillic and Greek letters folded to Latin,
whitespace collapsed), plus a copy in which letter-by-letter spelling such as
"i g n o r e" is joined back up.
"""

from agent.guards.input import check_input
from agent.guards.output import check_output
from agent.guards.verdict import GuardReason, InputVerdict, OutputQuality

__all__ = [
    "GuardReason",
    "InputVerdict",
    "OutputQuality",
    "check_input",
    "check_output",
]
