"""Opening thread memory or the store fails fast, with the fix in the message: an
unreachable or silent Postgres, a password kept out of the error, a URL of another
database, and SQLite folders that cannot be created or written."""

from __future__ import annotations

import os
import socket
import time
from pathlib import Path

import pytest

from agent.memory.backends import (
    CONNECT_TIMEOUT_S,
    MemoryBackendError,
    open_checkpointer,
    open_store,
)
from tests.support.memory_support import ask, build_graph


async def test_unreachable_postgres_fails_fast_with_the_fix(tmp_path: Path) -> None:
    db = tmp_path / "fallback.sqlite"
    started = time.monotonic()
    with pytest.raises(MemoryBackendError) as caught:
        async with open_checkpointer("postgresql://postgres@127.0.0.1:1/test", db):
            pass
    assert time.monotonic() - started < CONNECT_TIMEOUT_S + 2
    message = str(caught.value)
    assert message.startswith("DATABASE_URL unreachable")
    assert "refused" in message
    assert f"unset DATABASE_URL to use the embedded SQLite file at {db}" in message


async def test_silent_postgres_times_out(tmp_path: Path) -> None:
    """A server that accepts the connection and never answers (a firewall, a hung
    host) costs about CONNECT_TIMEOUT_S, not psycopg's or the OS's minutes."""
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(5)
        port = silent.getsockname()[1]
        started = time.monotonic()
        with pytest.raises(MemoryBackendError, match="unset DATABASE_URL"):
            async with open_store(
                f"postgresql://postgres:secret@127.0.0.1:{port}/test", tmp_path / "x.sqlite"
            ):
                pass
        assert time.monotonic() - started < CONNECT_TIMEOUT_S + 2


async def test_password_is_not_in_the_error(tmp_path: Path) -> None:
    with pytest.raises(MemoryBackendError) as caught:
        async with open_checkpointer(
            "postgresql://postgres:hunter2@127.0.0.1:1/test", tmp_path / "x.sqlite"
        ):
            pass
    assert "hunter2" not in str(caught.value)
    assert "postgres:***@127.0.0.1:1" in str(caught.value)


async def test_non_postgres_url_is_refused(tmp_path: Path) -> None:
    with pytest.raises(MemoryBackendError, match=r"postgresql:// URL, not mysql://"):
        async with open_checkpointer("mysql://localhost/x", tmp_path / "x.sqlite"):
            pass


async def test_empty_database_url_means_sqlite(tmp_path: Path) -> None:
    async with open_checkpointer("  ", tmp_path / "x.sqlite") as saver:
        await ask(build_graph(saver), "t", "hello")
    assert (tmp_path / "x.sqlite").exists()


async def test_sqlite_folder_that_cannot_be_created(tmp_path: Path) -> None:
    blocker = tmp_path / "data"
    blocker.write_text("a file where the data folder should be")
    db = blocker / "memory" / "threads.sqlite"
    for opener in (open_checkpointer, open_store):
        with pytest.raises(MemoryBackendError) as caught:
            async with opener(None, db):
                pass
        message = str(caught.value)
        assert message.startswith(f"cannot write the SQLite memory file {db}")
        assert "TEAMRAG_DATA_DIR" in message and "DATABASE_URL" in message


@pytest.mark.skipif(
    hasattr(os, "geteuid") and os.geteuid() == 0,
    reason="root writes to read-only folders, so the case cannot happen",
)
async def test_read_only_sqlite_folder(tmp_path: Path) -> None:
    folder = tmp_path / "ro"
    folder.mkdir()
    folder.chmod(0o500)
    try:
        with pytest.raises(MemoryBackendError, match="is read-only"):
            async with open_checkpointer(None, folder / "threads.sqlite"):
                pass
    finally:
        folder.chmod(0o700)
