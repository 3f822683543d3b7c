"""What a remembered fact about a user is: its kind and its text.

Shared by :mod:`agent.memory.profile` (which stores and renders facts) and
:mod:`agent.memory.extraction` (which finds them in a message); it sits apart so
that neither of those has to import the other.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Literal, get_args

__all__ = ["FACT_KINDS", "Fact", "FactKind"]

FactKind = Literal["team", "role", "product", "preference", "other"]
# In the order a profile lists them: the single slots first, the free-form ones after.
FACT_KINDS: Final[tuple[FactKind, ...]] = get_args(FactKind)


@dataclass(frozen=True)
class Fact:
    """One short statement about a user, e.g. "결제팀 소속" or "works on the payments team"."""

    kind: FactKind
    text: str

    def __post_init__(self) -> None:
        if self.kind not in FACT_KINDS:
            raise ValueError(f"unknown fact kind {self.kind!r}; expected one of {FACT_KINDS}")
        if not self.text.strip():
            raise ValueError("a fact needs some text")
