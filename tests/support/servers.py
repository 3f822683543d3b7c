"""Real servers started by tests: a Chroma server process, and a free-port helper."""

from __future__ import annotations

import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def chroma_executable() -> str:
    found = shutil.which("chroma", path=str(Path(sys.executable).parent)) or shutil.which("chroma")
    if found is None:
        raise RuntimeError("the `chroma` command (from the chromadb package) is not installed")
    return found


@contextmanager
def chroma_server(path: Path) -> Iterator[str]:
    """Run ``chroma run`` on a free port until the block ends; yield its URL."""
    port = free_port()
    log = (path.parent / "chroma-server.log").open("wb")
    proc = subprocess.Popen(
        [
            chroma_executable(),
            "run",
            "--path",
            str(path),
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(f"{url}/api/v2/heartbeat", timeout=1):
                    break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"chroma server did not start; see {log.name}") from None
                time.sleep(0.2)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()
