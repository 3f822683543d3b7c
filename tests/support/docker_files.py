"""compose.yaml and the Dockerfile as the deployment tests read them: the parsed compose
file, and the Dockerfile's instructions (all of them, and its final stage's)."""

from __future__ import annotations

from typing import Any

import pytest

from tests.conftest import REPO

yaml = pytest.importorskip("yaml", reason="PyYAML (a langchain-core dependency) reads compose.yaml")

COMPOSE = REPO / "compose.yaml"
DOCKERFILE = REPO / "Dockerfile"


def compose() -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load(COMPOSE.read_text(encoding="utf-8"))
    return loaded


def instructions() -> list[tuple[str, str]]:
    """(KEYWORD, arguments) per instruction, continuation lines joined, comments dropped."""
    found: list[tuple[str, str]] = []
    pending = ""
    for line in DOCKERFILE.read_text(encoding="utf-8").splitlines():
        text = line.strip()
        if not text or text.startswith("#"):
            continue
        if text.endswith("\\"):
            pending += text[:-1] + " "
            continue
        keyword, _, rest = (pending + text).partition(" ")
        found.append((keyword.upper(), rest.strip()))
        pending = ""
    return found


def final_stage() -> list[tuple[str, str]]:
    steps = instructions()
    last_from = max(i for i, (keyword, _) in enumerate(steps) if keyword == "FROM")
    return steps[last_from:]
