"""The Dockerfile builds a multi-stage, non-root image that carries no tests, and the
health checks of the image and of compose.yaml work.

CI has no Docker daemon, so the image is never built here. What can be proven without one is
proven by running it: the image's build-time checks, and the health checks of the image and
of compose.yaml against real servers (a stand-in for a bot's ops port; a real Chroma server
for Chroma's probe).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import REPO
from tests.support.docker_files import compose, final_stage, instructions
from tests.support.servers import chroma_server, free_port

# --- Dockerfile -------------------------------------------------------------------------


def test_dockerfile_is_multi_stage_and_non_root() -> None:
    steps = instructions()
    assert sum(keyword == "FROM" for keyword, _ in steps) >= 2
    final = final_stage()
    assert any(k == "COPY" and a.startswith("--from=build ") for k, a in final)
    users = [args for keyword, args in final if keyword == "USER"]
    assert users and users[-1].split(":")[0] not in ("root", "0"), users
    assert ("ENTRYPOINT", '["teamrag"]') in final
    assert ("EXPOSE", "3000 8080 9100") in final
    env = " ".join(args for keyword, args in final if keyword == "ENV")
    assert "TEAMRAG_DATA_DIR=/data" in env and "TEAMRAG_OPS_PORT=9100" in env


def test_dockerfile_copies_no_tests() -> None:
    ignore = [
        line.strip()
        for line in (REPO / ".dockerignore").read_text(encoding="utf-8").splitlines()
        if line.strip() and not line.startswith("#")
    ]
    allowed = {line[1:].rstrip("/") for line in ignore if line.startswith("!")}
    # An allow-list: everything is left out of the build context but what is named.
    assert ignore[0] == "*" and not any(a.startswith(("tests", ".env")) for a in allowed)
    for keyword, args in instructions():
        if keyword != "COPY" or args.startswith("--from="):
            continue
        *sources, _target = args.split()
        for source in sources:
            assert source in allowed, f"COPY {source}: not in .dockerignore's allow-list"
            assert (REPO / source).exists(), source


def healthcheck_command(test: list[str]) -> list[str]:
    assert test[0] == "CMD", test
    return [sys.executable if arg == "python" else arg for arg in test[1:]]


def image_healthcheck() -> list[str]:
    checks = [args for keyword, args in final_stage() if keyword == "HEALTHCHECK"]
    assert len(checks) == 1, checks
    return healthcheck_command(["CMD", *json.loads(checks[0].split(" CMD ", 1)[1])])


@contextmanager
def http_server(status: int) -> Iterator[int]:
    """A server answering ``status`` on every path; yields its port."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(status)
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"ok")

        def log_message(self, format: str, *args: Any) -> None:
            """Quiet."""

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield int(server.server_address[1])
    finally:
        server.shutdown()
        server.server_close()


def run_check(command: list[str], port: int | str) -> int:
    env = os.environ | {"TEAMRAG_OPS_PORT": str(port)}
    return subprocess.run(command, env=env, capture_output=True, timeout=30).returncode


@pytest.mark.parametrize("where", ["Dockerfile", "compose.yaml"])
def test_bot_health_check_follows_healthz(where: str) -> None:
    if where == "Dockerfile":
        command = image_healthcheck()
    else:
        command = healthcheck_command(compose()["services"]["slack"]["healthcheck"]["test"])
    with http_server(200) as port:
        assert run_check(command, port) == 0
    with http_server(503) as port:
        assert run_check(command, port) != 0
    assert run_check(command, free_port()) != 0  # nothing listening


def test_image_health_check_passes_when_the_ops_port_is_off() -> None:
    """`docker run teamrag ask ...` serves no ops port: nothing to be unhealthy about."""
    assert run_check(image_healthcheck(), 0) == 0


def test_chroma_health_check_asks_a_real_chroma_server(tmp_path: Path) -> None:
    test = compose()["services"]["chroma"]["healthcheck"]["test"]
    script = test[-1].replace("$$", "$")  # compose's escape for a literal $
    assert test[:3] == ["CMD", "bash", "-c"] and "/dev/tcp/127.0.0.1/8000" in script

    def probe(port: int) -> int:
        command = ["bash", "-c", script.replace("/127.0.0.1/8000", f"/127.0.0.1/{port}")]
        return subprocess.run(command, capture_output=True, timeout=30).returncode

    with chroma_server(tmp_path / "chroma") as url:
        assert probe(int(url.rsplit(":", 1)[1])) == 0
    with http_server(503) as port:
        assert probe(port) != 0
    assert probe(free_port()) != 0


@pytest.mark.slow  # about 12 s: two CLI runs, as the image build does them
def test_image_build_checks_pass_on_this_code(tmp_path: Path) -> None:
    """The checks the image runs at build time (every RUN after the final USER) pass here,
    so a failing docker build means a broken image, not a stale check."""
    final = final_stage()
    last_user = max(i for i, (keyword, _) in enumerate(final) if keyword == "USER")
    checks = [args for keyword, args in final[last_user:] if keyword == "RUN"]
    assert any("UniversalSentenceEncoder" in c for c in checks), "no embedder check at build"
    bin_dir = Path(sys.executable).parent
    env = {
        "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
        "HOME": str(tmp_path),
        "TEAMRAG_DATA_DIR": str(tmp_path / "data"),
    }
    for check in checks:
        if check.startswith("["):
            command = [sys.executable if a == "python" else a for a in json.loads(check)]
        else:
            command = ["sh", "-c", check]
        done = subprocess.run(
            command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120
        )
        assert done.returncode == 0, f"{check}\n{done.stdout}\n{done.stderr}"
