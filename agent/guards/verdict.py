"""The guards' result types, kept apart so every module in the package can share them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

GuardReason = Literal["empty", "too_long", "injection", "harmful", "system_prompt"]
OutputQuality = Literal["pass", "empty", "apology_only"]

__all__ = ["GuardReason", "InputVerdict", "OutputQuality"]


@dataclass(frozen=True)
class InputVerdict:
    blocked: bool
    reason: GuardReason | None
    # A polite refusal in the user's language that says why; "" when not blocked.
    message: str
    # Which pattern fired, for logs: refused users ask "why?" and false positives get tuned.
    rule: str = ""
