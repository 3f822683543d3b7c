"""What the Slack and Discord load benchmarks share: how a wave's figures are summarised."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from bots.bench import percentile


def spread(values: Sequence[float]) -> dict[str, float]:
    return {
        "p50": round(percentile(list(values), 0.5), 1),
        "p95": round(percentile(list(values), 0.95), 1),
        "max": round(max(values), 1),
        "n": len(values),
    }


def load_summary(
    figures: list[dict[str, Any]], timings: Sequence[str], calls_by: str, counted: str
) -> dict[str, Any]:
    """p50/p95/max of each timing (ms) over the conversations that have it, how many were
    answered exactly once, and the platform calls per answer by ``calls_by`` (a Counter
    field of each figure: API method or REST route)."""
    calls: Counter[str] = Counter()
    for f in figures:
        calls.update(f[calls_by])
    return {
        counted: len(figures),
        "answered_exactly_once": sum(f["answers"] == 1 for f in figures),
        **{key: spread([f[key] for f in figures if f[key] is not None]) for key in timings},
        "calls_per_answer": round(sum(f["calls"] for f in figures) / len(figures), 2),
        f"calls_per_answer_by_{calls_by}": {
            name: round(n / len(figures), 2) for name, n in sorted(calls.items())
        },
    }
