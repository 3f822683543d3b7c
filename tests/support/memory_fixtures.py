"""The thread memory tests' fixtures: ``database_url`` runs a test once on SQLite and once
on Postgres (skipped when it does not answer), a unique ``thread_id``, and its cleanup.
A test module uses them with ``pytest_plugins = ("tests.support.memory_fixtures",)``."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from agent.memory.backends import open_checkpointer
from tests.support.postgres_support import postgres_or_skip


@pytest.fixture(scope="session")
def pg_url() -> str:
    return postgres_or_skip()


@pytest.fixture(params=["sqlite", "postgres"])
def database_url(request: pytest.FixtureRequest) -> str | None:
    """None (SQLite) or the Postgres URL, so one test covers both backends."""
    if request.param == "sqlite":
        return None
    return str(request.getfixturevalue("pg_url"))


@pytest.fixture
def thread_id() -> str:
    return f"test-{uuid.uuid4().hex}"


@pytest.fixture
async def cleanup_thread(
    database_url: str | None, tmp_path: Path, thread_id: str
) -> AsyncIterator[None]:
    yield
    if database_url is not None:
        async with open_checkpointer(database_url, tmp_path / "unused.sqlite") as saver:
            await saver.adelete_thread(thread_id)
