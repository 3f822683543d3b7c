"""What the Slack and Discord load benchmarks share: how a wave's figures are summarised."""

from __future__ import annotations

import argparse
import json
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
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


def load_arguments(description: str, json_out: Path) -> argparse.ArgumentParser:
    """The options both load benchmarks take (a benchmark may add its own)."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--conversations", type=int, default=50, help="at once, per wave")
    parser.add_argument("--waves", type=int, default=3)
    parser.add_argument("--latency", type=float, default=0.3, help="fake LLM seconds per call")
    parser.add_argument(
        "--interval", type=float, default=1.0, help="least seconds between two edits (default)"
    )
    parser.add_argument("--json-out", type=Path, default=json_out)
    return parser


def report(result: dict[str, Any], json_out: Path) -> None:
    """Print the result and keep it in ``json_out`` (benchmarks/results)."""
    print(json.dumps(result, indent=1, ensure_ascii=False))
    json_out.parent.mkdir(parents=True, exist_ok=True)
    json_out.write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n", "utf-8")
