"""`teamrag slack` and `teamrag discord` bind their ports before anything slow opens: a
taken port is one line naming the address and the setting that moves it, at once."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest


def _bot(tmp_path: Path, command: str, **settings: str) -> subprocess.CompletedProcess[str]:
    names = ("CHROMA_URL", "OPENAI_API_KEY", "OPENAI_BASE_URL", "DATABASE_URL", "REDIS_URL")
    env = {k: v for k, v in os.environ.items() if k not in names and not k.startswith("SLACK_")}
    env |= {"TEAMRAG_DATA_DIR": str(tmp_path / "data"), "COLUMNS": "200", **settings}
    return subprocess.run(
        [sys.executable, "-m", "bots", command],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


SLACK_HTTP = {"SLACK_BOT_TOKEN": "xoxb-test", "SLACK_SIGNING_SECRET": "secret"}


@pytest.fixture
def taken_port() -> Iterator[int]:
    with socket.create_server(("0.0.0.0", 0)) as taken:
        yield taken.getsockname()[1]


def test_slack_events_port_taken(tmp_path: Path, taken_port: int) -> None:
    done = _bot(tmp_path, "slack", TEAMRAG_SLACK_PORT=str(taken_port), TEAMRAG_OPS_PORT="0",
                **SLACK_HTTP)  # fmt: skip
    assert done.returncode == 1, done.stderr
    assert f"0.0.0.0:{taken_port} is in use" in done.stderr
    assert "--port or TEAMRAG_SLACK_PORT" in done.stderr
    assert "Traceback" not in done.stderr


def test_ops_port_taken_for_either_bot(tmp_path: Path, taken_port: int) -> None:
    slack = _bot(tmp_path, "slack", TEAMRAG_OPS_PORT=str(taken_port), **SLACK_HTTP)
    discord = _bot(tmp_path, "discord", TEAMRAG_OPS_PORT=str(taken_port), DISCORD_TOKEN="t")
    for done in (slack, discord):
        assert done.returncode == 1, done.stderr
        assert f"0.0.0.0:{taken_port} is in use" in done.stderr
        assert "TEAMRAG_OPS_PORT" in done.stderr
        assert "Traceback" not in done.stderr
