"""The docs name only commands that exist: every `teamrag X [Y]` in a code span or a code
block of README.md, docs/ and benchmarks/README.md is a command (and subcommand) of the CLI."""

from __future__ import annotations

import re
from pathlib import Path

import typer

from bots.cli import app
from tests.conftest import REPO

_COMMAND = re.compile(r"(?:^|[\s`$(|])teamrag ([a-z][a-z-]*)(?: ([a-z][a-z-]*))?")
_FENCE = re.compile(r"\s*```(\w*)")


def _code(path: Path) -> list[tuple[int, str]]:
    """(line number, code) for each code span and each line of a code block, except
    ```text blocks: those show what the bots print, not commands."""
    found: list[tuple[int, str]] = []
    block: str | None = None
    for number, line in enumerate(path.read_text("utf-8").splitlines(), 1):
        fence = _FENCE.match(line)
        if fence:
            block = None if block is not None else fence.group(1)
        elif block is not None:
            if block != "text":
                found.append((number, line))
        else:
            found.extend((number, span) for span in re.findall(r"`([^`]+)`", line))
    return found


def test_every_documented_teamrag_command_exists() -> None:
    commands = dict(typer.main.get_command(app).commands)  # type: ignore[attr-defined]
    docs = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
    unknown: list[str] = []
    seen = 0
    for path in [*docs, REPO / "benchmarks" / "README.md"]:
        for number, code in _code(path):
            for match in _COMMAND.finditer(code):
                seen += 1
                name, sub = match.groups()
                command = commands.get(name)
                group = getattr(command, "commands", None)
                if command is None or (group is not None and sub and sub not in group):
                    unknown.append(f"{path.relative_to(REPO)}:{number}: {match.group(0).strip()}")
    assert seen > 100  # the docs do show the commands: the scan reads them
    assert not unknown, "documented commands that do not exist:\n" + "\n".join(unknown)
