"""`teamrag serve` as a team starts it: its own process on a port, answering a signed-in
account with citations, stopping on SIGTERM; and a taken port said with the fix."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

import httpx

from tests.conftest import SAMPLES
from tests.support.servers import free_port


def _teamrag(env: dict[str, str], *args: str, stdin: str | None = None) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "bots", *args],
        env=env,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, (args, done.stderr)
    return done.stdout


def _env(tmp_path: Path) -> dict[str, str]:
    names = ("CHROMA_URL", "OPENAI_API_KEY", "OPENAI_BASE_URL", "DATABASE_URL", "REDIS_URL")
    base = {k: v for k, v in os.environ.items() if k not in names}
    return base | {"TEAMRAG_DATA_DIR": str(tmp_path / "data"), "COLUMNS": "200"}


def test_serve_answers_on_its_port_and_stops_on_sigterm(tmp_path: Path) -> None:
    """Also: /readyz and /metrics only on TEAMRAG_OPS_PORT, and the data folder private,
    including what an older version left open (tightened at start, said once)."""
    env = _env(tmp_path)
    _teamrag(env, "ingest", str(SAMPLES / "glossary.txt"))
    _teamrag(env, "users", "add", "minji")
    token = _teamrag(env, "users", "token", "minji").strip()
    data = tmp_path / "data"
    opened = [data, *data.rglob("*")]  # as an older version left them: 0755 and 0644
    for path in opened:
        path.chmod(0o755 if path.is_dir() else 0o644)
    port, ops_port = free_port(), free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "bots", "serve", "--port", str(port)],
        env=env | {"TEAMRAG_OPS_PORT": str(ops_port)},
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stderr is not None
        seen: list[str] = []
        # The port is bound before this line is logged: a request now waits in its backlog.
        while not any("teamrag serve on" in line for line in seen):
            line = server.stderr.readline()
            assert line, "serve exited before listening:\n" + "".join(seen)
            seen.append(line)
        answer = httpx.post(
            f"http://127.0.0.1:{port}/api/chat",
            json={"query": "What is an IC?"},
            headers={"Authorization": f"Bearer {token}"},
            timeout=120,
        )
        assert answer.status_code == 200, answer.text
        body = answer.json()
        assert "coordinates an incident" in body["response"], body
        assert body["sources"][0]["source"].endswith("glossary.txt")
        for name in ("/readyz", "/metrics"):
            assert httpx.get(f"http://127.0.0.1:{port}{name}").status_code == 404
            assert httpx.get(f"http://127.0.0.1:{ops_port}{name}", timeout=30).status_code == 200
        assert httpx.get(f"http://127.0.0.1:{port}/healthz").text == "ok"
        server.send_signal(signal.SIGTERM)
        assert server.wait(timeout=60) == 0
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()
    log = "".join(seen) + server.stderr.read()
    assert log.count("took group and other access off") == 1, log
    assert f"off {len(opened)} files and folders" in log
    stored = {p.name for p in data.rglob("*")}
    private = {"http.sqlite", "memory.sqlite", "catalog.sqlite3", "usage.sqlite", "jwt_secret"}
    private |= {"feedback.sqlite", "answer_cache.sqlite"}
    assert private <= stored, stored
    wide = {str(p): oct(p.stat().st_mode & 0o777) for p in [data, *data.rglob("*")]}
    assert {p: m for p, m in wide.items() if int(m, 8) & 0o077} == {}


def test_a_taken_port_is_said_with_the_fix(tmp_path: Path) -> None:
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        done = subprocess.run(
            [sys.executable, "-m", "bots", "serve", "--port", str(port)],
            env=_env(tmp_path),
            capture_output=True,
            text=True,
            timeout=120,
        )
    assert done.returncode == 1
    assert f"127.0.0.1:{port} is in use" in done.stderr
    assert "--port or TEAMRAG_HTTP_PORT" in done.stderr
